/*
 * The interactive shell: a prompt, statements that may span lines and end
 * with `;`, results as aligned tables, dot-commands (.help, .quit), and SQL
 * errors shown without leaving the shell. Reads stdin line by line, so it
 * also works when the input is piped.
 */
#include "shell.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sqlite3.h"

#define MAX_ROWS_SHOWN 10000

static void print_help(void)
{
	puts("Enter SQL statements ending with ';'. Dot-commands:\n"
	     "  .help   this text\n"
	     "  .quit   leave the shell (also Ctrl-D)");
}

/* The text of column i of the current row, as the table shows it. */
static const char *cell(sqlite3_stmt *st, int i, char *buf, size_t n)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return "[NULL]";
	case SQLITE_FLOAT:
		snprintf(buf, n, "%f", sqlite3_column_double(st, i));
		return buf;
	case SQLITE_BLOB:
		return "<raw bytes>";
	default:
		return (const char *)sqlite3_column_text(st, i);
	}
}

/* Run one statement and print its rows as an aligned table. Widths come from
 * the header and the first rows, capped, like Perfetto's shell. */
static void run_one(struct tp *tp, const char *sql, bool wide)
{
	sqlite3 *db = tp_db(tp);
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		char err[512];
		if (tp_prepare(tp, tail, &st, &tail, err, sizeof err) != SQLITE_OK) {
			printf("Error: %s\n", err);
			return;
		}
		if (!st)
			continue;
		int ncol = sqlite3_column_count(st);
		int width = wide ? 40 : 20;
		for (int i = 0; i < ncol; i++)
			printf("%s%-*s", i ? " " : "", width, sqlite3_column_name(st, i));
		if (ncol) {
			putchar('\n');
			for (int i = 0; i < ncol; i++) {
				printf("%s", i ? " " : "");
				for (int j = 0; j < width; j++)
					putchar('-');
			}
			putchar('\n');
		}
		int rc;
		long rows = 0;
		char buf[64];
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (++rows > MAX_ROWS_SHOWN)
				continue;
			for (int i = 0; i < ncol; i++)
				printf("%s%-*s", i ? " " : "", width, cell(st, i, buf, sizeof buf));
			putchar('\n');
		}
		if (rc != SQLITE_DONE)
			printf("Error: %s\n", tp_sql_errmsg(db));
		else if (ncol)
			printf("\nQuery executed: %ld row%s%s\n", rows, rows == 1 ? "" : "s",
			       rows > MAX_ROWS_SHOWN ? " (first 10000 shown)" : "");
		sqlite3_finalize(st);
	}
}

int tp_shell_interactive(struct tp *tp, bool wide)
{
	bool tty = isatty(0);
	char line[4096];
	size_t cap = 4096, len = 0;
	char *stmt = tb_malloc(cap);
	stmt[0] = '\0';
	for (;;) {
		if (tty) {
			fputs(len ? "... " : "> ", stdout);
			fflush(stdout);
		}
		if (!fgets(line, sizeof line, stdin))
			break;
		if (len == 0) {
			const char *p = line + strspn(line, " \t");
			if (strncmp(p, ".quit", 5) == 0 || strncmp(p, ".exit", 5) == 0)
				break;
			if (strncmp(p, ".help", 5) == 0) {
				print_help();
				continue;
			}
			if (*p == '.') {
				printf("Unknown command: %s", p);
				continue;
			}
		}
		size_t n = strlen(line);
		if (len + n + 1 > cap) {
			while (len + n + 1 > cap)
				cap *= 2;
			stmt = tb_realloc(stmt, cap);
		}
		memcpy(stmt + len, line, n + 1);
		len += n;
		if (sqlite3_complete(stmt)) {
			run_one(tp, stmt, wide);
			fflush(stdout);
			len = 0;
			stmt[0] = '\0';
		}
	}
	if (len && sqlite3_complete(stmt))
		run_one(tp, stmt, wide);
	tb_free(stmt);
	return 0;
}
