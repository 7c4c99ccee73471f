/*
 * `export parquet -o DIR TRACE [--trace-id ID] [--all-views]`: the trace's
 * tables as DIR/NAME.parquet (io/parquet.h), each led by a trace_id column
 * (the file name of the trace unless --trace-id says) so that the exports
 * of many traces concatenate (read DIR1/slice.parquet, DIR2/slice.parquet
 * ... as one table). A table that has a trace_id column of its own (flow)
 * gets the leading one as __trace_id. Which tables: Perfetto's, each once
 * under its public name (default_tables below) and the user's; with
 * --all-views every table and view that `export sqlite` writes.
 *
 * Speed comes from reading column storage directly instead of stepping
 * SQLite row by row: the storage tables (__intrinsic_slice & co.) and the
 * views that only pick and rename a storage table's columns (`CREATE VIEW
 * v AS SELECT *, a AS b, c + d AS e, f FROM t`, maybe through another such
 * view) are written a block of rows at a time through trace_processor.h's
 * column reader (tp_column_read: the values SQL shows, sentinels as NULL,
 * computed columns through their getters), strings dictionary-encoded by
 * their pool ids. The other views (joins, filters, expressions) and the
 * user's tables go through `SELECT *` and the query writer of query_out.c.
 *
 * Each file is written to a temporary name beside its final one and renamed
 * when complete; the first failure (an unwritable directory, a full disk)
 * stops the export with one message and leaves no partial file.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3.h"
#include "../io/parquet.h"
#include "../trace_processor.h"

/* Rows per block of the direct path: a divisor of TP_PQ_GROUP_ROWS. */
#define EXPORT_BLOCK 65536u
/* Views resolved through at most this many views. */
#define EXPORT_VIEW_DEPTH 8

/* A column of a directly readable table or view. */
struct src_col {
	uint32_t c;   /* column of the column table (tp_column_read's; 0: id) */
	int plus;     /* -1, or the column added to c (`a + b AS name`) */
	char *name;   /* its name in the export */
	bool display; /* args.display_value (ARGS_VIEW's CASE), computed here */
};

/* The args view (sql/schema.c): its display_value is an expression over
 * __intrinsic_args that write_display computes the same way. A view of
 * any other text goes through SQL. */
static const char ARGS_VIEW[] =
    "CREATE VIEW args AS SELECT id, arg_set_id, flat_key, key, int_value, string_value, "
    "real_value, value_type, CASE value_type "
    "WHEN 'int' THEN CAST(int_value AS TEXT) "
    "WHEN 'uint' THEN printf('%u', int_value) "
    "WHEN 'string' THEN string_value "
    "WHEN 'real' THEN CAST(real_value AS TEXT) "
    "WHEN 'pointer' THEN printf('0x%x', int_value) "
    "WHEN 'bool' THEN (CASE WHEN int_value != 0 THEN 'true' ELSE 'false' END) "
    "WHEN 'json' THEN string_value "
    "ELSE NULL END AS display_value FROM __intrinsic_args";

struct direct {
	int table; /* tp_column_table_find's */
	VEC(struct src_col) cols;
};

static void direct_release(struct direct *x)
{
	for (size_t i = 0; i < x->cols.len; i++)
		tb_free(x->cols.data[i].name);
	vec_release(&x->cols);
	x->table = -1;
}

/* ---- simple views ----------------------------------------------------------------- */

/* One token of a view's SQL: an identifier ([A-Za-z_][A-Za-z0-9_]*), ',',
 * '*' or '+'; anything else ends the simple form. */
struct tok {
	const char *p;
	size_t n;
};

static bool next_tok(const char **s, struct tok *t)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	t->p = p;
	if (*p == ',' || *p == '*' || *p == '+') {
		t->n = 1;
		*s = p + 1;
		return true;
	}
	if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return false;
	while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9'))
		p++;
	t->n = (size_t)(p - t->p);
	*s = p;
	return true;
}

static bool tok_is(const struct tok *t, const char *word)
{
	return t->n == strlen(word) && sqlite3_strnicmp(t->p, word, (int)t->n) == 0;
}

static int resolve(sqlite3 *db, const char *name, struct direct *out, int depth);

/* The column of table called name, or -1. */
static int col_named(uint32_t table, const char *name)
{
	for (uint32_t i = 0; i < tp_column_count(table); i++)
		if (strcmp(tp_column_name(table, i), name) == 0)
			return (int)i;
	return -1;
}

/* The column of src named n bytes at p, or -2. */
static int src_find(const struct direct *src, const char *p, size_t n)
{
	for (size_t i = 0; i < src->cols.len; i++)
		if (strlen(src->cols.data[i].name) == n &&
		    sqlite3_strnicmp(src->cols.data[i].name, p, (int)n) == 0)
			return (int)i;
	return -2;
}

/* sql is "CREATE VIEW x AS SELECT items FROM t" with items '*', col,
 * col AS name or a + b AS name (two integer columns): resolve t, then map
 * the items onto its columns. */
static int resolve_view(sqlite3 *db, const char *sql, struct direct *out, int depth)
{
	static const char *const head[] = {"CREATE", "VIEW", NULL, "AS", "SELECT"};
	struct tok t;
	const char *s = sql, *items;
	for (int i = 0; i < 5; i++)
		if (!next_tok(&s, &t) || (head[i] && !tok_is(&t, head[i])))
			return -1;
	/* Find FROM and the source name at the end. */
	items = s;
	for (;;) {
		if (!next_tok(&s, &t))
			return -1;
		if (tok_is(&t, "FROM"))
			break;
	}
	if (!next_tok(&s, &t))
		return -1;
	char src_name[128];
	if (t.n >= sizeof src_name)
		return -1;
	memcpy(src_name, t.p, t.n);
	src_name[t.n] = '\0';
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r' || *s == ';')
		s++;
	if (*s)
		return -1;
	struct direct src = {.table = -1};
	if (resolve(db, src_name, &src, depth + 1) < 0)
		return -1;
	out->table = src.table;
	s = items;
	int rc = -1;
	for (;;) {
		if (!next_tok(&s, &t))
			goto out;
		if (t.n == 1 && *t.p == '*') {
			for (size_t i = 0; i < src.cols.len; i++)
				vec_push(&out->cols, ((struct src_col){
				                         src.cols.data[i].c, src.cols.data[i].plus,
				                         tb_strdup(src.cols.data[i].name),
				                         src.cols.data[i].display}));
		} else if (*t.p == ',' || tok_is(&t, "FROM")) {
			goto out;
		} else {
			int at = src_find(&src, t.p, t.n);
			if (at < 0)
				goto out;
			struct tok alias = t;
			const char *save = s;
			int plus = -1;
			if (!next_tok(&s, &t))
				goto out;
			if (t.n == 1 && *t.p == '+') {
				/* a + b AS name: both integers, neither a sum. */
				struct tok b;
				int at2;
				if (!next_tok(&s, &b) || (at2 = src_find(&src, b.p, b.n)) < 0 ||
				    src.cols.data[at].plus >= 0 || src.cols.data[at2].plus >= 0 ||
				    src.cols.data[at].display || src.cols.data[at2].display ||
				    tp_column_type((uint32_t)src.table, src.cols.data[at].c) !=
				        TP_VALUE_INT ||
				    tp_column_type((uint32_t)src.table, src.cols.data[at2].c) !=
				        TP_VALUE_INT ||
				    !next_tok(&s, &t) || !tok_is(&t, "AS"))
					goto out;
				plus = (int)src.cols.data[at2].c;
			}
			if (tok_is(&t, "AS")) {
				if (!next_tok(&s, &alias) || *alias.p == ',' || *alias.p == '*')
					goto out;
			} else {
				s = save;
			}
			vec_push(&out->cols,
			         ((struct src_col){
			             src.cols.data[at].c, plus >= 0 ? plus : src.cols.data[at].plus,
			             tb_strndup(alias.p, alias.n), src.cols.data[at].display}));
		}
		if (!next_tok(&s, &t))
			goto out;
		if (tok_is(&t, "FROM"))
			break;
		if (!(t.n == 1 && *t.p == ','))
			goto out;
	}
	rc = 0;
out:
	direct_release(&src);
	return rc;
}

/* A storage table, or a view that only picks its columns: into *out
 * (direct_release it). -1 when name is neither. */
static int resolve(sqlite3 *db, const char *name, struct direct *out, int depth)
{
	int table = tp_column_table_find(name);
	if (table >= 0) {
		out->table = table;
		for (uint32_t i = 0; i < tp_column_count((uint32_t)table); i++)
			vec_push(&out->cols,
			         ((struct src_col){
			             i, -1, tb_strdup(tp_column_name((uint32_t)table, i)), false}));
		return 0;
	}
	if (depth > EXPORT_VIEW_DEPTH)
		return -1;
	sqlite3_stmt *st = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(
	        db,
	        "SELECT sql FROM (SELECT name, type, sql FROM sqlite_schema UNION ALL "
	        "SELECT name, type, sql FROM sqlite_temp_schema) "
	        "WHERE type = 'view' AND name = ?1",
	        -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	const char *sql = NULL;
	if (sqlite3_step(st) == SQLITE_ROW)
		sql = (const char *)sqlite3_column_text(st, 0);
	if (sql && strcmp(sql, ARGS_VIEW) == 0 &&
	    (table = tp_column_table_find("__intrinsic_args")) >= 0) {
		/* Its columns by name, then display_value. */
		static const char *const names[] = {"id",         "arg_set_id", "flat_key",
		                                    "key",        "int_value",  "string_value",
		                                    "real_value", "value_type"};
		rc = 0;
		out->table = table;
		for (size_t i = 0; i < TB_ARRAY_SIZE(names) && rc == 0; i++) {
			int c = col_named((uint32_t)table, names[i]);
			if (c < 0)
				rc = -1;
			else
				vec_push(&out->cols,
				         ((struct src_col){(uint32_t)c, -1, tb_strdup(names[i]),
				                           false}));
		}
		vec_push(&out->cols, ((struct src_col){0, -1, tb_strdup("display_value"), true}));
	} else if (sql) {
		rc = resolve_view(db, sql, out, depth);
	}
	sqlite3_finalize(st);
	if (rc < 0)
		direct_release(out);
	return rc;
}

/* ---- writing ------------------------------------------------------------------------ */

struct pq_export {
	struct tp *tp;
	const char *dir, *trace_id;
	size_t trace_id_len;
	bool gzip;
	unsigned tables, direct, skipped;
	uint64_t rows, bytes, direct_rows;
	int64_t direct_ns, sql_ns; /* CPU time */
	/* One block of a column (and of the column added to it). */
	union tp_value *vals, *vals2;
	uint8_t *null, *null2;
	/* args.display_value: value_type, int_value, real_value, string_value
	 * of a block, and CAST(? AS TEXT) for the doubles. */
	union tp_value *dv[4];
	uint8_t *dn[4];
	sqlite3_stmt *cast;
	struct tb_err err;
};

/* CPU nanoseconds of this process: on a busy machine the wall clock says
 * little about the export's own cost. */
static int64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *pool_text(void *ctx, uint32_t id, size_t *len)
{
	return tp_string(ctx, id, len);
}

/* args.display_value of rows [r0, r1) of __intrinsic_args (table), as
 * ARGS_VIEW's CASE gives it: SQLite's printf takes a NULL integer as 0. */
static void write_display(struct pq_export *x, struct tp_pq_writer *w, uint32_t col, uint32_t table,
                          uint32_t r0, uint32_t r1)
{
	static const char *const names[4] = {"value_type", "int_value", "real_value",
	                                     "string_value"};
	uint32_t n = r1 - r0;
	for (int k = 0; k < 4; k++) {
		if (!x->dv[k]) {
			x->dv[k] = tb_calloc(EXPORT_BLOCK, sizeof *x->dv[k]);
			x->dn[k] = tb_calloc(EXPORT_BLOCK, 1);
		}
		tp_column_read(x->tp, table, (uint32_t)col_named(table, names[k]), r0, n, x->dv[k],
		               x->dn[k]);
	}
	for (uint32_t r = 0; r < n; r++) {
		char buf[32];
		const char *s = NULL;
		size_t len = 0;
		int64_t iv = x->dn[1][r] ? 0 : x->dv[1][r].i;
		const char *vt = x->dn[0][r] ? "" : tp_string(x->tp, (uint32_t)x->dv[0][r].i, &len);
		if (strcmp(vt, "int") == 0) {
			if (!x->dn[1][r]) {
				len = (size_t)snprintf(buf, sizeof buf, "%lld", (long long)iv);
				s = buf;
			}
		} else if (strcmp(vt, "uint") == 0) {
			len = (size_t)snprintf(buf, sizeof buf, "%llu", (unsigned long long)iv);
			s = buf;
		} else if (strcmp(vt, "pointer") == 0) {
			len = (size_t)snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)iv);
			s = buf;
		} else if (strcmp(vt, "bool") == 0) {
			s = !x->dn[1][r] && iv != 0 ? "true" : "false";
			len = strlen(s);
		} else if (strcmp(vt, "string") == 0 || strcmp(vt, "json") == 0) {
			if (!x->dn[3][r])
				s = tp_string(x->tp, (uint32_t)x->dv[3][r].i, &len);
		} else if (strcmp(vt, "real") == 0 && !x->dn[2][r] && x->cast) {
			/* SQLite's own text of a double. */
			sqlite3_bind_double(x->cast, 1, x->dv[2][r].d);
			if (sqlite3_step(x->cast) == SQLITE_ROW &&
			    sqlite3_column_type(x->cast, 0) == SQLITE_TEXT) {
				len = (size_t)sqlite3_column_bytes(x->cast, 0);
				if (len < sizeof buf) {
					memcpy(buf, sqlite3_column_text(x->cast, 0), len);
					s = buf;
				}
			}
			sqlite3_reset(x->cast);
		}
		if (s)
			tp_pq_str(w, col, s, len);
		else
			tp_pq_null(w, col);
	}
}

/* Rows [r0, r1) of source column sc into column col of w. */
static void write_block(struct pq_export *x, struct tp_pq_writer *w, uint32_t col, uint32_t table,
                        const struct src_col *sc, uint32_t r0, uint32_t r1)
{
	uint32_t n = r1 - r0;
	if (sc->display) {
		write_display(x, w, col, table, r0, r1);
		return;
	}
	uint32_t nulls = tp_column_read(x->tp, table, sc->c, r0, n, x->vals, x->null);
	enum tp_value_type type = tp_column_type(table, sc->c);
	if (sc->plus >= 0) {
		/* a + b: NULL if either is (both are integers). */
		nulls +=
		    tp_column_read(x->tp, table, (uint32_t)sc->plus, r0, n, x->vals2, x->null2);
		for (uint32_t k = 0; k < n; k++) {
			x->null[k] |= x->null2[k];
			x->vals[k].i =
			    x->null[k]
			        ? 0
			        : (int64_t)((uint64_t)x->vals[k].i + (uint64_t)x->vals2[k].i);
		}
	}
	if (type == TP_VALUE_STRING)
		tp_pq_str_ids(w, col, x->vals, nulls ? x->null : NULL, n, pool_text, x->tp);
	else
		tp_pq_nums(w, col, x->vals, nulls ? x->null : NULL, n, type == TP_VALUE_DOUBLE);
}

static enum tp_pq_type pq_type_of(uint32_t table, uint32_t c)
{
	switch (tp_column_type(table, c)) {
	case TP_VALUE_DOUBLE:
		return TP_PQ_DOUBLE;
	case TP_VALUE_STRING:
		return TP_PQ_STRING;
	default:
		return TP_PQ_INT64;
	}
}

/* The leading column's name: trace_id, unless the table has one. */
static const char *lead_name(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], "trace_id") == 0)
			return "__trace_id";
	return "trace_id";
}

/* DIR/NAME.parquet, '/' in NAME as '_'. */
static void out_path(const struct pq_export *x, const char *name, char *path, size_t n)
{
	int len = snprintf(path, n, "%s/", x->dir);
	size_t at = len > 0 && (size_t)len < n ? (size_t)len : 0;
	for (const char *p = name; *p && at + 1 < n; p++)
		path[at++] = *p == '/' ? '_' : *p;
	snprintf(path + at, n - at, ".parquet");
}

static int export_direct(struct pq_export *x, const char *name, const struct direct *src)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	struct tp *tp = x->tp;
	out_path(x, name, path, sizeof path);
	int fd = tb_create_beside(path, 0644, tmp, sizeof tmp, &x->err);
	if (fd < 0)
		return -1;
	size_t ncols = src->cols.len + 1;
	const char **names = tb_calloc(ncols, sizeof *names);
	enum tp_pq_type *types = tb_calloc(ncols, sizeof *types);
	for (size_t i = 0; i < src->cols.len; i++) {
		names[i + 1] = src->cols.data[i].name;
		types[i + 1] = src->cols.data[i].display
		                   ? TP_PQ_STRING
		                   : pq_type_of((uint32_t)src->table, src->cols.data[i].c);
	}
	names[0] = lead_name(names + 1, src->cols.len);
	types[0] = TP_PQ_STRING;
	struct tp_pq_writer *w = tp_pq_new(fd, (uint32_t)ncols, names, types);
	tp_pq_set_gzip(w, x->gzip);
	tb_free(names);
	tb_free(types);
	uint32_t table = (uint32_t)src->table;
	uint32_t n = tp_column_table_rows(tp, table);
	int rc = 0;
	for (uint32_t r0 = 0; r0 < n && rc == 0; r0 += EXPORT_BLOCK) {
		uint32_t r1 = n - r0 > EXPORT_BLOCK ? r0 + EXPORT_BLOCK : n;
		tp_pq_str_repeat(w, 0, x->trace_id, x->trace_id_len, r1 - r0);
		for (size_t i = 0; i < src->cols.len; i++)
			write_block(x, w, (uint32_t)i + 1, table, &src->cols.data[i], r0, r1);
		rc = tp_pq_end_rows(w, r1 - r0);
	}
	if (rc == 0)
		rc = tp_pq_finish(w);
	if (rc < 0)
		tb_err_set(&x->err, rc, "cannot write '%s': %s", path, tp_pq_error(w));
	x->rows += tp_pq_rows(w);
	x->bytes += tp_pq_bytes(w);
	tp_pq_free(w);
	if (close(fd) != 0 && rc == 0)
		rc = tb_err_errno(&x->err, -errno, "cannot write '%s'", path);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = tb_err_errno(&x->err, -errno, "cannot create '%s'", path);
	if (rc < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Through SQL: 0, 1 (skipped: the view does not run) or -1. */
static int export_sql(struct pq_export *x, const char *name)
{
	char path[PATH_MAX];
	sqlite3 *db = tp_db(x->tp);
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK || sqlite3_column_count(st) == 0) {
		tp_shell_error("export: skipping '%s': %s", name,
		               rc != SQLITE_OK ? sqlite3_errmsg(db) : "no columns");
		sqlite3_finalize(st);
		return 1;
	}
	out_path(x, name, path, sizeof path);
	struct tp_shell_out *o = tp_shell_out_new(TP_SHELL_FMT_PARQUET, NULL, path, &x->err);
	if (!o) {
		sqlite3_finalize(st);
		return -1;
	}
	tp_shell_out_set_gzip(o, x->gzip);
	int ncol = sqlite3_column_count(st);
	const char **names = tb_calloc((size_t)ncol, sizeof *names);
	for (int i = 0; i < ncol; i++)
		names[i] = sqlite3_column_name(st, i);
	const char *lead = lead_name(names, (size_t)ncol);
	tb_free(names);
	int ret = 0;
	uint64_t rows = 0;
	if (tp_shell_out_begin(o, st, lead) < 0) {
		ret = -1;
	} else {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (tp_shell_out_row(o, st, x->trace_id) < 0) {
				ret = -1;
				break;
			}
			rows++;
		}
		if (ret == 0 && rc != SQLITE_DONE) {
			tp_shell_error("export: skipping '%s': %s", name, sqlite3_errmsg(db));
			ret = 1;
		}
	}
	if (ret == 0 && tp_shell_out_finish(o) < 0)
		ret = -1;
	if (ret < 0)
		tb_err_set(&x->err, -EIO, "%s", tp_shell_out_error(o));
	else if (ret == 0)
		x->rows += rows;
	tp_shell_out_free(o);
	sqlite3_finalize(st);
	if (ret == 0) {
		struct stat sb;
		if (stat(path, &sb) == 0)
			x->bytes += (uint64_t)sb.st_size;
	}
	return ret;
}

/* What an export holds by default: Perfetto's tables (those its SQLite
 * export writes as data), each once under its public name. The views
 * derived from them (slices, thread_slice, counters, sched_slice, ...: 75
 * in all, slice's rows 7 times over) and the __intrinsic_ storage tables
 * behind them only with --all-views. */
static const char *const default_tables[] = {
    "args",
    "clock_snapshot",
    "counter",
    "cpu",
    "cpu_profile_stack_sample",
    "flow",
    "ftrace_event",
    "gpu",
    "heap_graph",
    "heap_graph_object",
    "heap_profile_allocation",
    "logs",
    "machine",
    "memory_snapshot",
    "memory_snapshot_node",
    "metadata",
    "package_list",
    "perf_sample",
    "perf_session",
    "process",
    "process_memory_snapshot",
    "sched",
    "slice",
    "stack_profile_callsite",
    "stack_profile_frame",
    "stack_profile_mapping",
    "stack_profile_symbol",
    "stack_sample",
    "state",
    "stats",
    "thread",
    "thread_state",
    "trace_bounds",
    "trace_file",
    "track",
};

/* Is name in the default set: one of Perfetto's tables, or a table of the
 * user's (not ours: ours start with '_')? */
static bool in_default(sqlite3 *db, const char *name)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(default_tables); i++)
		if (strcmp(default_tables[i], name) == 0)
			return true;
	if (name[0] == '_' || tp_column_table_find(name) >= 0)
		return false;
	sqlite3_stmt *st = NULL;
	bool table = false;
	if (sqlite3_prepare_v2(db,
	                       "SELECT 1 FROM (SELECT name, type FROM sqlite_schema UNION ALL "
	                       "SELECT name, type FROM sqlite_temp_schema) "
	                       "WHERE type = 'table' AND name = ?1",
	                       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		table = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return table;
}

int tp_shell_export_parquet(struct tp *tp, const char *dir, const char *trace_id, bool all_views,
                            bool gzip)
{
	struct pq_export x = {.tp = tp, .dir = dir, .trace_id = trace_id, .gzip = gzip};
	x.trace_id_len = strlen(trace_id);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		tp_shell_error("export: cannot create directory '%s': %s", dir, strerror(errno));
		return 1;
	}
	size_t n = 0;
	char **names = tp_shell_export_names(tp, &n, &x.err);
	if (!names) {
		tp_shell_error("export: %s", x.err.msg);
		return 1;
	}
	x.vals = tb_calloc(EXPORT_BLOCK, sizeof *x.vals);
	x.vals2 = tb_calloc(EXPORT_BLOCK, sizeof *x.vals2);
	x.null = tb_calloc(EXPORT_BLOCK, 1);
	x.null2 = tb_calloc(EXPORT_BLOCK, 1);
	sqlite3_prepare_v2(tp_db(tp), "SELECT CAST(?1 AS TEXT)", -1, &x.cast, NULL);
	int64_t t0 = tp_shell_now_ns();
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct direct src = {.table = -1};
		if (!all_views && !in_default(tp_db(tp), names[i]))
			continue;
		int64_t t1 = cpu_ns();
		if (resolve(tp_db(tp), names[i], &src, 0) == 0) {
			uint64_t before = x.rows;
			rc = export_direct(&x, names[i], &src);
			x.direct++;
			x.direct_rows += x.rows - before;
			x.direct_ns += cpu_ns() - t1;
		} else {
			rc = export_sql(&x, names[i]);
			x.sql_ns += cpu_ns() - t1;
		}
		direct_release(&src);
		if (rc > 0) {
			x.skipped++;
			rc = 0;
		} else if (rc == 0) {
			x.tables++;
		}
	}
	for (size_t i = 0; i < n; i++)
		tb_free(names[i]);
	tb_free(names);
	tb_free(x.vals);
	tb_free(x.vals2);
	tb_free(x.null);
	tb_free(x.null2);
	for (int k = 0; k < 4; k++) {
		tb_free(x.dv[k]);
		tb_free(x.dn[k]);
	}
	sqlite3_finalize(x.cast);
	if (rc < 0) {
		tp_shell_error("export: %s", x.err.msg);
		return 1;
	}
	tp_shell_metatrace_slice("API_TIMELINE", "EXPORT_PARQUET", t0, tp_shell_now_ns(), NULL);
	fprintf(stderr,
	        "Exported %u tables (%llu rows, %.1f MB) to %s/: %u tables (%llu rows) from column "
	        "storage in %.2f s CPU, %u through SQL in %.2f s CPU\n",
	        x.tables, (unsigned long long)x.rows, (double)x.bytes / 1e6, dir, x.direct,
	        (unsigned long long)x.direct_rows, (double)x.direct_ns / 1e9, x.tables - x.direct,
	        (double)x.sql_ns / 1e9);
	return 0;
}
