/*
 * traceconv folded: the trace's perf samples as Brendan Gregg's collapsed
 * stacks, one line per distinct stack, root first, sorted bytewise:
 *
 *   comm;root_fn;...;leaf_fn COUNT
 *
 * which flamegraph.pl and speedscope read. The trace is loaded with the
 * trace_processor library and the stacks are built by one recursive SQL query
 * over perf_sample and stack_profile_callsite/frame/mapping that applies the
 * naming rules of FlameGraph's stackcollapse-perf.pl, so its output for a
 * `perf script` text file is the script's (tests/cli/t1040 checks the same
 * rules): only the first event type counts; COUNT sums the printed period
 * (1 if none); "[unknown]" symbols are named after their DSO; arguments,
 * quotes and Java's leading 'L' are tidied away; a frame without a symbol is
 * " ". The script ignores a last sample that no blank line ends; we mirror
 * that for perf script input, which is why the text's last bytes are tracked
 * (through gzip, when the input is compressed).
 */
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

/* ?1: count the last sample; ?2/?3: kernel/JIT annotations; ?4: stack name
 * 0 comm, 1 comm-PID, 2 comm-PID/TID; ?5: a perf script text (a frame
 * without a symbol is " " as the script prints it; elsewhere "[dso]"; and
 * elsewhere a sample without a callstack, another process' time under a
 * system-wide scope or one the profiler skipped, is left out).
 * comm is perf script's; a recorded trace has the thread's name instead,
 * or else its tid. A frame's name is its own, else its symbol's (a trace
 * symbolized with ModuleSymbols). */
static const char traceconv_folded_sql[] =
    "WITH RECURSIVE\n"
    "x AS (SELECT s.id, s.utid, s.callsite_id, s.period, s.event_name, coalesce(s.comm, t.name, "
    "CAST(t.tid AS TEXT), '[unknown]') AS cname\n"
    "  FROM __intrinsic_perf_sample s LEFT JOIN thread t USING (utid)),\n"
    "s AS (SELECT id, callsite_id, coalesce(period, 1) AS period, replace(\n"
    "  CASE ?4 WHEN 0 THEN x.cname ELSE x.cname || '-' || coalesce((SELECT p.pid FROM thread t\n"
    "    JOIN process p USING (upid) WHERE t.utid = x.utid AND t.tid != 0), '?') ||\n"
    "    CASE ?4 WHEN 2 THEN '/' || (SELECT tid FROM thread t WHERE t.utid = x.utid)\n"
    "    ELSE '' END END, ' ', '_') AS pname\n"
    "  FROM x\n"
    "  WHERE event_name IS (SELECT event_name FROM __intrinsic_perf_sample ORDER BY id LIMIT 1)\n"
    "  AND (?1 OR id != (SELECT max(id) FROM __intrinsic_perf_sample))\n"
    "  AND (?5 OR callsite_id IS NOT NULL)),\n"
    "named AS (SELECT f.id, m.name AS mname, coalesce(f.name, (SELECT y.name\n"
    "    FROM stack_profile_symbol y WHERE y.symbol_set_id = f.symbol_set_id\n"
    "    ORDER BY y.id LIMIT 1)) AS fname\n"
    "  FROM stack_profile_frame f JOIN stack_profile_mapping m ON f.mapping = m.id),\n"
    "fr AS (SELECT id, mname,\n"
    "  CASE WHEN fname = '[unknown]' OR (fname IS NULL AND NOT ?5) THEN\n"
    "    CASE WHEN mname != '[unknown]' AND mname != '' THEN\n"
    "      '[' || replace(mname, rtrim(mname, replace(mname, '/', '')), '') || ']'\n"
    "    ELSE '[unknown]' END\n"
    "  ELSE coalesce(fname, ' ') END AS u,\n"
    "  substr(fname, 1, 1) = '(' AS skip\n"
    "  FROM named),\n"
    "tidy AS (SELECT id, mname, skip,\n"
    "  replace(replace(CASE WHEN u GLOB '*.(*).*' THEN u ELSE\n"
    "    replace(CASE WHEN instr(replace(u, '(anonymous namespace)', char(1)), '(') > 0\n"
    "      THEN substr(replace(u, '(anonymous namespace)', char(1)), 1,\n"
    "                  instr(replace(u, '(anonymous namespace)', char(1)), '(') - 1)\n"
    "      ELSE replace(u, '(anonymous namespace)', char(1)) END, char(1),\n"
    "      '(anonymous namespace)')\n"
    "  END, '\"', ''), '''', '') AS t\n"
    "  FROM (SELECT id, mname, skip, replace(u, ';', ':') AS u FROM fr)),\n"
    "walk(sid, java, cs, stack) AS (\n"
    "  SELECT s.id, s.pname = 'java', s.callsite_id, '' FROM s\n"
    "  UNION ALL\n"
    "  SELECT w.sid, w.java, c.parent_id,\n"
    "    CASE WHEN f.skip THEN w.stack ELSE\n"
    "      (CASE WHEN w.java AND f.t GLOB '*/*' AND f.t GLOB 'L*' THEN substr(f.t, 2)\n"
    "       ELSE f.t END)\n"
    "      || CASE WHEN ?2 AND (f.mname GLOB '[[]*' OR f.mname GLOB '*vmlinux')\n"
    "           AND f.mname NOT GLOB '*unknown*' THEN '_[k]'\n"
    "         WHEN ?3 AND f.mname GLOB '*/tmp/perf-[0-9]*.map*' THEN '_[j]' ELSE '' END\n"
    "      || CASE WHEN w.stack = '' THEN '' ELSE ';' || w.stack END END\n"
    "  FROM walk w JOIN stack_profile_callsite c ON c.id = w.cs\n"
    "  JOIN tidy f ON f.id = c.frame_id)\n"
    "SELECT folded, n FROM (\n"
    "  SELECT s.pname || CASE WHEN w.stack = '' THEN '' ELSE ';' || w.stack END AS folded,\n"
    "    sum(s.period) AS n\n"
    "  FROM walk w JOIN s ON s.id = w.sid WHERE w.cs IS NULL GROUP BY folded)\n"
    "WHERE folded IS NOT NULL ORDER BY folded";

/* An imported aggregate profile (collapsed stacks, pprof): its samples of
 * one metric (?1: the file's first, else its last, pprof's default), frames
 * named as they are (';' made ':'), summed per stack. A collapsed stack file
 * comes back as it went in, less comments, merged and sorted. */
static const char traceconv_folded_agg_sql[] =
    "WITH RECURSIVE\n"
    "s AS (SELECT id, callsite_id, value FROM __intrinsic_aggregate_sample\n"
    "  WHERE aggregate_profile_id = (SELECT CASE WHEN ?1 THEN min(id) ELSE max(id) END\n"
    "    FROM __intrinsic_aggregate_profile)),\n"
    "walk(sid, cs, stack) AS (SELECT id, callsite_id, '' FROM s\n"
    "  UNION ALL\n"
    "  SELECT w.sid, c.parent_id, replace(coalesce(f.name, ''), ';', ':')\n"
    "    || CASE WHEN w.stack = '' THEN '' ELSE ';' || w.stack END\n"
    "  FROM walk w JOIN stack_profile_callsite c ON c.id = w.cs\n"
    "  JOIN stack_profile_frame f ON f.id = c.frame_id)\n"
    "SELECT stack, CAST(sum(s.value) AS INT) FROM walk w JOIN s ON s.id = w.sid\n"
    "WHERE w.cs IS NULL GROUP BY stack ORDER BY stack";

/* The last two bytes of the (decompressed) text, to tell whether a blank
 * line ends it. */
struct traceconv_tail {
	bool gzip, started, broken;
	z_stream z;
	unsigned char last[2];
	size_t seen;
};

static void traceconv_tail_bytes(struct traceconv_tail *t, const unsigned char *p, size_t n)
{
	if (n >= 2) {
		t->last[0] = p[n - 2];
		t->last[1] = p[n - 1];
	} else if (n == 1) {
		t->last[0] = t->last[1];
		t->last[1] = p[0];
	}
	t->seen += n;
}

static void traceconv_tail_push(struct traceconv_tail *t, const unsigned char *p, size_t n)
{
	unsigned char buf[16384];

	if (!t->started && n > 0) {
		t->started = true;
		t->gzip = n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
		if (t->gzip && inflateInit2(&t->z, 16 + MAX_WBITS) != Z_OK)
			t->broken = true;
	}
	if (!t->gzip) {
		traceconv_tail_bytes(t, p, n);
		return;
	}
	t->z.next_in = (unsigned char *)p;
	t->z.avail_in = (uInt)n;
	while (!t->broken && t->z.avail_in > 0) {
		t->z.next_out = buf;
		t->z.avail_out = sizeof buf;
		int r = inflate(&t->z, Z_NO_FLUSH);
		traceconv_tail_bytes(t, buf, sizeof buf - t->z.avail_out);
		if (r == Z_STREAM_END)
			inflateReset(&t->z); /* another gzip member may follow */
		else if (r != Z_OK && r != Z_BUF_ERROR)
			t->broken = true;
		else if (r == Z_BUF_ERROR && t->z.avail_out != 0)
			break;
	}
}

/* Whether stackcollapse-perf.pl counts the text's last sample. */
static bool traceconv_tail_blank(const struct traceconv_tail *t)
{
	return t->seen >= 2 && t->last[0] == '\n' && t->last[1] == '\n';
}

static void traceconv_tail_peek(void *ctx, const unsigned char *p, size_t n)
{
	traceconv_tail_push(ctx, p, n);
}

int traceconv_folded(int in_fd, const char *in_name, FILE *out,
                     const struct traceconv_folded_opts *o)
{
	struct traceconv_tail tail = {0};
	struct tp *tp = traceconv_load(in_fd, in_name, traceconv_tail_peek, &tail);
	sqlite3_stmt *st = NULL;
	int rc = -1, r;

	if (!tp)
		goto out;
	bool last = strcmp(tp_trace_type(tp), "perf_text") != 0 || tail.broken ||
	            traceconv_tail_blank(&tail);
	bool collapsed = strcmp(tp_trace_type(tp), "collapsed_stack") == 0;
	if (collapsed || strcmp(tp_trace_type(tp), "pprof") == 0) {
		if (sqlite3_prepare_v2(tp_db(tp), traceconv_folded_agg_sql, -1, &st, NULL) !=
		    SQLITE_OK) {
			fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(tp)));
			goto out;
		}
		sqlite3_bind_int(st, 1, collapsed);
	} else if (sqlite3_prepare_v2(tp_db(tp), traceconv_folded_sql, -1, &st, NULL) !=
	           SQLITE_OK) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(tp)));
		goto out;
	}
	if (sqlite3_bind_parameter_count(st) == 5) {
		sqlite3_bind_int(st, 1, last);
		sqlite3_bind_int(st, 2, o->kernel);
		sqlite3_bind_int(st, 3, o->jit);
		sqlite3_bind_int(st, 4, o->tid ? 2 : o->pid ? 1 : 0);
		sqlite3_bind_int(st, 5, strcmp(tp_trace_type(tp), "perf_text") == 0);
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		fprintf(out, "%s %lld\n", (const char *)sqlite3_column_text(st, 0),
		        (long long)sqlite3_column_int64(st, 1));
	if (r != SQLITE_DONE) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(tp)));
		goto out;
	}
	rc = 0;
out:
	if (tail.gzip && tail.started)
		inflateEnd(&tail.z);
	sqlite3_finalize(st);
	if (tp)
		tp_free(tp);
	return rc;
}
