/*
 * The trace processor's front door: tp_new/tp_parse/tp_end_of_file.
 *
 * tp_parse() unwraps gzip (sniffed from the magic bytes), then holds back the
 * first few hundred bytes until the format can be sniffed, creates that
 * format's importer and streams everything to it. Importers tokenize, push
 * events into the sorter, and at end of file the sorter hands them back in
 * timestamp order to be parsed into the tables.
 *
 * A zip or tar is streamed into io/archive.c instead; at end of file its
 * members are imported one after another, each through the importer its
 * first bytes select (gzip'd members unwrapped), in Perfetto's order:
 * protobuf traces first, then gzip'd members, then the rest, by name within
 * each group. Each member is sorted on its own (Perfetto sorts them all
 * together; the tables differ only where members interleave on one track).
 * The first protobuf member's clock snapshots convert the timestamps of the
 * later text members (tp->clock_sync, tp_trace_time).
 * A trace manifest member (importers/manifest/) goes before all of them; once
 * read, it plans the others: each member's machine and the shift of its
 * timestamps onto the merged timeline (manifest_before, manifest_plan).
 * Every file gets a `trace_file` row.
 */
#include "tp_int.h"
#include "model/model.h"
#include "model/ftrace.h"
#include "sorter/sorter.h"
#include "importers/importer.h"
#include "sql/sql.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "model/slices.h"
#include "importers/manifest/manifest.h"

#define SNIFF_BYTES 512
/* A trace without a uuid of its own gets one from a hash of this many of
 * its first bytes (as read, before any decompression), as in Perfetto. */
#define UUID_HASH_BYTES 4096

struct tp *tp_new(const struct tp_config *cfg)
{
	struct tp *tp = tb_calloc(1, sizeof *tp);
	if (cfg)
		tp->cfg = *cfg;
	tp->archive_max_bytes = TP_ARCHIVE_MAX_BYTES;
	strpool_init(&tp->strings);
	tp_tracks_init(tp);
	tp_events_init(tp);
	tp_ftrace_rows_init(tp);
	tp_args_init(tp);
	tp->sorter = tp_sorter_new();
	tp->trace_type = "unknown";
	tp->ts_min = INT64_MAX;
	tp->ts_max = INT64_MIN;
	tp->head_hash = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
	tp_slices_init(tp);
	/* The host machine (row 0, raw id 0) and its swapper, utid 0 / upid
	 * 0: the placeholders Perfetto always has. */
	tp_machine_for_raw(tp, 0);
	if (tp_sql_open(tp) != 0) {
		/* Only a defect of ours (a built-in view or module that does not
		 * prepare) gets here: say which before stopping. */
		log_error("tp", "%s", tp_error(tp));
		TB_CHECK(!"cannot open the in-memory database");
	}
	for (size_t i = 0; i < tp->cfg.npackages; i++) {
		char err[1024];
		if (tp_register_sql_package(tp, &tp->cfg.packages[i], err, sizeof err) < 0) {
			tp_fail(tp, -EINVAL, "%s", err);
			break;
		}
	}
	return tp;
}

void tp_free(struct tp *tp)
{
	if (!tp)
		return;
	for (size_t i = 0; i < tp->pending_symbols.len; i++)
		tb_free(tp->pending_symbols.data[i]);
	vec_release(&tp->pending_symbols);
	tp_sql_close(tp);
	tp_sql_packages_free(tp);
	if (tp->importer)
		tp->importer_ops->destroy(tp->importer);
	tp_gunzip_free(tp->gunzip);
	tp_archive_free(tp->archive);
	tp_manifest_plan_free(tp);
	tb_free(tp->sniff_buf);
	tp_sorter_free(tp->sorter);
	tp_slices_release(tp);
	tp_args_builder_release(&tp->args_scratch);
	tp_machines_release(tp);
	vec_release(&tp->tid_prev);
	vec_release(&tp->thread_name_prio);
	tp_tracks_release(tp);
	tp_events_release(tp);
	tp_args_free(tp);
	tp_profiler_free(tp);
	if (tp->clock_sync.free)
		tp->clock_sync.free(tp->clock_sync.ctx);
	tp_tables_release(&tp->t);
	tp_ftrace_rows_release(tp);
	vec_release(&tp->istats);
	hmap_release(&tp->istat_pos);
	strpool_release(&tp->strings);
	tb_free(tp);
}

int64_t tp_trace_time_slow(struct tp *tp, uint32_t clock, int64_t ts)
{
	int64_t out;
	return tp->clock_sync.convert(tp->clock_sync.ctx, clock, ts, &out) ? out : ts;
}

int tp_fail(struct tp *tp, int code, const char *fmt, ...)
{
	if (tb_err_is_set(&tp->err))
		return code;
	va_list ap;
	va_start(ap, fmt);
	tp->err.code = code ? code : -EINVAL;
	vsnprintf(tp->err.msg, sizeof tp->err.msg, fmt, ap);
	va_end(ap);
	return code;
}

const char *tp_error(const struct tp *tp)
{
	return tp->err.msg;
}

const char *tp_trace_type(const struct tp *tp)
{
	return tp->trace_type;
}

struct sqlite3 *tp_db(struct tp *tp)
{
	return tp->db;
}

uint64_t tp_bytes_parsed(const struct tp *tp)
{
	return tp->bytes_parsed;
}

uint32_t tp_intern_cstr(struct tp *tp, const char *s)
{
	return s ? strpool_intern(&tp->strings, s, strlen(s)) : 0;
}

/* The importer whose sniffer accepts the first bytes p[0, n), or NULL. */
static const struct tp_importer_ops *sniff(const uint8_t *p, size_t n)
{
	/* A trace manifest is JSON too: it is looked for first. */
	if (tp_manifest_importer.sniff(p, n))
		return &tp_manifest_importer;
	for (const struct tp_importer_ops *const *imp = tp_importers; *imp; imp++)
		if ((*imp)->sniff(p, n))
			return *imp;
	return NULL;
}

static uint32_t trace_file_add(struct tp *tp, const char *name, int64_t size, const char *type,
                               bool container)
{
	struct tp_trace_file_table *t = &tp->t.trace_file;
	uint32_t row = tp_trace_file_append(t);
	t->parent_id[row] = row ? 0 : TP_NULL_U32;
	t->name[row] = tp_intern_cstr(tp, name);
	t->size[row] = size;
	t->trace_type[row] = tp_intern_cstr(tp, type);
	t->is_container[row] = container;
	return row;
}

/* Enough bytes arrived (or the input ended): an archive, or the importer
 * the sniff picks, which gets the held-back bytes. */
static int start(struct tp *tp)
{
	enum tp_archive_kind kind;
	if (tp_archive_sniff(tp->sniff_buf, tp->sniff_len, &kind)) {
		tp->archive = tp_archive_new(kind);
		tp->trace_type = kind == TP_ARCHIVE_ZIP ? "zip" : "tar";
		return tp_archive_feed(tp->archive, tp->sniff_buf, tp->sniff_len, &tp->err);
	}
	tp->importer_ops = sniff(tp->sniff_buf, tp->sniff_len);
	if (!tp->importer_ops)
		return tp_fail(tp, -EINVAL, "unknown trace format");
	tp->importer = tp->importer_ops->create(tp);
	tp->trace_type = tp->importer_ops->name;
	return tp->importer_ops->parse(tp->importer, tp->sniff_buf, tp->sniff_len);
}

/* Decoded bytes: sniff once enough arrived, then stream to the importer. */
static int feed_decoded_(struct tp *tp, const uint8_t *p, size_t n)
{
	if (tp->importer)
		return tp->importer_ops->parse(tp->importer, p, n);
	if (tp->archive) {
		int rc = tp_archive_feed(tp->archive, p, n, &tp->err);
		if (rc == -EFBIG)
			tp_stat_inc(tp, TP_STAT_archive_member_too_large);
		return rc;
	}
	size_t want = SNIFF_BYTES - tp->sniff_len;
	size_t take = n < want ? n : want;
	if (!tp->sniff_buf)
		tp->sniff_buf = tb_malloc(SNIFF_BYTES);
	memcpy(tp->sniff_buf + tp->sniff_len, p, take);
	tp->sniff_len += take;
	if (tp->sniff_len < SNIFF_BYTES)
		return 0;
	int rc = start(tp);
	if (rc == 0 && n > take)
		rc = feed_decoded_(tp, p + take, n - take);
	return rc;
}

static int feed_decoded(void *ctx, const uint8_t *p, size_t n)
{
	struct tp *tp = ctx;
	tp->bytes_decoded += n;
	return feed_decoded_(tp, p, n);
}

/* ---- archives ------------------------------------------------------------- */

/* A member's decoded bytes, its importer and its place in the order. */
struct member {
	size_t index; /* archive order */
	/* Perfetto's archive_priority: a manifest -1, proto 0, gzip 1, others 2 */
	int priority;
	const char *name;
	const struct tp_importer_ops *ops;
	uint8_t *data;
	size_t len;
	uint32_t row; /* trace_file row */
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* A gzip'd member being decoded, with the room left in the archive's cap. */
struct gunzip_out {
	struct tp_archive_member m;
	uint64_t room, compressed;
	bool over, bomb;
};

static int gunzip_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct gunzip_out *g = ctx;
	struct tp_archive_member *out = &g->m;
	if (n > g->room - out->len) {
		g->over = true;
		return -EFBIG;
	}
	if (tp_archive_is_bomb(g->compressed, out->len + n)) {
		g->bomb = true;
		return -EFBIG;
	}
	if (out->len + n > out->cap) {
		out->cap = out->cap ? out->cap : 65536;
		while (out->cap < out->len + n)
			out->cap *= 2;
		uint8_t *data = tb_try_realloc(out->data, out->cap);
		if (!data)
			return -ENOMEM;
		out->data = data;
	}
	memcpy(out->data + out->len, p, n);
	out->len += n;
	return 0;
}

/* Sniff member m (unwrapping gzip in place); -EINVAL (err set) when its
 * format is unknown. *held is the bytes all members hold: a gzip'd member's
 * decoded bytes replace its own in it, within tp->archive_max_bytes. */
static int member_sniff(struct tp *tp, struct tp_archive_member *am, struct member *m,
                        uint64_t *held)
{
	enum tp_archive_kind kind;
	m->priority = 2;
	if (am->len >= 2 && am->data[0] == 0x1f && am->data[1] == 0x8b) {
		uint64_t others = *held - am->len;
		struct gunzip_out out = {
		    .room = others < tp->archive_max_bytes ? tp->archive_max_bytes - others : 0,
		    .compressed = am->len};
		struct tp_gunzip *g = tp_gunzip_new();
		int rc = tp_gunzip_feed(g, am->data, am->len, gunzip_sink, &out, &tp->err);
		if (rc == 0)
			rc = tp_gunzip_finish(g, gunzip_sink, &out, &tp->err);
		tp_gunzip_free(g);
		if (rc < 0) {
			tb_free(out.m.data);
			if (out.bomb) {
				tb_err_clear(&tp->err);
				tp_stat_inc(tp, TP_STAT_archive_member_too_large);
				return tp_fail(
				    tp, -EFBIG,
				    "archive member '%s' inflates more than %u times its "
				    "compressed size (a decompression bomb?): refused",
				    am->name, TP_ARCHIVE_MAX_RATIO);
			}
			if (out.over) {
				tb_err_clear(&tp->err);
				return tp_fail(
				    tp, -EFBIG,
				    "archive member '%s': the members decompress to more "
				    "than %" PRIu64 " bytes in all",
				    am->name, tp->archive_max_bytes);
			}
			return tp_fail(tp, -EINVAL, "cannot decode the gzip'd archive member '%s'",
			               am->name);
		}
		tb_free(am->data);
		*held = others + out.m.len;
		am->data = out.m.data;
		am->len = out.m.len;
		m->priority = 1;
	}
	size_t n = am->len < SNIFF_BYTES ? am->len : SNIFF_BYTES;
	if (tp_archive_sniff(am->data, n, &kind))
		return tp_fail(tp, -EINVAL,
		               "archive member '%s' is an archive itself: not supported", am->name);
	m->ops = sniff(am->data, n);
	if (!m->ops)
		return tp_fail(tp, -EINVAL, "unknown trace format in archive member '%s'",
		               am->name);
	if (m->priority == 2 && !strcmp(m->ops->name, "proto"))
		m->priority = 0;
	if (m->priority == 2 && m->ops == &tp_manifest_importer)
		m->priority = -1;
	m->name = am->name;
	m->data = am->data;
	m->len = am->len;
	return 0;
}

/* The checks Perfetto makes before importing member i where a manifest is
 * involved, then the member's machine and shift from the manifest's plan. */
static int manifest_before(struct tp *tp, const struct member *ms, size_t n, size_t i,
                           bool traces_seen)
{
	(void)n;
	const struct tp_mf_file *e = tp_manifest_file(tp->manifest, ms[i].name);
	bool is_manifest = ms[i].ops == &tp_manifest_importer;
	if (is_manifest && e && (e->has_clocks || e->machine || e->has_machines))
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: overrides are not supported for trace files "
		               "which are themselves archives or perfetto_manifest files: %s",
		               e->path);
	if (is_manifest && traces_seen)
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest file must be the first trace file in the input");
	if (!is_manifest)
		tp_manifest_begin_member(tp, i);
	return 0;
}

/* The manifest (the first member) was read: plan the members with it. */
static int manifest_plan(struct tp *tp, const struct member *ms, size_t n)
{
	if (!tp->manifest)
		return 0;
	struct tp_mf_member *mm = tb_calloc(n ? n : 1, sizeof *mm);
	for (size_t i = 0; i < n; i++)
		mm[i] = (struct tp_mf_member){.name = ms[i].name,
		                              .data = ms[i].data,
		                              .len = ms[i].len,
		                              .is_proto = !strcmp(ms[i].ops->name, "proto"),
		                              .is_manifest = ms[i].ops == &tp_manifest_importer};
	int rc = tp_manifest_plan(tp, mm, n);
	tb_free(mm);
	return rc;
}

/* Import every member of the finished archive. */
static int import_archive(struct tp *tp)
{
	int rc = tp_archive_finish(tp->archive, &tp->err);
	size_t n = tp_archive_count(tp->archive), k = 0;
	struct member *ms = tb_calloc(n ? n : 1, sizeof *ms);
	uint64_t held = 0;
	for (size_t i = 0; i < n; i++)
		held += tp_archive_member(tp->archive, i)->len;
	trace_file_add(tp, NULL, (int64_t)tp->bytes_parsed, tp->trace_type, true);
	tp->t.trace_file.processing_order[0] = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct tp_archive_member *am = tp_archive_member(tp->archive, i);
		if (am->len == 0)
			continue; /* nothing to import (Perfetto would not know its type) */
		ms[k].index = i;
		rc = member_sniff(tp, am, &ms[k], &held);
		if (rc == 0)
			ms[k].row = trace_file_add(tp, am->name, (int64_t)am->size,
			                           ms[k].priority == 1 ? "gzip" : ms[k].ops->name,
			                           ms[k].priority == 1);
		k++;
	}
	if (rc == 0)
		qsort(ms, k, sizeof *ms, member_cmp);
	bool traces_seen = false; /* a member other than a manifest was imported */
	for (size_t i = 0; i < k && rc == 0; i++) {
		tp->t.trace_file.processing_order[ms[i].row] = (int64_t)i + 1;
		tp->trace_id = ms[i].row; /* the trace_id of its metadata */
		rc = manifest_before(tp, ms, k, i, traces_seen);
		if (rc < 0)
			break;
		traces_seen |= ms[i].ops != &tp_manifest_importer;
		tp->importer_ops = ms[i].ops;
		tp->importer = ms[i].ops->create(tp);
		rc = ms[i].ops->parse(tp->importer, ms[i].data, ms[i].len);
		if (rc == 0 && !tb_err_is_set(&tp->err))
			rc = ms[i].ops->eof(tp->importer);
		if (rc == 0 && tb_err_is_set(&tp->err))
			rc = tp->err.code;
		ms[i].ops->destroy(tp->importer);
		tp->importer = NULL;
		tp->importer_ops = NULL;
		tp->ts_shift = 0;
		tp->ts_raw = false;
		tp_machine_use(tp, 0);
		if (rc == 0 && ms[i].ops == &tp_manifest_importer && !tp->mplan)
			rc = manifest_plan(tp, ms, k);
		/* Each member is sorted on its own: a fresh sorter takes the next
		 * one's events even where they precede what was delivered. */
		tp_sorter_free(tp->sorter);
		tp->sorter = tp_sorter_new();
		/* The member's bytes are not needed any more. */
		struct tp_archive_member *am = tp_archive_member(tp->archive, ms[i].index);
		tb_free(am->data);
		am->data = NULL;
		am->len = am->cap = 0;
	}
	tb_free(ms);
	tp->trace_id = 0;
	return rc < 0 ? (tp->err.code ? tp->err.code : rc) : 0;
}

int tp_parse(struct tp *tp, const uint8_t *buf, size_t len)
{
	if (tb_err_is_set(&tp->err))
		return tp->err.code;
	if (tp->eof)
		return tp_fail(tp, -EINVAL, "tp_parse after tp_end_of_file");
	if (tp->whole_done)
		return tp_fail(tp, -EINVAL, "tp_parse after tp_parse_file");
	if (len == 0)
		return 0;
	if (tp->bytes_parsed == 0 && len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		tp->gunzip = tp_gunzip_new_async();
	for (uint64_t i = tp->bytes_parsed; i < UUID_HASH_BYTES && i - tp->bytes_parsed < len; i++)
		tp->head_hash = (tp->head_hash ^ buf[i - tp->bytes_parsed]) * 0x100000001b3ull;
	tp->bytes_parsed += len;
	int rc;
	if (tp->gunzip) {
		rc = tp_gunzip_feed(tp->gunzip, buf, len, feed_decoded, tp, &tp->err);
		if (rc < 0 && !tb_err_is_set(&tp->err))
			tp_fail(tp, rc, "cannot decode the trace");
	} else {
		rc = feed_decoded(tp, buf, len);
	}
	return rc < 0 ? tp->err.code ? tp->err.code : rc : 0;
}

int tp_parse_file(struct tp *tp, const uint8_t *buf, size_t len)
{
	if (tp->bytes_parsed == 0 && !tp->whole_done) {
		tp->whole = buf;
		tp->whole_len = len;
	}
	int rc = tp_parse(tp, buf, len);
	tp->whole_done = true;
	return rc;
}

int tp_end_of_file(struct tp *tp)
{
	if (tb_err_is_set(&tp->err))
		return tp->err.code;
	if (tp->eof)
		return 0;
	int rc = 0;
	/* The decoded bytes a helper thread still holds (io/gunzip.c), parsed
	 * before the trace counts as complete. */
	if (tp->gunzip) {
		rc = tp_gunzip_finish(tp->gunzip, feed_decoded, tp, &tp->err);
		if (rc < 0 && !tb_err_is_set(&tp->err))
			tp_fail(tp, rc, "cannot decode the trace");
		if (rc < 0)
			return tp->err.code;
	}
	tp->eof = true;

	/* An empty input is an empty trace (type "unknown"), as in Perfetto:
	 * queries run against empty tables (its diff tests of SQL functions
	 * use one). */
	bool empty = !tp->importer && !tp->archive && tp->sniff_len == 0;
	if (!tp->importer && !tp->archive && !empty) {
		rc = start(tp);
		if (rc < 0)
			return tp->err.code ? tp->err.code : rc;
	}
	if (tp->archive) {
		rc = import_archive(tp);
	} else {
		trace_file_add(tp, NULL, (int64_t)tp->bytes_parsed, tp->trace_type, false);
		tp->t.trace_file.processing_order[0] = 0;
		if (!empty && !tb_err_is_set(&tp->err))
			rc = tp->importer_ops->eof(tp->importer);
	}
	/* An importer may record a fatal error without returning one. */
	if (rc < 0 || tb_err_is_set(&tp->err))
		return tp->err.code ? tp->err.code : rc;
	tp_slices_finish(tp);
	tp_module_symbols_finish(tp);
	tp_tracks_finish(tp);
	tp_bounds_finish(tp);
	if (!tp_metadata_has(tp, "trace_uuid"))
		tp_metadata_set_uuid(tp, 0, tp->head_hash);
	/* As Perfetto: the trace's size once a gzip wrapper is taken off. */
	tp_metadata_set_int(tp, "trace_size_bytes",
	                    (int64_t)(tp->gunzip ? tp->bytes_decoded : tp->bytes_parsed));
	tp_metadata_set_str(tp, "trace_type", tp_intern_cstr(tp, tp->trace_type));
	return 0;
}
