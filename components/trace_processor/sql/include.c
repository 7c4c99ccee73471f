/*
 * Statement preparation for every client of the library (shell, RPC, tests).
 * It adds two pieces of PerfettoSQL to SQLite's dialect:
 *
 *   INCLUDE PERFETTO MODULE name;
 *       Modules we provide (modules.c) always exist, so this only checks
 *       the name; a module of a user package runs its SQL on its first
 *       INCLUDE (packages.c); any other module is an error naming it, so a
 *       query never silently runs against missing tables.
 *   CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [(col TYPE, ...)] AS select
 *       What user modules are made of: prepared as CREATE TABLE|VIEW name
 *       AS select (the column list is not checked; OR REPLACE drops the
 *       old object first). Other CREATE PERFETTO statements (FUNCTION,
 *       MACRO, INDEX) are an error naming them.
 *   cast_int!(expr), cast_double!(expr), cast_string!(expr),
 *   counter_leading_intervals!(table)
 *       Perfetto's macros (prelude, counters.intervals), expanded in the
 *       text before SQLite sees it (CAST(expr AS INT|REAL|TEXT), a
 *       subquery); nested calls expand too. Any other `name!(` is an error
 *       naming the macro.
 *
 * Macro expansion rewrites the rest of the input, so the tail SQLite
 * returns is mapped back to the caller's text through the list of
 * replacements (a statement never ends inside a macro call).
 */
#include "sql_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* ---- macros -------------------------------------------------------------- */

/* A call name!(arg) becomes before + arg + after. */
static const struct {
	const char *name, *before, *after;
} macros[] = {
    {"cast_int", "CAST(", " AS INT)"},
    {"cast_double", "CAST(", " AS REAL)"},
    {"cast_string", "CAST(", " AS TEXT)"},
    /* counters.intervals: each counter row with its duration up to the next
     * row of its track (trace_end() for the last), the next value and the
     * change from the previous one. As Perfetto, the rows inside a run of
     * three or more equal values are skipped, except the run's last when a
     * different value follows it. arg: a table or subquery with id, ts,
     * track_id, value. */
    {"counter_leading_intervals",
     "(SELECT id, ts, coalesce(lead(ts) OVER w, trace_end()) - ts AS dur, track_id, value, "
     "lead(value) OVER w AS next_value, value - lag(value) OVER w AS delta_value FROM ("
     "SELECT id, ts, track_id, value FROM (SELECT id, ts, track_id, value, "
     "lag(value, 1) OVER t AS p1, lag(value, 2) OVER t AS p2, lead(value) OVER t AS n1 "
     "FROM (SELECT * FROM ",
     ") WINDOW t AS (PARTITION BY track_id ORDER BY ts, id)) WHERE NOT (p1 = value AND "
     "p2 = value) OR (n1 IS NOT NULL AND n1 != value)) "
     "WINDOW w AS (PARTITION BY track_id ORDER BY ts, id))"},
};

/* Calls nested deeper than this are an error (the expansion recurses). */
#define MACRO_MAX_DEPTH 64

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* The end of the quoted token or comment starting at p (p itself if none). */
static const char *skip_quoted(const char *p)
{
	char close = 0;
	switch (*p) {
	case '\'':
	case '"':
	case '`': close = *p; break;
	case '[': close = ']'; break;
	case '-':
		if (p[1] == '-')
			return p + strcspn(p, "\n");
		return p;
	case '/':
		if (p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			return e ? e + 2 : p + strlen(p);
		}
		return p;
	default: return p;
	}
	for (const char *q = p + 1; *q; q++) {
		if (*q == close) {
			if (close != ']' && q[1] == close) { /* doubled quote */
				q++;
				continue;
			}
			return q + 1;
		}
	}
	return p + strlen(p);
}

/* The ')' matching the '(' at open, before end, skipping quoted text and
 * comments; end if there is none. */
static const char *match_paren(const char *open, const char *end)
{
	int level = 0;
	for (const char *p = open; p < end; p++) {
		const char *q = skip_quoted(p);
		if (q != p) {
			p = q - 1;
			continue;
		}
		if (*p == '(')
			level++;
		else if (*p == ')' && --level == 0)
			return p;
	}
	return end;
}

/* One replacement: [orig_end] in the input ended where [exp_end] ends in the
 * output (offsets). */
struct macro_end {
	size_t orig_end, exp_end;
};
struct macro_map {
	VEC(struct macro_end) v;
};

/* Append s[0..n) to out with macro calls expanded; record top-level
 * replacements in map (NULL for nested text). 0, or -1 with err set. */
static int expand(sqlite3_str *out, const char *s, size_t n, struct macro_map *map, int depth,
                  char *err, size_t err_size)
{
	const char *p = s, *end = s + n, *copied = s;
	if (depth > MACRO_MAX_DEPTH) {
		snprintf(err, err_size, "macro calls nested too deeply");
		return -1;
	}
	while (p < end) {
		const char *q = skip_quoted(p);
		if (q != p) {
			p = q < end ? q : end;
			continue;
		}
		if (!ident_char(*p) || (p > s && ident_char(p[-1])) || isdigit((unsigned char)*p)) {
			p++;
			continue;
		}
		const char *id = p;
		while (p < end && ident_char(*p))
			p++;
		size_t idn = (size_t)(p - id);
		const char *bang = p;
		if (bang >= end || *bang != '!')
			continue;
		const char *open = bang + 1;
		while (open < end && isspace((unsigned char)*open))
			open++;
		if (open >= end || *open != '(')
			continue;
		const char *close = match_paren(open, end);
		if (close >= end) {
			snprintf(err, err_size, "unterminated call of macro '%.*s!'", (int)idn, id);
			return -1;
		}
		size_t m = 0;
		while (m < TB_ARRAY_SIZE(macros) &&
		       !(strlen(macros[m].name) == idn && strncasecmp(macros[m].name, id, idn) == 0))
			m++;
		if (m == TB_ARRAY_SIZE(macros)) {
			snprintf(err, err_size, "unknown macro '%.*s!'", (int)idn, id);
			return -1;
		}
		sqlite3_str_append(out, copied, (int)(id - copied));
		sqlite3_str_appendall(out, macros[m].before);
		if (expand(out, open + 1, (size_t)(close - open - 1), NULL, depth + 1, err,
		           err_size) < 0)
			return -1;
		sqlite3_str_appendall(out, macros[m].after);
		p = copied = close + 1;
		if (map) {
			vec_push_zeroed(&map->v);
			vec_last(&map->v)->orig_end = (size_t)(copied - s);
			vec_last(&map->v)->exp_end = (size_t)sqlite3_str_length(out);
		}
	}
	sqlite3_str_append(out, copied, (int)(end - copied));
	return 0;
}

/* Does the text contain a '!' outside quotes that may start a macro call? */
static bool maybe_macro(const char *p)
{
	for (; *p; p++) {
		const char *q = skip_quoted(p);
		if (q != p) {
			p = q - 1;
			continue;
		}
		if (*p == '!' && p[1] != '=')
			return true;
	}
	return false;
}

/* sql with its macros expanded into *text (sqlite3_free it), replacements
 * recorded in map (may be NULL). An SQLite code; err set on failure. */
static int expand_all(const char *sql, char **text, struct macro_map *map, char *err,
                      size_t err_size)
{
	sqlite3_str *out = sqlite3_str_new(NULL);
	*text = NULL;
	if (expand(out, sql, strlen(sql), map, 0, err, err_size) < 0) {
		sqlite3_free(sqlite3_str_finish(out));
		return SQLITE_ERROR;
	}
	int ec = sqlite3_str_errcode(out);
	*text = sqlite3_str_finish(out);
	if (ec == SQLITE_OK && !*text) /* an empty builder finishes as NULL */
		*text = sqlite3_mprintf("%s", "");
	if (ec != SQLITE_OK || !*text) {
		sqlite3_free(*text);
		*text = NULL;
		snprintf(err, err_size, "out of memory");
		return SQLITE_NOMEM;
	}
	return SQLITE_OK;
}

int tp_sql_expand_macros(const char *sql, char **text, char *err, size_t err_size)
{
	return expand_all(sql, text, NULL, err, err_size);
}

/* sqlite3_prepare_v2 of sql with its macros expanded; *tail points into sql. */
static int prepare_expanded(struct tp *tp, const char *sql, struct sqlite3_stmt **st,
                            const char **tail, char *err, size_t err_size)
{
	struct macro_map map = {VEC_INIT};
	char *text = NULL;
	int rc = expand_all(sql, &text, &map, err, err_size);
	if (rc != SQLITE_OK)
		goto out;
	const char *etail = NULL;
	rc = sqlite3_prepare_v2(tp->db, text, -1, st, &etail);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
		goto out;
	}
	size_t at = (size_t)(etail - text), orig = at;
	for (size_t i = map.v.len; i-- > 0;) {
		if (map.v.data[i].exp_end <= at) {
			orig = map.v.data[i].orig_end + (at - map.v.data[i].exp_end);
			break;
		}
		orig = map.v.data[i].orig_end; /* inside a call: after it */
	}
	*tail = sql + orig;
out:
	sqlite3_free(text);
	vec_release(&map.v);
	return rc;
}

/* ---- CREATE PERFETTO TABLE / VIEW ------------------------------------------ */

/* q is after `CREATE [OR REPLACE] PERFETTO`: prepare `CREATE TABLE|VIEW
 * name AS ...`, the column list (if any) left out unchecked; OR REPLACE
 * drops the old object first. */
static int prepare_create(struct tp *tp, const char *q, bool replace, struct sqlite3_stmt **st,
                          const char **tail, char *err, size_t err_size)
{
	const char *kind = keyword(q, "TABLE") ? "TABLE" : keyword(q, "VIEW") ? "VIEW" : NULL;
	if (!kind) {
		snprintf(err, err_size,
		         "unsupported statement 'CREATE PERFETTO %.*s': tracebox runs CREATE "
		         "PERFETTO TABLE and VIEW",
		         (int)strcspn(q, " \t\r\n(;"), q);
		return SQLITE_ERROR;
	}
	const char *name = keyword(q, kind), *p = name;
	while (ident_char(*p))
		p++;
	size_t n = (size_t)(p - name);
	p = skip_space(p);
	if (n > 0 && *p == '(') { /* the column list */
		p = match_paren(p, p + strlen(p));
		p = *p ? skip_space(p + 1) : p;
	}
	const char *body = n > 0 ? keyword(p, "AS") : NULL;
	if (!body) {
		snprintf(err, err_size, "CREATE PERFETTO %s: expected 'name [(columns)] AS select'",
		         kind);
		return SQLITE_ERROR;
	}
	int rc = SQLITE_OK;
	if (replace) {
		char *drop = sqlite3_mprintf("DROP %s IF EXISTS %.*s", kind, (int)n, name);
		rc = drop ? sqlite3_exec(tp->db, drop, NULL, NULL, NULL) : SQLITE_NOMEM;
		sqlite3_free(drop);
		if (rc != SQLITE_OK) {
			snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
			return rc;
		}
	}
	/* The rest of the input follows the new head, so the tail maps back
	 * by the difference in length. */
	char *text = sqlite3_mprintf("CREATE %s %.*s AS %s", kind, (int)n, name, body);
	if (!text) {
		snprintf(err, err_size, "out of memory");
		return SQLITE_NOMEM;
	}
	size_t head = strlen(text) - strlen(body);
	const char *t = NULL;
	rc = tp_prepare(tp, text, st, &t, err, err_size);
	if (tail)
		*tail = t && (size_t)(t - text) >= head ? body + (t - text - head)
		                                        : body + strlen(body);
	sqlite3_free(text);
	return rc;
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
		if (tail)
			*tail = end;
		return tp_sql_include(tp, q, n, err, err_size);
	}
	if ((q = keyword(p, "CREATE"))) {
		const char *r = keyword(q, "OR");
		bool replace = r && (r = keyword(r, "REPLACE"));
		if ((q = keyword(replace ? r : q, "PERFETTO")))
			return prepare_create(tp, q, replace, st, tail, err, err_size);
	}
	if (maybe_macro(sql))
		return prepare_expanded(tp, sql, st, tail, err, err_size);
	int rc = sqlite3_prepare_v2(tp->db, sql, -1, st, tail);
	if (rc != SQLITE_OK)
		snprintf(err, err_size, "%s", tp_sql_errmsg(tp->db));
	return rc;
}
