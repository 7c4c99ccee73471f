/*
 * JSON lexing on complete text for the JSON importer: strings (unescaped,
 * \u escapes decoded to UTF-8), numbers (integers exactly, doubles through
 * an exact fast path or strtod), value skipping, and Perfetto's coercion of
 * µs timestamps to ns. Every function takes [p, end) and never reads past
 * end; a NULL return means malformed or cut-off text.
 */
#include "json_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 512

uint32_t json_intern_slow(struct tp *tp, struct json_icache *c, const char *s, size_t n)
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

void json_key_memo_set(struct json_key_memo *m, const char *from, const char *end, const char *k,
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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool hex4(const char *p, const char *end, uint32_t *out)
{
	if (end - p < 4)
		return false;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
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

const char *json_string_escaped(const char *p, const char *end, struct json_buf *buf,
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
		case '"': case '\\': case '/':
			vec_push(&buf->v, c);
			break;
		case 'b': vec_push(&buf->v, '\b'); break;
		case 'f': vec_push(&buf->v, '\f'); break;
		case 'n': vec_push(&buf->v, '\n'); break;
		case 'r': vec_push(&buf->v, '\r'); break;
		case 't': vec_push(&buf->v, '\t'); break;
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

bool json_parse_double(const char *s, size_t n, double *out)
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

bool json_parse_u64(const char *s, size_t n, int base, uint64_t *out)
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

const char *json_number(const char *p, const char *end, struct json_num *out)
{
	const char *s = p;
	bool neg = false, is_int = true, overflow = false;
	uint64_t mant = 0;
	int digits = 0, frac = 0;
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
		if (mant)
			digits++;
	}
	if (p == dstart)
		return NULL;
	if (p < end && *p == '.') {
		is_int = false;
		const char *f = ++p;
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			if (mant > (UINT64_MAX - 9) / 10)
				overflow = true;
			else
				mant = mant * 10 + (uint64_t)(*p - '0');
			if (mant)
				digits++;
			frac++;
		}
		if (p == f)
			return NULL;
	}
	bool has_exp = false;
	if (p < end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		has_exp = true;
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
	/* Exact fast path (Clinger): <= 15 significant digits, a power of ten
	 * that is exact as a double, so one division rounds correctly. */
	if (!overflow && !has_exp && digits <= 15 && frac <= 22) {
		double d = (double)mant / pow10_tab[frac];
		out->d = neg ? -d : d;
		return p;
	}
	if (!json_parse_double(s, out->n, &out->d))
		return NULL;
	return p;
}

const char *json_skip_value(const char *p, const char *end)
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
			p = json_number(p, end, &num);
			if (!p)
				return NULL;
		}
		if (depth == 0)
			return p;
	}
}

bool json_number_to_ns(const struct json_num *num, int64_t *ns)
{
	if (num->is_int) {
		*ns = (int64_t)((uint64_t)num->i * 1000u);
		return true;
	}
	double d = num->d * 1000.0;
	if (!(d > -9.2e18 && d < 9.2e18))
		return false;
	*ns = (int64_t)d;
	return true;
}

/* The common time text: [-]digits[.digits], at most 15 integer digits.
 * Reads from *pp and leaves it after the digits; false (nothing decided)
 * when the text is not of that shape. Same result as the general path:
 * fraction digits past the third are cut, missing ones are zeros. */
static bool dec_to_ns(const char **pp, const char *end, int64_t *ns)
{
	const char *p = *pp;
	bool neg = p < end && *p == '-';
	p += neg;
	uint64_t v = 0;
	int id = 0, fd = 0;
	for (; p < end && (unsigned)(*p - '0') < 10; p++, id++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (id == 0 || id > 15)
		return false;
	if (p < end && *p == '.') {
		for (p++; p < end && (unsigned)(*p - '0') < 10; p++) {
			if (fd < 3) {
				v = v * 10 + (uint64_t)(*p - '0');
				fd++;
			}
		}
	}
	for (; fd < 3; fd++)
		v *= 10;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	*pp = p;
	return true;
}

const char *json_time_number(const char *p, const char *end, int64_t *ns)
{
	const char *q = p;
	int64_t v;
	if (!dec_to_ns(&q, end, &v) || q[-1] == '.') /* "5." is not JSON */
		return NULL;
	if (q < end && (*q == 'e' || *q == 'E' || *q == '.' || *q == '-' || *q == '+'))
		return NULL;
	*ns = v;
	return q;
}

/* Perfetto reformats the string: drop the exponent (shifting the point),
 * drop the '.', then pad with '0' or cut to int_digits + exp + 3 chars and
 * parse what is left as an integer. */
bool json_string_to_ns(const char *s, size_t n, int64_t *ns)
{
	char tmp[96];
	const char *q = s;
	if (dec_to_ns(&q, s + n, ns) && q == s + n)
		return true;
	if (n == 0 || n >= 64)
		return false;
	int exp_shift = 0;
	size_t len = n;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == 'e' || s[i] == 'E') {
			const char *x = s + i + 1;
			size_t xn = n - i - 1;
			char xb[16];
			if (xn == 0 || xn >= sizeof xb)
				return false;
			memcpy(xb, x, xn);
			xb[xn] = 0;
			char *e;
			errno = 0;
			long v = strtol(xb, &e, 10);
			if (*e || errno || v > 30 || v < -30)
				return false;
			exp_shift = (int)v;
			len = i;
			break;
		}
	}
	size_t out = 0, int_size = len;
	bool seen_dot = false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.' && !seen_dot) {
			seen_dot = true;
			int_size = i;
			continue;
		}
		tmp[out++] = s[i];
	}
	ptrdiff_t want = (ptrdiff_t)int_size + exp_shift + 3;
	if (want < 1)
		want = 1;
	if (want > 60)
		return false;
	while ((ptrdiff_t)out < want)
		tmp[out++] = '0';
	out = (size_t)want;
	tmp[out] = 0;
	char *e;
	errno = 0;
	long long v = strtoll(tmp, &e, 10);
	if (*e || errno || e == tmp)
		return false;
	*ns = v;
	return true;
}

const char *json_object_find(const char *p, const char *end, const char *key,
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
		p = json_skip_value(p, end);
		if (!p)
			return NULL;
	}
}
