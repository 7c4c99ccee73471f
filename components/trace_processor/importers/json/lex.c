/*
 * JSON lexing on complete text for the JSON importer: strings (unescaped,
 * \u escapes decoded to UTF-8), numbers (integers exactly, doubles through
 * an exact fast path or strtod), value skipping, and Perfetto's coercion of
 * µs timestamps to ns. Every function takes [p, end) and never reads past
 * end; a NULL return means malformed or cut-off text.
 */
#include "json_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 512

uint32_t tp_json_intern_slow(struct tp *tp, struct json_icache *c, const char *s, size_t n)
{
	uint64_t h = tb_hash_bytes(s, n, 0x6a736f6e);
	size_t i = (size_t)(h >> 53);
	if (c->e[i].n == n && c->e[i].a == h && c->e[i].id) {
		size_t len;
		const char *p = strpool_get(&tp->strings, c->e[i].id, &len);
		if (len == n && json_same_bytes(p, s, n))
			return c->e[i].id;
	}
	uint32_t id = tp_intern(tp, s, n);
	c->e[i].a = h;
	c->e[i].b = 0;
	c->e[i].n = (uint32_t)n;
	c->e[i].id = id;
	return id;
}

void tp_json_key_memo_set(struct json_key_memo *m, const char *from, const char *end, const char *k,
                          size_t kn, uint32_t id)
{
	uintptr_t at = (uintptr_t)k; /* outside [from, end): unescaped into a buffer */
	if (at <= (uintptr_t)from || at >= (uintptr_t)end || kn + 3 > 16 || k[-1] != '"' ||
	    k[kn] != '"' || k[kn + 1] != ':')
		return;
	unsigned char text[16] = {0}, mask[16] = {0};
	memcpy(text, k - 1, kn + 3);
	memset(mask, 0xff, kn + 3);
	memcpy(m->w, text, 16);
	memcpy(m->m, mask, 16);
	m->len = (uint32_t)kn + 3;
	m->id = id;
}

static bool hex4(const char *p, const char *end, uint32_t *out)
{
	if (end - p < 4)
		return false;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = tb_hex_digit(p[i]);
		if (h < 0)
			return false;
		v = v << 4 | (uint32_t)h;
	}
	*out = v;
	return true;
}

static void put_utf8(struct json_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (size_t i = 0; i < n; i++)
		vec_push(&b->v, u[i]);
}

static void buf_append(struct json_buf *b, const char *s, size_t n)
{
	if (!n)
		return;
	vec_reserve(&b->v, n);
	memcpy(b->v.data + b->v.len, s, n);
	b->v.len += n;
}

const char *tp_json_string_escaped(const char *p, const char *end, struct json_buf *buf,
                                   const char **s, size_t *n)
{
	const char *start = ++p;
	const char *q = json_find_quote_or_bs(p, end);
	if (q == end)
		return NULL;
	if (*q == '"') {
		*s = start;
		*n = (size_t)(q - start);
		return q + 1;
	}
	vec_clear(&buf->v);
	for (;;) {
		buf_append(buf, p, (size_t)(q - p));
		if (q == end)
			return NULL;
		if (*q == '"')
			break;
		/* A backslash escape. */
		if (end - q < 2)
			return NULL;
		char c = q[1];
		p = q + 2;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			vec_push(&buf->v, c);
			break;
		case 'b':
			vec_push(&buf->v, '\b');
			break;
		case 'f':
			vec_push(&buf->v, '\f');
			break;
		case 'n':
			vec_push(&buf->v, '\n');
			break;
		case 'r':
			vec_push(&buf->v, '\r');
			break;
		case 't':
			vec_push(&buf->v, '\t');
			break;
		case 'u': {
			uint32_t cp, lo;
			if (!hex4(p, end, &cp))
				return NULL;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && hex4(p + 2, end, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			put_utf8(buf, cp);
			break;
		}
		default:
			return NULL;
		}
		q = json_find_quote_or_bs(p, end);
	}
	*s = buf->v.data ? buf->v.data : start;
	*n = buf->v.len;
	return q + 1;
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool tp_json_parse_double(const char *s, size_t n, double *out)
{
	char tmp[128];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *e;
	errno = 0;
	double d = strtod(tmp, &e);
	if (e != tmp + n)
		return false;
	*out = d;
	return true;
}

bool tp_json_parse_u64(const char *s, size_t n, int base, uint64_t *out)
{
	char tmp[64];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(tmp, &e, base);
	if (e != tmp + n || errno)
		return false;
	*out = v;
	return true;
}

/* Perfetto's double of a JSON number's text (its json parser's
 * StringToDouble): the integer digits and the fraction digits as 64-bit
 * integers (wrapping past 18 digits, as there), the fraction divided by its
 * power of ten, the sum scaled by pow(10, exponent). Not strtod: the last
 * bits can differ, and they decide what a time rounds to. false on an
 * infinite or NaN result. */
static bool pf_double(const char *s, const char *end, double *out)
{
	const char *p = s;
	bool neg = p < end && *p == '-';
	p += neg;
	uint64_t ip = 0;
	for (; p < end && (unsigned)(*p - '0') < 10; p++)
		ip = ip * 10 + (uint64_t)(*p - '0');
	double fraction = 0;
	if (p < end && *p == '.') {
		uint64_t f = 0, div = 1;
		for (p++; p < end && (unsigned)(*p - '0') < 10; p++) {
			f = f * 10 + (uint64_t)(*p - '0');
			div *= 10;
		}
		fraction = (double)(int64_t)f / (double)div;
	}
	uint64_t x = 0;
	bool xneg = false;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			xneg = *p++ == '-';
		for (; p < end && (unsigned)(*p - '0') < 10; p++)
			x = x * 10 + (uint64_t)(*p - '0');
	}
	double d = (double)(int64_t)ip + fraction;
	if (xneg)
		d /= pow(10, (double)(int64_t)x);
	else if ((int64_t)x > 0)
		d *= pow(10, (double)(int64_t)x);
	if (isinf(d) || isnan(d))
		return false;
	*out = neg ? -d : d;
	return true;
}

const char *tp_json_number(const char *p, const char *end, struct json_num *out)
{
	const char *s = p;
	bool neg = false, is_int = true, overflow = false;
	uint64_t mant = 0;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	const char *dstart = p;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (mant > (UINT64_MAX - 9) / 10)
			overflow = true;
		else
			mant = mant * 10 + (uint64_t)(*p - '0');
	}
	if (p == dstart)
		return NULL;
	if (p < end && *p == '.') {
		is_int = false;
		const char *f = ++p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == f)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		const char *x = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == x)
			return NULL;
	}
	out->s = s;
	out->n = (size_t)(p - s);
	if (is_int && !overflow && mant <= (uint64_t)INT64_MAX) {
		out->is_int = true;
		out->i = neg ? -(int64_t)mant : (int64_t)mant;
		out->d = (double)out->i;
		return p;
	}
	out->is_int = false;
	if (!pf_double(s, p, &out->d))
		return NULL;
	return p;
}

/* Perfetto's CoerceToTs of a double (µs): a whole number exactly, else
 * rounded to the nearest ns, halves away from zero (llround). */
static bool double_to_ns(double d, int64_t *ns)
{
	if (!(d > -9.2e18 && d < 9.2e18))
		return false;
	int64_t w = (int64_t)d;
	if ((double)w == d) {
		*ns = (int64_t)((uint64_t)w * 1000u);
		return true;
	}
	/* Not whole, so |d| < 2^52: d * 1000 fits. */
	double x = d * 1000.0;
	int64_t r = (int64_t)x; /* x - r is exact: |x| < 2^63, and whole past 2^52 */
	double f = x - (double)r;
	*ns = r + (f >= 0.5) - (f <= -0.5);
	return true;
}

const char *tp_json_skip_value(const char *p, const char *end)
{
	uint32_t depth = 0;
	for (;;) {
		p = json_skip_ws(p, end);
		if (p >= end)
			return NULL;
		char c = *p;
		if (c == '"') {
			const char *q = p + 1;
			for (;;) {
				q = json_find_quote_or_bs(q, end);
				if (q >= end)
					return NULL;
				if (*q == '"')
					break;
				q += 2;
			}
			p = q + 1;
		} else if (c == '{' || c == '[') {
			if (++depth > JSON_MAX_DEPTH)
				return NULL;
			p++;
			continue;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return NULL;
			depth--;
			p++;
		} else if (c == ',' || c == ':') {
			if (depth == 0)
				return NULL;
			p++;
			continue;
		} else if (c == 't' || c == 'n') {
			if (end - p < 4)
				return NULL;
			p += 4;
		} else if (c == 'f') {
			if (end - p < 5)
				return NULL;
			p += 5;
		} else {
			struct json_num num;
			p = tp_json_number(p, end, &num);
			if (!p)
				return NULL;
		}
		if (depth == 0)
			return p;
	}
}

bool tp_json_number_to_ns(const struct json_num *num, int64_t *ns)
{
	if (num->is_int) {
		*ns = (int64_t)((uint64_t)num->i * 1000u);
		return true;
	}
	return double_to_ns(num->d, ns);
}

const char *tp_json_time_number(const char *p, const char *end, int64_t *ns)
{
	/* The usual [-]digits[.digits], up to 18 digits each, computed as
	 * pf_double would without a second pass. */
	const char *q = p;
	bool neg = q < end && *q == '-';
	q += neg;
	const char *d0 = q;
	uint64_t ip = 0;
	for (; q < end && (unsigned)(*q - '0') < 10; q++)
		ip = ip * 10 + (uint64_t)(*q - '0');
	size_t id = (size_t)(q - d0);
	if (id == 0 || id > 18)
		return NULL;
	if (q >= end || *q != '.') {
		if (q < end && (*q == 'e' || *q == 'E'))
			return NULL;
		*ns = (int64_t)((neg ? 0 - ip : ip) * 1000u);
		return q;
	}
	const char *f0 = ++q;
	uint64_t f = 0;
	for (; q < end && (unsigned)(*q - '0') < 10; q++)
		f = f * 10 + (uint64_t)(*q - '0');
	size_t fd = (size_t)(q - f0);
	if (fd == 0 || fd > 18 || (q < end && (*q == 'e' || *q == 'E')))
		return NULL;
	double d = (double)(int64_t)ip + (double)(int64_t)f / pow10_tab[fd];
	if (!double_to_ns(neg ? -d : d, ns))
		return NULL;
	return q;
}

bool tp_json_string_to_ns(const char *s, size_t n, int64_t *ns)
{
	/* Perfetto parses the string's text as a JSON value: it must be one
	 * number, all of it. */
	struct json_num num;
	if (n == 0 || (*s != '-' && (unsigned)(*s - '0') >= 10))
		return false;
	size_t z = *s == '-';
	if (z + 1 < n && s[z] == '0' && (unsigned)(s[z + 1] - '0') < 10)
		return false; /* a leading zero: not a JSON number */
	const char *q = tp_json_number(s, s + n, &num);
	if (q != s + n)
		return false;
	return tp_json_number_to_ns(&num, ns);
}

const char *tp_json_object_find(const char *p, const char *end, const char *key,
                                struct json_buf *buf)
{
	size_t klen = strlen(key);
	p = json_skip_ws(p, end);
	if (p >= end || *p != '{')
		return NULL;
	p++;
	for (;;) {
		const char *k;
		size_t kn;
		bool closed;
		p = json_member(p, end, buf, &k, &kn, &closed);
		if (!p || closed)
			return NULL;
		if (kn == klen && memcmp(k, key, klen) == 0)
			return p;
		p = tp_json_skip_value(p, end);
		if (!p)
			return NULL;
	}
}
