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
	case '`':
		close = *p;
		break;
	case '[':
		close = ']';
		break;
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
	default:
		return p;
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
	size_t exp_start, orig_end, exp_end;
};
struct macro_map {
	VEC(struct macro_end) v;
};

/* Append s[0..n) to out with macro calls expanded; record top-level
 * replacements in map (NULL for nested text). 0, or -1 with err set. */
struct user_macro;
static int expand_user(sqlite3_str *out, struct tp *tp, const struct user_macro *um,
                       const char *args, size_t n, int depth, char *err, size_t err_size);
static const struct user_macro *user_macro_find(struct tp *tp, const char *name, size_t n);
static int expand_intrinsic(sqlite3_str *out, struct tp *tp, const char *name, size_t idn,
                            const char *args, size_t n, int depth, char *err, size_t err_size);

static int expand(sqlite3_str *out, struct tp *tp, const char *s, size_t n, struct macro_map *map,
                  int depth, char *err, size_t err_size)
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
		while (m < TB_ARRAY_SIZE(macros) && !(strlen(macros[m].name) == idn &&
		                                      strncasecmp(macros[m].name, id, idn) == 0))
			m++;
		const struct user_macro *um = NULL;
		sqlite3_str_append(out, copied, (int)(id - copied));
		size_t exp_start = (size_t)sqlite3_str_length(out);
		if (m < TB_ARRAY_SIZE(macros)) {
			sqlite3_str_appendall(out, macros[m].before);
			if (expand(out, tp, open + 1, (size_t)(close - open - 1), NULL, depth + 1,
			           err, err_size) < 0)
				return -1;
			sqlite3_str_appendall(out, macros[m].after);
		} else if ((um = user_macro_find(tp, id, idn))) {
			if (expand_user(out, tp, um, open + 1, (size_t)(close - open - 1), depth,
			                err, err_size) < 0)
				return -1;
		} else {
			int rc = expand_intrinsic(out, tp, id, idn, open + 1,
			                          (size_t)(close - open - 1), depth, err, err_size);
			if (rc < 0)
				return -1;
			if (rc == 0) {
				snprintf(err, err_size, "unknown macro '%.*s!'", (int)idn, id);
				return -1;
			}
		}
		p = copied = close + 1;
		if (map) {
			vec_push_zeroed(&map->v);
			vec_last(&map->v)->exp_start = exp_start;
			vec_last(&map->v)->orig_end = (size_t)(copied - s);
			vec_last(&map->v)->exp_end = (size_t)sqlite3_str_length(out);
		}
	}
	sqlite3_str_append(out, copied, (int)(end - copied));
	return 0;
}

/* ---- macro arguments and user macros -------------------------------------- */

struct span {
	const char *p;
	size_t n;
};

/* Trim white space (and comments) around s[0..n). */
static struct span trim(const char *s, size_t n)
{
	const char *e = s + n;
	s = skip_space(s);
	if (s > e)
		s = e;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	return (struct span){s, (size_t)(e - s)};
}

/* The top-level comma separated parts of s[0..n) into out (up to max);
 * their count, or -1 past max. An empty s has no parts. */
static int split_args(const char *s, size_t n, struct span *out, int max)
{
	const char *end = s + n, *start = s;
	int count = 0, level = 0;
	if (trim(s, n).n == 0)
		return 0;
	for (const char *p = s; p <= end; p++) {
		if (p < end) {
			const char *q = skip_quoted(p);
			if (q != p) {
				p = (q < end ? q : end) - 1;
				continue;
			}
			if (*p == '(')
				level++;
			else if (*p == ')')
				level--;
		}
		if (p == end || (*p == ',' && level == 0)) {
			if (count == max)
				return -1;
			out[count++] = trim(start, (size_t)(p - start));
			start = p + 1;
		}
	}
	return count;
}

/* The parts of a parenthesised list `(a, b)`, or of a bare `a`. */
static int split_list(struct span s, struct span *out, int max)
{
	if (s.n >= 2 && s.p[0] == '(' && match_paren(s.p, s.p + s.n) == s.p + s.n - 1)
		return split_args(s.p + 1, s.n - 2, out, max);
	return split_args(s.p, s.n, out, max);
}

#define MACRO_MAX_ARGS 32

struct user_macro {
	char *name, *body;
	char *args[MACRO_MAX_ARGS];
	int nargs;
};

struct tp_sql_defs {
	VEC(struct user_macro) macros;
};

static void user_macro_release(struct user_macro *m)
{
	tb_free(m->name);
	tb_free(m->body);
	for (int i = 0; i < m->nargs; i++)
		tb_free(m->args[i]);
}

void tp_sql_defs_free(struct tp *tp)
{
	struct tp_sql_defs *d = tp->sql_defs;
	if (!d)
		return;
	for (size_t i = 0; i < d->macros.len; i++)
		user_macro_release(&d->macros.data[i]);
	vec_release(&d->macros);
	tb_free(d);
	tp->sql_defs = NULL;
}

static const struct user_macro *user_macro_find(struct tp *tp, const char *name, size_t n)
{
	struct tp_sql_defs *d = tp ? tp->sql_defs : NULL;
	for (size_t i = 0; d && i < d->macros.len; i++)
		if (strlen(d->macros.data[i].name) == n &&
		    strncasecmp(d->macros.data[i].name, name, n) == 0)
			return &d->macros.data[i];
	return NULL;
}

/* A call of user macro um: its body with each `$arg` replaced by the
 * argument's text, then expanded again (bodies may call macros). */
static int expand_user(sqlite3_str *out, struct tp *tp, const struct user_macro *um,
                       const char *args, size_t n, int depth, char *err, size_t err_size)
{
	struct span a[MACRO_MAX_ARGS];
	int na = split_args(args, n, a, MACRO_MAX_ARGS);
	if (na != um->nargs) {
		snprintf(err, err_size, "macro '%s!' expects %d arguments, got %d", um->name,
		         um->nargs, na);
		return -1;
	}
	sqlite3_str *body = sqlite3_str_new(NULL);
	const char *b = um->body, *copied = b;
	for (const char *p = b; *p; p++) {
		const char *q = skip_quoted(p);
		if (q != p) {
			p = q - 1;
			continue;
		}
		if (*p != '$')
			continue;
		const char *id = p + 1, *e = id;
		while (ident_char(*e))
			e++;
		for (int i = 0; i < um->nargs; i++) {
			if (strlen(um->args[i]) == (size_t)(e - id) &&
			    strncmp(um->args[i], id, (size_t)(e - id)) == 0) {
				sqlite3_str_append(body, copied, (int)(p - copied));
				sqlite3_str_append(body, a[i].p, (int)a[i].n);
				copied = e;
				p = e - 1;
				break;
			}
		}
	}
	sqlite3_str_appendall(body, copied);
	int len = sqlite3_str_length(body);
	char *text = sqlite3_str_finish(body);
	int rc = expand(out, tp, text ? text : "", text ? (size_t)len : 0, NULL, depth + 1, err,
	                err_size);
	sqlite3_free(text);
	return rc;
}

/* ---- intrinsic macros ---------------------------------------------------- */

/* The overlap of two intervals as Perfetto's interval intersector decides
 * it: an instant meets an interval that contains its ts ([start, end)), two
 * instants meet at the same ts, two intervals when they share some time. */
#define II_OVERLAP(A, B)                                                                    \
	"(" A ".ts <= " B ".ts + " B ".dur AND " B ".ts <= " A ".ts + " A ".dur AND CASE "  \
	"WHEN " A ".dur = 0 AND " B ".dur = 0 THEN " A ".ts = " B ".ts WHEN " A ".dur = 0 " \
	"THEN " B ".ts <= " A ".ts AND " A ".ts < " B ".ts + " B ".dur WHEN " B ".dur = 0 " \
	"THEN " A ".ts <= " B ".ts AND " B ".ts < " A ".ts + " A ".dur ELSE " A ".ts < " B  \
	".ts + " B ".dur AND " B ".ts < " A ".ts + " A ".dur END)"

/* _interval_intersect!((t0, t1, ...), (p0, ...)): the times where one
 * interval of every table overlaps (same partition values): ts, dur, id_0..
 * id_k, then the partition columns. Each table has id, ts, dur and the
 * partition columns. A chain of joins: table k onto the intersection of
 * the tables before it. */
static void gen_ii(sqlite3_str *o, const struct span *t, int nt, const struct span *part, int np)
{
	if (nt == 1) {
		sqlite3_str_appendall(o, "(SELECT ts, dur, id AS id_0");
		for (int k = 0; k < np; k++)
			sqlite3_str_appendf(o, ", %.*s", (int)part[k].n, part[k].p);
		sqlite3_str_appendf(o, " FROM %.*s)", (int)t[0].n, t[0].p);
		return;
	}
	sqlite3_str_appendall(o, "(SELECT max(a.ts, b.ts) AS ts, "
	                         "min(a.ts + a.dur, b.ts + b.dur) - max(a.ts, b.ts) AS dur");
	for (int i = 0; i < nt - 1; i++)
		sqlite3_str_appendf(o, ", a.id_%d AS id_%d", i, i);
	sqlite3_str_appendf(o, ", b.id AS id_%d", nt - 1);
	for (int k = 0; k < np; k++)
		sqlite3_str_appendf(o, ", a.%.*s AS %.*s", (int)part[k].n, part[k].p,
		                    (int)part[k].n, part[k].p);
	sqlite3_str_appendall(o, " FROM ");
	gen_ii(o, t, nt - 1, part, np);
	sqlite3_str_appendf(o, " AS a JOIN %.*s AS b ON " II_OVERLAP("a", "b"), (int)t[nt - 1].n,
	                    t[nt - 1].p);
	for (int k = 0; k < np; k++)
		sqlite3_str_appendf(o, " AND a.%.*s = b.%.*s", (int)part[k].n, part[k].p,
		                    (int)part[k].n, part[k].p);
	sqlite3_str_appendall(o, ")");
}

/* Intrinsic macros, generated in C: 1 if name is one (and was expanded),
 * 0 if not, -1 on error. */
static int expand_intrinsic(sqlite3_str *out, struct tp *tp, const char *name, size_t idn,
                            const char *args, size_t n, int depth, char *err, size_t err_size)
{
#define IS(s) (idn == strlen(s) && strncasecmp(name, s, idn) == 0)
	struct span a[MACRO_MAX_ARGS], t[16], part[8];
	int na = split_args(args, n, a, MACRO_MAX_ARGS), nt = 0, np = 0;
	sqlite3_str *o = sqlite3_str_new(NULL);
	int rc = 1;
	if (IS("__intrinsic_stringify")) {
		struct span s = trim(args, n);
		sqlite3_str_appendall(o, "'");
		for (size_t i = 0; i < s.n; i++)
			sqlite3_str_appendf(o, "%s%c", s.p[i] == '\'' ? "'" : "", s.p[i]);
		sqlite3_str_appendall(o, "'");
	} else if (IS("_interval_intersect")) {
		if (na != 2 || (nt = split_list(a[0], t, 16)) < 1 ||
		    (np = split_list(a[1], part, 8)) < 0)
			goto bad;
		gen_ii(o, t, nt, part, np);
	} else if (IS("_interval_intersect_with_col_names")) {
		/* (t0, id0, ts0, dur0, t1, id1, ts1, dur1, (partitions)) */
		struct span r[2];
		char *txt[2] = {NULL, NULL};
		if (na != 9 || (np = split_list(a[8], part, 8)) < 0)
			goto bad;
		for (int i = 0; i < 2; i++) {
			const struct span *x = &a[4 * i];
			sqlite3_str *q = sqlite3_str_new(NULL);
			sqlite3_str_appendf(q, "(SELECT %.*s AS id, %.*s AS ts, %.*s AS dur",
			                    (int)x[1].n, x[1].p, (int)x[2].n, x[2].p, (int)x[3].n,
			                    x[3].p);
			for (int k = 0; k < np; k++)
				sqlite3_str_appendf(q, ", %.*s", (int)part[k].n, part[k].p);
			sqlite3_str_appendf(q, " FROM %.*s)", (int)x[0].n, x[0].p);
			txt[i] = sqlite3_str_finish(q);
			r[i] = (struct span){txt[i] ? txt[i] : "", txt[i] ? strlen(txt[i]) : 0};
		}
		gen_ii(o, r, 2, part, np);
		sqlite3_free(txt[0]);
		sqlite3_free(txt[1]);
	} else if (IS("_interval_intersect_single")) {
		if (na != 3)
			goto bad;
		sqlite3_str_appendf(
		    o,
		    "(SELECT b.id AS id, max(b.ts, %.*s) AS ts, "
		    "min(b.ts + b.dur, (%.*s) + (%.*s)) - max(b.ts, %.*s) AS dur "
		    "FROM %.*s AS b, (SELECT %.*s AS ts, %.*s AS dur) AS a WHERE " II_OVERLAP(
		        "a", "b") ")",
		    (int)a[0].n, a[0].p, (int)a[0].n, a[0].p, (int)a[1].n, a[1].p, (int)a[0].n,
		    a[0].p, (int)a[2].n, a[2].p, (int)a[0].n, a[0].p, (int)a[1].n, a[1].p);
	} else {
		rc = 0;
	}
	if (rc == 1) {
		int len = sqlite3_str_length(o);
		char *text = sqlite3_str_finish(o);
		o = NULL;
		if (expand(out, tp, text ? text : "", text ? (size_t)len : 0, NULL, depth + 1, err,
		           err_size) < 0)
			rc = -1;
		sqlite3_free(text);
	}
	sqlite3_free(sqlite3_str_finish(o));
	return rc;
bad:
	sqlite3_free(sqlite3_str_finish(o));
	snprintf(err, err_size, "%.*s!: bad arguments", (int)idn, name);
	return -1;
#undef IS
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
static int expand_all(struct tp *tp, const char *sql, char **text, struct macro_map *map, char *err,
                      size_t err_size)
{
	sqlite3_str *out = sqlite3_str_new(NULL);
	*text = NULL;
	if (expand(out, tp, sql, strlen(sql), map, 0, err, err_size) < 0) {
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
	return expand_all(NULL, sql, text, NULL, err, err_size);
}

/* sqlite3_prepare_v2 of sql with its macros expanded; *tail points into sql. */
static int prepare_expanded(struct tp *tp, const char *sql, struct sqlite3_stmt **st,
                            const char **tail, char *err, size_t err_size)
{
	struct macro_map map = {VEC_INIT};
	char *text = NULL;
	int rc = expand_all(tp, sql, &text, &map, err, err_size);
	if (rc != SQLITE_OK)
		goto out;
	const char *etail = NULL;
	rc = sqlite3_prepare_v2(tp->db, text, -1, st, &etail);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
		goto out;
	}
	/* Before the first call the texts are the same; after a call, they
	 * differ by what the calls changed; inside one, the tail is after it. */
	size_t at = (size_t)(etail - text), orig = at;
	for (size_t i = 0; i < map.v.len; i++) {
		const struct macro_end *e = &map.v.data[i];
		if (at >= e->exp_end) {
			orig = e->orig_end + (at - e->exp_end);
		} else {
			if (at > e->exp_start)
				orig = e->orig_end;
			break;
		}
	}
	*tail = sql + orig;
out:
	sqlite3_free(text);
	vec_release(&map.v);
	return rc;
}

/* ---- CREATE PERFETTO FUNCTION / MACRO / INDEX, DROP PERFETTO ------------- */

/* The end of the statement starting at p: its top-level ';' (or the end of
 * the text). */
static const char *statement_end(const char *p)
{
	int level = 0;
	for (; *p; p++) {
		const char *q = skip_quoted(p);
		if (q != p) {
			p = q - 1;
			continue;
		}
		if (*p == '(')
			level++;
		else if (*p == ')')
			level--;
		else if (*p == ';' && level <= 0)
			return p;
	}
	return p;
}

/* An identifier at p: its length (0 if none). */
static size_t ident_len(const char *p)
{
	size_t n = 0;
	while (ident_char(p[n]))
		n++;
	return n;
}

/* `(name TYPE, ...)` at p: the names into names (tb_strdup'd; up to max),
 * their count, or -1 if malformed. *after: past the ')'. */
static int parse_arg_list(const char *p, char **names, int max, const char **after)
{
	if (*p != '(')
		return -1;
	const char *close = match_paren(p, p + strlen(p));
	if (!*close)
		return -1;
	struct span parts[MACRO_MAX_ARGS];
	int n = split_args(p + 1, (size_t)(close - p - 1), parts, MACRO_MAX_ARGS);
	if (n < 0 || n > max)
		return -1;
	for (int i = 0; i < n; i++) {
		size_t len = ident_len(parts[i].p);
		if (!len) {
			for (int j = 0; j < i; j++)
				tb_free(names[j]);
			return -1;
		}
		names[i] = tb_strndup(parts[i].p, len);
	}
	*after = skip_space(close + 1);
	return n;
}

/* A scalar function defined in SQL: the body's first column of its first
 * row (NULL without rows), arguments bound by name ($arg). The body is
 * prepared per call: a statement kept across calls would keep the
 * connection from closing (sqlite3_close refuses while one is live). */
struct user_fn {
	struct tp *tp;
	char *name, *body;
	char *args[MACRO_MAX_ARGS];
	int nargs;
};

static void user_fn_free(void *p)
{
	struct user_fn *f = p;
	for (int i = 0; i < f->nargs; i++)
		tb_free(f->args[i]);
	tb_free(f->name);
	tb_free(f->body);
	tb_free(f);
}

static void user_fn_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct user_fn *f = sqlite3_user_data(ctx);
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, f->body, -1, &st, NULL) != SQLITE_OK) {
		char *m = sqlite3_mprintf("%s: %s", f->name, sqlite3_errmsg(db));
		sqlite3_result_error(ctx, m ? m : "out of memory", -1);
		sqlite3_free(m);
		return;
	}
	for (int i = 0; i < argc && i < f->nargs; i++) {
		char pn[128];
		snprintf(pn, sizeof pn, "$%s", f->args[i]);
		int at = sqlite3_bind_parameter_index(st, pn);
		if (at > 0)
			sqlite3_bind_value(st, at, argv[i]);
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_count(st) > 0)
		sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		char *m = sqlite3_mprintf("%s: %s", f->name, sqlite3_errmsg(db));
		sqlite3_result_error(ctx, m ? m : "out of memory", -1);
		sqlite3_free(m);
	}
	sqlite3_finalize(st);
}

/* CREATE [OR REPLACE] PERFETTO FUNCTION name(args) RETURNS type|TABLE(cols)
 * AS select;  q is after FUNCTION. The body is checked by preparing it. */
static int create_function(struct tp *tp, const char *q, const char **tail, char *err,
                           size_t err_size)
{
	char *args[MACRO_MAX_ARGS], *cols[64];
	int nargs = -1, ncols = -1, rc = SQLITE_ERROR;
	size_t n = ident_len(q);
	const char *p = skip_space(q + n), *r, *body, *end = statement_end(q);
	char *name = tb_strndup(q, n), *text = NULL;
	if (!n || (nargs = parse_arg_list(p, args, MACRO_MAX_ARGS, &p)) < 0 ||
	    !(r = keyword(p, "RETURNS"))) {
		snprintf(err, err_size,
		         "CREATE PERFETTO FUNCTION: expected 'name(args) RETURNS "
		         "type AS select'");
		goto out;
	}
	if ((p = keyword(r, "TABLE")) && *p == '(') {
		ncols = parse_arg_list(p, cols, 64, &p);
		if (ncols <= 0) {
			snprintf(err, err_size, "CREATE PERFETTO FUNCTION %s: bad TABLE columns",
			         name);
			goto out;
		}
	} else {
		p = skip_space(r + ident_len(r));
		if (*p == '(') { /* a type with arguments, e.g. JOINID(slice.id) */
			const char *close = match_paren(p, p + strlen(p));
			p = *close ? skip_space(close + 1) : close; /* unclosed: at the end */
		}
	}
	if (!(body = keyword(p, "AS")) || body >= end) {
		snprintf(err, err_size, "CREATE PERFETTO FUNCTION %s: expected 'AS select'", name);
		goto out;
	}
	/* The body with its macros expanded, checked by preparing it. */
	char *raw = tb_strndup(body, (size_t)(end - body));
	rc = expand_all(tp, raw, &text, NULL, err, err_size);
	tb_free(raw);
	if (rc != SQLITE_OK)
		goto out;
	/* Registered first, so that the body may call the function itself,
	 * then checked by preparing the body; a body that does not prepare
	 * unregisters it again. */
	if (ncols > 0) {
		sqlite3_str *c = sqlite3_str_new(NULL);
		for (int i = 0; i < ncols; i++)
			sqlite3_str_appendf(c, "%s%s", i ? ", " : "", cols[i]);
		char *list = sqlite3_str_finish(c);
		rc = list ? tp_sql_register_table_function(tp->db, name, list, (size_t)nargs, args,
		                                           text)
		          : SQLITE_NOMEM;
		sqlite3_free(list);
	} else {
		struct user_fn *f = tb_calloc(1, sizeof *f);
		f->tp = tp;
		f->name = tb_strdup(name);
		f->body = tb_strdup(text);
		f->nargs = nargs;
		for (int i = 0; i < nargs; i++)
			f->args[i] = tb_strdup(args[i]);
		rc = sqlite3_create_function_v2(tp->db, name, nargs, SQLITE_UTF8, f, user_fn_call,
		                                NULL, NULL, user_fn_free);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "CREATE PERFETTO FUNCTION %s: %s", name,
		         sqlite3_errmsg(tp->db));
		goto out;
	}
	sqlite3_stmt *check = NULL;
	rc = sqlite3_prepare_v2(tp->db, text, -1, &check, NULL);
	if (rc == SQLITE_OK && !check)
		rc = SQLITE_ERROR,
		snprintf(err, err_size, "CREATE PERFETTO FUNCTION %s: empty body", name);
	else if (rc != SQLITE_OK)
		snprintf(err, err_size, "CREATE PERFETTO FUNCTION %s: %s", name,
		         sqlite3_errmsg(tp->db));
	sqlite3_finalize(check);
	if (rc != SQLITE_OK) {
		if (ncols > 0)
			sqlite3_create_module_v2(tp->db, name, NULL, NULL, NULL);
		else
			sqlite3_create_function_v2(tp->db, name, nargs, SQLITE_UTF8, NULL, NULL,
			                           NULL, NULL, NULL);
	}
out:
	for (int i = 0; i < nargs; i++)
		tb_free(args[i]);
	for (int i = 0; i < ncols; i++)
		tb_free(cols[i]);
	sqlite3_free(text);
	tb_free(name);
	if (tail)
		*tail = *end ? end + 1 : end;
	return rc;
}

/* CREATE [OR REPLACE] PERFETTO MACRO name(arg Type, ...) RETURNS Type AS
 * text;  q is after MACRO. The body is kept as text. */
static int create_macro(struct tp *tp, const char *q, const char **tail, char *err, size_t err_size)
{
	struct user_macro m = {0};
	size_t n = ident_len(q);
	const char *p = skip_space(q + n), *r, *body, *end = statement_end(q);
	if (tail)
		*tail = *end ? end + 1 : end;
	if (!n || (m.nargs = parse_arg_list(p, m.args, MACRO_MAX_ARGS, &p)) < 0 ||
	    !(r = keyword(p, "RETURNS")) || !(body = keyword(skip_space(r + ident_len(r)), "AS")) ||
	    body > end) {
		for (int i = 0; i < m.nargs; i++)
			tb_free(m.args[i]);
		snprintf(err, err_size,
		         "CREATE PERFETTO MACRO: expected 'name(args) RETURNS type "
		         "AS text'");
		return SQLITE_ERROR;
	}
	m.name = tb_strndup(q, n);
	m.body = tb_strndup(body, (size_t)(trim(body, (size_t)(end - body)).n));
	if (!tp->sql_defs)
		tp->sql_defs = tb_calloc(1, sizeof *tp->sql_defs);
	struct tp_sql_defs *d = tp->sql_defs;
	for (size_t i = 0; i < d->macros.len; i++) {
		if (strcasecmp(d->macros.data[i].name, m.name) == 0) {
			user_macro_release(&d->macros.data[i]);
			d->macros.data[i] = m;
			return SQLITE_OK;
		}
	}
	vec_push(&d->macros, m);
	return SQLITE_OK;
}

/* CREATE PERFETTO INDEX name ON table(cols): SQLite's CREATE INDEX (the
 * tables CREATE PERFETTO TABLE makes are SQLite tables). q is after INDEX. */
static int create_index(struct tp *tp, const char *q, bool replace, struct sqlite3_stmt **st,
                        const char **tail, char *err, size_t err_size)
{
	const char *end = statement_end(q);
	size_t n = ident_len(q);
	if (replace && n) {
		char *drop = sqlite3_mprintf("DROP INDEX IF EXISTS %.*s", (int)n, q);
		sqlite3_exec(tp->db, drop, NULL, NULL, NULL);
		sqlite3_free(drop);
	}
	char *text = sqlite3_mprintf("CREATE INDEX %.*s", (int)(end - q), q);
	int rc = text ? sqlite3_prepare_v2(tp->db, text, -1, st, NULL) : SQLITE_NOMEM;
	if (rc != SQLITE_OK)
		snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
	sqlite3_free(text);
	if (tail)
		*tail = *end ? end + 1 : end;
	return rc;
}

/* DROP PERFETTO TABLE|VIEW|INDEX|FUNCTION|MACRO ...;  q is after PERFETTO.
 * Tables, views and indexes are SQLite's; a macro leaves the registry; a
 * function is replaced by nothing (SQLite cannot unregister one in use, so
 * it is overwritten by a function that reports it was dropped). */
static int drop_perfetto(struct tp *tp, const char *q, struct sqlite3_stmt **st, const char **tail,
                         char *err, size_t err_size)
{
	const char *end = statement_end(q);
	int rc = SQLITE_OK;
	if (tail)
		*tail = *end ? end + 1 : end;
	const char *ix = keyword(q, "INDEX");
	if (keyword(q, "TABLE") || keyword(q, "VIEW") || ix) {
		/* SQLite's DROP INDEX names no table: `ON table` is left out. */
		char *text = ix ? sqlite3_mprintf("DROP INDEX %.*s", (int)ident_len(ix), ix)
		                : sqlite3_mprintf("DROP %.*s", (int)(end - q), q);
		rc = text ? sqlite3_prepare_v2(tp->db, text, -1, st, NULL) : SQLITE_NOMEM;
		if (rc != SQLITE_OK)
			snprintf(err, err_size, "%s", sqlite3_errmsg(tp->db));
		sqlite3_free(text);
		return rc;
	}
	const char *name = keyword(q, "MACRO");
	if (name) {
		struct tp_sql_defs *d = tp->sql_defs;
		size_t n = ident_len(name);
		for (size_t i = 0; d && i < d->macros.len; i++) {
			if (strlen(d->macros.data[i].name) == n &&
			    strncasecmp(d->macros.data[i].name, name, n) == 0) {
				user_macro_release(&d->macros.data[i]);
				d->macros.data[i] = d->macros.data[--d->macros.len];
				return SQLITE_OK;
			}
		}
		snprintf(err, err_size, "DROP PERFETTO MACRO: no macro '%.*s'", (int)n, name);
		return SQLITE_ERROR;
	}
	snprintf(err, err_size, "unsupported statement 'DROP PERFETTO %.*s'",
	         (int)strcspn(q, " \t\r\n(;"), q);
	return SQLITE_ERROR;
}

/* ---- CREATE PERFETTO TABLE / VIEW ------------------------------------------ */

/* q is after `CREATE [OR REPLACE] PERFETTO`: prepare `CREATE TABLE|VIEW
 * name AS ...`, the column list (if any) left out unchecked; OR REPLACE
 * drops the old object first. */
static int prepare_create(struct tp *tp, const char *q, bool replace, struct sqlite3_stmt **st,
                          const char **tail, char *err, size_t err_size)
{
	const char *kind = keyword(q, "TABLE") ? "TABLE" : keyword(q, "VIEW") ? "VIEW" : NULL, *r;
	if ((r = keyword(q, "FUNCTION")))
		return create_function(tp, r, tail, err, err_size);
	if ((r = keyword(q, "MACRO")))
		return create_macro(tp, r, tail, err, err_size);
	if ((r = keyword(q, "INDEX")))
		return create_index(tp, r, replace, st, tail, err, err_size);
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
	/* where SQLite stopped, back in the caller's text (in the head: none) */
	const char *at = tp->prepare_err_at;
	tp->prepare_err_at = at && at >= text + head ? body + (at - text - head) : NULL;
	tp->prepare_err_stmt = body; /* Perfetto shows the body's text */
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
	tp->prepare_err_at = NULL;
	tp->prepare_err_as_is = false;
	tp->prepare_err_stmt = NULL;
	const char *p = skip_space(sql), *q;
	if ((q = keyword(p, "INCLUDE")) && (q = keyword(q, "PERFETTO")) &&
	    (q = keyword(q, "MODULE"))) {
		size_t n = strcspn(q, "; \t\r\n");
		const char *end = q + n;
		end = skip_space(end);
		if (*end == ';')
			end++;
		if (tail)
			*tail = end;
		int rc = tp_sql_include(tp, q, n, err, err_size);
		tp->prepare_err_at = NULL; /* (after the modules' own statements) */
		tp->prepare_err_as_is = true;
		return rc;
	}
	if ((q = keyword(p, "CREATE"))) {
		const char *r = keyword(q, "OR");
		bool replace = r && (r = keyword(r, "REPLACE"));
		if ((q = keyword(replace ? r : q, "PERFETTO")))
			return prepare_create(tp, q, replace, st, tail, err, err_size);
	}
	if ((q = keyword(p, "DROP")) && (q = keyword(q, "PERFETTO")))
		return drop_perfetto(tp, q, st, tail, err, err_size);
	if (maybe_macro(sql))
		return prepare_expanded(tp, sql, st, tail, err, err_size);
	int rc = sqlite3_prepare_v2(tp->db, sql, -1, st, tail);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "%s", tp_sql_errmsg(tp->db));
		int off = sqlite3_error_offset(tp->db);
		tp->prepare_err_at = off >= 0 && (size_t)off <= strlen(sql) ? sql + off : NULL;
	}
	return rc;
}

/* tp_sql_traceback with the statement starting at start exactly. */
static char *traceback(const char *sql, const char *start, const char *at, const char *msg)
{
	const char *bol = sql, *shown, *end, *nl;
	unsigned line = 1;
	size_t head = strlen(TP_SQL_TRACEBACK_HEAD), len;
	char *out;

	if (!at || at < start)
		at = start;
	for (const char *p = sql; p < at; p++)
		if (*p == '\n')
			line++, bol = p + 1;
	shown = bol > start ? bol : start;
	end = statement_end(start);
	nl = shown + strcspn(shown, "\n");
	if (nl < end)
		end = nl;
	if (end < at)
		end = at + strcspn(at, "\n"); /* past the statement: up to the line's end */
	while (end > shown && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (strncmp(msg, TP_SQL_TRACEBACK_HEAD, head) == 0)
		msg += head;
	len = head + 64 + (size_t)(end - shown) + (size_t)(at - shown) + strlen(msg);
	out = tb_malloc(len);
	snprintf(out, len, "%s  File \"stdin\" line %u col %u\n    %.*s\n    %*s^\n%s",
	         TP_SQL_TRACEBACK_HEAD, line, (unsigned)(at - bol) + 1, (int)(end - shown), shown,
	         (int)(at - shown), "", msg);
	return out;
}

char *tp_sql_traceback(const char *sql, const char *stmt, const char *at, const char *msg)
{
	return traceback(sql, skip_space(stmt), at, msg);
}

char *tp_prepare_error_report(struct tp *tp, const char *sql, const char *stmt, const char *msg)
{
	const char *at = tp->prepare_err_at, *q;
	char buf[512];
	size_t n;

	if (tp->prepare_err_as_is)
		return tb_strdup(msg);
	if (at && (at < stmt || at > stmt + strlen(stmt)))
		at = NULL;
	if (tp->prepare_err_stmt && tp->prepare_err_stmt >= stmt &&
	    tp->prepare_err_stmt <= stmt + strlen(stmt))
		stmt = tp->prepare_err_stmt;
	/* SQLite's wording of a syntax error -> Perfetto's parser's */
	if (strncmp(msg, "near \"", 6) == 0 && (q = strstr(msg + 6, "\": syntax error")) &&
	    q[15] == '\0') {
		snprintf(buf, sizeof buf, "syntax error near '%.*s'", (int)(q - msg - 6), msg + 6);
		msg = buf;
	} else if (strncmp(msg, "unrecognized token: \"", 21) == 0 && (n = strlen(msg)) > 22 &&
	           msg[n - 1] == '"') {
		snprintf(buf, sizeof buf, "syntax error near '%.*s'", (int)(n - 22), msg + 21);
		msg = buf;
	} else if (strcmp(msg, "incomplete input") == 0) {
		/* at the end, shown from its line's start (Perfetto's parser has
		 * no statement start for it) */
		msg = "incomplete SQL statement";
		for (at = stmt + strlen(stmt); at > stmt && isspace((unsigned char)at[-1]);)
			at--;
		return traceback(sql, stmt, at, msg);
	}
	return tp_sql_traceback(sql, stmt, at, msg);
}
