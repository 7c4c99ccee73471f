/*
 * Collapsed ("folded") stacks, the text Brendan Gregg's stackcollapse-*.pl
 * scripts and `traceconv folded` write and flamegraph.pl reads: one line per
 * distinct stack, frames root first, separated by ';', then a space and the
 * count.
 *
 *   # comment                      skipped, as blank lines are
 *   main;foo;bar 120               a sample of value 120 at main > foo > bar
 *   java-1234/5678;run;work 3      the first frame is often comm[-pid[/tid]]
 *
 * As Perfetto's collapsed_stack importer: one aggregate_profile (scope
 * "collapsed_stack_file", name "collapsed_stack samples", type "samples",
 * unit "count") made on the first stack line; each line an aggregate_sample
 * (value = count) at the callsite of its frames, each frame a dummy frame of
 * the "[collapsed_stack]" mapping; empty frames ("a;;b") are dropped. A line
 * without a positive integer count after its last space counts
 * collapsed_stack_parse_error and is skipped (Perfetto skips it silently).
 */
#include "profiles.h"

#include <string.h>

#define CS_MAX_LINE (1u << 20) /* longer lines are counted and dropped */

VEC_DEFINE(cs_buf, char);

struct tp_importer {
	struct tp *tp;
	struct tp_stack_profile sp;
	struct hmap frames;
	struct cs_buf partial, prev;   /* prev: the last stack, for cs_stack */
	VEC(uint32_t) ends, callsites; /* its frames' ends and callsites */
	bool partial_too_long;
	uint32_t profile; /* TP_NULL_U32 until the first stack line */
	uint32_t mapping;
};

static bool cs_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Trim [*p, *e); false when nothing but a comment or blanks is left. */
static bool cs_trim(const char **p, const char **e)
{
	while (*p < *e && cs_space(**p))
		(*p)++;
	while (*e > *p && cs_space((*e)[-1]))
		(*e)--;
	return *p < *e && **p != '#';
}

/* The count after the last space of a trimmed line: *stack_end is that
 * space. Returns -1 when there is none or it is not a positive integer. */
static int64_t cs_count(const char *p, const char *e, const char **stack_end)
{
	const char *sp = e;
	while (sp > p && sp[-1] != ' ')
		sp--;
	if (sp == p || sp - 1 == p)
		return -1;
	*stack_end = sp - 1;
	const char *q = sp;
	if (q < e && *q == '+')
		q++;
	if (q == e || e - q > 18)
		return -1;
	int64_t v = 0;
	for (; q < e; q++) {
		if (*q < '0' || *q > '9')
			return -1;
		v = v * 10 + (*q - '0');
	}
	return v > 0 ? v : -1;
}

/* The callsite of the frames of stack[0, n), root first. Sorted input (as
 * the scripts write it) shares its first frames with the line before: those
 * callsites are taken from the previous line, only the rest is interned. */
static uint32_t cs_stack(struct tp_importer *imp, const char *stack, size_t n)
{
	struct tp *tp = imp->tp;
	size_t l = 0, k = 0, pn = imp->prev.len;
	while (l < n && l < pn && stack[l] == imp->prev.data[l])
		l++;
	/* The frames of the previous line whose bytes and end are the same. */
	while (k < imp->ends.len && imp->ends.data[k] <= l &&
	       (imp->ends.data[k] == n || stack[imp->ends.data[k]] == ';'))
		k++;
	uint32_t cs = k ? imp->callsites.data[k - 1] : TP_NULL_U32;
	size_t i = k ? imp->ends.data[k - 1] + 1 : 0;
	imp->ends.len = imp->callsites.len = k;
	imp->prev.len = 0;
	vec_reserve(&imp->prev, n);
	memcpy(imp->prev.data, stack, n);
	imp->prev.len = n;
	while (i < n) {
		const char *f = memchr(stack + i, ';', n - i);
		size_t e = f ? (size_t)(f - stack) : n;
		if (e > i) {
			uint32_t frame = tp_profiles_dummy_frame(tp, &imp->frames, imp->mapping,
			                                         tp_intern(tp, stack + i, e - i), 0,
			                                         TP_NULL_U32);
			cs = tp_stack_profile_callsite(tp, &imp->sp, cs, frame);
			vec_push(&imp->ends, (uint32_t)e);
			vec_push(&imp->callsites, cs);
		}
		i = e + 1;
	}
	return cs;
}

static void cs_line(struct tp_importer *imp, const char *p, const char *e)
{
	struct tp *tp = imp->tp;
	if (!cs_trim(&p, &e))
		return;
	if (imp->profile == TP_NULL_U32) {
		imp->profile = tp_profiles_agg_profile(
		    tp, tp_intern_cstr(tp, "collapsed_stack_file"),
		    tp_intern_cstr(tp, "collapsed_stack samples"), tp_intern_cstr(tp, "samples"),
		    tp_intern_cstr(tp, "count"));
		imp->mapping = tp_profiles_dummy_mapping(tp, "[collapsed_stack]");
	}
	const char *stack_end;
	int64_t count = cs_count(p, e, &stack_end);
	uint32_t cs = count < 0 ? TP_NULL_U32 : cs_stack(imp, p, (size_t)(stack_end - p));
	if (cs != TP_NULL_U32)
		tp_profiles_agg_sample(tp, imp->profile, cs, (double)count);
	else
		tp_stat_inc(tp, TP_STAT_collapsed_stack_parse_error);
}

/* Perfetto's test of one line (untrimmed, no newline): a count of digits
 * after the last space and a ';' before it. Comments and blanks are not
 * stack lines. */
static bool cs_is_stack_line(const char *p, const char *e)
{
	if (!cs_trim(&p, &e))
		return false;
	const char *sp = e;
	while (sp > p && sp[-1] != ' ')
		sp--;
	if (sp == p || sp - 1 == p || sp == e)
		return false;
	for (const char *q = sp; q < e; q++)
		if (*q < '0' || *q > '9')
			return false;
	return memchr(p, ';', (size_t)(sp - 1 - p)) != NULL;
}

/* The first (up to) three stack lines must all be stack lines. A line the
 * sniff window cuts (stacks of deep Java or kernel code pass 512 bytes)
 * counts when it has a ';' and no control bytes, after at least the first
 * line started a stack. */
static bool collapsed_sniff(const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	int valid = 0;
	while (p < e && valid < 3) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl) {
			if (!memchr(p, ';', (size_t)(e - p)))
				return valid > 0;
			for (const char *q = p; q < e; q++)
				if ((unsigned char)*q < 0x20 && *q != '\t' && *q != '\r')
					return false;
			return true;
		}
		const char *a = p, *b = nl;
		if (cs_trim(&a, &b)) {
			if (!cs_is_stack_line(p, nl))
				return false;
			valid++;
		}
		p = nl + 1;
	}
	return valid > 0;
}

static struct tp_importer *collapsed_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	imp->profile = TP_NULL_U32;
	tp_stack_profile_init(&imp->sp);
	hmap_init(&imp->frames);
	return imp;
}

static int collapsed_parse(struct tp_importer *imp, const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	imp->tp->bytes_parsed += n;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *le = nl ? nl : e;
		if (imp->partial.len || imp->partial_too_long || !nl) {
			size_t k = (size_t)(le - p);
			if (imp->partial.len + k > CS_MAX_LINE) {
				imp->partial_too_long = true;
				imp->partial.len = 0;
			} else if (!imp->partial_too_long) {
				vec_reserve(&imp->partial, k);
				memcpy(imp->partial.data + imp->partial.len, p, k);
				imp->partial.len += k;
			}
			if (!nl)
				break;
			if (imp->partial_too_long)
				tp_stat_inc(imp->tp, TP_STAT_collapsed_stack_parse_error);
			else
				cs_line(imp, imp->partial.data,
				        imp->partial.data + imp->partial.len);
			imp->partial.len = 0;
			imp->partial_too_long = false;
		} else {
			cs_line(imp, p, nl);
		}
		p = nl + 1;
	}
	return 0;
}

static int collapsed_eof(struct tp_importer *imp)
{
	if (imp->partial_too_long)
		tp_stat_inc(imp->tp, TP_STAT_collapsed_stack_parse_error);
	else if (imp->partial.len)
		cs_line(imp, imp->partial.data, imp->partial.data + imp->partial.len);
	imp->partial.len = 0;
	imp->partial_too_long = false;
	return 0;
}

static void collapsed_destroy(struct tp_importer *imp)
{
	tp_stack_profile_release(&imp->sp);
	hmap_release(&imp->frames);
	vec_release(&imp->partial);
	vec_release(&imp->prev);
	vec_release(&imp->ends);
	vec_release(&imp->callsites);
	tb_free(imp);
}

const struct tp_importer_ops tp_collapsed_stack_importer = {
    .name = "collapsed_stack",
    .sniff = collapsed_sniff,
    .create = collapsed_create,
    .parse = collapsed_parse,
    .eof = collapsed_eof,
    .destroy = collapsed_destroy,
};
