/*
 * The `perf script` text importer ("perf_text"): Linux perf's (and
 * simpleperf's) textual sample dump, as produced by `perf script` with its
 * default fields or common -F variants, turned into profiler samples of
 * source "perf_text" (the perf_sample view shows them) with interned
 * callstacks (stack_profile_*), threads and one profiler session.
 *
 * A sample is a header line followed by its callchain, innermost frame
 * first, and ends at a blank line or at the next header:
 *
 *   comm-with spaces  PID/TID [CPU] SECS.USECS:  PERIOD EVENT: [trace args]
 *   <ws> ADDR SYMBOL[+0xOFF] (DSO)
 *   <ws> ADDR SYMBOL[+0xOFF] (DSO)
 *   <blank>
 *
 * Only comm, the pid/tid token and the event (the first token ending in
 * ':' that is not the time) are required: "PID/TID" or a lone TID, "[CPU]",
 * the time and the period are each optional, fields may be separated by
 * spaces or tabs (simpleperf). Frames may lack their indentation; the DSO is
 * the last parenthesised group of the line. Lines starting with '#' are
 * perf's header (its "cmdline" becomes the session's cmdline). Lines that
 * are neither are counted in perf_text_importer_sample_line_error.
 *
 * Rows are written in file order (perf script prints in time order). Frame
 * names keep the symbol without its "+0x..." offset; rel_pc is the printed
 * address; mappings are interned by DSO name (no build id in the text).
 */
#include "../../tp_int.h"
#include "../../model/model.h"
#include "../importer.h"

#include <string.h>

#define PT_MAX_LINE (1u << 20) /* longer lines are dropped */

struct pt_line { /* a parsed sample header */
	const char *comm;
	size_t comm_len;
	int64_t pid, tid; /* pid -1 when absent */
	uint32_t cpu;     /* TP_NULL_U32 when absent */
	int64_t ts;       /* TP_NULL_I64 when absent */
	int64_t period;   /* TP_NULL_I64 when absent */
	const char *event;
	size_t event_len;
	const char *rest; /* after the event token */
	size_t rest_len;
};

struct pt_frame {
	uint64_t addr;
	const char *sym;
	size_t sym_len;
	const char *dso;
	size_t dso_len;
};

VEC_DEFINE(pt_buf, char);

struct tp_importer {
	struct tp *tp;
	struct tp_stack_profile sp;
	struct pt_buf partial; /* an incomplete last line of the previous chunk */
	VEC(uint32_t) frames;  /* frame ids of the current sample, leaf first */
	uint32_t session;
	bool in_sample;
	bool kernel_leaf;
	int64_t ts, pid, tid, period;
	uint32_t cpu, comm, event;
	uint32_t str_kernel, str_user, str_source;
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}
/* Parse decimal digits [p, e) into *v; false unless all are digits. */
static bool parse_u64(const char *p, const char *e, int64_t *v)
{
	uint64_t x;
	if (p == e || e - p > 18 || tb_dec_prefix(p, (size_t)(e - p), &x) != (size_t)(e - p))
		return false;
	*v = (int64_t)x;
	return true;
}

/* "SECS.FRAC:" -> ns. */
static bool parse_time(const char *p, const char *e, int64_t *ns)
{
	if (e - p < 2 || e[-1] != ':')
		return false;
	e--;
	const char *dot = memchr(p, '.', (size_t)(e - p));
	if (!dot)
		return false;
	int64_t s, frac = 0;
	if (!parse_u64(p, dot, &s) || s > 9000000000ll)
		return false;
	int nd = 0;
	for (const char *q = dot + 1; q < e; q++) {
		if (!is_digit(*q))
			return false;
		if (nd < 9) {
			frac = frac * 10 + (*q - '0');
			nd++;
		}
	}
	if (nd == 0)
		return false;
	for (; nd < 9; nd++)
		frac *= 10;
	*ns = s * 1000000000ll + frac;
	return true;
}

/* The fields after the pid/tid token: optional [cpu], time and period,
 * then the event token. */
static bool parse_after_pid(const char *q, const char *e, struct pt_line *h)
{
	h->cpu = TP_NULL_U32;
	h->ts = TP_NULL_I64;
	h->period = TP_NULL_I64;
	for (;;) {
		while (q < e && is_ws(*q))
			q++;
		if (q == e)
			return false;
		const char *t = q;
		while (q < e && !is_ws(*q))
			q++;
		int64_t v;
		if (t[0] == '[' && q[-1] == ']' && q - t > 2 && h->cpu == TP_NULL_U32 &&
		    h->ts == TP_NULL_I64 && parse_u64(t + 1, q - 1, &v)) {
			h->cpu = (uint32_t)(v > 1000000 ? 1000000 : v);
			continue;
		}
		if (h->ts == TP_NULL_I64 && parse_time(t, q, &h->ts))
			continue;
		if (parse_u64(t, q, &v)) {
			h->period = v;
			continue;
		}
		if (q - t >= 2 && q[-1] == ':') {
			h->event = t;
			h->event_len = (size_t)(q - t - 1);
			while (q < e && is_ws(*q))
				q++;
			h->rest = q;
			h->rest_len = (size_t)(e - q);
			return true;
		}
		return false;
	}
}

/* A sample header line (no trailing newline). comm is everything before
 * the first token (after the first) that reads as PID/TID or TID and is
 * followed by valid fields, so comms with spaces and digits work. */
static bool parse_header(const char *p, size_t n, struct pt_line *h)
{
	const char *e = p + n;
	if (n == 0 || is_ws(p[0]) || p[0] == '#')
		return false;
	memset(h, 0, sizeof(*h));
	const char *q = p;
	while (q < e && !is_ws(*q))
		q++;
	const char *comm_end = q;
	for (;;) {
		while (q < e && is_ws(*q))
			q++;
		if (q == e)
			return false;
		const char *t = q;
		while (q < e && !is_ws(*q))
			q++;
		const char *slash = memchr(t, '/', (size_t)(q - t));
		int64_t a, b;
		bool ok = false;
		if (slash && parse_u64(t, slash, &a) && parse_u64(slash + 1, q, &b)) {
			h->pid = a;
			h->tid = b;
			ok = true;
		} else if (!slash && parse_u64(t, q, &a)) {
			h->pid = -1;
			h->tid = a;
			ok = true;
		}
		if (ok && parse_after_pid(q, e, h)) {
			h->comm = p;
			h->comm_len = (size_t)(comm_end - p);
			return true;
		}
		comm_end = q;
	}
}

/* A callchain line "ADDR SYMBOL (DSO)" (leading whitespace allowed). */
static bool parse_frame(const char *p, size_t n, struct pt_frame *f)
{
	const char *e = p + n;
	while (p < e && is_ws(*p))
		p++;
	while (e > p && is_ws(e[-1]))
		e--;
	const char *q = p;
	uint64_t addr = 0;
	int nd = 0;
	while (q < e && tb_hex_digit(*q) >= 0) {
		if (nd < 16)
			addr = addr << 4 | (uint64_t)tb_hex_digit(*q);
		nd++;
		q++;
	}
	if (nd == 0 || nd > 16 || q == e || !is_ws(*q))
		return false;
	if (e[-1] != ')')
		return false;
	/* The '(' opening the last group. */
	const char *o = e - 1;
	int depth = 0;
	for (;;) {
		if (*o == ')')
			depth++;
		else if (*o == '(' && --depth == 0)
			break;
		if (o == q)
			return false;
		o--;
	}
	f->addr = addr;
	f->dso = o + 1;
	f->dso_len = (size_t)(e - 1 - f->dso);
	while (q < o && is_ws(*q))
		q++;
	const char *se = o;
	while (se > q && is_ws(se[-1]))
		se--;
	f->sym = q;
	f->sym_len = (size_t)(se - q);
	return true;
}

static void finish_sample(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	if (!imp->in_sample)
		return;
	imp->in_sample = false;
	uint32_t utid = tp_thread_for_tid(tp, imp->tid, imp->pid);
	tp_thread_set_name(tp, utid, imp->comm);
	if (imp->pid >= 0 && imp->pid == imp->tid) {
		uint32_t upid = tp_process_for_pid(tp, imp->pid);
		if (!tp->t.process.name[upid])
			tp_process_set_name(tp, upid, imp->comm);
	}
	uint32_t cs = TP_NULL_U32;
	for (size_t i = imp->frames.len; i-- > 0;)
		cs = tp_stack_profile_callsite(tp, &imp->sp, cs, imp->frames.data[i]);
	uint32_t mode = imp->frames.len == 0 ? 0
	                : imp->kernel_leaf   ? imp->str_kernel
	                                     : imp->str_user;
	uint32_t ucpu = imp->cpu < TP_MAX_CPUS ? tp_cpu_for(tp, imp->cpu) : TP_NULL_U32;
	int64_t upid = tp->t.thread.upid[utid];
	struct tp_profiler_sample s = {
	    /* MONOTONIC, as in Perfetto: in an archive, the protobuf
	     * trace's clocks convert it. */
	    .ts = tp_trace_time(tp, TP_CLOCK_MONOTONIC, imp->ts == TP_NULL_I64 ? 0 : imp->ts),
	    .source = imp->str_source,
	    .task_context = tp_profiler_task_context(
	        tp, upid == TP_NULL_I64 ? TP_NULL_U32 : (uint32_t)upid, utid, TP_NULL_U32),
	    .execution_context = ucpu != TP_NULL_U32 || mode
	                             ? tp_profiler_execution_context(tp, ucpu, mode)
	                             : TP_NULL_U32,
	    .callsite = cs,
	    .session = imp->session,
	    .counter_set = TP_NULL_U32,
	};
	uint32_t row = tp_profiler_sample_add(tp, &s);
	struct tp_profiler_sample_table *t = &tp->t.profiler_sample;
	tp_set_profiler_sample_event_name(t, row, imp->event);
	tp_set_profiler_sample_comm(t, row, imp->comm);
	tp_set_profiler_sample_period(t, row, imp->period);
	imp->frames.len = 0;
}

static void add_frame(struct tp_importer *imp, const struct pt_frame *f)
{
	struct tp *tp = imp->tp;
	size_t sl = f->sym_len;
	/* Drop a "+0xOFFSET" suffix. */
	size_t j = sl;
	while (j > 0 && tb_hex_digit(f->sym[j - 1]) >= 0)
		j--;
	if (j < sl && j >= 3 && memcmp(f->sym + j - 3, "+0x", 3) == 0)
		sl = j - 3;
	uint32_t dso = tp_intern(tp, f->dso, f->dso_len);
	uint32_t mapping = tp_stack_profile_mapping(tp, &imp->sp, dso, 0);
	uint32_t name = tp_intern(tp, f->sym, sl);
	uint32_t frame = tp_stack_profile_frame(tp, &imp->sp, mapping, (int64_t)f->addr, name);
	if (imp->frames.len == 0)
		imp->kernel_leaf =
		    (f->dso_len && f->dso[0] == '[' &&
		     !(f->dso_len == 9 && memcmp(f->dso, "[unknown]", 9) == 0)) ||
		    (f->dso_len >= 7 && memcmp(f->dso + f->dso_len - 7, "vmlinux", 7) == 0);
	vec_push(&imp->frames, frame);
}

static void header_comment(struct tp_importer *imp, const char *p, size_t n)
{
	static const char key[] = "# cmdline : ";
	if (n > sizeof(key) - 1 && memcmp(p, key, sizeof(key) - 1) == 0) {
		struct tp *tp = imp->tp;
		tp->t.profiler_session.cmdline[imp->session] =
		    tp_intern(tp, p + sizeof(key) - 1, n - (sizeof(key) - 1));
	}
}

static void parse_line(struct tp_importer *imp, const char *p, size_t n)
{
	struct tp *tp = imp->tp;
	if (n && p[n - 1] == '\r')
		n--;
	size_t i = 0;
	while (i < n && is_ws(p[i]))
		i++;
	if (i == n) {
		finish_sample(imp);
		return;
	}
	if (p[0] == '#') {
		header_comment(imp, p, n);
		return;
	}
	/* In a sample, indented lines are frames; unindented ones too when
	 * they do not read as a header. */
	struct pt_frame f;
	struct pt_line h;
	if (imp->in_sample && parse_frame(p, n, &f) && (i > 0 || !parse_header(p, n, &h))) {
		add_frame(imp, &f);
		return;
	}
	if (parse_header(p, n, &h)) {
		finish_sample(imp);
		imp->in_sample = true;
		imp->kernel_leaf = false;
		imp->pid = h.pid;
		imp->tid = h.tid;
		imp->cpu = h.cpu;
		imp->ts = h.ts;
		imp->period = h.period;
		imp->comm = tp_intern(tp, h.comm, h.comm_len);
		imp->event = tp_intern(tp, h.event, h.event_len);
		/* Without -g, ip/sym/dso follow the event on the same line. */
		if (h.rest_len && parse_frame(h.rest, h.rest_len, &f))
			add_frame(imp, &f);
		return;
	}
	tp_stat_inc(tp, TP_STAT_perf_text_importer_sample_line_error);
}

static void append(struct pt_buf *b, const char *p, size_t n)
{
	vec_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static bool perf_text_sniff(const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	bool saw_header = false, first = true;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		bool complete = nl != NULL;
		const char *le = nl ? nl : e;
		size_t len = (size_t)(le - p);
		if (len && p[len - 1] == '\r')
			len--;
		if (first && len >= 10 && memcmp(p, "# ========", 10) == 0)
			return true; /* perf script --header */
		first = false;
		struct pt_frame f;
		struct pt_line h;
		if (saw_header) {
			if (complete)
				return parse_frame(p, len, &f);
			/* Cut by the sniff window: an indented hex address. */
			size_t i = 0;
			while (i < len && is_ws(p[i]))
				i++;
			size_t j = i;
			while (j < len && tb_hex_digit(p[j]) >= 0)
				j++;
			return i > 0 && j > i && (j == len || is_ws(p[j]));
		}
		if (len && p[0] == '#') {
			p = le + 1;
			continue;
		}
		if (!complete || !parse_header(p, len, &h))
			return false;
		saw_header = true;
		p = le + 1;
	}
	return false;
}

static struct tp_importer *perf_text_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof(*imp));
	imp->tp = tp;
	tp_stack_profile_init(&imp->sp);
	imp->str_source = tp_intern_cstr(tp, "perf_text");
	imp->session = tp_profiler_session_new(tp, imp->str_source, 0);
	imp->str_kernel = tp_intern_cstr(tp, "kernel");
	imp->str_user = tp_intern_cstr(tp, "user");
	return imp;
}

static int perf_text_parse(struct tp_importer *imp, const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	imp->tp->bytes_parsed += n;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl) {
			if (imp->partial.len + (size_t)(e - p) <= PT_MAX_LINE)
				append(&imp->partial, p, (size_t)(e - p));
			else
				imp->partial.len = PT_MAX_LINE + 1; /* mark: too long */
			break;
		}
		if (imp->partial.len) {
			if (imp->partial.len <= PT_MAX_LINE &&
			    imp->partial.len + (size_t)(nl - p) <= PT_MAX_LINE) {
				append(&imp->partial, p, (size_t)(nl - p));
				parse_line(imp, imp->partial.data, imp->partial.len);
			} else {
				tp_stat_inc(imp->tp, TP_STAT_perf_text_importer_sample_line_error);
			}
			imp->partial.len = 0;
		} else {
			parse_line(imp, p, (size_t)(nl - p));
		}
		p = nl + 1;
	}
	return 0;
}

static int perf_text_eof(struct tp_importer *imp)
{
	if (imp->partial.len && imp->partial.len <= PT_MAX_LINE)
		parse_line(imp, imp->partial.data, imp->partial.len);
	imp->partial.len = 0;
	finish_sample(imp);
	return 0;
}

static void perf_text_destroy(struct tp_importer *imp)
{
	tp_stack_profile_release(&imp->sp);
	vec_release(&imp->partial);
	vec_release(&imp->frames);
	tb_free(imp);
}

const struct tp_importer_ops tp_perf_text_importer = {
    .name = "perf_text",
    .sniff = perf_text_sniff,
    .create = perf_text_create,
    .parse = perf_text_parse,
    .eof = perf_text_eof,
    .destroy = perf_text_destroy,
};
