/*
 * SQL functions Perfetto queries use, with Perfetto's names and semantics:
 *
 *   EXTRACT_ARG(arg_set_id, key)  the typed value of `key` in the set, or
 *                                 NULL; a binary search on args.arg_set_id
 *                                 (sorted by construction), not a scan
 *   HASH(v, ...)                  64-bit FNV-1a over integers (8 bytes,
 *                                 little endian) and strings (their bytes);
 *                                 NULL, real or blob arguments are an error
 *   STR_SPLIT(s, delim, n)        the n-th (0-based) part of s, or NULL
 *   __intrinsic_arg_set_to_json   an arg set as JSON (args_json.c)
 *   __intrinsic_rows_visited()    rows the table cursors stepped over so far
 *                                 (tests and plan debugging)
 *
 * Also registered from here: regexp & co. (strings.c), window functions
 * (window.c) and the functions of the stdlib modules (modules.c). GLOB,
 * printf, iif, coalesce, the math functions & co. are SQLite's own.
 */
#include "sql_int.h"

/* ---- EXTRACT_ARG --------------------------------------------------------- */

static bool args_cols(const struct tp_table_desc *d, struct tp_sql_args_cols *c)
{
	c->set = tp_sql_col_find(d, "arg_set_id");
	c->key = tp_sql_col_find(d, "key");
	return c->set >= 0 && c->key >= 0 && d->cols[c->set].type == TP_U32 &&
	       d->cols[c->key].type == TP_STR && !(d->cols[c->set].flags & TP_COL_SPARSE) &&
	       !(d->cols[c->key].flags & TP_COL_SPARSE);
}

static void result_arg(sqlite3_context *ctx, const struct tp_sql_table *t, uint32_t row)
{
	const struct tp *tp = t->sql->tp;
	struct tp_arg a = tp_args_row(tp, row);

	switch (a.type) {
	case TP_ARG_STRING:
	case TP_ARG_JSON: {
		size_t len;
		const char *str = strpool_get(&tp->strings, a.v.s, &len);
		/* The pool keeps "" as id 0: a string arg with id 0 is empty. */
		sqlite3_result_text64(ctx, str, len, SQLITE_STATIC, SQLITE_UTF8);
		break;
	}
	case TP_ARG_REAL:
		if (!isnan(a.v.d))
			sqlite3_result_double(ctx, a.v.d);
		break;
	case TP_ARG_NULL:
		break;
	default:
		if (a.v.i != TP_NULL_I64) /* the int_value column reads it as NULL too */
			sqlite3_result_int64(ctx, a.v.i);
	}
}

void tp_sql_args_range(struct tp_sql *sql, int64_t set, uint32_t *first, uint32_t *end)
{
	struct tp_sql_table *t = sql->args;
	*first = 0;
	*end = tp_sql_table_rows(t);
	if (set < 0 || set >= UINT32_MAX)
		*end = 0;
	else if (tp_sql_col_sorted(t, (uint32_t)sql->args_cols.set))
		tp_sql_sorted_range(t, (uint32_t)sql->args_cols.set, set, set, first, end);
}

static void fn_extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_sql *sql = sqlite3_user_data(ctx);
	struct tp_sql_table *t = sql->args;
	struct tp_sql_args_cols c = sql->args_cols;
	const uint32_t *sets, *keys;
	const unsigned char *key;
	uint32_t key_id, first, end;
	int64_t set;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "EXTRACT_ARG: 1st argument should be arg set id", -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "EXTRACT_ARG: 2nd argument should be key", -1);
		return;
	}
	if (!t || !c.ok) {
		sqlite3_result_error(ctx, "EXTRACT_ARG: no usable args table", -1);
		return;
	}
	set = sqlite3_value_int64(argv[0]);
	key = sqlite3_value_text(argv[1]);
	if (set < 0 || set >= UINT32_MAX || !key ||
	    !strpool_find(&sql->tp->strings, (const char *)key,
	                  (size_t)sqlite3_value_bytes(argv[1]), &key_id) ||
	    key_id == 0)
		return;

	tp_sql_args_range(sql, set, &first, &end);
	sets = tp_sql_col_data(t, (uint32_t)c.set);
	keys = tp_sql_col_data(t, (uint32_t)c.key);
	for (uint32_t r = first; r < end; r++) {
		if (sets[r] == (uint32_t)set && keys[r] == key_id) {
			result_arg(ctx, t, r);
			return;
		}
	}
}

/* ---- HASH ---------------------------------------------------------------- */

uint64_t tp_sql_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void fn_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t h = TP_SQL_FNV1A_OFFSET;
	for (int i = 0; i < argc; i++) {
		switch (sqlite3_value_type(argv[i])) {
		case SQLITE_INTEGER: {
			uint64_t v = (uint64_t)sqlite3_value_int64(argv[i]);
			unsigned char le[8];
			for (int k = 0; k < 8; k++)
				le[k] = (unsigned char)(v >> (8 * k));
			h = tp_sql_fnv1a(h, le, sizeof le);
			break;
		}
		case SQLITE_TEXT: {
			const char *s = (const char *)sqlite3_value_text(argv[i]);
			h = tp_sql_fnv1a(h, s, s ? strlen(s) : 0);
			break;
		}
		default: {
			char *msg = sqlite3_mprintf("HASH: arg %d has unknown type", i);
			sqlite3_result_error(ctx, msg ? msg : "HASH: bad argument", -1);
			sqlite3_free(msg);
			return;
		}
		}
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)h);
}

/* ---- STR_SPLIT ----------------------------------------------------------- */

static void fn_str_split(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *in, *delim, *next;
	size_t dlen;
	int fld;

	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT ||
	    !(delim = (const char *)sqlite3_value_text(argv[1])) || !(dlen = strlen(delim))) {
		sqlite3_result_error(ctx, "STR_SPLIT: delimiter must be a non-empty string", -1);
		return;
	}
	if (sqlite3_value_type(argv[2]) != SQLITE_INTEGER ||
	    (fld = sqlite3_value_int(argv[2])) < 0) {
		sqlite3_result_error(ctx, "STR_SPLIT: field number must be a non-negative integer",
		                     -1);
		return;
	}
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT ||
	    !(in = (const char *)sqlite3_value_text(argv[0])))
		return;
	for (;;) {
		next = strstr(in, delim);
		if (fld == 0) {
			size_t len = next ? (size_t)(next - in) : strlen(in);
			sqlite3_result_text64(ctx, in, len, SQLITE_TRANSIENT, SQLITE_UTF8);
			return;
		}
		if (!next)
			return;
		in = next + dlen;
		fld--;
	}
}

/* ---- trace bounds ------------------------------------------------------------ */

/* trace_start() / trace_end() / trace_dur(): the first and last timestamp of
 * the events parsed (0 for an empty trace, as Perfetto). */
static void fn_trace_start(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	sqlite3_result_int64(ctx, tp->ts_min <= tp->ts_max ? tp->ts_min : 0);
}

static void fn_trace_end(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	sqlite3_result_int64(ctx, tp->ts_min <= tp->ts_max ? tp->ts_max : 0);
}

static void fn_trace_dur(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	sqlite3_result_int64(ctx, tp->ts_min <= tp->ts_max ? tp->ts_max - tp->ts_min : 0);
}

/* ---- debugging ----------------------------------------------------------- */

static void fn_rows_visited(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_sql *sql = sqlite3_user_data(ctx);
	sqlite3_result_int64(ctx, (sqlite3_int64)sql->rows_visited);
}

/* string_agg(x, sep): the non-NULL x joined by sep (SQLite 3.44's; this
 * SQLite has only group_concat); NULL when there is none. */
static void fn_string_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3_str **acc = sqlite3_aggregate_context(ctx, sizeof *acc);
	(void)argc;
	if (!acc || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (!*acc)
		*acc = sqlite3_str_new(sqlite3_context_db_handle(ctx));
	else if (sqlite3_value_type(argv[1]) != SQLITE_NULL)
		sqlite3_str_appendall(*acc, (const char *)sqlite3_value_text(argv[1]));
	sqlite3_str_append(*acc, (const char *)sqlite3_value_text(argv[0]),
	                   sqlite3_value_bytes(argv[0]));
}

static void fn_string_agg_final(sqlite3_context *ctx)
{
	sqlite3_str **acc = sqlite3_aggregate_context(ctx, 0);
	if (!acc || !*acc)
		return;
	int n = sqlite3_str_length(*acc);
	char *text = sqlite3_str_finish(*acc);
	*acc = NULL;
	if (text)
		sqlite3_result_text(ctx, text, n, sqlite3_free);
	else
		sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
}

int tp_sql_register_functions(sqlite3 *db, struct tp_sql *sql)
{
	sql->args = tp_sql_table_find(sql, "__intrinsic_args");
	sql->args_cols.ok = sql->args && args_cols(sql->args->desc, &sql->args_cols);
	static const struct {
		const char *name;
		int nargs;
		int flags;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
	    {"extract_arg", 2, SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, fn_extract_arg},
	    {"hash", -1, SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, fn_hash},
	    {"str_split", 3, SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, fn_str_split},
	    {"__intrinsic_arg_set_to_json", 1, SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
	     tp_sql_fn_arg_set_to_json},
	    {"trace_start", 0, 0, fn_trace_start},
	    {"trace_end", 0, 0, fn_trace_end},
	    {"trace_dur", 0, 0, fn_trace_dur},
	    {"__intrinsic_rows_visited", 0, 0, fn_rows_visited},
	};
	int rc0 =
	    sqlite3_create_function_v2(db, "string_agg", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
	                               NULL, NULL, fn_string_agg_step, fn_string_agg_final, NULL);
	if (rc0 != SQLITE_OK)
		return rc0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(fns); i++) {
		int rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs,
		                                    SQLITE_UTF8 | fns[i].flags, sql, fns[i].fn,
		                                    NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	int rc = tp_sql_register_strings(db);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_window(db);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_sums(db);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_modules(db, sql);
	return rc;
}
