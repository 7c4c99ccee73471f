/*
 * JSON values -> args, the way Perfetto's json_utils AddJsonValueToArgs does
 * it: an object's members get ".<name>" appended to both keys, an array's
 * elements get "[i]" appended to `key` only (flat_key keeps the array's
 * key), nulls are skipped, and leaves are stored as int (integral numbers),
 * real (other numbers), string or bool. Also the top-level "metadata" object
 * of a trace, stored as json_metadata.<key> metadata rows.
 */
#include "json_int.h"

#include <stdio.h>
#include <string.h>

#define ARGS_MAX_DEPTH 64

static void buf_set_len(struct json_buf *b, size_t n)
{
	b->v.len = n;
}

static void buf_put(struct json_buf *b, const char *s, size_t n)
{
	if (b->v.cap - b->v.len < n + 1)
		vec_reserve(&b->v, n + 1);
	if (n)
		memcpy(b->v.data + b->v.len, s, n);
	b->v.len += n;
}

static bool pool_eq(struct tp *tp, uint32_t id, const struct json_buf *b)
{
	size_t n;
	const char *s = strpool_get(&tp->strings, id, &n);
	return n == b->v.len && json_same_bytes(s, b->v.data, n);
}

/* The pool ids of the current flat key and key, through the cache. */
static void leaf_keys(struct tp *tp, struct json_args_ctx *c, uint32_t *fk, uint32_t *k)
{
	uint64_t h = tb_hash_bytes(c->key.v.data, c->key.v.len, c->flat.v.len);
	if (c->flat.v.len != c->key.v.len)
		h = tb_hash_bytes(c->flat.v.data, c->flat.v.len, h);
	h |= 1; /* 0 marks an empty entry */
	struct json_key_ent *e = &c->cache[(h >> 32) & (JSON_KEY_CACHE - 1)];
	if (e->hash == h && pool_eq(tp, e->key, &c->key) &&
	    (e->flat == e->key || pool_eq(tp, e->flat, &c->flat))) {
		*fk = e->flat;
		*k = e->key;
		return;
	}
	*fk = tp_intern(tp, c->flat.v.data, c->flat.v.len);
	*k = c->key.v.len == c->flat.v.len ? *fk : tp_intern(tp, c->key.v.data, c->key.v.len);
	e->hash = h;
	e->flat = *fk;
	e->key = *k;
}

/* Add the value at p; returns the byte after it, or NULL when malformed. */
static const char *add_value(struct tp *tp, struct json_args_ctx *c, struct tp_args_builder *b,
			     const char *p, const char *end, int depth)
{
	p = json_skip_ws(p, end);
	if (p >= end)
		return NULL;
	size_t flat_len = c->flat.v.len, key_len = c->key.v.len;
	char ch = *p;
	if (ch == '{' || ch == '[') {
		if (depth >= ARGS_MAX_DEPTH)
			return json_skip_value(p, end);
		bool obj = ch == '{';
		uint32_t index = 0;
		p++;
		for (;;) {
			p = json_skip_ws(p, end);
			while (p < end && *p == ',')
				p = json_skip_ws(p + 1, end);
			if (p >= end)
				return NULL;
			if (*p == (obj ? '}' : ']'))
				return p + 1;
			buf_set_len(&c->flat, flat_len);
			buf_set_len(&c->key, key_len);
			if (obj) {
				const char *k;
				size_t kn;
				if (*p != '"')
					return NULL;
				p = json_string(p, end, &c->str, &k, &kn);
				if (!p)
					return NULL;
				p = json_skip_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = json_skip_ws(p + 1, end);
				buf_put(&c->flat, ".", 1);
				buf_put(&c->flat, k, kn);
				buf_put(&c->key, ".", 1);
				buf_put(&c->key, k, kn);
			} else {
				if (p < end && *p == 'n') { /* null elements take no index */
					p = json_skip_value(p, end);
					if (!p)
						return NULL;
					continue;
				}
				char idx[16];
				int n = snprintf(idx, sizeof idx, "[%u]", index++);
				buf_put(&c->key, idx, (size_t)n);
			}
			p = add_value(tp, c, b, p, end, depth + 1);
			if (!p)
				return NULL;
		}
	}
	uint32_t fk, k;
	if (ch == '"') {
		const char *s;
		size_t n;
		p = json_string(p, end, &c->str, &s, &n);
		if (!p)
			return NULL;
		uint32_t sid = json_intern(tp, &c->values, s, n);
		leaf_keys(tp, c, &fk, &k);
		tp_args_add_string(b, fk, k, sid);
		return p;
	}
	if (ch == 't' || ch == 'f') {
		bool v = ch == 't';
		size_t len = v ? 4 : 5;
		if ((size_t)(end - p) < len || memcmp(p, v ? "true" : "false", len) != 0)
			return NULL;
		leaf_keys(tp, c, &fk, &k);
		tp_args_add_bool(b, fk, k, v);
		return p + len;
	}
	if (ch == 'n') {
		if (end - p < 4 || memcmp(p, "null", 4) != 0)
			return NULL;
		return p + 4;
	}
	struct json_num num;
	p = json_number(p, end, &num);
	if (!p)
		return NULL;
	leaf_keys(tp, c, &fk, &k);
	if (num.is_int)
		tp_args_add_int(b, fk, k, num.i);
	else
		tp_args_add_real(b, fk, k, num.d);
	return p;
}

void json_args_add(struct tp *tp, struct json_args_ctx *c, struct tp_args_builder *b,
		   const char *p, const char *end, const char *prefix)
{
	vec_clear(&c->flat.v);
	vec_clear(&c->key.v);
	buf_put(&c->flat, prefix, strlen(prefix));
	buf_put(&c->key, prefix, strlen(prefix));
	size_t before = b->args.len;
	if (!add_value(tp, c, b, p, end, 0)) {
		/* Malformed args: keep nothing from them, as Perfetto does. */
		b->args.len = before;
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
	}
}

void json_metadata_add(struct tp *tp, struct json_args_ctx *c, const char *p, const char *end)
{
	p = json_skip_ws(p, end);
	if (p >= end || *p != '{')
		return;
	p++;
	for (;;) {
		p = json_skip_ws(p, end);
		while (p < end && *p == ',')
			p = json_skip_ws(p + 1, end);
		if (p >= end || *p != '"')
			return;
		const char *k;
		size_t kn;
		p = json_string(p, end, &c->str, &k, &kn);
		if (!p)
			return;
		vec_clear(&c->key.v);
		buf_put(&c->key, "json_metadata.", 14);
		buf_put(&c->key, k, kn);
		buf_put(&c->key, "", 1); /* NUL for tp_metadata_set_* */
		p = json_skip_ws(p, end);
		if (p >= end || *p != ':')
			return;
		p = json_skip_ws(p + 1, end);
		if (p >= end)
			return;
		if (*p == '"') {
			const char *s;
			size_t n;
			p = json_string(p, end, &c->str, &s, &n);
			if (!p)
				return;
			tp_metadata_set_str(tp, c->key.v.data, tp_intern(tp, s, n));
			continue;
		}
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			struct json_num num;
			const char *q = json_number(p, end, &num);
			if (q && num.is_int) {
				tp_metadata_set_int(tp, c->key.v.data, num.i);
				p = q;
				continue;
			}
		}
		if (*p == 't' || *p == 'f') {
			bool v = *p == 't';
			tp_metadata_set_int(tp, c->key.v.data, v);
		}
		/* Reals, objects and arrays have no metadata form: skipped. */
		p = json_skip_value(p, end);
		if (!p)
			return;
	}
}

void json_args_ctx_release(struct json_args_ctx *c)
{
	vec_release(&c->flat.v);
	vec_release(&c->key.v);
	vec_release(&c->str.v);
}
