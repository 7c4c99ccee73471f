/*
 * The interactive shell, as Perfetto v58.2's: each line read is a query
 * (one or more statements, each run before the next is prepared, the last
 * one's rows shown; none at all is "No valid SQL to run") or a dot-command.
 *
 *   > select name, count(*) as n from slice group by 1 order by 2 desc limit 2
 *   name                 n
 *   -------------------- --------------------
 *   Paint                               18094
 *   aten::matmul                        18006
 *
 *   Query executed in 6.741 ms
 *
 * Every column is `width` characters (20, 40 with --wide, .width N) and
 * a space: names and text left-aligned and cut at the width, integers and
 * doubles (%f) right-aligned, NULL as [NULL], blobs as <raw bytes>. The
 * header comes with the first row (a query without rows prints none), and
 * "Query executed in N ms" times the query up to its first row. An error
 * goes to stderr as a traceback (tp_sql_traceback), the shell carries on.
 * An empty line says how to quit. On a terminal, a result is shown 32 rows
 * at a time ("Type 'q' to stop, Enter for more records"), the header
 * again on each page; piped input is never read as such an answer (where
 * Perfetto would take the next line of a script for one) and every row is
 * printed. The prompt "> " is written on a terminal only.
 *
 * Dot-commands: .quit/.q, .help, .width N, .read FILE (its statements run
 * as with -q, each result as CSV), .dump FILE (export sqlite), .reset (drop
 * what was created since the trace was loaded, -q's too), .load-metrics-sql and
 * .run-metrics (no v1 metrics here: nothing to load, and none to run).
 */
#include "shell.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../rpc/rpc.h"
#include "sqlite3.h"

#define PAGE_ROWS 32

static void print_usage(void)
{
	fputs("Available commands:\n"
	      ".quit, .q         Exit the shell.\n"
	      ".help             This text.\n"
	      ".dump FILE        Export the trace as a sqlite database.\n"
	      ".read FILE        Executes the queries in the FILE.\n"
	      ".reset            Destroys all tables/view created by the user.\n"
	      ".load-metrics-sql Reloads SQL from extension and custom metric paths\n"
	      "                  specified in command line args.\n"
	      ".run-metrics      Runs metrics specified in command line args\n"
	      "                  and prints the result.\n"
	      ".width WIDTH      Changes the column width of interactive query\n"
	      "                  output.\n",
	      stderr);
}

/* The header (names, then dashes) of st's columns. */
static void print_header(sqlite3_stmt *st, int width)
{
	int ncol = sqlite3_column_count(st);
	for (int i = 0; i < ncol; i++)
		printf("%-*.*s ", width, width, sqlite3_column_name(st, i));
	putchar('\n');
	for (int i = 0; i < ncol; i++) {
		for (int j = 0; j < width; j++)
			putchar('-');
		putchar(' ');
	}
	putchar('\n');
}

static void print_row(sqlite3_stmt *st, int width)
{
	int ncol = sqlite3_column_count(st);
	for (int i = 0; i < ncol; i++) {
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_NULL:
			printf("%-*s", width, "[NULL]");
			break;
		case SQLITE_FLOAT:
			printf("%*f", width, sqlite3_column_double(st, i));
			break;
		case SQLITE_INTEGER:
			printf("%*lld", width, (long long)sqlite3_column_int64(st, i));
			break;
		case SQLITE_BLOB:
			printf("%-*s", width, "<raw bytes>");
			break;
		default:
			printf("%-*.*s", width, width, (const char *)sqlite3_column_text(st, i));
			break;
		}
		putchar(' ');
	}
	putchar('\n');
}

/* On a terminal, after a page of rows: whether to go on. */
static bool next_page(void)
{
	char answer[32];
	fputs("...\nType 'q' to stop, Enter for more records: ", stderr);
	fflush(stderr);
	fflush(stdout);
	if (!fgets(answer, sizeof answer, stdin))
		return false;
	return answer[0] != 'q';
}

/* Run the statements of sql (one line of input), each stepped once as it
 * is prepared and the one before it run to its end (as the RPC's queries
 * run); print the last one's rows. The time is up to its first row. */
static void run_line(struct tp *tp, const char *sql, int width, bool paged)
{
	sqlite3 *db = tp_db(tp);
	const char *tail = sql, *last_start = sql;
	sqlite3_stmt *last = NULL;
	char err[1024];
	char *report = NULL;
	int64_t t0 = tp_shell_now_ns(), t1;
	int rc = SQLITE_DONE;
	bool ran = false;

	while (*tail) {
		sqlite3_stmt *st = NULL;
		const char *start = tail;
		if (tp_prepare(tp, tail, &st, &tail, err, sizeof err) != SQLITE_OK) {
			report = tp_prepare_error_report(tp, sql, start, err);
			break;
		}
		if (!st) {
			if (tail == start)
				break;
			ran |= !tp_shell_is_comment_only(start, tail); /* an INCLUDE ran */
			continue;
		}
		if (last) {
			while (rc == SQLITE_ROW)
				rc = sqlite3_step(last);
			sqlite3_finalize(last);
			last = NULL;
			if (rc != SQLITE_DONE) {
				report = tp_sql_traceback(sql, last_start, NULL, tp_sql_errmsg(db));
				sqlite3_finalize(st);
				break;
			}
		}
		last = st;
		last_start = start;
		ran = true;
		if ((rc = sqlite3_step(st)) != SQLITE_ROW && rc != SQLITE_DONE) {
			report = tp_sql_traceback(sql, start, NULL, tp_sql_errmsg(db));
			break;
		}
	}
	t1 = tp_shell_now_ns();
	if (!ran && !report)
		report = tb_strdup("No valid SQL to run");
	if (last && !report) {
		long rows = 0;
		for (; rc == SQLITE_ROW; rc = sqlite3_step(last)) {
			if (rows % PAGE_ROWS == 0) {
				if (rows > 0 && paged && !next_page())
					break;
				print_header(last, width);
			}
			print_row(last, width);
			rows++;
		}
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			report = tp_sql_traceback(sql, last_start, NULL, tp_sql_errmsg(db));
	}
	sqlite3_finalize(last);
	if (report) {
		fflush(stdout);
		fprintf(stderr, "%s\n", report);
		tb_free(report);
	}
	printf("\nQuery executed in %.3f ms\n\n", (double)(t1 - t0) / 1e6);
}

/* A dot-command (the text after the dot). Returns false for .quit. */
static bool run_command(struct tp *tp, const char *line, int *width, const struct hmap *initial)
{
	char cmd[32] = "";
	const char *arg;
	size_t n = strcspn(line, " \t");
	if (n < sizeof cmd)
		memcpy(cmd, line, n), cmd[n] = '\0';
	/* the argument: the rest of the line (a path may hold spaces) */
	arg = line + n + strspn(line + n, " \t");
	if (strcmp(cmd, "quit") == 0 || strcmp(cmd, "q") == 0)
		return false;
	if (strcmp(cmd, "dump") == 0 && arg[0]) {
		if (tp_shell_export_sqlite(tp, arg) != 0)
			fprintf(stderr, "Database export failed\n");
	} else if (strcmp(cmd, "reset") == 0) {
		tp_schema_restore(tp, initial);
	} else if (strcmp(cmd, "read") == 0 && arg[0]) {
		char *sql = strcmp(arg, "-") ? tp_shell_read_file(arg, NULL) : NULL;
		if (!sql)
			fprintf(stderr, "cannot read '%s': %s\n", arg,
			        strcmp(arg, "-") ? strerror(errno) : "not a file");
		else
			tp_shell_run_queries_csv(tp, sql, stdout);
		tb_free(sql);
	} else if (strcmp(cmd, "width") == 0 && arg[0]) {
		char *end;
		errno = 0;
		unsigned long w = strtoul(arg, &end, 10);
		if (*end || errno || arg[0] == '-' || w > 4096)
			fprintf(stderr, "Invalid column width specified\n");
		else
			*width = (int)w;
	} else if (strcmp(cmd, "load-metrics-sql") == 0) {
		/* no metric or extension paths: nothing to load */
	} else if (strcmp(cmd, "run-metrics") == 0) {
		fprintf(stderr, "No metrics specified on command line\n");
	} else {
		print_usage();
	}
	return true;
}

int tp_shell_interactive(struct tp *tp, bool wide, const struct hmap *loaded)
{
	bool tty = isatty(0);
	int width = wide ? 40 : 20;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct hmap initial;

	hmap_init(&initial);
	if (!loaded) {
		tp_schema_snapshot(tp, &initial);
		loaded = &initial;
	}
	for (;;) {
		if (tty) {
			fputs("> ", stdout);
			fflush(stdout);
		}
		if ((n = getline(&line, &cap, stdin)) < 0)
			break;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0) {
			puts("If you want to quit either type .q or press CTRL-D (EOF)");
			continue;
		}
		if (line[0] == '.') {
			while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
				line[--n] = '\0';
			if (!run_command(tp, line + 1, &width, loaded))
				break;
		} else {
			run_line(tp, line, width, tty);
		}
		fflush(stdout);
	}
	free(line);
	hmap_release(&initial);
	return 0;
}
