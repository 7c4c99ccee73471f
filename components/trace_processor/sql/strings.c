/*
 * String functions of Perfetto's prelude, with its names, argument order and
 * NULL handling:
 *
 *   regexp(pattern, input [, flags])     1 if input contains a match, else 0
 *                                        (also `input REGEXP pattern`);
 *                                        flags: 'i' ignore case, 'c' respect
 *                                        it, the last one wins
 *   regexp_extract(input, pattern)       the only group's text if it matched
 *                                        (and is non-empty), else the whole
 *                                        match; NULL without a match
 *   regexp_replace_simple(input, pattern, replacement)
 *                                        every match replaced ($1, ${1}, $$
 *                                        in the replacement)
 *   unhex(text)                          '0xF', 'f', ' 0Xf ' -> 15
 *
 * Perfetto matches with PCRE2; we use the C library's POSIX extended regular
 * expressions, after rewriting the escapes PCRE users write that POSIX lacks
 * (\d \D, and \t \n \r as the characters). Lookaround and lazy quantifiers
 * are not supported. A pattern is compiled once per statement (SQLite's
 * auxdata on the pattern argument).
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>

#include "sql_int.h"

struct re_aux {
	regex_t re;
	bool icase;
};

static void re_aux_free(void *p)
{
	struct re_aux *a = p;
	regfree(&a->re);
	tb_free(a);
}

/* The pattern in POSIX ERE syntax: \d and \D as bracket expressions (inside
 * a bracket expression \d is the class name only), \t \n \r as themselves.
 * Caller frees with sqlite3_free; NULL on OOM. */
static char *re_translate(const char *p)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	bool in_bracket = false;
	for (; *p; p++) {
		if (in_bracket) {
			if (*p == ']') {
				in_bracket = false;
			} else if (p[0] == '[' && p[1] == ':') {
				const char *e = strstr(p + 2, ":]");
				if (e) {
					sqlite3_str_append(s, p, (int)(e + 2 - p));
					p = e + 1;
					continue;
				}
			} else if (p[0] == '\\' && p[1] == 'd') {
				sqlite3_str_appendall(s, "[:digit:]");
				p++;
				continue;
			}
			sqlite3_str_appendchar(s, 1, *p);
			continue;
		}
		if (*p == '[') {
			in_bracket = true;
			sqlite3_str_appendchar(s, 1, '[');
			if (p[1] == '^')
				sqlite3_str_appendchar(s, 1, *++p);
			if (p[1] == ']') /* a leading ']' is a member */
				sqlite3_str_appendchar(s, 1, *++p);
			continue;
		}
		if (*p == '\\' && p[1]) {
			const char *rep = NULL;
			switch (p[1]) {
			case 'd':
				rep = "[[:digit:]]";
				break;
			case 'D':
				rep = "[^[:digit:]]";
				break;
			case 't':
				rep = "\t";
				break;
			case 'n':
				rep = "\n";
				break;
			case 'r':
				rep = "\r";
				break;
			}
			if (rep) {
				sqlite3_str_appendall(s, rep);
				p++;
				continue;
			}
			sqlite3_str_append(s, p, 2);
			p++;
			continue;
		}
		sqlite3_str_appendchar(s, 1, *p);
	}
	if (sqlite3_str_errcode(s) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	/* An empty builder finishes as NULL: the empty pattern is "". */
	char *ere = sqlite3_str_finish(s);
	return ere ? ere : sqlite3_mprintf("%s", "");
}

/* The compiled pattern of argument `arg`: the one cached on it, or a new one
 * (*fresh set) that the caller hands back with re_put after use. NULL after
 * setting the error. `fn` names the function in messages. */
static struct re_aux *re_get(sqlite3_context *ctx, int arg, const char *pattern, bool icase,
                             const char *fn, bool *fresh)
{
	struct re_aux *a = sqlite3_get_auxdata(ctx, arg);
	*fresh = false;
	if (a && a->icase == icase)
		return a;
	char *ere = re_translate(pattern);
	if (!ere) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	a = tb_calloc(1, sizeof *a);
	a->icase = icase;
	int rc = regcomp(&a->re, ere, REG_EXTENDED | (icase ? REG_ICASE : 0));
	sqlite3_free(ere);
	if (rc != 0) {
		char why[128];
		regerror(rc, &a->re, why, sizeof why);
		char *msg = sqlite3_mprintf("%s: invalid pattern '%s': %s", fn, pattern, why);
		sqlite3_result_error(ctx, msg ? msg : "invalid pattern", -1);
		sqlite3_free(msg);
		tb_free(a);
		return NULL;
	}
	*fresh = true;
	return a;
}

/* Cache a freshly compiled pattern on its argument (SQLite may free it at
 * once when the argument is not a constant). */
static void re_put(sqlite3_context *ctx, int arg, struct re_aux *a, bool fresh)
{
	if (a && fresh)
		sqlite3_set_auxdata(ctx, arg, a, re_aux_free);
}

static const char *text_arg(sqlite3_value *v)
{
	return (const char *)sqlite3_value_text(v);
}

static void fn_regexp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *pattern = text_arg(argv[0]), *input = text_arg(argv[1]);
	bool icase = false;
	if (argc == 3) {
		const char *flags = text_arg(argv[2]);
		if (!flags)
			return;
		for (const char *f = flags; *f; f++) {
			if (*f == 'i' || *f == 'c') {
				icase = *f == 'i';
			} else {
				char *msg = sqlite3_mprintf("regexp: unknown flag '%c'", *f);
				sqlite3_result_error(ctx, msg ? msg : "regexp: unknown flag", -1);
				sqlite3_free(msg);
				return;
			}
		}
	}
	if (!pattern || !input)
		return;
	bool fresh;
	struct re_aux *a = re_get(ctx, 0, pattern, icase, "regexp", &fresh);
	if (a)
		sqlite3_result_int(ctx, regexec(&a->re, input, 0, NULL, 0) == 0);
	re_put(ctx, 0, a, fresh);
}

static void fn_regexp_extract(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *input = text_arg(argv[0]), *pattern = text_arg(argv[1]);
	regmatch_t m[2];
	if (!input || !pattern)
		return;
	bool fresh;
	struct re_aux *a = re_get(ctx, 1, pattern, false, "REGEXP_EXTRACT", &fresh);
	if (!a)
		return;
	if (regexec(&a->re, input, 2, m, 0) != 0) {
		/* no match: NULL */
	} else if (a->re.re_nsub > 1) {
		sqlite3_result_error(ctx, "REGEXP_EXTRACT: pattern has more than one group.", -1);
	} else {
		regmatch_t r = m[0];
		if (a->re.re_nsub == 1 && m[1].rm_so >= 0 && m[1].rm_eo > m[1].rm_so)
			r = m[1];
		sqlite3_result_text64(ctx, input + r.rm_so, (sqlite3_uint64)(r.rm_eo - r.rm_so),
		                      SQLITE_TRANSIENT, SQLITE_UTF8);
	}
	re_put(ctx, 1, a, fresh);
}

/* Append `rep` with $n / ${n} replaced by group n of the match (empty if it
 * did not take part) and $$ by '$'. False on a malformed reference. */
static bool append_replacement(sqlite3_str *out, const char *rep, const char *base,
                               const regmatch_t *m, size_t nm)
{
	for (const char *r = rep; *r; r++) {
		if (*r != '$') {
			sqlite3_str_appendchar(out, 1, *r);
			continue;
		}
		r++;
		if (*r == '$') {
			sqlite3_str_appendchar(out, 1, '$');
			continue;
		}
		bool brace = *r == '{';
		if (brace)
			r++;
		if (!isdigit((unsigned char)*r))
			return false;
		size_t g = 0;
		while (isdigit((unsigned char)*r) && g < 100)
			g = g * 10 + (size_t)(*r++ - '0');
		if (brace && *r++ != '}')
			return false;
		r--;
		if (g >= nm)
			return false;
		if (m[g].rm_so >= 0)
			sqlite3_str_append(out, base + m[g].rm_so, (int)(m[g].rm_eo - m[g].rm_so));
	}
	return true;
}

static void fn_regexp_replace_simple(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *input = text_arg(argv[0]), *pattern = text_arg(argv[1]),
	           *rep = text_arg(argv[2]);
	regmatch_t m[10];
	if (!input || !pattern || !rep)
		return;
	bool fresh;
	struct re_aux *a = re_get(ctx, 1, pattern, false, "regexp_replace_simple", &fresh);
	if (!a)
		return;
	size_t len = strlen(input), p = 0, nm = a->re.re_nsub + 1 < 10 ? a->re.re_nsub + 1 : 10;
	sqlite3_str *out = sqlite3_str_new(NULL);
	bool ok = true;
	while (p <= len && regexec(&a->re, input + p, nm, m, p ? REG_NOTBOL : 0) == 0) {
		size_t s = p + (size_t)m[0].rm_so, e = p + (size_t)m[0].rm_eo;
		sqlite3_str_append(out, input + p, (int)(s - p));
		if (!(ok = append_replacement(out, rep, input + p, m, nm)))
			break;
		if (e == s) { /* empty match: keep one character and move on */
			if (s < len)
				sqlite3_str_appendchar(out, 1, input[s]);
			p = s + 1;
		} else {
			p = e;
		}
	}
	re_put(ctx, 1, a, fresh);
	if (!ok) {
		/* Perfetto returns the input unchanged when substitution fails. */
		sqlite3_free(sqlite3_str_finish(out));
		sqlite3_result_text64(ctx, input, len, SQLITE_TRANSIENT, SQLITE_UTF8);
		return;
	}
	if (p < len)
		sqlite3_str_append(out, input + p, (int)(len - p));
	int n = sqlite3_str_length(out);
	char *res = sqlite3_str_finish(out);
	if (!res && n) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text64(ctx, res ? res : "", (sqlite3_uint64)n,
	                      res ? sqlite3_free : SQLITE_STATIC, SQLITE_UTF8);
}

static void fn_unhex(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char space[] = " \t\n\r\f\v";
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "UNHEX: argument must be text", -1);
		return;
	}
	const char *s = text_arg(argv[0]);
	size_t n;
	s += strspn(s, space);
	n = strlen(s);
	while (n && strchr(space, s[n - 1]))
		n--;
	if (!n) {
		sqlite3_result_error(ctx, "UNHEX: input is empty or only whitespace", -1);
		return;
	}
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n) {
		sqlite3_result_error(ctx, "UNHEX: hex string is empty after prefix", -1);
		return;
	}
	char buf[64], *end;
	if (n >= sizeof buf) {
		sqlite3_result_error(ctx, "UNHEX: invalid or out of range hex string", -1);
		return;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	long long v = strtoll(buf, &end, 16);
	if (errno || end == buf || *end) {
		sqlite3_result_error(ctx, "UNHEX: invalid or out of range hex string", -1);
		return;
	}
	sqlite3_result_int64(ctx, v);
}

int tp_sql_register_strings(sqlite3 *db)
{
	static const struct {
		const char *name;
		int nargs;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
	    {"regexp", 2, fn_regexp},
	    {"regexp", 3, fn_regexp},
	    {"__intrinsic_regexp", 2, fn_regexp},
	    {"__intrinsic_regexp_with_flags", 3, fn_regexp},
	    {"regexp_extract", 2, fn_regexp_extract},
	    {"__intrinsic_regexp_extract", 2, fn_regexp_extract},
	    {"regexp_replace_simple", 3, fn_regexp_replace_simple},
	    {"__intrinsic_regexp_replace_simple", 3, fn_regexp_replace_simple},
	    {"unhex", 1, fn_unhex},
	    {"__intrinsic_unhex", 1, fn_unhex},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(fns); i++) {
		int rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs,
		                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC |
		                                        SQLITE_INNOCUOUS,
		                                    NULL, fns[i].fn, NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
