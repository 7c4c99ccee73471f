/*
 * Statement preparation for every client of the library (shell, RPC, tests).
 * It adds one PerfettoSQL statement to SQLite's dialect:
 *
 *   INCLUDE PERFETTO MODULE name;
 *
 * Modules whose tables are already part of our prelude (see schema.c) are
 * accepted as no-ops; any other module is an error naming it, so a query
 * never silently runs against missing tables.
 */
#include "sql_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Modules whose contents schema.c always creates. */
static const char *const prelude_modules[] = {
	"slices.with_context",
};

/* Skip white space and SQL comments. */
static const char *skip_space(const char *p)
{
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

/* If p starts with `word` (case-insensitive) followed by a non-identifier
 * character, return the position after it, else NULL. */
static const char *keyword(const char *p, const char *word)
{
	size_t n = strlen(word);
	if (strncasecmp(p, word, n) != 0 || isalnum((unsigned char)p[n]) || p[n] == '_')
		return NULL;
	return skip_space(p + n);
}

int tp_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **st, const char **tail,
	       char *err, size_t err_size)
{
	*st = NULL;
	const char *p = skip_space(sql), *q;
	if ((q = keyword(p, "INCLUDE")) && (q = keyword(q, "PERFETTO")) && (q = keyword(q, "MODULE"))) {
		size_t n = strcspn(q, "; \t\r\n");
		const char *end = q + n;
		end = skip_space(end);
		if (*end == ';')
			end++;
		*tail = end;
		for (size_t i = 0; i < TB_ARRAY_SIZE(prelude_modules); i++)
			if (strlen(prelude_modules[i]) == n && strncmp(q, prelude_modules[i], n) == 0)
				return SQLITE_OK;
		snprintf(err, err_size, "unknown module '%.*s' in INCLUDE PERFETTO MODULE", (int)n, q);
		return SQLITE_ERROR;
	}
	int rc = sqlite3_prepare_v2(tp->db, sql, -1, st, tail);
	if (rc != SQLITE_OK)
		snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
	return rc;
}
