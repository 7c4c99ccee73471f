/*
 * traceconv report: the trace's perf samples as one self-contained HTML file
 * with a ranked table of functions and interactive flame graphs, or with
 * --json the report model alone (model.c). The page (report.html: markup,
 * CSS and JS, no network) is embedded at build time; this file fills in its
 * data: one JSON object in place of the template's @TRACEBOX_DATA@ marker.
 *
 *   {"v":2, "title":"trace name",
 *    "capture":{...},               the model's capture object (model.c)
 *    "strings":["", ...],           string table, "" first
 *    "frames":[name, mapping, rel_pc, ...],     per frame: string ids, number
 *    "cs":[parent, frame, ...],     callsites, parent -1 at the root; a
 *                                   parent always comes before its children
 *    "threads":[tid, pid, name, process_name, ...]   pid -1 when unknown
 *    "events":[name, ...],          event string ids
 *    "t0":"first ts (ns, decimal string)",
 *    "ts":[delta ns, ...], "th":[thread, ...], "st":[callsite, ...],
 *    "ev":[event, ...],             one entry per row, in ts order
 *    "bucket_ns":N, "n":[count, ...]}   only past REPORT_EXACT_MAX samples:
 *                                   a row is then the samples of one
 *                                   (time bucket, thread, callsite, event),
 *                                   ts its bucket's start (buckets are made
 *                                   coarser until at most REPORT_MAX_ROWS
 *                                   rows remain); else a row is a sample
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
#include "traceconv_report_html_gz.h"

#define REPORT_MARKER "@TRACEBOX_DATA@"
/* report.html, inflated when first written (build.sh embeds it gzip'd). */
static char report_tpl[traceconv_report_html_len + 1];
/* Up to this many samples the page gets each one; past it, samples are
 * counted per (time bucket, thread, callsite, event) over at most
 * REPORT_BUCKETS buckets, which keeps the page small (and fast) for long
 * captures: the timeline's resolution is what is given up. */
#define REPORT_EXACT_MAX 100000
#define REPORT_BUCKETS 1000
/* Past this many rows the buckets are merged pairwise until it fits: a
 * row is ~15 bytes of the page. */
#define REPORT_MAX_ROWS 150000

struct report {
	struct traceconv_model m; /* owns the stack tables (m.st) */
	struct tp *tp;
	struct hmap strmap;        /* stack string id -> output index */
	struct traceconv_ids strs; /* output index -> stack string id */
	uint32_t *frame_idx;       /* frame id -> output index + 1, 0 unused */
	uint32_t *cs_idx;          /* callsite id -> output index + 1, 0 unused */
	struct traceconv_ids frames_out, cs_out;
	struct hmap thread_idx, event_idx; /* utid / string id -> output index */
	struct traceconv_ids threads_out, events_out;
	VEC(int64_t) ts; /* per row: time (exact), or bucket start offset */
	struct traceconv_ids th, cs, ev;
	VEC(uint64_t) n; /* per row: samples (aggregated only) */
	bool aggregate;
	int64_t t0, bucket_ns, bucket;
	struct hmap in_bucket; /* (th, cs, ev) -> row, for the current bucket */
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

static uint32_t report_str_c(struct report *r, const char *s)
{
	return report_str(r, s ? strpool_intern_cstr(&r->m.st.strings, s) : 0);
}

/* Output index of callsite id, numbering it and its ancestors on first use
 * (ancestors first, so parents precede children in the output). */
static uint32_t report_callsite(struct report *r, int64_t id)
{
	const struct traceconv_stacks *st = &r->m.st;
	int64_t chain[64];
	size_t depth = 0;
	int64_t c = id, prev = INT64_MAX;
	uint32_t parent = UINT32_MAX;

	while (c >= 0 && c < prev && (size_t)c < st->callsites.len && !r->cs_idx[c]) {
		if (depth == sizeof chain / sizeof chain[0]) {
			/* Deep stack: number the part above first. */
			report_callsite(r, c);
			break;
		}
		chain[depth++] = c;
		prev = c;
		c = st->callsites.data[c].parent;
	}
	if (c >= 0 && (size_t)c < st->callsites.len && r->cs_idx[c])
		parent = r->cs_idx[c] - 1;
	while (depth > 0) {
		int64_t k = chain[--depth];
		uint32_t f = st->callsites.data[k].frame;
		if (f >= st->frames.len)
			break;
		if (!r->frame_idx[f]) {
			const struct traceconv_frame *fr = &st->frames.data[f];
			uint32_t map = fr->mapping < st->mappings.len
			                   ? st->mappings.data[fr->mapping].name
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
	return (size_t)id < st->callsites.len && r->cs_idx[id] ? r->cs_idx[id] - 1 : UINT32_MAX;
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

/* Every sample with a callsite, in ts order (from the model's pass). */
static void report_row(void *ctx, int64_t ts, int64_t utid, int64_t callsite, const char *event)
{
	struct report *r = ctx;
	if (!r->frame_idx) { /* the stack tables are loaded by now */
		r->frame_idx = tb_calloc(r->m.st.frames.len + 1, sizeof *r->frame_idx);
		r->cs_idx = tb_calloc(r->m.st.callsites.len + 1, sizeof *r->cs_idx);
	}
	uint32_t cs = report_callsite(r, callsite);
	if (cs == UINT32_MAX)
		return; /* a callsite the tables do not have */
	uint32_t th = report_index(&r->thread_idx, &r->threads_out, (uint64_t)utid);
	uint32_t evs = event ? strpool_intern_cstr(&r->m.st.strings, event) : 0;
	uint32_t ev = report_index(&r->event_idx, &r->events_out, evs);
	if (r->aggregate) {
		int64_t b = r->bucket_ns ? (ts - r->t0) / r->bucket_ns : 0;
		if (b != r->bucket || !r->ts.len) {
			hmap_clear(&r->in_bucket);
			r->bucket = b;
		}
		uint64_t key = ((uint64_t)cs << 32) ^ ((uint64_t)th << 12) ^ ev;
		bool is_new;
		uint64_t *v = hmap_upsert(&r->in_bucket, key, &is_new);
		if (!is_new && r->cs.data[*v] == cs && r->th.data[*v] == th &&
		    r->ev.data[*v] == ev) {
			r->n.data[*v]++;
			return;
		}
		*v = r->ts.len; /* (a rare key collision just starts another row) */
		vec_push(&r->ts, r->t0 + b * r->bucket_ns);
		vec_push(&r->n, 1);
	} else {
		vec_push(&r->ts, ts);
	}
	vec_push(&r->th, th);
	vec_push(&r->cs, cs);
	vec_push(&r->ev, ev);
}

/* Halve the time resolution of aggregated rows: buckets merge pairwise,
 * rows of one (bucket, thread, callsite, event) add up. Rows stay in time
 * order. */
static void report_coarsen(struct report *r)
{
	struct hmap seen;
	size_t out = 0, bucket_start = 0;
	int64_t cur = INT64_MIN;
	r->bucket_ns *= 2;
	hmap_init(&seen);
	for (size_t i = 0; i < r->ts.len; i++) {
		int64_t b = (r->ts.data[i] - r->t0) / r->bucket_ns;
		if (b != cur) {
			hmap_clear(&seen);
			cur = b;
			bucket_start = out;
		}
		uint64_t key = ((uint64_t)r->cs.data[i] << 32) ^ ((uint64_t)r->th.data[i] << 12) ^
		               r->ev.data[i];
		bool is_new;
		uint64_t *v = hmap_upsert(&seen, key, &is_new);
		if (!is_new && *v >= bucket_start && r->cs.data[*v] == r->cs.data[i] &&
		    r->th.data[*v] == r->th.data[i] && r->ev.data[*v] == r->ev.data[i]) {
			r->n.data[*v] += r->n.data[i];
			continue;
		}
		*v = out;
		r->ts.data[out] = r->t0 + b * r->bucket_ns;
		r->th.data[out] = r->th.data[i];
		r->cs.data[out] = r->cs.data[i];
		r->ev.data[out] = r->ev.data[i];
		r->n.data[out] = r->n.data[i];
		out++;
	}
	r->ts.len = r->th.len = r->cs.len = r->ev.len = r->n.len = out;
	hmap_release(&seen);
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
		vec_push(&names,
		         row ? report_str_c(r, (const char *)sqlite3_column_text(st, 2)) : 0);
		vec_push(&names,
		         row ? report_str_c(r, (const char *)sqlite3_column_text(st, 3)) : 0);
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
	fputs("{\"v\":2,\"title\":", out);
	traceconv_json_str(out, title);
	fputs(",\"capture\":", out);
	traceconv_model_capture_json(&r->m, out);
	if (report_threads(r, out) < 0)
		return -1;
	fputs(",\"frames\":[", out);
	for (size_t i = 0; i < r->frames_out.len; i += 3)
		fprintf(out, "%s%u,%u,%lld", i ? "," : "", r->frames_out.data[i],
		        r->frames_out.data[i + 1],
		        (long long)r->m.st.frames.data[r->frames_out.data[i + 2]].rel_pc);
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
	if (r->aggregate) {
		fprintf(out, ",\"bucket_ns\":%lld,\"n\":[", (long long)r->bucket_ns);
		for (size_t i = 0; i < r->n.len; i++)
			fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)r->n.data[i]);
		fputc(']', out);
	}
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < r->strs.len; i++) {
		if (i)
			fputc(',', out);
		traceconv_json_str(out, traceconv_str(&r->m.st, r->strs.data[i]));
	}
	fputs("]}", out);
	return 0;
}

static void report_span_row(void *ctx, sqlite3_stmt *row)
{
	int64_t *v = ctx;
	for (int i = 0; i < 3; i++)
		v[i] = sqlite3_column_int64(row, i);
}

int traceconv_report(int in_fd, const char *in_name, FILE *out,
                     const struct traceconv_report_opts *o)
{
	struct report r = {0};
	int64_t span[3] = {0, 0, 0};
	int rc = -1;

	hmap_init(&r.strmap);
	hmap_init(&r.thread_idx);
	hmap_init(&r.event_idx);
	hmap_init(&r.in_bucket);
	const char *base = strrchr(in_name, '/');
	base = base ? base + 1 : in_name;
	if (!(r.tp = traceconv_load(in_fd, in_name, NULL, NULL)))
		goto out;
	if (o->json) {
		if (traceconv_model_build(&r.m, r.tp, NULL, NULL) < 0)
			goto out;
		traceconv_model_json(&r.m, out, base);
		rc = 0;
		goto out;
	}
	if (traceconv_query_rows(r.tp,
	                         "SELECT count(*), min(ts), max(ts) FROM __intrinsic_perf_sample "
	                         "WHERE callsite_id IS NOT NULL",
	                         report_span_row, span) < 0)
		goto out;
	r.aggregate = span[0] > REPORT_EXACT_MAX;
	r.t0 = span[1];
	r.bucket_ns = (span[2] - span[1]) / REPORT_BUCKETS + 1;
	report_str(&r, 0); /* "" first */
	if (traceconv_model_build(&r.m, r.tp, report_row, &r) < 0)
		goto out;
	if (r.ts.len == 0) {
		fprintf(stderr, "traceconv: '%s' has no perf samples with callstacks\n", in_name);
		goto out;
	}
	while (r.aggregate && r.ts.len > REPORT_MAX_ROWS && r.bucket_ns < INT64_MAX / 4)
		report_coarsen(&r);
	if (!report_tpl[0])
		tb_embed_inflate(traceconv_report_html_gz, sizeof traceconv_report_html_gz,
		                 report_tpl, traceconv_report_html_len);
	const char *tpl = report_tpl, *mark = strstr(tpl, REPORT_MARKER);
	TB_CHECK(mark);
	fwrite(tpl, 1, (size_t)(mark - tpl), out);
	if (report_json(&r, out, base) < 0) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(r.tp)));
		goto out;
	}
	fputs(mark + strlen(REPORT_MARKER), out);
	rc = 0;
out:
	hmap_release(&r.strmap);
	hmap_release(&r.thread_idx);
	hmap_release(&r.event_idx);
	hmap_release(&r.in_bucket);
	traceconv_model_release(&r.m);
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
	vec_release(&r.n);
	if (r.tp)
		tp_free(r.tp);
	return rc;
}
