/*
 * The trace processor's front door: tp_new/tp_parse/tp_end_of_file.
 *
 * tp_parse() unwraps gzip (sniffed from the magic bytes), then holds back the
 * first few hundred bytes until the format can be sniffed, creates that
 * format's importer and streams everything to it. Importers tokenize, push
 * events into the sorter, and at end of file the sorter hands them back in
 * timestamp order to be parsed into the tables.
 */
#include "tp_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io/io.h"
#include "model/slices.h"

#define SNIFF_BYTES 512


struct tp *tp_new(const struct tp_config *cfg)
{
	struct tp *tp = tb_calloc(1, sizeof *tp);
	if (cfg)
		tp->cfg = *cfg;
	strpool_init(&tp->strings);
	hmap_init(&tp->pid_to_upid);
	hmap_init(&tp->tid_to_utid);
	hmap_init(&tp->thread_track);
	hmap_init(&tp->track_by_key);
	hmap_init(&tp->open_flows);
	hmap_init(&tp->active_states);
	hmap_init(&tp->flow_v1_keys);
	hmap_init(&tp->arg_sets);
	tp->sorter = tp_sorter_new();
	tp->trace_type = "unknown";
	tp->ts_min = INT64_MAX;
	tp->ts_max = INT64_MIN;
	tp_slices_init(tp);
	/* utid 0 / upid 0: the swapper placeholders Perfetto always has. */
	tp_process_for_pid(tp, 0);
	tp_thread_for_tid(tp, 0, 0);
	if (tp_sql_open(tp) != 0)
		TB_CHECK(!"cannot open the in-memory database");
	return tp;
}

void tp_free(struct tp *tp)
{
	if (!tp)
		return;
	tp_sql_close(tp);
	if (tp->importer)
		tp->importer_ops->destroy(tp->importer);
	tp_gunzip_free(tp->gunzip);
	tb_free(tp->sniff_buf);
	tp_sorter_free(tp->sorter);
	tp_slices_release(tp);
	tp_args_builder_release(&tp->args_scratch);
	hmap_release(&tp->pid_to_upid);
	hmap_release(&tp->tid_to_utid);
	hmap_release(&tp->thread_track);
	hmap_release(&tp->track_by_key);
	hmap_release(&tp->open_flows);
	hmap_release(&tp->active_states);
	hmap_release(&tp->flow_v1_keys);
	for (size_t i = 0; i < tp->flow_v1_maps.len; i++)
		hmap_release(&tp->flow_v1_maps.data[i]);
	vec_release(&tp->flow_v1_maps);
	vec_release(&tp->pending_flows);
	tp_track_keys_free(tp);
	tp_args_free(tp);
	tp_tables_release(&tp->t);
	strpool_release(&tp->strings);
	tb_free(tp);
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

/* Choose the importer from the first bytes of the (un-gzipped) trace. */
static int pick_importer(struct tp *tp, const uint8_t *p, size_t n)
{
	for (const struct tp_importer_ops *const *imp = tp_importers; *imp; imp++) {
		if ((*imp)->sniff(p, n)) {
			tp->importer_ops = *imp;
			tp->importer = (*imp)->create(tp);
			tp->trace_type = (*imp)->name;
			return 0;
		}
	}
	return tp_fail(tp, -EINVAL, "unknown trace format");
}

/* Decoded bytes: sniff once enough arrived, then stream to the importer. */
static int feed_decoded(void *ctx, const uint8_t *p, size_t n)
{
	struct tp *tp = ctx;
	if (tp->importer)
		return tp->importer_ops->parse(tp->importer, p, n);
	size_t want = SNIFF_BYTES - tp->sniff_len;
	size_t take = n < want ? n : want;
	if (!tp->sniff_buf)
		tp->sniff_buf = tb_malloc(SNIFF_BYTES);
	memcpy(tp->sniff_buf + tp->sniff_len, p, take);
	tp->sniff_len += take;
	if (tp->sniff_len < SNIFF_BYTES)
		return 0;
	int rc = pick_importer(tp, tp->sniff_buf, tp->sniff_len);
	if (rc == 0)
		rc = tp->importer_ops->parse(tp->importer, tp->sniff_buf, tp->sniff_len);
	if (rc == 0 && n > take)
		rc = tp->importer_ops->parse(tp->importer, p + take, n - take);
	return rc;
}

int tp_parse(struct tp *tp, const uint8_t *buf, size_t len)
{
	if (tb_err_is_set(&tp->err))
		return tp->err.code;
	if (tp->eof)
		return tp_fail(tp, -EINVAL, "tp_parse after tp_end_of_file");
	if (len == 0)
		return 0;
	if (tp->bytes_parsed == 0 && len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		tp->gunzip = tp_gunzip_new();
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

int tp_end_of_file(struct tp *tp)
{
	if (tb_err_is_set(&tp->err))
		return tp->err.code;
	if (tp->eof)
		return 0;
	tp->eof = true;
	int rc = 0;
	if (tp->gunzip && tp_gunzip_finish(tp->gunzip, &tp->err) < 0)
		return tp->err.code;
	if (!tp->importer) {
		if (tp->sniff_len == 0)
			return tp_fail(tp, -EINVAL, "the trace is empty");
		rc = pick_importer(tp, tp->sniff_buf, tp->sniff_len);
		if (rc == 0)
			rc = tp->importer_ops->parse(tp->importer, tp->sniff_buf, tp->sniff_len);
		if (rc < 0)
			return rc;
	}
	rc = tp->importer_ops->eof(tp->importer);
	if (rc < 0)
		return rc;
	tp_slices_finish(tp);
	tp_metadata_set_int(tp, "trace_size_bytes", (int64_t)tp->bytes_parsed);
	tp_metadata_set_str(tp, "trace_type", tp_intern_cstr(tp, tp->trace_type));
	return 0;
}
