/*
 * traceconv report: the trace's perf samples as one self-contained HTML file
 * with an interactive flame graph. The page (report.html: markup, CSS and
 * JS, no network) is embedded at build time; this file fills in its data:
 * one JSON object in place of the template's @TRACEBOX_DATA@ marker.
 *
 *   {"v":1, "title":"trace name",
 *    "strings":["", ...],           string table, "" first
 *    "frames":[name, mapping, rel_pc, ...],     per frame: string ids, number
 *    "cs":[parent, frame, ...],     callsites, parent -1 at the root; a
 *                                   parent always comes before its children
 *    "threads":[tid, pid, name, process_name, ...]   pid -1 when unknown
 *    "events":[name, ...],          event string ids
 *    "t0":"first ts (ns, decimal string)",
 *    "ts":[delta ns, ...], "th":[thread, ...], "st":[callsite, ...],
 *    "ev":[event, ...]}             one entry per sample, in ts order
 *
 * Only the frames and callsites the samples use are written, renumbered
 * densely. Strings are JSON-escaped with '<' as \u003c so no name can end
 * the <script> element that holds the data.
 */
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"
#include "traceconv_report_html.h"

#define REPORT_MARKER "@TRACEBOX_DATA@"

struct report {
	struct tp *tp;
	struct traceconv_stacks st;
	struct hmap strmap;        /* stack string id -> output index */
	struct traceconv_ids strs; /* output index -> stack string id */
	uint32_t *frame_idx;       /* frame id -> output index + 1, 0 unused */
	uint32_t *cs_idx;          /* callsite id -> output index + 1, 0 unused */
	struct traceconv_ids frames_out, cs_out;
	struct hmap thread_idx, event_idx; /* utid / string id -> output index */
	struct traceconv_ids threads_out, events_out;
	VEC(int64_t) ts;
	struct traceconv_ids th, cs, ev;
};

static uint32_t report_str(struct report *r, uint32_t id)
{
	bool is_new;
	uint64_t *v = hmap_upsert(&r->strmap, id, &is_new);
	if (is_new) {
		*v = r->strs.len;
		vec_push(&r->strs, id);
	}
	return (uint32_t)*v;
}

static uint32_t report_str_col(struct report *r, sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	return report_str(r, t ? strpool_intern_cstr(&r->st.strings, t) : 0);
}

/* Output index of callsite id, numbering it and its ancestors on first use
 * (ancestors first, so parents precede children in the output). */
static uint32_t report_callsite(struct report *r, int64_t id)
{
	int64_t chain[64];
	size_t depth = 0;
	int64_t c = id, prev = INT64_MAX;
	uint32_t parent = UINT32_MAX;

	while (c >= 0 && c < prev && (size_t)c < r->st.callsites.len && !r->cs_idx[c]) {
		if (depth == sizeof chain / sizeof chain[0]) {
			/* Deep stack: number the part above first. */
			report_callsite(r, c);
			break;
		}
		chain[depth++] = c;
		prev = c;
		c = r->st.callsites.data[c].parent;
	}
	if (c >= 0 && (size_t)c < r->st.callsites.len && r->cs_idx[c])
		parent = r->cs_idx[c] - 1;
	while (depth > 0) {
		int64_t k = chain[--depth];
		uint32_t f = r->st.callsites.data[k].frame;
		if (f >= r->st.frames.len)
			break;
		if (!r->frame_idx[f]) {
			const struct traceconv_frame *fr = &r->st.frames.data[f];
			uint32_t map = fr->mapping < r->st.mappings.len
			                   ? r->st.mappings.data[fr->mapping].name
			                   : 0;
			vec_push(&r->frames_out, report_str(r, fr->name));
			vec_push(&r->frames_out, report_str(r, map));
			vec_push(&r->frames_out, f);
			r->frame_idx[f] = (uint32_t)(r->frames_out.len / 3);
		}
		vec_push(&r->cs_out, parent);
		vec_push(&r->cs_out, r->frame_idx[f] - 1);
		parent = (uint32_t)(r->cs_out.len / 2 - 1);
		r->cs_idx[k] = parent + 1;
	}
	return (size_t)id < r->st.callsites.len && r->cs_idx[id] ? r->cs_idx[id] - 1 : UINT32_MAX;
}

static uint32_t report_index(struct hmap *m, struct traceconv_ids *list, uint64_t key)
{
	bool is_new;
	uint64_t *v = hmap_upsert(m, key, &is_new);
	if (is_new) {
		*v = list->len;
		vec_push(list, (uint32_t)key);
	}
	return (uint32_t)*v;
}

static int report_samples(struct report *r)
{
	sqlite3_stmt *st = NULL;
	int rc;
	const char *sql = "SELECT ts, coalesce(utid, 0), callsite_id, event_name"
	                  " FROM __intrinsic_perf_sample WHERE callsite_id IS NOT NULL"
	                  " ORDER BY ts, id";
	if (sqlite3_prepare_v2(tp_db(r->tp), sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t cs = report_callsite(r, sqlite3_column_int64(st, 2));
		if (cs == UINT32_MAX)
			continue; /* a callsite the tables do not have */
		vec_push(&r->ts, sqlite3_column_int64(st, 0));
		vec_push(&r->th, report_index(&r->thread_idx, &r->threads_out,
		                              (uint64_t)sqlite3_column_int64(st, 1)));
		vec_push(&r->cs, cs);
		const char *ev = (const char *)sqlite3_column_text(st, 3);
		uint32_t evs = ev ? strpool_intern_cstr(&r->st.strings, ev) : 0;
		vec_push(&r->ev, report_index(&r->event_idx, &r->events_out, evs));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* s as a JSON string. */
static void report_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void report_json_ids(FILE *out, const char *key, const struct traceconv_ids *v)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < v->len; i++)
		fprintf(out, i ? ",%d" : "%d", v->data[i] == UINT32_MAX ? -1 : (int)v->data[i]);
	fputc(']', out);
}

/* Threads as [tid, pid, name, process name] quads (string ids). */
static int report_threads(struct report *r, FILE *out)
{
	sqlite3_stmt *st = NULL;
	const char *sql = "SELECT t.tid, coalesce(p.pid, -1), t.name, p.name FROM thread t"
	                  " LEFT JOIN process p USING (upid) WHERE t.utid = ?1";
	if (sqlite3_prepare_v2(tp_db(r->tp), sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	struct traceconv_ids names = VEC_INIT;
	VEC(int64_t) ids = VEC_INIT;
	for (size_t i = 0; i < r->threads_out.len; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, r->threads_out.data[i]);
		bool row = sqlite3_step(st) == SQLITE_ROW;
		vec_push(&ids, row ? sqlite3_column_int64(st, 0) : 0);
		vec_push(&ids, row ? sqlite3_column_int64(st, 1) : -1);
		vec_push(&names, row ? report_str_col(r, st, 2) : 0);
		vec_push(&names, row ? report_str_col(r, st, 3) : 0);
	}
	sqlite3_finalize(st);
	fputs(",\"threads\":[", out);
	for (size_t i = 0; i < r->threads_out.len; i++)
		fprintf(out, "%s%lld,%lld,%u,%u", i ? "," : "", (long long)ids.data[2 * i],
		        (long long)ids.data[2 * i + 1], names.data[2 * i], names.data[2 * i + 1]);
	fputc(']', out);
	vec_release(&names);
	vec_release(&ids);
	return 0;
}

static int report_json(struct report *r, FILE *out, const char *title)
{
	for (size_t i = 0; i < r->events_out.len; i++)
		r->events_out.data[i] = report_str(r, r->events_out.data[i]);
	fputs("{\"v\":1,\"title\":", out);
	report_json_str(out, title);
	if (report_threads(r, out) < 0)
		return -1;
	fputs(",\"frames\":[", out);
	for (size_t i = 0; i < r->frames_out.len; i += 3)
		fprintf(out, "%s%u,%u,%lld", i ? "," : "", r->frames_out.data[i],
		        r->frames_out.data[i + 1],
		        (long long)r->st.frames.data[r->frames_out.data[i + 2]].rel_pc);
	fputc(']', out);
	report_json_ids(out, "cs", &r->cs_out);
	report_json_ids(out, "events", &r->events_out);
	fprintf(out, ",\"t0\":\"%lld\",\"ts\":[", r->ts.len ? (long long)r->ts.data[0] : 0LL);
	for (size_t i = 0; i < r->ts.len; i++)
		fprintf(out, i ? ",%lld" : "%lld",
		        (long long)(i ? r->ts.data[i] - r->ts.data[i - 1] : 0));
	fputc(']', out);
	report_json_ids(out, "th", &r->th);
	report_json_ids(out, "st", &r->cs);
	report_json_ids(out, "ev", &r->ev);
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < r->strs.len; i++) {
		if (i)
			fputc(',', out);
		report_json_str(out, traceconv_str(&r->st, r->strs.data[i]));
	}
	fputs("]}", out);
	return 0;
}

int traceconv_report(int in_fd, const char *in_name, FILE *out)
{
	struct report r = {0};
	int rc = -1;

	hmap_init(&r.strmap);
	hmap_init(&r.thread_idx);
	hmap_init(&r.event_idx);
	if (!(r.tp = traceconv_load(in_fd, in_name, NULL, NULL)))
		goto out;
	if (traceconv_stacks_load(&r.st, r.tp) < 0)
		goto out;
	report_str(&r, 0); /* "" first */
	r.frame_idx = tb_calloc(r.st.frames.len + 1, sizeof *r.frame_idx);
	r.cs_idx = tb_calloc(r.st.callsites.len + 1, sizeof *r.cs_idx);
	if (report_samples(&r) < 0) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(r.tp)));
		goto out;
	}
	if (r.ts.len == 0) {
		fprintf(stderr, "traceconv: '%s' has no perf samples with callstacks\n", in_name);
		goto out;
	}
	const char *tpl = traceconv_report_html, *mark = strstr(tpl, REPORT_MARKER);
	TB_CHECK(mark);
	const char *base = strrchr(in_name, '/');
	fwrite(tpl, 1, (size_t)(mark - tpl), out);
	if (report_json(&r, out, base ? base + 1 : in_name) < 0) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(r.tp)));
		goto out;
	}
	fputs(mark + strlen(REPORT_MARKER), out);
	rc = 0;
out:
	hmap_release(&r.strmap);
	hmap_release(&r.thread_idx);
	hmap_release(&r.event_idx);
	traceconv_stacks_release(&r.st);
	tb_free(r.frame_idx);
	tb_free(r.cs_idx);
	vec_release(&r.strs);
	vec_release(&r.frames_out);
	vec_release(&r.cs_out);
	vec_release(&r.threads_out);
	vec_release(&r.events_out);
	vec_release(&r.ts);
	vec_release(&r.th);
	vec_release(&r.cs);
	vec_release(&r.ev);
	tp_free(r.tp);
	return rc;
}
