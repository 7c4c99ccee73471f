/*
 * Fuzz target for statement preparation (sql/include.c): the input, as
 * NUL-terminated text, goes through tp_prepare statement after statement,
 * as the shell feeds a query file: INCLUDE PERFETTO MODULE parsing and the
 * macro expander (quotes, comments, nesting, the tail mapped back into the
 * input); a statement that fails gets its error report (the traceback:
 * line, column, the shown line, the caret, SQLite's message reworded).
 * Statements are prepared, never run, so no query can loop. Built
 * with -fsanitize=fuzzer for campaigns, or linked with replay.c to re-run
 * tests/fuzz/corpus/tp_sql_prepare/ in every CI build.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tp *tp;
	if (!tp)
		tp = tp_new(NULL); /* one database for every input, as a shell */
	char *sql = tb_malloc(size + 1);
	memcpy(sql, data, size);
	sql[size] = 0;
	const char *p = sql, *end = sql + strlen(sql);
	char err[256];
	/* Every statement consumes input, so this ends. */
	while (p < end) {
		sqlite3_stmt *st = NULL;
		const char *tail = NULL;
		int rc = tp_prepare(tp, p, &st, &tail, err, sizeof err);
		sqlite3_finalize(st);
		if (rc != SQLITE_OK) {
			char *report = tp_prepare_error_report(tp, sql, p, err);
			if (!strstr(report, err) && !strstr(report, "syntax error") &&
			    !strstr(report, "incomplete SQL statement"))
				__builtin_trap(); /* the message must be in the report */
			tb_free(report);
			/* an error while it ran is reported at the statement's start */
			tb_free(tp_sql_traceback(sql, p, NULL, err));
		}
		if (rc != SQLITE_OK || !tail || tail <= p || tail > end)
			break;
		p = tail;
	}
	tb_free(sql);
	return 0;
}
