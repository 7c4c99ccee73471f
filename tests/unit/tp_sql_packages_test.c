/*
 * User SQL packages (sql/packages.c): registration rules and INCLUDE
 * PERFETTO MODULE semantics, with Perfetto's messages.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "trace_processor.h"

/* Run every statement of sql through tp_prepare; "" on success, else the
 * error, in err. Rows of the last statement with output are joined as
 * "a|b;c|d" into rows (may be NULL). */
static const char *run(struct tp *tp, const char *sql, char *rows, size_t rows_size, char *err,
                       size_t err_size)
{
	const char *tail = sql;
	err[0] = 0;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		const char *start = tail;
		if (tp_prepare(tp, tail, &st, &tail, err, err_size) != SQLITE_OK)
			return err;
		if (!st) {
			if (tail == start)
				break;
			continue;
		}
		size_t len = 0;
		int rc;
		if (rows && sqlite3_column_count(st) > 0)
			rows[0] = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			for (int i = 0; rows && i < sqlite3_column_count(st); i++) {
				const unsigned char *t = sqlite3_column_text(st, i);
				len += (size_t)snprintf(
				    rows + len, len < rows_size ? rows_size - len : 0, "%s%s",
				    i ? "|" : (len ? ";" : ""), t ? (const char *)t : "NULL");
			}
		}
		if (rc != SQLITE_DONE)
			snprintf(err, err_size, "%s", sqlite3_errmsg(tp_db(tp)));
		sqlite3_finalize(st);
		if (err[0])
			return err;
	}
	return err;
}

static int reg(struct tp *tp, const char *name, const struct tp_sql_module *mods, size_t n,
               bool override, char *err, size_t err_size)
{
	struct tp_sql_package pkg = {name, mods, n, override};
	err[0] = 0;
	return tp_register_sql_package(tp, &pkg, err, err_size);
}

static const struct tp_sql_module demo[] = {
    {"demo.base", "CREATE TABLE demo_runs(x INT); INSERT INTO demo_runs VALUES (1);"},
    {"demo.more.twice", "INCLUDE PERFETTO MODULE demo.base;\n"
                        "CREATE VIEW demo_twice AS SELECT count(*) * 2 AS n FROM demo_runs;"},
    {"demo.more.macro", "CREATE VIEW demo_cast AS SELECT cast_int!(2.5) AS v;"},
};

TEST(tp_sql_packages_include_runs_once)
{
	struct tp *tp = tp_new(NULL);
	char err[1024], rows[256];
	CHECK_EQ(reg(tp, "demo", demo, 3, false, err, sizeof err), 0);
	/* Nothing runs at registration. */
	CHECK_STR_EQ(run(tp, "SELECT count(*) FROM demo_runs", rows, sizeof rows, err, sizeof err),
	             "no such table: demo_runs");
	CHECK_STR_EQ(
	    run(tp,
	        "INCLUDE PERFETTO MODULE demo.more.twice; INCLUDE PERFETTO MODULE demo.base;"
	        "INCLUDE PERFETTO MODULE demo.more.twice; SELECT n FROM demo_twice",
	        rows, sizeof rows, err, sizeof err),
	    "");
	CHECK_STR_EQ(rows, "2"); /* demo.base ran once, through demo.more.twice */
	CHECK_STR_EQ(
	    run(tp, "INCLUDE PERFETTO MODULE demo.nope", rows, sizeof rows, err, sizeof err),
	    "INCLUDE: unknown module 'demo.nope'");
	/* Our own modules still answer, unknown ones still fail. */
	CHECK_STR_EQ(run(tp,
	                 "INCLUDE PERFETTO MODULE slices.stack; INCLUDE PERFETTO MODULE linux.*",
	                 NULL, 0, err, sizeof err),
	             "");
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE other.x", NULL, 0, err, sizeof err),
	             "unknown module 'other.x' in INCLUDE PERFETTO MODULE");
	tp_free(tp);
}

TEST(tp_sql_packages_wildcard)
{
	struct tp *tp = tp_new(NULL);
	char err[1024], rows[256];
	CHECK_EQ(reg(tp, "demo", demo, 3, false, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE demo.more.*; SELECT n FROM demo_twice", rows,
	                 sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "2");
	CHECK_STR_EQ(run(tp, "SELECT v FROM demo_cast", rows, sizeof rows, err, sizeof err), "");
	CHECK_STR_EQ(rows, "2");
	/* A wildcard matching nothing in a known package is fine. */
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE demo.zzz*", NULL, 0, err, sizeof err), "");
	tp_free(tp);

	/* `*` alone: every module of every package. */
	tp = tp_new(NULL);
	CHECK_EQ(reg(tp, "demo", demo, 3, false, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE *; SELECT count(*) FROM demo_runs", rows,
	                 sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "1");
	tp_free(tp);
}

TEST(tp_sql_packages_registration_rules)
{
	struct tp *tp = tp_new(NULL);
	char err[1024];
	static const struct tp_sql_module bad[] = {{"other.x", "SELECT 1"}};
	static const struct tp_sql_module self[] = {{"demo", "SELECT 1"}};
	static const struct tp_sql_module sub[] = {{"demo.sub.x", "SELECT 1"}};
	CHECK_EQ(reg(tp, "demo", bad, 1, false, err, sizeof err), -EINVAL);
	CHECK_STR_EQ(err, "Module name 'other.x' must start with package name 'demo.' as prefix.");
	CHECK_EQ(reg(tp, "demo", self, 1, false, err, sizeof err), -EINVAL);
	CHECK_STR_EQ(err, "Module name 'demo' must start with package name 'demo.' as prefix.");
	CHECK_EQ(reg(tp, "demo", demo, 3, false, err, sizeof err), 0);
	CHECK_EQ(reg(tp, "demo", demo, 3, false, err, sizeof err), -EEXIST);
	CHECK_STR_EQ(err,
	             "Package 'demo' is already registered. Choose a different name.\n"
	             "If you want to replace the existing package using trace processor shell, "
	             "you need to pass the --dev flag and use --override-sql-package to pass "
	             "the module path.");
	CHECK_EQ(reg(tp, "demo.sub", sub, 1, false, err, sizeof err), -EINVAL);
	CHECK_STR_EQ(err, "Package 'demo.sub' clashes with existing package 'demo'. Package names "
	                  "cannot be prefixes of each other.");
	/* Our packages count: their names are taken, and prefixes clash. */
	CHECK_EQ(reg(tp, "slices", NULL, 0, false, err, sizeof err), -EEXIST);
	CHECK_EQ(reg(tp, "linux.mine", NULL, 0, false, err, sizeof err), -EINVAL);
	CHECK_STR_EQ(err, "Package 'linux.mine' clashes with existing package 'linux'. Package "
	                  "names cannot be prefixes of each other.");
	/* "demos" is not under "demo". */
	CHECK_EQ(reg(tp, "demos", NULL, 0, false, err, sizeof err), 0);
	tp_free(tp);
}

TEST(tp_sql_packages_override)
{
	struct tp *tp = tp_new(NULL);
	char err[1024], rows[256];
	static const struct tp_sql_module v1[] = {
	    {"mine.v", "CREATE TABLE mine_v AS SELECT 1 AS v"}};
	static const struct tp_sql_module v2[] = {
	    {"mine.v", "CREATE TABLE mine_w AS SELECT 2 AS v"}};
	static const struct tp_sql_module sl[] = {
	    {"slices.stack", "CREATE TABLE sl AS SELECT 3 AS v"}};
	CHECK_EQ(reg(tp, "mine", v1, 1, false, err, sizeof err), 0);
	CHECK_EQ(reg(tp, "mine", v2, 1, true, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE mine.v; SELECT v FROM mine_w", rows,
	                 sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "2");
	/* One of ours, replaced: INCLUDE now runs the user's SQL. */
	CHECK_EQ(reg(tp, "slices", sl, 1, true, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE slices.stack; SELECT v FROM sl", rows,
	                 sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "3");
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE slices.hierarchy", NULL, 0, err, sizeof err),
	             "INCLUDE: unknown module 'slices.hierarchy'");
	tp_free(tp);
}

TEST(tp_sql_packages_errors_name_the_module)
{
	struct tp *tp = tp_new(NULL);
	char err[1024];
	static const struct tp_sql_module mods[] = {
	    {"bad.inner", "SELECT 1;\n  SELECT * FROM missing_table;"},
	    {"bad.outer", "INCLUDE PERFETTO MODULE bad.inner;"},
	    {"bad.loop", "INCLUDE PERFETTO MODULE bad.loop;"},
	};
	CHECK_EQ(reg(tp, "bad", mods, 3, false, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE bad.outer", NULL, 0, err, sizeof err),
	             "Traceback (most recent call last):\n"
	             "  Module include \"bad.outer\" line 1 col 1\n"
	             "    INCLUDE PERFETTO MODULE bad.inner;\n"
	             "    ^\n"
	             "  Module include \"bad.inner\" line 2 col 3\n"
	             "      SELECT * FROM missing_table;\n"
	             "      ^\n"
	             "no such table: missing_table");
	/* A module that failed keeps failing, with the first error. */
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE bad.inner", NULL, 0, err, sizeof err),
	             "INCLUDE: module 'bad.inner' poisoned by earlier failure: "
	             "Traceback (most recent call last):\n"
	             "  Module include \"bad.inner\" line 2 col 3\n"
	             "      SELECT * FROM missing_table;\n"
	             "      ^\n"
	             "no such table: missing_table");
	CHECK(strstr(
	          run(tp, "INCLUDE PERFETTO MODULE bad.loop", NULL, 0, err, sizeof err),
	          "INCLUDE: cycle detected \xe2\x80\x94 module 'bad.loop' is already mid-import") !=
	      NULL);
	/* Forgetting includes (RESTORE_INITIAL_TABLES) clears the failures. */
	tp_sql_packages_forget_includes(tp);
	CHECK(strstr(run(tp, "INCLUDE PERFETTO MODULE bad.inner", NULL, 0, err, sizeof err),
	             "poisoned") == NULL);
	tp_free(tp);
}

TEST(tp_sql_packages_from_config)
{
	static const struct tp_sql_module mods[] = {
	    {"cfg.m", "CREATE TABLE cfg_t AS SELECT 7 AS v"}};
	struct tp_sql_package pkgs[] = {{"cfg", mods, 1, false}, {"cfg", mods, 1, false}};
	struct tp_config cfg = {.packages = pkgs, .npackages = 1};
	char err[1024], rows[64];
	struct tp *tp = tp_new(&cfg);
	CHECK_STR_EQ(tp_error(tp), "");
	CHECK_STR_EQ(run(tp, "INCLUDE PERFETTO MODULE cfg.m; SELECT v FROM cfg_t", rows,
	                 sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "7");
	tp_free(tp);
	/* The same package twice: the second fails, tp_error says why. */
	cfg.npackages = 2;
	tp = tp_new(&cfg);
	CHECK(strncmp(tp_error(tp), "Package 'cfg' is already registered.", 36) == 0);
	tp_free(tp);
}

TEST(tp_sql_create_perfetto_table_and_view)
{
	struct tp *tp = tp_new(NULL);
	char err[1024], rows[256];
	static const struct tp_sql_module mods[] = {
	    {"mk.t", "-- a table with a column list\n"
	             "CREATE PERFETTO TABLE mk_t(a INT, b STRING) AS\n"
	             "SELECT 1 AS a, 'x(' AS b UNION ALL SELECT cast_int!(2.5), 'y';\n"
	             "CREATE OR REPLACE PERFETTO VIEW mk_v AS SELECT sum(a) AS s FROM mk_t;\n"
	             "CREATE OR REPLACE PERFETTO VIEW mk_v AS SELECT sum(a) * 10 AS s FROM mk_t;"},
	};
	CHECK_EQ(reg(tp, "mk", mods, 1, false, err, sizeof err), 0);
	CHECK_STR_EQ(run(tp,
	                 "INCLUDE PERFETTO MODULE mk.t; SELECT group_concat(b) FROM mk_t; "
	                 "SELECT s FROM mk_v",
	                 rows, sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "30");
	CHECK_STR_EQ(
	    run(tp, "SELECT group_concat(a || b) FROM mk_t", rows, sizeof rows, err, sizeof err),
	    "");
	CHECK_STR_EQ(rows, "1x(,2y");
	/* The tail after a rewritten statement is the caller's text. */
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	CHECK_EQ(tp_prepare(tp, "CREATE PERFETTO TABLE mk_u AS SELECT 1; SELECT 2", &st, &tail, err,
	                    sizeof err),
	         SQLITE_OK);
	CHECK_STR_EQ(tail, " SELECT 2");
	sqlite3_finalize(st);
	CHECK(tp_prepare(tp, "CREATE PERFETTO SEQUENCE f AS SELECT 1", &st, &tail, err,
	                 sizeof err) != SQLITE_OK);
	CHECK_STR_EQ(err, "unsupported statement 'CREATE PERFETTO SEQUENCE': tracebox runs CREATE "
	                  "PERFETTO TABLE and VIEW");
	CHECK(tp_prepare(tp, "CREATE PERFETTO TABLE AS SELECT 1", &st, &tail, err, sizeof err) !=
	      SQLITE_OK);
	CHECK_STR_EQ(err, "CREATE PERFETTO TABLE: expected 'name [(columns)] AS select'");
	tp_free(tp);
}

TEST(tp_sql_create_perfetto_function_macro_index)
{
	struct tp *tp = tp_new(NULL);
	char err[1024], rows[256];
	/* Scalar functions: $args by name, first column of the first row,
	 * NULL without rows; a later definition replaces an earlier one;
	 * recursion works. */
	CHECK_STR_EQ(run(tp,
	                 "CREATE PERFETTO FUNCTION dbl(x INT) RETURNS INT AS SELECT $x * 2;\n"
	                 "CREATE PERFETTO FUNCTION none() RETURNS INT AS SELECT 1 WHERE 0;\n"
	                 "CREATE PERFETTO FUNCTION fact(n INT) RETURNS INT AS\n"
	                 "  SELECT iif($n <= 1, 1, $n * fact($n - 1));\n"
	                 "SELECT dbl(21), none(), fact(5)",
	                 rows, sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "42|NULL|120");
	CHECK_STR_EQ(
	    run(tp,
	        "CREATE OR REPLACE PERFETTO FUNCTION dbl(x INT) RETURNS INT AS SELECT $x * 3;"
	        " SELECT dbl(2)",
	        rows, sizeof rows, err, sizeof err),
	    "");
	CHECK_STR_EQ(rows, "6");
	/* Table functions: RETURNS TABLE(cols), arguments as FROM f(args). */
	CHECK_STR_EQ(
	    run(tp,
	        "CREATE PERFETTO FUNCTION upto(n INT, tag STRING) RETURNS TABLE(i INT, t "
	        "STRING) AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
	        "WHERE i < $n) SELECT i, $tag AS t FROM r;\n"
	        "SELECT group_concat(i || t) FROM upto(3, 'x')",
	        rows, sizeof rows, err, sizeof err),
	    "");
	CHECK_STR_EQ(rows, "1x,2x,3x");
	/* A body that does not prepare is refused at CREATE. */
	CHECK_STR_EQ(run(tp, "CREATE PERFETTO FUNCTION bad() RETURNS INT AS SELECT * FROM nope",
	                 rows, sizeof rows, err, sizeof err),
	             "CREATE PERFETTO FUNCTION bad: no such table: nope");
	/* A return type whose '(' never closes: an error, not a read past the
	 * text's end (a fuzz find; the statement must end there, unpadded). */
	{
		static const char unclosed[] = "CREATE PERFETTO FUNCTION f(x INT) RETURNS(";
		char *exact = malloc(sizeof unclosed);
		memcpy(exact, unclosed, sizeof unclosed);
		CHECK_STR_EQ(run(tp, exact, rows, sizeof rows, err, sizeof err),
		             "CREATE PERFETTO FUNCTION f: expected 'AS select'");
		free(exact);
	}
	/* Macros: text substitution of $args, nested calls, intrinsic ones. */
	CHECK_STR_EQ(run(tp,
	                 "CREATE PERFETTO MACRO plus(a Expr, b Expr) RETURNS Expr AS ($a) + ($b);\n"
	                 "CREATE PERFETTO MACRO tab(t TableOrSubquery, c ColumnName) RETURNS "
	                 "TableOrSubquery AS (SELECT plus!($c, 1) AS v FROM $t);\n"
	                 "SELECT v, __intrinsic_stringify!(a b) FROM tab!((SELECT 41 AS k), k)",
	                 rows, sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "42|a b");
	CHECK_STR_EQ(run(tp, "SELECT plus!(1)", rows, sizeof rows, err, sizeof err),
	             "macro 'plus!' expects 2 arguments, got 1");
	CHECK_STR_EQ(run(tp, "DROP PERFETTO MACRO plus; SELECT plus!(1, 2)", rows, sizeof rows, err,
	                 sizeof err),
	             "unknown macro 'plus!'");
	/* Interval intersection (intervals.intersect), Perfetto's rules for
	 * instants: inside [ts, ts + dur), or equal ts for two instants. */
	CHECK_STR_EQ(
	    run(tp,
	        "INCLUDE PERFETTO MODULE intervals.intersect;\n"
	        "CREATE PERFETTO TABLE ia AS SELECT 1 AS id, 0 AS ts, 10 AS dur, 7 AS p "
	        "UNION ALL SELECT 2, 20, 0, 7 UNION ALL SELECT 3, 30, 5, 8;\n"
	        "CREATE PERFETTO TABLE ib AS SELECT 10 AS id, 5 AS ts, 20 AS dur, 7 AS p "
	        "UNION ALL SELECT 11, 30, 5, 7 UNION ALL SELECT 12, 10, 0, 7;\n"
	        "SELECT group_concat(ts || ':' || dur || ':' || id_0 || ':' || id_1 || ':' "
	        "|| p, ' ') FROM (SELECT * FROM _interval_intersect!((ia, ib), (p)) "
	        "ORDER BY id_0, id_1)",
	        rows, sizeof rows, err, sizeof err),
	    "");
	CHECK_STR_EQ(rows, "5:5:1:10:7 20:0:2:10:7");
	/* CREATE PERFETTO INDEX and DROP PERFETTO INDEX / TABLE. */
	CHECK_STR_EQ(run(tp,
	                 "CREATE PERFETTO INDEX ia_ts ON ia(ts); SELECT count(*) FROM "
	                 "sqlite_schema WHERE name = 'ia_ts'",
	                 rows, sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "1");
	CHECK_STR_EQ(run(tp,
	                 "DROP PERFETTO INDEX ia_ts ON ia; DROP PERFETTO TABLE ib; SELECT count(*) "
	                 "FROM sqlite_schema WHERE name IN ('ia_ts', 'ib')",
	                 rows, sizeof rows, err, sizeof err),
	             "");
	CHECK_STR_EQ(rows, "0");
	tp_free(tp);
}
