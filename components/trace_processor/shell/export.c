/*
 * `export sqlite -o FILE TRACE` (classic `-e FILE`): the loaded database as
 * a SQLite file that sqlite3, DuckDB or Python's sqlite3 open without
 * tracebox. Every table the trace processor has (its column tables and the
 * user's) and every view (ours are views over functions and virtual tables
 * other programs do not have) becomes a plain table of the same name and
 * columns, with the declared types of the columns. Tables whose name starts
 * with "sqlite_" and table-valued functions are left out; a view that fails
 * to run (one that needs arguments) is reported and left out.
 *
 * The file is written through a second SQLite connection, not with ATTACH
 * (SQL itself may not touch files: --allow-sql-file-access), to a temporary
 * name beside FILE, and renamed over it once complete: a failed export
 * leaves no partial file, an older FILE stays.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite3.h"

struct export_ctx {
	sqlite3 *src, *dst;
	char err[8192];
	unsigned tables, skipped;
	uint64_t rows;
};

/* Copy the rows of `SELECT * FROM name` into a new table name of dst. */
static int copy_table(struct export_ctx *x, const char *name)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
	int rc = sqlite3_prepare_v2(x->src, sql, -1, &sel, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		snprintf(x->err, sizeof x->err, "%s", sqlite3_errmsg(x->src));
		return 1; /* skipped, not fatal */
	}
	int ncol = sqlite3_column_count(sel);
	if (ncol == 0) {
		sqlite3_finalize(sel);
		return 1;
	}
	/* CREATE TABLE "name"("col" TYPE, ...) and its INSERT. */
	char *create = sqlite3_mprintf("CREATE TABLE \"%w\"(", name);
	char *insert = sqlite3_mprintf("INSERT INTO \"%w\" VALUES(", name);
	for (int i = 0; i < ncol; i++) {
		const char *type = sqlite3_column_decltype(sel, i);
		char *c =
		    sqlite3_mprintf("%s%s\"%w\"%s%s", create, i ? ", " : "",
		                    sqlite3_column_name(sel, i), type ? " " : "", type ? type : "");
		char *v = sqlite3_mprintf("%s%s?", insert, i ? ", " : "");
		sqlite3_free(create);
		sqlite3_free(insert);
		create = c;
		insert = v;
	}
	char *c = sqlite3_mprintf("%s)", create), *v = sqlite3_mprintf("%s)", insert);
	sqlite3_free(create);
	sqlite3_free(insert);
	char *msg = NULL;
	rc = sqlite3_exec(x->dst, c, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(x->dst, v, -1, &ins, NULL);
	sqlite3_free(c);
	sqlite3_free(v);
	if (rc != SQLITE_OK) {
		snprintf(x->err, sizeof x->err, "cannot create table '%s': %s", name,
		         msg ? msg : sqlite3_errmsg(x->dst));
		sqlite3_free(msg);
		sqlite3_finalize(sel);
		return -1;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++)
			sqlite3_bind_value(ins, i + 1, sqlite3_column_value(sel, i));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			snprintf(x->err, sizeof x->err, "cannot write table '%s': %s", name,
			         sqlite3_errmsg(x->dst));
			rc = -1;
			break;
		}
		sqlite3_reset(ins);
		x->rows++;
	}
	int ret = 0;
	if (rc == -1) {
		ret = -1;
	} else if (rc != SQLITE_DONE) {
		/* The source failed mid-way (a view that needs arguments): drop
		 * what was written of it. */
		snprintf(x->err, sizeof x->err, "%s", sqlite3_errmsg(x->src));
		char *drop = sqlite3_mprintf("DROP TABLE \"%w\"", name);
		sqlite3_exec(x->dst, drop, NULL, NULL, NULL);
		sqlite3_free(drop);
		ret = 1;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return ret;
}

char **tp_shell_export_names(struct tp *tp, size_t *n, struct tb_err *err)
{
	/* Our column tables (eponymous virtual tables: not in the schema),
	 * then the schema's tables and views, the user's temporary ones too. */
	sqlite3 *db = tp_db(tp);
	VEC(char *) list = VEC_INIT;
	const char *name;
	for (uint32_t i = 0; (name = tp_column_table_name(i)); i++)
		vec_push(&list, tb_strdup(name));
	sqlite3_stmt *names = NULL;
	int rc =
	    sqlite3_prepare_v2(db,
	                       "SELECT name FROM (SELECT name, type FROM sqlite_schema UNION "
	                       "SELECT name, type FROM sqlite_temp_schema) WHERE type IN ('table', "
	                       "'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
	                       -1, &names, NULL);
	if (rc != SQLITE_OK) {
		tb_err_set(err, -EINVAL, "%s", sqlite3_errmsg(db));
		for (size_t i = 0; i < list.len; i++)
			tb_free(list.data[i]);
		vec_release(&list);
		return NULL;
	}
	size_t nours = list.len;
	while (sqlite3_step(names) == SQLITE_ROW) {
		const char *nm = (const char *)sqlite3_column_text(names, 0);
		bool dup = false;
		for (size_t i = 0; i < nours && !dup; i++)
			dup = strcmp(list.data[i], nm) == 0;
		if (!dup)
			vec_push(&list, tb_strdup(nm));
	}
	sqlite3_finalize(names);
	*n = list.len;
	vec_push(&list, NULL);
	return list.data;
}

/* Export every table and view of tp into the SQLite file path (created or
 * truncated). Returns 0, or -1 with x->err set. */
static int export_db(struct tp *tp, const char *path, struct export_ctx *x)
{
	int rc = sqlite3_open_v2(path, &x->dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(x->err, sizeof x->err, "cannot create '%s': %s", path,
		         x->dst ? sqlite3_errmsg(x->dst) : sqlite3_errstr(rc));
		return -1;
	}
	/* Written once, regenerated from the trace if anything fails. */
	sqlite3_exec(x->dst, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL,
	             NULL);
	x->src = tp_db(tp);
	size_t nlist = 0;
	char **list = tp_shell_export_names(tp, &nlist, NULL);
	if (!list) {
		snprintf(x->err, sizeof x->err, "%s", sqlite3_errmsg(x->src));
		return -1;
	}
	int ret = 0;
	for (size_t i = 0; i < nlist && ret == 0; i++) {
		int r = copy_table(x, list[i]);
		if (r < 0) {
			ret = -1;
		} else if (r > 0) {
			x->skipped++;
			tp_shell_error("export: skipping '%s': %s", list[i], x->err);
			x->err[0] = '\0';
		} else {
			x->tables++;
		}
	}
	for (size_t i = 0; i < nlist; i++)
		tb_free(list[i]);
	tb_free(list);
	if (ret == 0) {
		char *msg = NULL;
		if (sqlite3_exec(x->dst, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(x->err, sizeof x->err, "cannot write '%s': %s", path, msg);
			ret = -1;
		}
		sqlite3_free(msg);
	}
	return ret;
}

int tp_shell_export_sqlite(struct tp *tp, const char *path)
{
	struct export_ctx x = {0};
	struct tb_err err = {0};
	char tmp[PATH_MAX];
	int fd = tb_create_beside(path, 0644, tmp, sizeof tmp, &err);
	if (fd < 0) {
		tp_shell_error("export: %s", err.msg);
		return 1;
	}
	close(fd);
	int64_t t0 = tp_shell_now_ns();
	int rc = export_db(tp, tmp, &x);
	if (x.dst && sqlite3_close(x.dst) != SQLITE_OK && rc == 0) {
		snprintf(x.err, sizeof x.err, "cannot write '%s'", path);
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		snprintf(x.err, sizeof x.err, "cannot create '%s': %s", path, strerror(errno));
		rc = -1;
	}
	if (rc < 0) {
		unlink(tmp);
		tp_shell_error("export: %s", x.err);
		return 1;
	}
	tp_shell_metatrace_slice("API_TIMELINE", "EXPORT_SQLITE", t0, tp_shell_now_ns(), NULL);
	fprintf(stderr, "Exported %u tables (%llu rows) to %s\n", x.tables,
	        (unsigned long long)x.rows, path);
	return 0;
}

int tp_shell_run_export(struct shell_opts *o)
{
	if (tp_shell_reject_extra(o, "export", 2, NULL) < 0)
		return 1;
	if (o->pos.len == 0) {
		tp_shell_error("export: must specify format (sqlite, arrow_tar, or perfetto)");
		return 1;
	}
	const char *fmt = o->pos.data[0];
	bool parquet = strcmp(fmt, "parquet") == 0;
	if (strcmp(fmt, "sqlite") != 0 && strcmp(fmt, "arrow_tar") != 0 &&
	    strcmp(fmt, "perfetto") != 0 && !parquet) {
		tp_shell_error(
		    "export: unknown format '%s' (expected sqlite, parquet, arrow_tar, or "
		    "perfetto)",
		    fmt);
		return 1;
	}
	if (!o->output) {
		tp_shell_error("export: -o FILE is required");
		return 1;
	}
	if (o->pos.len < 2) {
		tp_shell_error("export: trace file is required");
		return 1;
	}
	if ((o->trace_id || o->all_views || o->gzip) && !parquet) {
		tp_shell_error("export: --%s is for export parquet", o->trace_id    ? "trace-id"
		                                                     : o->all_views ? "all-views"
		                                                                    : "gzip");
		return 1;
	}
	if (strcmp(fmt, "sqlite") != 0 && !parquet) {
		tp_shell_error(
		    "export %s: Perfetto's %s archive format is not implemented in tracebox "
		    "(export sqlite is)",
		    fmt, fmt);
		return 1;
	}
	/* The output directory first: a bad one fails before the trace loads. */
	if (parquet && mkdir(o->output, 0777) != 0 && errno != EEXIST) {
		tp_shell_error("export: cannot create directory '%s': %s", o->output,
		               strerror(errno));
		return 1;
	}
	struct shell_config sc;
	struct tp *tp = NULL;
	int status = 1;
	if (tp_shell_config_build(o, &sc) == 0 &&
	    (tp = tp_shell_load(o, &sc, o->pos.data[1], NULL))) {
		if (parquet) {
			const char *id = o->trace_id, *slash = strrchr(o->pos.data[1], '/');
			if (!id)
				id = slash ? slash + 1 : o->pos.data[1];
			status = tp_shell_export_parquet(tp, o->output, id, o->all_views, o->gzip);
		} else {
			status = tp_shell_export_sqlite(tp, o->output);
		}
	}
	tp_free(tp);
	tp_shell_config_release(&sc);
	return status;
}
