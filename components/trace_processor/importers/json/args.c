/*
 * JSON values -> args, the way Perfetto's json_utils AddJsonValueToArgs does
 * it: an object's members get ".<name>" appended to both keys, an array's
 * elements get "[i]" appended to `key` only (flat_key keeps the array's
 * key), nulls are skipped, and leaves are stored as int (integral numbers),
 * real (other numbers), string or bool. The tokenizer encodes them as
 * compact rows in the same pass that reads the event (tp_json_args_encode);
 * the parser turns the rows into a builder when it commits the event's
 * slice (tp_json_args_decode). Also the top-level "metadata" object of a
 * trace, stored as json_metadata.<key> metadata rows.
 */
#include "json_int.h"
#include "../../model/model.h"

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

/* The pool ids of the current key and flat key when an array is on the
 * path: their texts are in c->key and c->flat. */
static void leaf_keys(struct tp *tp, struct json_args_ctx *c, uint32_t *fk, uint32_t *k)
{
	*k = json_intern(tp, &c->keys, c->key.v.data, c->key.v.len);
	*fk = json_intern(tp, &c->keys, c->flat.v.data, c->flat.v.len);
}

/* The key id of member k of the object whose key id is parent, i.e. of
 * "<parent>.<k>". Through a cache by (parent, k): a hit builds no text. */
static uint32_t child_key(struct tp *tp, struct json_args_ctx *c, uint32_t parent, const char *k,
                          size_t kn)
{
	uint64_t a, b = 0;
	bool exact = json_words(k, kn, &a, &b);
	if (!exact)
		a = tb_hash_bytes(k, kn, parent);
	uint64_t h = json_words_hash(a, b, kn) + parent;
	struct json_child_key *e = &c->children[(h >> 32) & (JSON_CHILD_KEYS - 1)];
	bool hit = e->id && e->parent == parent && e->n == kn && e->a == a && e->b == b;
	if (hit && exact)
		return e->id;
	size_t plen;
	const char *ptext = strpool_get(&tp->strings, parent, &plen);
	if (hit) {
		size_t len;
		const char *s = strpool_get(&tp->strings, e->id, &len);
		if (len == plen + 1 + kn && json_same_bytes(s + plen + 1, k, kn))
			return e->id;
	}
	vec_clear(&c->key.v);
	buf_put(&c->key, ptext, plen);
	buf_put(&c->key, ".", 1);
	buf_put(&c->key, k, kn);
	uint32_t id = tp_intern(tp, c->key.v.data, c->key.v.len);
	*e = (struct json_child_key){a, b, (uint32_t)kn, parent, id};
	return id;
}

/* ---- the encoded rows ----------------------------------------------------
 *
 * One row:  byte 0: type (bits 0-3) | value width code (bits 4-5: 1 2 4 8
 *           bytes) | 0x80 when a flat key follows
 *           key (u32) [flat key (u32)] value (width bytes, little endian;
 *           integers sign-extended from the width)
 */
#define ROW_FLAT 0x80u

static inline void emit(struct json_buf *out, int type, uint32_t fk, uint32_t k, uint64_t v)
{
	unsigned wc = 3; /* 8 bytes: reals, and integers that need them */
	if (type == TP_ARG_STRING)
		wc = 2;
	else if (type == TP_ARG_BOOL || (type != TP_ARG_REAL && (int64_t)v == (int8_t)v))
		wc = 0;
	else if (type != TP_ARG_REAL && (int64_t)v == (int16_t)v)
		wc = 1;
	else if (type != TP_ARG_REAL && (int64_t)v == (int32_t)v)
		wc = 2;
	if (out->v.cap - out->v.len < 17)
		vec_reserve(&out->v, 17);
	char *q = out->v.data + out->v.len;
	*q++ = (char)(type | wc << 4 | (fk != k ? ROW_FLAT : 0));
	memcpy(q, &k, 4);
	q += 4;
	if (fk != k) {
		memcpy(q, &fk, 4);
		q += 4;
	}
	memcpy(q, &v, 8); /* little endian: the low bytes are the value */
	q += 1u << wc;
	out->v.len = (size_t)(q - out->v.data);
}

/* The row at p into *a; returns the byte after it. */
static inline const char *read_row(const char *p, struct tp_arg *a)
{
	unsigned h = (unsigned char)*p++, wc = h >> 4 & 3;
	memcpy(&a->key, p, 4);
	p += 4;
	a->flat_key = a->key;
	if (h & ROW_FLAT) {
		memcpy(&a->flat_key, p, 4);
		p += 4;
	}
	a->type = (enum tp_arg_type)(h & 15);
	int8_t v8;
	int16_t v16;
	int32_t v32;
	switch (wc) {
	case 0:
		memcpy(&v8, p, 1);
		a->v.i = v8;
		break;
	case 1:
		memcpy(&v16, p, 2);
		a->v.i = v16;
		break;
	case 2:
		memcpy(&v32, p, 4);
		a->v.i = v32;
		break;
	default:
		memcpy(&a->v.i, p, 8);
	}
	if (a->type == TP_ARG_STRING)
		a->v.i = (uint32_t)a->v.i;
	return p + (1u << wc);
}

void tp_json_args_decode(const char *p, size_t n, struct tp_args_builder *b)
{
	const char *end = p + n;
	if (b->args.cap - b->args.len < n / 6)
		vec_reserve(&b->args, n / 6); /* a row is at least 6 bytes */
	while (p < end) {
		struct tp_arg *a = b->args.data + b->args.len++;
		p = read_row(p, a);
	}
}

uint64_t tp_json_args_decode_hash(const char *p, size_t n, struct tp_args_builder *b)
{
	const char *end = p + n;
	uint64_t h = TP_ARGS_HASH_SEED;
	if (b->args.cap - b->args.len < n / 6)
		vec_reserve(&b->args, n / 6);
	while (p < end) {
		struct tp_arg *a = b->args.data + b->args.len++;
		p = read_row(p, a);
		h = tp_args_hash_add(h, a);
	}
	return tp_args_hash_end(h);
}

/* Encode the scalar at p (after whitespace; not an object or array), as
 * add_value does. Inlined into the member loop: most values are leaves. */
__attribute__((always_inline)) static inline const char *
add_leaf(struct tp *tp, struct json_args_ctx *c, struct json_buf *out, const char *p,
         const char *end, bool same, uint32_t kid)
{
	char ch = *p;
	uint32_t fk = kid, k = kid;
	if (ch == '"') {
		const char *s;
		size_t n;
		p = json_string(p, end, &c->str, &s, &n);
		if (!p)
			return NULL;
		uint32_t sid = json_intern(tp, &c->values, s, n);
		if (!same)
			leaf_keys(tp, c, &fk, &k);
		emit(out, TP_ARG_STRING, fk, k, sid);
		return p;
	}
	if (ch == 't' || ch == 'f') {
		bool v = ch == 't';
		size_t len = v ? 4 : 5;
		if ((size_t)(end - p) < len || memcmp(p, v ? "true" : "false", len) != 0)
			return NULL;
		if (!same)
			leaf_keys(tp, c, &fk, &k);
		emit(out, TP_ARG_BOOL, fk, k, v);
		return p + len;
	}
	if (ch == 'n') {
		if (end - p < 4 || memcmp(p, "null", 4) != 0)
			return NULL;
		return p + 4;
	}
	uint64_t u;
	const char *q = json_uint_fast(p, end, &u);
	if (q) {
		if (!same)
			leaf_keys(tp, c, &fk, &k);
		emit(out, TP_ARG_INT, fk, k, u);
		return q;
	}
	struct json_num num;
	p = tp_json_number(p, end, &num);
	if (!p)
		return NULL;
	if (!same)
		leaf_keys(tp, c, &fk, &k);
	if (num.is_int) {
		emit(out, TP_ARG_INT, fk, k, (uint64_t)num.i);
	} else {
		uint64_t bits;
		memcpy(&bits, &num.d, 8);
		emit(out, TP_ARG_REAL, fk, k, bits);
	}
	return p;
}

/* Encode the value at p; returns the byte after it, or NULL when
 * malformed. While no array is on the path (`same`) the key and flat key
 * are one, kid; below an array their texts are built in c->key / c->flat. */
static const char *add_value(struct tp *tp, struct json_args_ctx *c, struct json_buf *out,
                             const char *p, const char *end, int depth, bool same, uint32_t kid)
{
	p = json_skip_ws(p, end);
	if (p >= end)
		return NULL;
	char ch = *p;
	if (ch == '{' || ch == '[') {
		if (depth >= ARGS_MAX_DEPTH)
			return tp_json_skip_value(p, end);
		bool obj = ch == '{';
		uint32_t index = 0;
		if (!obj && same) {
			/* From here down flat_key and key part: flat keeps the
			 * array's key. */
			size_t n;
			const char *text = strpool_get(&tp->strings, kid, &n);
			buf_set_len(&c->key, 0);
			buf_put(&c->key, text, n);
			buf_set_len(&c->flat, 0);
			buf_put(&c->flat, text, n);
		}
		bool csame = same && obj;
		size_t flat_len = c->flat.v.len, key_len = c->key.v.len;
		bool memo = depth == 0 && obj; /* the args object itself: by position */
		unsigned pos = 0;
		p++;
		for (;;) {
			uint32_t ckid = 0;
			if (!csame) {
				buf_set_len(&c->key, key_len);
				buf_set_len(&c->flat, flat_len);
			}
			const char *v;
			if (memo && pos < JSON_KEY_MEMOS &&
			    (v = json_key_memo_match(&c->memo[pos], p, end, &ckid))) {
				p = v;
				pos++;
			} else if (obj) {
				const char *k, *from = p;
				size_t kn;
				bool closed;
				p = json_member(p, end, &c->str, &k, &kn, &closed);
				if (!p || closed)
					return p;
				if (csame) {
					ckid = child_key(tp, c, kid, k, kn);
					if (memo && pos < JSON_KEY_MEMOS)
						tp_json_key_memo_set(&c->memo[pos], from, end, k,
						                     kn, ckid);
					pos++;
				} else {
					buf_put(&c->key, ".", 1);
					buf_put(&c->key, k, kn);
					buf_put(&c->flat, ".", 1);
					buf_put(&c->flat, k, kn);
				}
			} else {
				p = json_skip_sep(p, end);
				if (p >= end)
					return NULL;
				if (*p == ']')
					return p + 1;
				if (*p == 'n') { /* null elements take no index */
					p = tp_json_skip_value(p, end);
					if (!p)
						return NULL;
					continue;
				}
				char idx[24];
				size_t n = 1;
				idx[0] = '[';
				n += tb_u64_dec(idx + 1, index++);
				idx[n++] = ']';
				buf_put(&c->key, idx, n);
			}
			if (*p != '{' && *p != '[')
				p = add_leaf(tp, c, out, p, end, csame, ckid);
			else
				p = add_value(tp, c, out, p, end, depth + 1, csame, ckid);
			if (!p)
				return NULL;
		}
	}
	return add_leaf(tp, c, out, p, end, same, kid);
}

const char *tp_json_args_encode(struct tp *tp, struct json_args_ctx *c, const char *p,
                                const char *end, struct json_buf *out)
{
	if (!c->args_key)
		c->args_key = tp_intern_cstr(tp, "args");
	uint32_t kid = c->args_key;
	size_t before = out->v.len;
	const char *q = add_value(tp, c, out, p, end, 0, true, kid);
	if (!q)
		out->v.len = before;
	return q;
}

void tp_json_metadata_add(struct tp *tp, struct json_args_ctx *c, const char *p, const char *end)
{
	p = json_skip_ws(p, end);
	if (p >= end || *p != '{')
		return;
	p++;
	for (;;) {
		const char *k;
		size_t kn;
		bool closed;
		p = json_member(p, end, &c->str, &k, &kn, &closed);
		if (!p || closed)
			return;
		vec_clear(&c->key.v);
		buf_put(&c->key, "json_metadata.", 14);
		buf_put(&c->key, k, kn);
		buf_put(&c->key, "", 1); /* NUL for tp_metadata_set_* */
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
			const char *q = tp_json_number(p, end, &num);
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
		p = tp_json_skip_value(p, end);
		if (!p)
			return;
	}
}

void tp_json_args_ctx_release(struct json_args_ctx *c)
{
	vec_release(&c->flat.v);
	vec_release(&c->key.v);
	vec_release(&c->str.v);
}

/* ---- JSON values of other formats (tp_int.h) --------------------------------- */

struct tp_json_args {
	struct json_args_ctx c;
};

struct tp_json_args *tp_json_args_new(void)
{
	return tb_calloc(1, sizeof(struct tp_json_args));
}

void tp_json_args_free(struct tp_json_args *j)
{
	if (!j)
		return;
	tp_json_args_ctx_release(&j->c);
	tb_free(j);
}

bool tp_json_args_add(struct tp *tp, struct tp_json_args *j, uint32_t key, const char *text,
                      size_t n, struct tp_args_builder *b)
{
	struct json_args_ctx *c = &j->c;
	/* The key memos are children of the previous call's key. */
	memset(c->memo, 0, sizeof c->memo);
	c->args_key = key;
	struct json_buf out = {VEC_INIT};
	const char *end = text + n;
	const char *q = tp_json_args_encode(tp, c, text, end, &out);
	bool ok = q && json_skip_ws(q, end) == end;
	if (ok)
		tp_json_args_decode(out.v.data, out.v.len, b);
	vec_release(&out.v);
	return ok;
}
