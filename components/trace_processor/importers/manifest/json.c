/*
 * A small JSON reader for the trace manifest: the whole document into a
 * tree of struct tp_mjson in an arena. The JSON trace importer has its own
 * streaming lexer for big traces; a manifest is a few hundred bytes and is
 * easier to validate as a tree. Strings are decoded (escapes, \u with
 * surrogate pairs into UTF-8); an integer without fraction or exponent that
 * fits int64 is TP_MJSON_INT, any other number TP_MJSON_NUMBER.
 */
#include "../../tp_int.h"
#include "manifest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct rd {
	const uint8_t *p, *end;
	struct arena *a;
	char *err;
	size_t errlen;
	int depth;
};

static bool fail(struct rd *r, const char *what)
{
	if (!r->err[0])
		snprintf(r->err, r->errlen, "invalid JSON: %s", what);
	return false;
}

static void ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(const uint8_t *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at r->p (the opening quote), decoded into the arena. Decoded
 * text is never longer than its escaped form. */
static char *string(struct rd *r)
{
	const uint8_t *q = ++r->p;
	while (q < r->end && *q != '"')
		q += *q == '\\' && q + 1 < r->end ? 2 : 1;
	if (q >= r->end) {
		fail(r, "unterminated string");
		return NULL;
	}
	char *out = arena_alloc(r->a, (size_t)(q - r->p) + 1, 1), *o = out;
	while (r->p < q) {
		uint8_t c = *r->p++;
		if (c < 0x20) {
			fail(r, "control character in a string");
			return NULL;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		c = *r->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = (char)c;
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u': {
			int v = q - r->p >= 4 ? hex4(r->p) : -1;
			if (v < 0) {
				fail(r, "bad \\u escape");
				return NULL;
			}
			r->p += 4;
			uint32_t cp = (uint32_t)v;
			if (cp >= 0xd800 && cp < 0xdc00 && q - r->p >= 6 && r->p[0] == '\\' &&
			    r->p[1] == 'u') {
				int lo = hex4(r->p + 2);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     ((uint32_t)lo - 0xdc00);
					r->p += 6;
				}
			}
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd; /* a lone surrogate */
			/* 6 escaped bytes make at most 4 (a pair: 12 make 4). */
			o += put_utf8(o, cp);
			break;
		}
		default:
			fail(r, "bad escape");
			return NULL;
		}
	}
	*o = 0;
	r->p = q + 1;
	return out;
}

static bool number(struct rd *r, struct tp_mjson *v)
{
	const uint8_t *s = r->p;
	bool integral = true;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p >= r->end || *r->p < '0' || *r->p > '9')
		return fail(r, "bad number");
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	if (r->p < r->end && *r->p == '.') {
		integral = false;
		r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return fail(r, "bad number");
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		integral = false;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return fail(r, "bad number");
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	char buf[64];
	size_t len = (size_t)(r->p - s);
	if (len >= sizeof buf) {
		/* Only a huge integer or a long fraction: not an int64. */
		v->type = TP_MJSON_NUMBER;
		v->d = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
		return true;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	v->d = strtod(buf, NULL);
	v->type = TP_MJSON_NUMBER;
	if (integral) {
		errno = 0;
		long long x = strtoll(buf, NULL, 10);
		if (errno == 0) {
			v->type = TP_MJSON_INT;
			v->i = x;
		}
	}
	return true;
}

static bool word(struct rd *r, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
		return fail(r, "unexpected character");
	r->p += n;
	return true;
}

static struct tp_mjson *value(struct rd *r);

/* The elements of an array or the members of an object, after its opening
 * bracket, up to and including the closing one. */
static bool items(struct rd *r, struct tp_mjson *v, bool object)
{
	struct tp_mjson **tail = &v->child;
	uint8_t close = object ? '}' : ']';
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;
		ws(r);
		if (object) {
			if (r->p >= r->end || *r->p != '"')
				return fail(r, "expected a key");
			if (!(key = string(r)))
				return false;
			ws(r);
			if (r->p >= r->end || *r->p != ':')
				return fail(r, "expected ':'");
			r->p++;
		}
		struct tp_mjson *c = value(r);
		if (!c)
			return false;
		c->key = key;
		*tail = c;
		tail = &c->next;
		ws(r);
		if (r->p >= r->end)
			return fail(r, "unexpected end");
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p != close)
			return fail(r, "expected ',' or a closing bracket");
		r->p++;
		return true;
	}
}

static struct tp_mjson *value(struct rd *r)
{
	ws(r);
	if (r->p >= r->end) {
		fail(r, "unexpected end");
		return NULL;
	}
	struct tp_mjson *v = arena_zalloc(r->a, sizeof *v, _Alignof(struct tp_mjson));
	bool ok = true;
	switch (*r->p) {
	case '{':
	case '[':
		if (++r->depth > MAX_DEPTH)
			return fail(r, "nested too deep"), NULL;
		v->type = *r->p == '{' ? TP_MJSON_OBJECT : TP_MJSON_ARRAY;
		r->p++;
		ok = items(r, v, v->type == TP_MJSON_OBJECT);
		r->depth--;
		break;
	case '"':
		v->type = TP_MJSON_STRING;
		ok = (v->s = string(r)) != NULL;
		break;
	case 't':
		v->type = TP_MJSON_BOOL;
		v->i = 1;
		ok = word(r, "true");
		break;
	case 'f':
		v->type = TP_MJSON_BOOL;
		ok = word(r, "false");
		break;
	case 'n':
		ok = word(r, "null");
		break;
	default:
		ok = number(r, v);
		break;
	}
	return ok ? v : NULL;
}

struct tp_mjson *tp_mjson_parse(struct arena *arena, const uint8_t *p, size_t n, char *err,
                                size_t errlen)
{
	struct rd r = {.p = p, .end = p + n, .a = arena, .err = err, .errlen = errlen};
	err[0] = 0;
	struct tp_mjson *v = value(&r);
	if (!v)
		return NULL;
	ws(&r);
	if (r.p != r.end) {
		fail(&r, "trailing characters");
		return NULL;
	}
	return v;
}

const struct tp_mjson *tp_mjson_get(const struct tp_mjson *o, const char *key)
{
	if (!o || o->type != TP_MJSON_OBJECT)
		return NULL;
	const struct tp_mjson *found = NULL;
	for (const struct tp_mjson *c = o->child; c; c = c->next)
		if (!strcmp(c->key, key))
			found = c; /* the last of duplicate keys, as most readers */
	return found;
}
