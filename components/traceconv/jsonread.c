/*
 * jsonread.c: a small JSON reader for `traceconv inspect`, which walks a report
 * model (model.c) without the trace. The whole text is parsed into a tree
 * of nodes allocated from one arena:
 *
 *   value  = null | true | false | number | "string" | [value, ...] |
 *            {"key": value, ...}
 *
 * Strings are unescaped (\uXXXX and surrogate pairs to UTF-8), numbers are
 * doubles (strtod on a bounded copy). Bounded: nesting depth
 * TRACECONV_JV_MAX_DEPTH; anything else is limited by the input's size.
 * A syntax error gives one message with the byte offset. Fuzzed by
 * tests/fuzz/traceconv_json_fuzz.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "traceconv_int.h"

#define TRACECONV_JV_MAX_DEPTH 64

struct parser {
	const char *p, *start, *end;
	struct arena *a;
	struct tb_err *err;
	int depth;
};

static int fail(struct parser *ps, const char *what)
{
	return tb_err_set(ps->err, -EINVAL, "bad JSON at byte %zu: %s", (size_t)(ps->p - ps->start),
	                  what);
}

static void ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t utf8(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote. The unescaped string (NUL-terminated) in *out. */
static int string(struct parser *ps, char **out, size_t *len)
{
	const char *q = ++ps->p;
	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= ps->end)
		return fail(ps, "unterminated string");
	/* The unescaped text is never longer than the escaped one. */
	char *s = arena_alloc(ps->a, (size_t)(q - ps->p) + 1, 1);
	size_t n = 0;
	while (ps->p < q) {
		char c = *ps->p++;
		if ((unsigned char)c < 0x20)
			return fail(ps, "control character in a string");
		if (c != '\\') {
			s[n++] = c;
			continue;
		}
		c = *ps->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			s[n++] = c;
			break;
		case 'b':
			s[n++] = '\b';
			break;
		case 'f':
			s[n++] = '\f';
			break;
		case 'n':
			s[n++] = '\n';
			break;
		case 'r':
			s[n++] = '\r';
			break;
		case 't':
			s[n++] = '\t';
			break;
		case 'u': {
			unsigned cp, lo;
			if (q - ps->p < 4 || hex4(ps->p, &cp) < 0)
				return fail(ps, "bad \\u escape");
			ps->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && q - ps->p >= 6 && ps->p[0] == '\\' &&
			    ps->p[1] == 'u' && hex4(ps->p + 2, &lo) == 0 && lo >= 0xdc00 &&
			    lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				ps->p += 6;
			}
			if (cp == 0)
				return fail(ps, "NUL in a string");
			/* 6 escaped bytes give at most 4 (a pair: 12 give 4) */
			n += utf8(cp, s + n);
			break;
		}
		default:
			return fail(ps, "bad escape");
		}
	}
	s[n] = 0;
	ps->p = q + 1;
	*out = s;
	*len = n;
	return 0;
}

static int value(struct parser *ps, struct traceconv_jv *v);

static int list(struct parser *ps, struct traceconv_jv *v, bool obj)
{
	VEC(struct traceconv_jv) items = VEC_INIT;
	VEC(char *) keys = VEC_INIT;
	int rc = 0;
	ps->p++;
	if (++ps->depth > TRACECONV_JV_MAX_DEPTH) {
		rc = fail(ps, "nested too deep");
		goto out;
	}
	ws(ps);
	if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
		ps->p++;
		goto done;
	}
	for (;;) {
		struct traceconv_jv item;
		ws(ps);
		if (obj) {
			char *key;
			size_t kn;
			if (ps->p >= ps->end || *ps->p != '"') {
				rc = fail(ps, "expected a key");
				goto out;
			}
			if ((rc = string(ps, &key, &kn)) < 0)
				goto out;
			vec_push(&keys, key);
			ws(ps);
			if (ps->p >= ps->end || *ps->p++ != ':') {
				rc = fail(ps, "expected ':'");
				goto out;
			}
		}
		if ((rc = value(ps, &item)) < 0)
			goto out;
		vec_push(&items, item);
		ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			break;
		}
		rc = fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto out;
	}
done:
	v->type = obj ? TRACECONV_JV_OBJ : TRACECONV_JV_ARR;
	v->n = items.len;
	if (items.len) {
		v->items = arena_alloc(ps->a, items.len * sizeof *items.data,
		                       _Alignof(struct traceconv_jv));
		memcpy(v->items, items.data, items.len * sizeof *items.data);
	}
	if (keys.len) {
		v->keys = arena_alloc(ps->a, keys.len * sizeof *keys.data, _Alignof(char *));
		memcpy(v->keys, keys.data, keys.len * sizeof *keys.data);
	}
out:
	ps->depth--;
	vec_release(&items);
	vec_release(&keys);
	return rc;
}

static int value(struct parser *ps, struct traceconv_jv *v)
{
	memset(v, 0, sizeof *v);
	ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end");
	char c = *ps->p;
	if (c == '{' || c == '[')
		return list(ps, v, c == '{');
	if (c == '"') {
		v->type = TRACECONV_JV_STR;
		return string(ps, &v->str, &v->n);
	}
	static const struct {
		const char *word;
		int type;
		bool val;
	} words[] = {{"null", TRACECONV_JV_NULL, false},
	             {"true", TRACECONV_JV_BOOL, true},
	             {"false", TRACECONV_JV_BOOL, false}};
	for (size_t i = 0; i < TB_ARRAY_SIZE(words); i++) {
		size_t n = strlen(words[i].word);
		if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i].word, n) == 0) {
			ps->p += n;
			v->type = words[i].type;
			v->num = words[i].val;
			return 0;
		}
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		char buf[64], *end;
		size_t n = 0;
		while (ps->p + n < ps->end && n < sizeof buf - 1 &&
		       strchr("+-0123456789.eE", ps->p[n]))
			n++;
		memcpy(buf, ps->p, n);
		buf[n] = 0;
		v->num = strtod(buf, &end);
		if (end == buf)
			return fail(ps, "bad number");
		ps->p += end - buf;
		v->type = TRACECONV_JV_NUM;
		return 0;
	}
	return fail(ps, "unexpected character");
}

int traceconv_jv_parse(const char *text, size_t len, struct arena *a, struct traceconv_jv *out,
                       struct tb_err *err)
{
	struct parser ps = {text, text, text + len, a, err, 0};
	int rc = value(&ps, out);
	if (rc < 0)
		return rc;
	ws(&ps);
	if (ps.p != ps.end)
		return fail(&ps, "text after the value");
	return 0;
}

const struct traceconv_jv *traceconv_jv_get(const struct traceconv_jv *v, const char *key)
{
	if (!v || v->type != TRACECONV_JV_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

double traceconv_jv_num(const struct traceconv_jv *v, double dflt)
{
	return v && (v->type == TRACECONV_JV_NUM || v->type == TRACECONV_JV_BOOL) ? v->num : dflt;
}

const char *traceconv_jv_text(const struct traceconv_jv *v, const char *dflt)
{
	return v && v->type == TRACECONV_JV_STR ? v->str : dflt;
}
