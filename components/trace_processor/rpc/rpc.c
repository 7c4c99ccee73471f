/*
 * The trace processor RPC (Perfetto's TraceProcessorRpc, compat §5.4): a
 * byte stream of TraceProcessorRpcStream messages in, the same out, over
 * whichever transport (WebSocket, /rpc POST bodies, stdin/stdout).
 *
 *   stream  := (0x0A varint(len) TraceProcessorRpc[len])*     field 1, repeated
 *   request := seq (1), request (2) = method, one args field (101..116)
 *   reply   := seq (1) = our own counter, response (3) = method, one result
 *              (201..220); invalid_request (4) for a method we do not know
 *
 * Requests must be numbered consecutively (seq 0 restarts the count, as
 * when the UI reloads); a gap or a broken frame gets one reply carrying
 * fatal_error (5) and the transport is asked to disconnect. The RPC keeps
 * one trace processor: APPEND_TRACE_DATA after FINALIZE_TRACE_DATA starts a
 * new one, as Perfetto's does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"
#include "sqlite3.h"
#include "version.h"
#include "pb_fields.h"

#define ERR_FIELD_NOT_SET "RPC error: request field not set"
#define KEEP_RX_BYTES ((size_t)1 << 20)
#define PROGRESS_BYTES (50u * 1000 * 1000)

struct tp_rpc {
	struct tp_config default_cfg, cfg;
	struct tp *tp;
	bool eof;
	char *trace_name; /* NULL until a trace is loaded */
	int64_t rx_seq, tx_seq;
	VEC(uint8_t) rx; /* bytes of an incomplete stream message */
	bool failed;     /* a fatal error: the stream is dead until reset */
	struct pb_writer out;
	struct hmap initial; /* hashes of "type\0name" of the schema after load */
	bool have_initial;
	uint64_t bytes, bytes_last_progress;
	int64_t t_parse_start;
	bool (*full)(void *ctx);   /* flow control (tp_rpc_set_flow) */
	struct tp_result *pending; /* a QUERY_STREAMING paused by full() */
	void (*reset_hook)(void *ctx);
	void *reset_ctx;
};

/* ---- trace processor lifecycle ------------------------------------------ */

static void reset_tp(struct tp_rpc *rpc, const struct tp_config *cfg)
{
	if (rpc->tp && rpc->reset_hook)
		rpc->reset_hook(rpc->reset_ctx);
	/* A streaming query's rest goes; the messages queued after this one
	 * stay (drain_rx is running through them). */
	tp_result_free(rpc->pending);
	rpc->pending = NULL;
	rpc->cfg = *cfg;
	tp_free(rpc->tp);
	rpc->tp = tp_new(&rpc->cfg);
	rpc->eof = false;
	tb_free(rpc->trace_name);
	rpc->trace_name = NULL;
	hmap_clear(&rpc->initial);
	rpc->have_initial = false;
	rpc->bytes = rpc->bytes_last_progress = 0;
	rpc->t_parse_start = tb_mono_ns();
}

static uint64_t schema_key(const unsigned char *type, const unsigned char *name)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "%s%c%s", type, '\0', name);
	return tb_hash_bytes(buf,
	                     n < 0                    ? 0
	                     : (size_t)n < sizeof buf ? (size_t)n
	                                              : sizeof buf - 1,
	                     0);
}

#define SCHEMA_SQL                                                \
	"SELECT type, name, 'main' FROM sqlite_schema UNION ALL " \
	"SELECT type, name, 'temp' FROM sqlite_temp_schema"

void tp_schema_snapshot(struct tp *tp, struct hmap *initial)
{
	sqlite3_stmt *st = NULL;
	hmap_clear(initial);
	if (sqlite3_prepare_v2(tp_db(tp), SCHEMA_SQL, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		hmap_put(initial,
		         schema_key(sqlite3_column_text(st, 0), sqlite3_column_text(st, 1)), 1);
	sqlite3_finalize(st);
}

void tp_schema_restore(struct tp *tp, const struct hmap *initial)
{
	static const char *const order[] = {"view", "trigger", "index", "table"};
	sqlite3 *db = tp_db(tp);
	/* What user modules made goes too: their next INCLUDE runs them again. */
	tp_sql_packages_forget_includes(tp);
	/* Drop what users created since, views first (they may use tables). */
	for (size_t k = 0; k < TB_ARRAY_SIZE(order); k++) {
		VEC(char *) drops = VEC_INIT;
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, SCHEMA_SQL, -1, &st, NULL) != SQLITE_OK)
			return;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *type = sqlite3_column_text(st, 0);
			const unsigned char *name = sqlite3_column_text(st, 1);
			if (!type || !name || strcmp((const char *)type, order[k]) != 0 ||
			    strncmp((const char *)name, "sqlite_", 7) == 0 ||
			    hmap_get(initial, schema_key(type, name), NULL))
				continue;
			char *sql = sqlite3_mprintf("DROP %s IF EXISTS %s.\"%w\"", order[k],
			                            (const char *)sqlite3_column_text(st, 2), name);
			vec_push(&drops, tb_strdup(sql));
			sqlite3_free(sql);
		}
		sqlite3_finalize(st);
		for (size_t i = 0; i < drops.len; i++) {
			sqlite3_exec(db, drops.data[i], NULL, NULL, NULL);
			tb_free(drops.data[i]);
		}
		vec_release(&drops);
	}
}

/* What RESTORE_INITIAL_TABLES goes back to: the tables, views, indexes and
 * triggers there were once the trace was loaded. */
static void snapshot_schema(struct tp_rpc *rpc)
{
	tp_schema_snapshot(rpc->tp, &rpc->initial);
	rpc->have_initial = true;
}

void tp_rpc_restore_initial_tables(struct tp_rpc *rpc)
{
	if (!rpc->have_initial) {
		snapshot_schema(rpc);
		return;
	}
	tp_schema_restore(rpc->tp, &rpc->initial);
}

struct tp_rpc *tp_rpc_new(const struct tp_config *cfg, struct tp *preloaded, const char *trace_name)
{
	struct tp_rpc *rpc = tb_calloc(1, sizeof *rpc);
	if (cfg)
		rpc->default_cfg = *cfg;
	pb_writer_init_growable(&rpc->out);
	hmap_init(&rpc->initial);
	reset_tp(rpc, &rpc->default_cfg);
	if (preloaded) {
		tp_free(rpc->tp);
		rpc->tp = preloaded;
		rpc->eof = true;
		rpc->trace_name = tb_strdup(trace_name ? trace_name : "Unnamed trace");
		snapshot_schema(rpc);
	}
	return rpc;
}

void tp_rpc_free(struct tp_rpc *rpc)
{
	if (!rpc)
		return;
	tp_result_free(rpc->pending);
	tp_free(rpc->tp);
	tb_free(rpc->trace_name);
	vec_release(&rpc->rx);
	pb_writer_release(&rpc->out);
	hmap_release(&rpc->initial);
	tb_free(rpc);
}

static void print_progress(struct tp_rpc *rpc)
{
	if (!rpc->eof && rpc->bytes - rpc->bytes_last_progress <= PROGRESS_BYTES)
		return;
	rpc->bytes_last_progress = rpc->bytes;
	double secs = (double)(tb_mono_ns() - rpc->t_parse_start) / 1e9;
	fprintf(stderr, "\rLoading trace %.2f MB (%.1f MB/s)%s", (double)rpc->bytes / 1e6,
	        secs > 0 ? (double)rpc->bytes / 1e6 / secs : 0.0, rpc->eof ? "\n" : "");
	fflush(stderr);
}

/* APPEND_TRACE_DATA and /parse. Returns NULL or the error message. */
static const char *parse(struct tp_rpc *rpc, const uint8_t *p, size_t n)
{
	if (rpc->eof)
		reset_tp(rpc, &rpc->cfg); /* a new trace, same config */
	rpc->bytes += n;
	print_progress(rpc);
	if (n == 0)
		return NULL;
	if (tp_parse(rpc->tp, p, n) < 0)
		return tp_error(rpc->tp)[0] ? tp_error(rpc->tp) : "cannot parse the trace";
	return NULL;
}

/* FINALIZE_TRACE_DATA and /notify_eof. Returns NULL or the error message. */
static const char *notify_eof(struct tp_rpc *rpc)
{
	if (rpc->eof)
		return NULL;
	rpc->eof = true;
	int rc = tp_end_of_file(rpc->tp);
	if (!rpc->trace_name)
		rpc->trace_name = tb_strdup("Unnamed trace");
	snapshot_schema(rpc);
	print_progress(rpc);
	if (rc < 0)
		return tp_error(rpc->tp)[0] ? tp_error(rpc->tp) : "cannot load the trace";
	return NULL;
}

void tp_rpc_parse(struct tp_rpc *rpc, const uint8_t *p, size_t n, struct pb_writer *w)
{
	const char *err = parse(rpc, p, n);
	if (err)
		pb_put_string(w, PB_F_AppendTraceDataResult_error, err);
}

void tp_rpc_notify_eof(struct tp_rpc *rpc)
{
	notify_eof(rpc);
}

void tp_rpc_status(struct tp_rpc *rpc, struct pb_writer *w)
{
	char name[4096 + 32] = "";
	if (rpc->trace_name)
		snprintf(name, sizeof name, "%s (%" PRIu64 " MB)", rpc->trace_name,
		         tp_bytes_parsed(rpc->tp) / 1024 / 1024);
	pb_put_string(w, PB_F_StatusResult_loaded_trace_name, name);
	pb_put_string(w, PB_F_StatusResult_human_readable_version,
	              "tracebox " TB_VERSION " (" TB_REVISION ")");
	pb_put_int32(w, PB_F_StatusResult_api_version, TP_RPC_API_VERSION);
	/* No version_code: the UI would try to load a UI of that version. */
}

/* ---- responses ------------------------------------------------------------ */

/* Start a reply: TraceProcessorRpcStream.msg { seq, response }. Returns the
 * handle that end_response closes. */
static unsigned begin_response(struct tp_rpc *rpc, int method)
{
	pb_writer_reset(&rpc->out);
	unsigned h = pb_begin_nested(&rpc->out, PB_F_TraceProcessorRpcStream_msg);
	pb_put_int64(&rpc->out, PB_F_TraceProcessorRpc_seq, rpc->tx_seq++);
	pb_put_int32(&rpc->out, PB_F_TraceProcessorRpc_response, method);
	return h;
}

static void end_response(struct tp_rpc *rpc, unsigned h, tp_rpc_send_fn send, void *ctx)
{
	pb_end_nested(&rpc->out, h);
	if (pb_writer_error(&rpc->out) == 0)
		send(ctx, pb_writer_data(&rpc->out), pb_writer_size(&rpc->out));
}

/* The summarizer methods' results, indexed by method (dispatch). */
_Static_assert(PB_F_TraceProcessorRpc_update_summarizer_spec_result ==
                       PB_F_TraceProcessorRpc_create_summarizer_result + 1 &&
                   PB_F_TraceProcessorRpc_query_summarizer_result ==
                       PB_F_TraceProcessorRpc_create_summarizer_result + 2 &&
                   PB_F_TraceProcessorRpc_destroy_summarizer_result ==
                       PB_F_TraceProcessorRpc_create_summarizer_result + 3,
               "summarizer result fields are not consecutive");

/* A reply whose result is one message holding at most one string field. */
static void reply_result(struct tp_rpc *rpc, int method, uint32_t result_field,
                         uint32_t error_field, const char *error, tp_rpc_send_fn send, void *ctx)
{
	unsigned h = begin_response(rpc, method);
	unsigned r = pb_begin_nested(&rpc->out, result_field);
	if (error)
		pb_put_string(&rpc->out, error_field, error);
	pb_end_nested(&rpc->out, r);
	end_response(rpc, h, send, ctx);
}

static void fatal(struct tp_rpc *rpc, const char *msg, tp_rpc_send_fn send, void *ctx)
{
	pb_writer_reset(&rpc->out);
	unsigned h = pb_begin_nested(&rpc->out, PB_F_TraceProcessorRpcStream_msg);
	pb_put_string(&rpc->out, PB_F_TraceProcessorRpc_fatal_error, msg);
	pb_end_nested(&rpc->out, h);
	send(ctx, pb_writer_data(&rpc->out), pb_writer_size(&rpc->out));
	send(ctx, NULL, 0);
	rpc->failed = true;
}

/* One stderr line per failed query, so that what a client (the UI) asks
 * and we cannot answer is visible: the error (new lines as spaces, cut at
 * 600 bytes) and the SQL's first non-blank line, cut at 200 bytes. */
static void log_failed_query(const struct tp_result *r, const uint8_t *args, size_t n)
{
	const char *err = tp_result_error(r);
	struct pb_field sql = {0};
	if (!err)
		return;
	if (pb_find_field(args, n, PB_F_QueryArgs_sql_query, &sql) < 1 || sql.wire != PB_WIRE_LEN)
		sql.data = NULL, sql.len = 0;
	const char *p = (const char *)sql.data, *end = p + sql.len;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	const char *eol = p;
	while (eol < end && *eol != '\n' && eol - p < 200)
		eol++;
	/* A multi-line error (a module traceback) on one line, cut at 600. */
	char flat[601];
	size_t k = 0;
	for (; err[k] && k < sizeof flat - 1; k++)
		flat[k] = err[k] == '\n' || err[k] == '\r' ? ' ' : err[k];
	flat[k] = 0;
	log_warn("rpc", "query failed: %s; sql: %.*s%s", flat, (int)(eol - p), p,
	         eol < end ? " ..." : "");
}

/* Start the query of a QueryArgs message (sql_query = 1). */
static struct tp_result *query_from_args(struct tp_rpc *rpc, const uint8_t *args, size_t n)
{
	struct pb_field sql = {0};
	if (pb_find_field(args, n, PB_F_QueryArgs_sql_query, &sql) < 1 || sql.wire != PB_WIRE_LEN)
		sql.data = NULL, sql.len = 0;
	struct tp_result *r = tp_result_new(rpc->tp, (const char *)sql.data, sql.len);
	log_failed_query(r, args, n);
	return r;
}

/* Stream a query's batches, one response each, until the end or until the
 * transport is full (then it waits in rpc->pending for tp_rpc_resume). */
static void stream_batches(struct tp_rpc *rpc, struct tp_result *r, tp_rpc_send_fn send, void *ctx)
{
	for (bool more = true; more;) {
		unsigned h = begin_response(
		    rpc, PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_QUERY_STREAMING);
		unsigned q = pb_begin_nested(&rpc->out, PB_F_TraceProcessorRpc_query_result);
		more = tp_result_next(r, &rpc->out);
		pb_end_nested(&rpc->out, q);
		end_response(rpc, h, send, ctx);
		if (more && rpc->full && rpc->full(ctx)) {
			rpc->pending = r;
			return;
		}
	}
	tp_result_free(r);
}

static void query_streaming(struct tp_rpc *rpc, const struct pb_field *args, tp_rpc_send_fn send,
                            void *ctx)
{
	stream_batches(rpc, query_from_args(rpc, args->data, args->len), send, ctx);
}

static void reset_trace_processor(struct tp_rpc *rpc, const struct pb_field *args)
{
	struct tp_config cfg = rpc->default_cfg;
	struct pb_reader rd;
	struct pb_field f = {0};
	if (args->data) {
		pb_reader_init_field(&rd, args);
		while (pb_next(&rd, &f)) {
			if (f.id == PB_F_ResetTraceProcessorArgs_drop_track_event_data_before &&
			    f.wire == PB_WIRE_VARINT)
				cfg.crop_track_events =
				    f.val ==
				    PB_E_ResetTraceProcessorArgs_DropTrackEventDataBefore_TRACK_EVENT_RANGE_OF_INTEREST;
			else if (f.id == PB_F_ResetTraceProcessorArgs_ingest_ftrace_in_raw_table &&
			         f.wire == PB_WIRE_VARINT)
				cfg.no_ftrace_raw = f.val == 0;
			else if (f.id == PB_F_ResetTraceProcessorArgs_analyze_trace_proto_content &&
			         f.wire == PB_WIRE_VARINT)
				cfg.analyze_trace_proto_content = f.val != 0;
			else if (f.id == PB_F_ResetTraceProcessorArgs_sorting_mode &&
			         f.wire == PB_WIRE_VARINT)
				cfg.full_sort =
				    f.val ==
				    PB_E_ResetTraceProcessorArgs_SortingMode_FORCE_FULL_SORT;
			else if (f.id == PB_F_ResetTraceProcessorArgs_analyze_trace_proto_content &&
			         f.wire == PB_WIRE_VARINT)
				cfg.analyze_trace_proto_content = f.val != 0;
		}
	}
	reset_tp(rpc, &cfg);
}

/* RegisterSqlPackageArgs {package_name = 1, modules = 2 {name = 1, sql = 2},
 * allow_override = 3} onto the trace processor. Returns NULL or the error
 * (in err) for RegisterSqlPackageResult.error. */
static const char *register_sql_package(struct tp_rpc *rpc, const struct pb_field *args, char *err,
                                        size_t err_size)
{
	struct pb_reader rd, mr;
	struct pb_field f, g;
	char *name = NULL;
	VEC(struct tp_sql_module) mods = VEC_INIT;
	struct tp_sql_package pkg = {0};
	const char *ret = NULL;
	pb_reader_init_field(&rd, args);
	while (pb_next(&rd, &f)) {
		if (f.id == PB_F_RegisterSqlPackageArgs_package_name && f.wire == PB_WIRE_LEN) {
			tb_free(name);
			name = tb_strndup((const char *)f.data, f.len);
		} else if (f.id == PB_F_RegisterSqlPackageArgs_modules && f.wire == PB_WIRE_LEN) {
			struct tp_sql_module *m = vec_push_zeroed(&mods);
			pb_reader_init_field(&mr, &f);
			while (pb_next(&mr, &g)) {
				char **to = g.id == PB_F_RegisterSqlPackageArgs_Module_name
				                ? (char **)&m->name
				            : g.id == PB_F_RegisterSqlPackageArgs_Module_sql
				                ? (char **)&m->sql
				                : NULL;
				if (!to || g.wire != PB_WIRE_LEN)
					continue;
				tb_free(*to);
				*to = tb_strndup((const char *)g.data, g.len);
			}
		} else if (f.id == PB_F_RegisterSqlPackageArgs_allow_override &&
		           f.wire == PB_WIRE_VARINT) {
			pkg.allow_override = f.val != 0;
		}
	}
	if (pb_reader_error(&rd) != PB_OK) {
		ret = "RPC error: malformed RegisterSqlPackageArgs";
		goto out;
	}
	pkg.name = name ? name : "";
	pkg.modules = mods.data;
	pkg.nmodules = mods.len;
	if (tp_register_sql_package(rpc->tp, &pkg, err, err_size) < 0)
		ret = err;
out:
	for (size_t i = 0; i < mods.len; i++) {
		tb_free((char *)mods.data[i].name);
		tb_free((char *)mods.data[i].sql);
	}
	vec_release(&mods);
	tb_free(name);
	return ret;
}

static const char no_metrics[] =
    "tracebox's trace processor has no metrics engine (v1 metrics); query the tables with SQL";
static const char no_metatrace[] = "tracebox's trace processor does not record metatraces";
static const char no_summaries[] = "tracebox's trace processor does not compute trace summaries";

/* Run one TraceProcessorRpc request (msg[0, n), without the stream framing). */
static void run_request(struct tp_rpc *rpc, const uint8_t *msg, size_t n, tp_rpc_send_fn send,
                        void *ctx)
{
	struct pb_reader rd;
	struct pb_field f, arg = {0}, append = {0}, query = {0}, package = {0};
	int64_t seq = 0;
	int method = 0;
	bool has_append = false, has_query = false, has_metric = false, has_package = false;
	pb_reader_init(&rd, msg, n);
	while (pb_next(&rd, &f)) {
		if (f.id == PB_F_TraceProcessorRpc_seq && f.wire == PB_WIRE_VARINT)
			seq = (int64_t)f.val;
		else if (f.id == PB_F_TraceProcessorRpc_request && f.wire == PB_WIRE_VARINT)
			method = (int)(int32_t)f.val;
		else if (f.id == PB_F_TraceProcessorRpc_append_trace_data && f.wire == PB_WIRE_LEN)
			append = f, has_append = true;
		else if (f.id == PB_F_TraceProcessorRpc_query_args && f.wire == PB_WIRE_LEN)
			query = f, has_query = true;
		else if (f.id == PB_F_TraceProcessorRpc_compute_metric_args &&
		         f.wire == PB_WIRE_LEN)
			has_metric = true;
		else if (f.id == PB_F_TraceProcessorRpc_reset_trace_processor_args &&
		         f.wire == PB_WIRE_LEN)
			arg = f;
		else if (f.id == PB_F_TraceProcessorRpc_register_sql_package_args &&
		         f.wire == PB_WIRE_LEN)
			package = f, has_package = true;
	}
	if (seq != 0 && rpc->rx_seq != 0 && seq != rpc->rx_seq + 1) {
		char err[160];
		snprintf(err, sizeof err,
		         "RPC request out of order. Expected %" PRId64 ", got %" PRId64
		         " (ERR:rpc_seq)",
		         rpc->rx_seq + 1, seq);
		log_error("rpc", "%s", err);
		fatal(rpc, err, send, ctx);
		return;
	}
	rpc->rx_seq = seq;

	switch (method) {
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_APPEND_TRACE_DATA:
		reply_result(rpc, method, PB_F_TraceProcessorRpc_append_result,
		             PB_F_AppendTraceDataResult_error,
		             has_append ? parse(rpc, append.data, append.len) : ERR_FIELD_NOT_SET,
		             send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_FINALIZE_TRACE_DATA:
		reply_result(rpc, method, PB_F_TraceProcessorRpc_finalize_data_result,
		             PB_F_FinalizeDataResult_error, notify_eof(rpc), send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_QUERY_STREAMING:
		if (has_query)
			query_streaming(rpc, &query, send, ctx);
		else
			reply_result(rpc, method, PB_F_TraceProcessorRpc_query_result,
			             PB_F_QueryResult_error, ERR_FIELD_NOT_SET, send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_COMPUTE_METRIC:
		reply_result(rpc, method, PB_F_TraceProcessorRpc_metric_result,
		             PB_F_ComputeMetricResult_error,
		             has_metric ? no_metrics : ERR_FIELD_NOT_SET, send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_GET_METRIC_DESCRIPTORS: /* an empty
	                                                                                DescriptorSet:
	                                                                                no metrics
	                                                                              */
		reply_result(rpc, method, PB_F_TraceProcessorRpc_metric_descriptors, 0, NULL, send,
		             ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_RESTORE_INITIAL_TABLES:
		tp_rpc_restore_initial_tables(rpc);
		end_response(rpc, begin_response(rpc, method), send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_ENABLE_METATRACE:
		end_response(rpc, begin_response(rpc, method), send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_DISABLE_AND_READ_METATRACE:
		reply_result(rpc, method, PB_F_TraceProcessorRpc_metatrace,
		             PB_F_DisableAndReadMetatraceResult_error, no_metatrace, send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_GET_STATUS: {
		unsigned h = begin_response(rpc, method);
		unsigned s = pb_begin_nested(&rpc->out, PB_F_TraceProcessorRpc_status);
		tp_rpc_status(rpc, &rpc->out);
		pb_end_nested(&rpc->out, s);
		end_response(rpc, h, send, ctx);
		break;
	}
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_RESET_TRACE_PROCESSOR:
		reset_trace_processor(rpc, &arg);
		end_response(rpc, begin_response(rpc, method), send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_REGISTER_SQL_PACKAGE: {
		char err[1024];
		reply_result(rpc, method, PB_F_TraceProcessorRpc_register_sql_package_result,
		             PB_F_RegisterSqlPackageResult_error,
		             has_package ? register_sql_package(rpc, &package, err, sizeof err)
		                         : ERR_FIELD_NOT_SET,
		             send, ctx);
		break;
	}
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_SUMMARIZE_TRACE:
		reply_result(rpc, method, PB_F_TraceProcessorRpc_trace_summary_result,
		             PB_F_TraceSummaryResult_error, no_summaries, send, ctx);
		break;
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_CREATE_SUMMARIZER:
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_UPDATE_SUMMARIZER_SPEC:
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_QUERY_SUMMARIZER:
	case PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_DESTROY_SUMMARIZER: {
		/* Their results are consecutive fields, in method order. */
		static const uint8_t err_field[] = {
		    PB_F_CreateSummarizerResult_error, PB_F_UpdateSummarizerSpecResult_error,
		    PB_F_QuerySummarizerResult_error, PB_F_DestroySummarizerResult_error};
		int i = method - PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_CREATE_SUMMARIZER;
		reply_result(rpc, method,
		             PB_F_TraceProcessorRpc_create_summarizer_result + (uint32_t)i,
		             err_field[i], no_summaries, send, ctx);
		break;
	}
	default: {
		/* A newer client's method: say so, for feature detection. */
		unsigned h = begin_response(rpc, method);
		pb_put_int32(&rpc->out, PB_F_TraceProcessorRpc_invalid_request, method);
		end_response(rpc, h, send, ctx);
	}
	}
}

/* ---- stream framing ------------------------------------------------------- */

/* Find one whole message at p[0, n): 1 with its payload in *msg and *len and the
 * bytes taken in *used, 0 when more bytes are needed (*used is then the size
 * of the whole message if its header is complete), -1 for a framing error
 * (not a length-delimited field, a varint over 10 bytes, over the size cap). */
static int next_message(const uint8_t *p, size_t n, const uint8_t **msg, size_t *len, size_t *used)
{
	uint64_t tag, size;
	const uint8_t *q = pb_read_varint(p, p + n, &tag), *body;
	if (!q)
		return n >= PB_VARINT_MAX_LEN ? -1 : 0;
	if ((tag & 7) != PB_WIRE_LEN || tag >> 3 == 0)
		return -1;
	if (!(body = pb_read_varint(q, p + n, &size)))
		return (size_t)(p + n - q) >= PB_VARINT_MAX_LEN ? -1 : 0;
	if (size > TP_RPC_MAX_MSG)
		return -1;
	if ((uint64_t)(p + n - body) < size) {
		*used = (size_t)(body - p) + (size_t)size; /* what the whole message takes */
		return 0;
	}
	/* Fields other than TraceProcessorRpcStream.msg are skipped. */
	*msg = tag >> 3 == 1 ? body : NULL;
	*len = (size_t)size;
	*used = (size_t)(body - p) + (size_t)size;
	return 1;
}

/* Run the whole messages queued in rx, until one pauses. */
static int drain_rx(struct tp_rpc *rpc, tp_rpc_send_fn send, void *ctx)
{
	const uint8_t *msg;
	size_t len, used, off = 0;
	int rc;
	while (!rpc->pending &&
	       (rc = next_message(rpc->rx.data + off, rpc->rx.len - off, &msg, &len, &used)) == 1) {
		off += used;
		if (msg)
			run_request(rpc, msg, len, send, ctx);
		if (rpc->failed)
			return -EPROTO;
	}
	if (off) { /* (never a no-op memmove of a 32 MiB slice per piece) */
		memmove(rpc->rx.data, rpc->rx.data + off, rpc->rx.len - off);
		rpc->rx.len -= off;
	}
	if (rpc->rx.len == 0 && rpc->rx.cap > KEEP_RX_BYTES)
		vec_release(&rpc->rx); /* do not hold on to a big trace slice */
	if (rpc->pending)
		return TP_RPC_PAUSED;
	if (rc < 0) {
		log_error("rpc", "RPC framing error");
		fatal(rpc, "RPC framing error", send, ctx);
		return -EPROTO;
	}
	return 0;
}

static void queue_rx(struct tp_rpc *rpc, const uint8_t *p, size_t n)
{
	const uint8_t *msg;
	size_t len, used = 0;
	/* Room for the whole pending message at once, once its size is known. */
	if (rpc->rx.len == 0 && next_message(p, n, &msg, &len, &used) == 0 && used > n)
		vec_reserve(&rpc->rx, used);
	vec_reserve(&rpc->rx, n);
	memcpy(rpc->rx.data + rpc->rx.len, p, n);
	rpc->rx.len += n;
}

int tp_rpc_feed(struct tp_rpc *rpc, const uint8_t *p, size_t n, tp_rpc_send_fn send, void *ctx)
{
	const uint8_t *msg;
	size_t len, used;
	int rc = 0;
	if (rpc->failed)
		return -EPROTO;
	if (rpc->pending) {
		queue_rx(rpc, p, n);
		return TP_RPC_PAUSED;
	}
	/* Whole messages straight from the caller's bytes; only a partial tail
	 * (or what follows a paused query) is buffered. */
	while (rpc->rx.len == 0 && n > 0 && (rc = next_message(p, n, &msg, &len, &used)) == 1) {
		if (msg)
			run_request(rpc, msg, len, send, ctx);
		if (rpc->failed)
			return -EPROTO;
		p += used;
		n -= used;
		if (rpc->pending) {
			if (n)
				queue_rx(rpc, p, n);
			return TP_RPC_PAUSED;
		}
	}
	if (rc < 0) {
		log_error("rpc", "RPC framing error");
		fatal(rpc, "RPC framing error", send, ctx);
		return -EPROTO;
	}
	if (n == 0)
		return 0;
	queue_rx(rpc, p, n);
	return drain_rx(rpc, send, ctx);
}

void tp_rpc_set_flow(struct tp_rpc *rpc, bool (*full)(void *ctx))
{
	rpc->full = full;
}

bool tp_rpc_paused(const struct tp_rpc *rpc)
{
	return rpc->pending != NULL;
}

int tp_rpc_resume(struct tp_rpc *rpc, tp_rpc_send_fn send, void *ctx)
{
	if (!rpc->pending)
		return 0;
	struct tp_result *r = rpc->pending;
	rpc->pending = NULL;
	stream_batches(rpc, r, send, ctx);
	return drain_rx(rpc, send, ctx);
}

void tp_rpc_abort(struct tp_rpc *rpc)
{
	tp_result_free(rpc->pending);
	rpc->pending = NULL;
	vec_clear(&rpc->rx);
}

void tp_rpc_set_reset_hook(struct tp_rpc *rpc, void (*fn)(void *ctx), void *ctx)
{
	rpc->reset_hook = fn;
	rpc->reset_ctx = ctx;
}

void tp_rpc_reset_stream(struct tp_rpc *rpc)
{
	vec_clear(&rpc->rx);
	rpc->failed = false;
}

struct tp_result *tp_rpc_query_start(struct tp_rpc *rpc, const uint8_t *args, size_t n)
{
	return query_from_args(rpc, args, n);
}

void tp_rpc_query(struct tp_rpc *rpc, const uint8_t *args, size_t n, tp_rpc_send_fn send, void *ctx)
{
	struct tp_result *r = query_from_args(rpc, args, n);
	for (bool more = true; more;) {
		pb_writer_reset(&rpc->out);
		more = tp_result_next(r, &rpc->out);
		send(ctx, pb_writer_data(&rpc->out), pb_writer_size(&rpc->out));
	}
	tp_result_free(r);
}
