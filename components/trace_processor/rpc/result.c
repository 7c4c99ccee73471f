/*
 * Query results as Perfetto's QueryResult messages (trace_processor.proto):
 * runs the statements of one query as Perfetto's ExecuteQuery does (each is
 * stepped once as soon as it is prepared, the previous one is run to
 * completion before the next, and the last one's rows are the result), then
 * hands the rows out in CellsBatches of whole rows, closing a batch at
 * TP_RESULT_CELLS_PER_BATCH cells or once about TP_RESULT_BATCH_BYTES are
 * in it, as Perfetto's QueryResultSerializer.
 *
 * One QueryResult per tp_result_next() call, fields in Perfetto's order:
 *
 *   column_names (1)*, statement_count (4), statement_with_output_count (5),
 *   last_statement_sql (6)                          first message only
 *   batch (3) {
 *     string_cells (5)  every string cell, NUL-terminated, back to back
 *     cells (1)         one CellType byte per cell (packed)
 *     varint_cells (2)  packed int64
 *     [7: padding]      a varint field sized so float64_cells' payload
 *     float64_cells (3) starts 8-byte aligned in the whole message
 *     blob_cells (4)*
 *     is_last_batch (6) last message only
 *   }
 *   error (2), elapsed_time_ms (7)
 *
 * The aligned doubles are what lets the UI view them in place.
 */
#include <string.h>

#include "rpc.h"
#include "sqlite3.h"
#include "pb_fields.h"

struct tp_result {
	sqlite3_stmt *st; /* the last statement, positioned on a row when have_row */
	bool have_row, did_metadata, eof;
	char *error;
	char *sql;       /* the query as given */
	size_t st_start; /* where st's text starts in sql */
	char *last_sql;
	uint32_t ncols, stmt_count, stmt_with_output;
	uint32_t cells_per_batch, batch_bytes;
	int64_t t_start;
	VEC(uint8_t) cells;
	VEC(uint64_t) varints;
	VEC(uint64_t) doubles;
	struct pb_writer blobs; /* blob_cells fields, ready to copy */
};

static void set_error(struct tp_result *r, const char *msg)
{
	if (!r->error)
		r->error = tb_strdup(msg && *msg ? msg : "Unknown error");
}

/* An error in the statement at stmt of r->sql (at: where in it, or NULL),
 * with Perfetto's traceback of the query ("stdin"). */
static void set_sql_error(struct tp_result *r, const char *stmt, const char *at, const char *msg)
{
	if (!r->error)
		r->error = tp_sql_traceback(r->sql, stmt, at, msg && *msg ? msg : "Unknown error");
}

/* Perfetto counts a statement as having output unless it has no columns or
 * its one column is named suppress_query_output. */
static bool has_output(sqlite3_stmt *st)
{
	int n = sqlite3_column_count(st);
	return n > 1 ||
	       (n == 1 && strcmp(sqlite3_column_name(st, 0), "suppress_query_output") != 0);
}

/* Run the statements of r->sql; leave the last one in r->st after its first
 * step. */
static void execute(struct tp_result *r, struct tp *tp)
{
	sqlite3 *db = tp_db(tp);
	const char *tail = r->sql;
	char err[1024];
	bool ran = false; /* a statement ran, maybe one without a result
	                   * (INCLUDE, CREATE PERFETTO FUNCTION) */
	while (tail && *tail) {
		sqlite3_stmt *next = NULL;
		const char *start = tail;
		if (tp_prepare(tp, tail, &next, &tail, err, sizeof err) != SQLITE_OK) {
			if (!r->error)
				r->error = tp_prepare_error_report(tp, r->sql, start, err);
			return;
		}
		if (!next) {
			if (tail == start)
				break;
			ran = ran || start[strspn(start, " \t\r\n;")] != '\0';
			continue;
		}
		if (r->st) {
			/* Finish the previous statement (a statement stepped past
			 * SQLITE_DONE would run again). */
			int rc = SQLITE_DONE;
			if (r->have_row)
				while ((rc = sqlite3_step(r->st)) == SQLITE_ROW)
					;
			if (rc != SQLITE_DONE) {
				set_sql_error(r, r->sql + r->st_start, NULL, tp_sql_errmsg(db));
				sqlite3_finalize(next);
				return;
			}
			sqlite3_finalize(r->st);
		}
		r->st = next;
		r->st_start = (size_t)(start - r->sql);
		r->stmt_count++;
		int rc = sqlite3_step(next);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			set_sql_error(r, start, NULL, tp_sql_errmsg(db));
			return;
		}
		r->have_row = rc == SQLITE_ROW;
		if (has_output(next))
			r->stmt_with_output++;
	}
	if (!r->st) {
		if (!ran)
			set_error(r, "No valid SQL to run");
		return;
	}
	const char *s = sqlite3_sql(r->st);
	size_t n = strlen(s);
	while (n && (s[n - 1] == ';' || s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' ||
	             s[n - 1] == '\r'))
		n--;
	r->last_sql = tb_strndup(s, n);
	r->ncols = (uint32_t)sqlite3_column_count(r->st);
}

struct tp_result *tp_result_new(struct tp *tp, const char *sql, size_t len)
{
	struct tp_result *r = tb_calloc(1, sizeof *r);
	r->cells_per_batch = TP_RESULT_CELLS_PER_BATCH;
	r->batch_bytes = TP_RESULT_BATCH_BYTES;
	r->t_start = tb_mono_ns();
	pb_writer_init_growable(&r->blobs);
	r->sql = tb_strndup(sql ? sql : "", sql ? len : 0);
	execute(r, tp);
	if (r->error) {
		/* As Perfetto's failed iterator: no columns, no counts, no rows. */
		r->have_row = false;
		r->ncols = r->stmt_count = r->stmt_with_output = 0;
	}
	if (r->ncols == 0)
		r->have_row = false;
	return r;
}

void tp_result_free(struct tp_result *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->st);
	tb_free(r->error);
	tb_free(r->sql);
	tb_free(r->last_sql);
	vec_release(&r->cells);
	vec_release(&r->varints);
	vec_release(&r->doubles);
	pb_writer_release(&r->blobs);
	tb_free(r);
}

const char *tp_result_error(const struct tp_result *r)
{
	return r->error;
}

void tp_result_set_batch_limits(struct tp_result *r, uint32_t cells, uint32_t bytes)
{
	r->cells_per_batch = cells;
	r->batch_bytes = bytes;
}

/* Append the current row's cells; returns an estimate of their size. */
static uint32_t put_row(struct tp_result *r, struct pb_writer *w)
{
	uint32_t approx = 0;
	for (uint32_t c = 0; c < r->ncols; c++) {
		int i = (int)c;
		switch (sqlite3_column_type(r->st, i)) {
		case SQLITE_INTEGER:
			vec_push(&r->cells, PB_E_QueryResult_CellsBatch_CellType_CELL_VARINT);
			vec_push(&r->varints, (uint64_t)sqlite3_column_int64(r->st, i));
			approx += 4;
			break;
		case SQLITE_FLOAT: {
			double d = sqlite3_column_double(r->st, i);
			uint64_t bits;
			memcpy(&bits, &d, 8);
			vec_push(&r->cells, PB_E_QueryResult_CellsBatch_CellType_CELL_FLOAT64);
			vec_push(&r->doubles, bits);
			approx += 8;
			break;
		}
		case SQLITE_TEXT: {
			const char *s = (const char *)sqlite3_column_text(r->st, i);
			size_t n = strlen(s) + 1;
			vec_push(&r->cells, PB_E_QueryResult_CellsBatch_CellType_CELL_STRING);
			pb_put_raw(w, s, n);
			approx += (uint32_t)n + 4;
			break;
		}
		case SQLITE_BLOB: {
			const void *p = sqlite3_column_blob(r->st, i);
			size_t n = (size_t)sqlite3_column_bytes(r->st, i);
			vec_push(&r->cells, PB_E_QueryResult_CellsBatch_CellType_CELL_BLOB);
			pb_put_bytes(&r->blobs, PB_F_QueryResult_CellsBatch_blob_cells, p, n);
			approx += (uint32_t)n + 4;
			break;
		}
		default:
			vec_push(&r->cells, PB_E_QueryResult_CellsBatch_CellType_CELL_NULL);
		}
	}
	return approx;
}

static void put_doubles(struct tp_result *r, struct pb_writer *w)
{
	size_t bytes = r->doubles.len * 8;
	uint8_t pre[1 + PB_VARINT_MAX_LEN], pad[10];
	size_t pre_len = (size_t)(pb_encode_varint(pre + 1, bytes) - pre);
	_Static_assert(PB_F_QueryResult_CellsBatch_float64_cells < 16, "a one-byte tag");
	pre[0] = PB_F_QueryResult_CellsBatch_float64_cells << 3 | PB_WIRE_LEN;
	size_t off = pb_writer_size(w) + pre_len;
	size_t padding = ((off + 7) & ~(size_t)7) - off;
	if (padding == 1)
		padding = 9; /* the smallest padding field takes two bytes */
	if (padding) {
		/* Field 7, a varint of padding-1 bytes: 0x80 ... 0x80 0x00. */
		pad[0] = 7 << 3 | PB_WIRE_VARINT;
		memset(pad + 1, 0x80, padding - 2);
		pad[padding - 1] = 0;
		pb_put_raw(w, pad, padding);
	}
	pb_put_raw(w, pre, pre_len);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < r->doubles.len; i++)
		r->doubles.data[i] = __builtin_bswap64(r->doubles.data[i]);
#endif
	pb_put_raw(w, r->doubles.data, bytes);
}

bool tp_result_next(struct tp_result *r, struct pb_writer *w)
{
	TB_CHECK(!r->eof);
	if (!r->did_metadata) {
		for (uint32_t c = 0; c < r->ncols; c++)
			pb_put_string(w, PB_F_QueryResult_column_names,
			              sqlite3_column_name(r->st, (int)c));
		pb_put_uint32(w, PB_F_QueryResult_statement_count, r->stmt_count);
		pb_put_uint32(w, PB_F_QueryResult_statement_with_output_count, r->stmt_with_output);
		pb_put_string(w, PB_F_QueryResult_last_statement_sql,
		              r->last_sql ? r->last_sql : "");
		r->did_metadata = true;
	}
	vec_clear(&r->cells);
	vec_clear(&r->varints);
	vec_clear(&r->doubles);
	pb_writer_reset(&r->blobs);

	unsigned batch = pb_begin_nested(w, PB_F_QueryResult_batch);
	unsigned strings = pb_begin_nested(w, PB_F_QueryResult_CellsBatch_string_cells);
	uint32_t approx = 16;
	bool full = false;
	while (r->have_row) {
		if (r->cells.len &&
		    (r->cells.len + r->ncols > r->cells_per_batch || approx > r->batch_bytes)) {
			full = true;
			break;
		}
		approx += put_row(r, w);
		int rc = sqlite3_step(r->st);
		r->have_row = rc == SQLITE_ROW;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			set_sql_error(r, r->sql + r->st_start, NULL,
			              tp_sql_errmsg(sqlite3_db_handle(r->st)));
	}
	pb_end_nested(w, strings);
	if (r->cells.len)
		pb_put_bytes(w, PB_F_QueryResult_CellsBatch_cells, r->cells.data, r->cells.len);
	if (r->varints.len)
		pb_put_packed_varint(w, PB_F_QueryResult_CellsBatch_varint_cells, r->varints.data,
		                     r->varints.len);
	if (r->doubles.len)
		put_doubles(r, w);
	if (pb_writer_size(&r->blobs))
		pb_put_raw(w, pb_writer_data(&r->blobs), pb_writer_size(&r->blobs));
	if (!full) {
		r->eof = true;
		pb_put_bool(w, PB_F_QueryResult_CellsBatch_is_last_batch, true);
	}
	pb_end_nested(w, batch);
	if (r->error)
		pb_put_string(w, PB_F_QueryResult_error, r->error);
	pb_put_double(w, PB_F_QueryResult_elapsed_time_ms,
	              (double)(tb_mono_ns() - r->t_start) / 1e6);
	return !r->eof;
}
