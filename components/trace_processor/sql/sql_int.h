/*
 * Private declarations of the trace processor's SQL layer (sql/): the state
 * shared by the virtual tables (vtab.c, stats in schema.c), the functions
 * (functions.c) and the schema setup (schema.c).
 *
 * One struct tp_sql per database connection. It is owned by the connection:
 * the destructor of the `__intrinsic_stats` module frees it when
 * sqlite3_close runs (after every virtual table was disconnected), so
 * tp_sql_close only has to close the database.
 */
#ifndef TB_TP_SQL_INT_H
#define TB_TP_SQL_INT_H

#include <sqlite3.h>

#include "../tp_int.h"

/* Per-table facts the planner and EXTRACT_ARG rely on, computed lazily. A
 * TP_COL_SORTED column is only treated as sorted after one scan confirmed it
 * (non-decreasing by row, no NULL sentinel); the answer is cached until the
 * table's row count changes. */
struct tp_sql_table {
	struct tp_sql *sql;
	const struct tp_table_desc *desc;
	uint32_t checked_n; /* row count when sorted_mask was computed */
	bool checked;
	uint64_t sorted_mask; /* bit c: described column c (0-based) is sorted */
	/* Row orders built for grouped output (vtab.c), kept once the trace
	 * is complete (tp->eof) while the row count stays. */
	struct tp_sql_order *orders;
	uint32_t norders, orders_cap;
};

/* Described-column indexes of the args table EXTRACT_ARG reads (-1 if the
 * table lacks one; then EXTRACT_ARG reports an error). */
struct tp_sql_args_cols {
	int set, key;
	bool ok;
};

struct tp_sql {
	struct tp *tp;
	struct tp_sql_table *args; /* __intrinsic_args, or NULL */
	struct tp_sql_args_cols args_cols;
	/* Rows the table cursors stepped over (matching or not), for tests and
	 * EXPLAIN-style debugging: SELECT __intrinsic_rows_visited(). */
	uint64_t rows_visited;
	uint32_t ntables;
	struct tp_sql_table tables[]; /* parallel to tp_table_descs[] */
};

/* The row storage of a table: its struct inside tp->t. */
static inline void *tp_sql_table_ptr(const struct tp_sql_table *t)
{
	return (char *)&t->sql->tp->t + t->desc->offset;
}
static inline uint32_t tp_sql_table_rows(const struct tp_sql_table *t)
{
	return *(const uint32_t *)tp_sql_table_ptr(t);
}
/* The column array of described column c (its element type follows
 * desc->cols[c].type); NULL for a computed column and for a sparse column
 * never written (all NULL). */
static inline const void *tp_sql_col_data(const struct tp_sql_table *t, uint32_t c)
{
	if (t->desc->cols[c].flags & TP_COL_COMPUTED)
		return NULL;
	return *(const void *const *)((char *)tp_sql_table_ptr(t) + t->desc->cols[c].offset);
}

/* Free what the tables cached (orders); sql itself stays. */
void tp_sql_tables_release(struct tp_sql *sql);
/* Is described column c (0-based, not counting id) sorted right now? */
bool tp_sql_col_sorted(struct tp_sql_table *t, uint32_t c);
/* The table state by SQL name (e.g. "__intrinsic_args"), or NULL. */
struct tp_sql_table *tp_sql_table_find(struct tp_sql *sql, const char *sql_name);
/* Described column index by name, or -1. */
int tp_sql_col_find(const struct tp_table_desc *d, const char *name);

/* First and one-past-last row whose sorted column c lies in [lo, hi]
 * (int64 compare; the column must be sorted and integer-typed). */
void tp_sql_sorted_range(const struct tp_sql_table *t, uint32_t c, int64_t lo, int64_t hi,
                         uint32_t *first, uint32_t *end);

/* Register the generic module for every table of tp_table_descs[]
 * (eponymous: each is queryable by its sql_name). 0 or an SQLite code. */
int tp_sql_register_tables(sqlite3 *db, struct tp_sql *sql);
/* Register `__intrinsic_stats`; its destructor frees sql (see above). */
int tp_sql_register_stats(sqlite3 *db, struct tp_sql *sql);
/* Register EXTRACT_ARG, HASH & co. */
int tp_sql_register_functions(sqlite3 *db, struct tp_sql *sql);
/* to_ftrace(id): an ftrace_event row as ftrace text (to_ftrace.c). */
int tp_sql_register_to_ftrace(sqlite3 *db, struct tp_sql *sql);
/* 64-bit FNV-1a, Perfetto's HASH(): fold n bytes into h (start from
 * TP_SQL_FNV1A_OFFSET). */
#define TP_SQL_FNV1A_OFFSET 0xcbf29ce484222325ull
uint64_t tp_sql_fnv1a(uint64_t h, const void *p, size_t n);
/* The args rows that may hold arg set `set`: [first, end) (the set's rows
 * when args.arg_set_id is sorted, else every row; empty for an impossible
 * id). sql->args must be usable (args_cols.ok). */
void tp_sql_args_range(struct tp_sql *sql, int64_t set, uint32_t *first, uint32_t *end);
/* __intrinsic_arg_set_to_json(arg_set_id) (args_json.c); user data: sql. */
void tp_sql_fn_arg_set_to_json(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* regexp, regexp_extract, regexp_replace_simple, unhex (strings.c). */
int tp_sql_register_strings(sqlite3 *db);
/* LAST_NON_NULL, INTERNAL_LAYOUT (window.c). */
int tp_sql_register_window(sqlite3 *db);
/* SUM, TOTAL, AVG with SQLite 3.43+'s compensated real sums (sums.c). */
int tp_sql_register_sums(sqlite3 *db);
/* The functions and table functions of the stdlib modules (modules.c). */
int tp_sql_register_modules(sqlite3 *db, struct tp_sql *sql);
/* sql with the PerfettoSQL macros expanded (include.c), into *text
 * (sqlite3_free it). An SQLite code; err holds the message on failure. */
int tp_sql_expand_macros(const char *sql, char **text, char *err, size_t err_size);
/* CREATE the views of every stdlib module we provide (modules.c). */
int tp_sql_create_module_views(sqlite3 *db, char **errmsg);
/* The name of stdlib module i we provide, NULL past the last (modules.c). */
const char *tp_sql_module_name(size_t i);
/* The name and SQL of embedded stdlib module i (stdlib.c), NULL past the
 * last. */
const char *tp_sql_stdlib_name(size_t i);
const char *tp_sql_stdlib_sql(size_t i);
/* CREATE and fill __intrinsic_stdlib_objects: a MODULE row per module we
 * provide and a row per object our SQL modules define (stdlib.c). */
int tp_sql_create_stdlib_objects(sqlite3 *db);
/* Run `INCLUDE PERFETTO MODULE key` (key: n bytes, maybe ending in `*`):
 * a user package's modules run their SQL on their first INCLUDE, ours only
 * check the name (packages.c). An SQLite code; err holds the message. */
int tp_sql_include(struct tp *tp, const char *key, size_t n, char *err, size_t err_size);

/* Free the macros CREATE PERFETTO MACRO defined (include.c). */
void tp_sql_defs_free(struct tp *tp);
/* Register the table function `name` (CREATE PERFETTO FUNCTION ... RETURNS
 * TABLE): columns cols (comma separated names), arguments bound by name
 * ($arg_names[i]) into body for each scan (modules.c). An SQLite code. */
int tp_sql_register_table_function(sqlite3 *db, const char *name, const char *cols, size_t nargs,
                                   char *const *arg_names, const char *body);

/* __intrinsic_slice_mipmap and __intrinsic_counter_mipmap (mipmap.c). */
int tp_sql_register_mipmaps(sqlite3 *db);
/* experimental_slice_layout(track_ids) (layout.c); user data: sql. */
int tp_sql_register_layout(sqlite3 *db, struct tp_sql *sql);

/* CREATE the public views (slice, thread, process, track, args, ...). */
int tp_sql_create_views(sqlite3 *db, char **errmsg);

/* The first line of an error with frames (Perfetto's traceback): a frame
 * for the top-level text ("stdin", tp_sql_traceback) and one for each
 * module include the error passed through (packages.c). */
#define TP_SQL_TRACEBACK_HEAD "Traceback (most recent call last):\n"

#endif /* TB_TP_SQL_INT_H */
