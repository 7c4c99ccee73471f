/*
 * Ninja build logs (.ninja_log): one slice per build step, on one thread
 * track per inferred parallel lane, as Perfetto's ninja_log importer.
 *
 *   # ninja log v5                 the header: v5 (ninja 1.9-1.11), v6, v7
 *   4\t12\t1579224178\tout/a.o\t832a958a9e234dfa
 *   |  |   |           |        command hash (hex)
 *   |  |   |           output path
 *   |  |   mtime (ignored)
 *   start and end, ms from the start of the build
 *
 * Consecutive lines with the same hash, start and end are one step with
 * several outputs: their names are joined with spaces. At the end of the
 * file the steps are sorted by start and packed onto lanes: each goes to the
 * lane that became free last at or before its start (the step that freed
 * it probably let this one start), or to a new lane. Lanes are threads
 * 1, 2, ... named "Worker" of process 1 named "Build". A line that does not
 * read counts ninja_parse_errors; a log without the header, or of another
 * version, fails the load with one line.
 */
#include "../../tp_int.h"
#include "../../model/model.h"
#include "../importer.h"

#include <stdlib.h>
#include <string.h>

#define NINJA_MAX_LINE (1u << 20)
#define NINJA_PID 1

struct ninja_job {
	int64_t start, end; /* ms */
	uint64_t hash;
	uint32_t name, seq; /* pool id; file order, to keep the sort stable */
};

VEC_DEFINE(ninja_buf, char);

struct tp_importer {
	struct tp *tp;
	struct ninja_buf partial, names;
	VEC(struct ninja_job) jobs;
	bool header, too_long;
};

static bool ninja_num(const char *p, const char *e, int base, uint64_t *out)
{
	uint64_t v = 0;
	if (p == e || e - p > (base == 16 ? 16 : 18))
		return false;
	for (; p < e; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0'
		        : base == 16 && (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'
		            ? (*p | 0x20) - 'a' + 10
		            : -1;
		if (d < 0)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return true;
}

/* One line without its newline. */
static int ninja_line(struct tp_importer *imp, const char *p, const char *e)
{
	struct tp *tp = imp->tp;
	if (e > p && e[-1] == '\r')
		e--;
	if (!imp->header) {
		static const char magic[] = "# ninja log v";
		uint64_t v;
		if ((size_t)(e - p) < sizeof magic - 1 || memcmp(p, magic, sizeof magic - 1) != 0)
			return tp_fail(tp, -EINVAL, "not a ninja log: no '# ninja log v' header");
		if (!ninja_num(p + sizeof magic - 1, e, 10, &v) || v < 5 || v > 7)
			return tp_fail(tp, -EINVAL, "unsupported ninja log version '%.*s'",
			               (int)(e - p - (ptrdiff_t)(sizeof magic - 1)) & 63,
			               p + sizeof magic - 1);
		imp->header = true;
		return 0;
	}
	if (p == e)
		return 0;
	const char *f[5];
	size_t fl[5];
	int n = 0;
	for (const char *q = p; n < 5;) {
		const char *t = memchr(q, '\t', (size_t)(e - q));
		f[n] = q;
		fl[n++] = (size_t)((t ? t : e) - q);
		if (!t)
			break;
		q = t + 1;
	}
	uint64_t start, end, hash;
	if (n != 5 || !ninja_num(f[0], f[0] + fl[0], 10, &start) ||
	    !ninja_num(f[1], f[1] + fl[1], 10, &end) || !ninja_num(f[4], f[4] + fl[4], 16, &hash) ||
	    fl[3] == 0 || end < start || end > (uint64_t)INT64_MAX / 1000000) {
		tp_stat_inc(tp, TP_STAT_ninja_parse_errors);
		return 0;
	}
	struct ninja_job *last = imp->jobs.len ? &imp->jobs.data[imp->jobs.len - 1] : NULL;
	if (last && last->hash == hash && last->start == (int64_t)start &&
	    last->end == (int64_t)end) {
		size_t ln;
		const char *old = strpool_get(&tp->strings, last->name, &ln);
		imp->names.len = 0;
		vec_reserve(&imp->names, ln + 1 + fl[3]);
		memcpy(imp->names.data, old, ln);
		imp->names.data[ln] = ' ';
		memcpy(imp->names.data + ln + 1, f[3], fl[3]);
		imp->names.len = ln + 1 + fl[3];
		last->name = tp_intern(tp, imp->names.data, imp->names.len);
		return 0;
	}
	struct ninja_job j = {(int64_t)start, (int64_t)end, hash, tp_intern(tp, f[3], fl[3]),
	                      (uint32_t)imp->jobs.len};
	vec_push(&imp->jobs, j);
	return 0;
}

static bool ninja_sniff(const uint8_t *p, size_t n)
{
	return n >= 11 && memcmp(p, "# ninja log", 11) == 0;
}

static struct tp_importer *ninja_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	return imp;
}

static int ninja_parse(struct tp_importer *imp, const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	imp->tp->bytes_parsed += n;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *le = nl ? nl : e;
		int rc = 0;
		if (imp->partial.len || imp->too_long || !nl) {
			size_t k = (size_t)(le - p);
			if (imp->partial.len + k > NINJA_MAX_LINE) {
				imp->too_long = true;
				imp->partial.len = 0;
			} else if (!imp->too_long) {
				vec_reserve(&imp->partial, k);
				memcpy(imp->partial.data + imp->partial.len, p, k);
				imp->partial.len += k;
			}
			if (!nl)
				break;
			if (imp->too_long)
				tp_stat_inc(imp->tp, TP_STAT_ninja_parse_errors);
			else
				rc = ninja_line(imp, imp->partial.data,
				                imp->partial.data + imp->partial.len);
			imp->partial.len = 0;
			imp->too_long = false;
		} else {
			rc = ninja_line(imp, p, nl);
		}
		if (rc)
			return rc;
		p = nl + 1;
	}
	return 0;
}

static int ninja_cmp(const void *a, const void *b)
{
	const struct ninja_job *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ninja_eof(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	int rc = 0;
	if (imp->too_long)
		tp_stat_inc(tp, TP_STAT_ninja_parse_errors);
	else if (imp->partial.len)
		rc = ninja_line(imp, imp->partial.data, imp->partial.data + imp->partial.len);
	imp->partial.len = 0;
	if (rc)
		return rc;
	if (imp->jobs.len)
		qsort(imp->jobs.data, imp->jobs.len, sizeof *imp->jobs.data, ninja_cmp);
	VEC(int64_t) busy = VEC_INIT; /* lane i is free from busy[i] (ms) */
	VEC(uint32_t) tracks = VEC_INIT;
	uint32_t worker = tp_intern_cstr(tp, "Worker");
	for (size_t i = 0; i < imp->jobs.len; i++) {
		const struct ninja_job *j = &imp->jobs.data[i];
		size_t best = SIZE_MAX;
		for (size_t w = 0; w < busy.len; w++)
			if (busy.data[w] <= j->start &&
			    (best == SIZE_MAX || busy.data[best] < busy.data[w]))
				best = w;
		if (best == SIZE_MAX) {
			uint32_t upid = tp_process_for_pid(tp, NINJA_PID);
			tp_process_set_name(tp, upid, tp_intern_cstr(tp, "Build"));
			uint32_t utid = tp_thread_for_tid(tp, (int64_t)busy.len + 1, NINJA_PID);
			tp_thread_set_name(tp, utid, worker);
			vec_push(&busy, j->end);
			vec_push(&tracks, tp_track_for_thread(tp, utid));
			best = busy.len - 1;
		}
		busy.data[best] = j->end;
		tp_slice_complete(tp, tracks.data[best], j->start * 1000000,
		                  (j->end - j->start) * 1000000, 0, j->name, TP_NULL_U32);
	}
	vec_release(&busy);
	vec_release(&tracks);
	return 0;
}

static void ninja_destroy(struct tp_importer *imp)
{
	vec_release(&imp->partial);
	vec_release(&imp->names);
	vec_release(&imp->jobs);
	tb_free(imp);
}

const struct tp_importer_ops tp_ninja_log_importer = {
    .name = "ninja_log",
    .sniff = ninja_sniff,
    .create = ninja_create,
    .parse = ninja_parse,
    .eof = ninja_eof,
    .destroy = ninja_destroy,
};
