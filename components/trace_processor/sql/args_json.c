/*
 * __intrinsic_arg_set_to_json(arg_set_id): an arg set as one JSON object, as
 * Perfetto writes it. Keys are paths: "debug.a.b" nests dictionaries,
 * "debug.list[2]" indexes arrays (missing elements are null). Dictionary
 * keys keep the order in which the set first mentions them. Values:
 * int/uint as numbers, real with %.16g (NaN and infinities as the strings
 * "NaN", "Infinity", "-Infinity"), bool as true/false, pointer as the string
 * "0x..." (lower-case hex), string and json as strings, null as null.
 * Strings are escaped like Perfetto's serializer: printable ASCII as is,
 * \" \\ \n \b \f \r \t, every other character as \uXXXX (UTF-16 pairs
 * above U+FFFF). A key that puts a value under a non-dictionary (or an index
 * under a non-array) is an error naming the key, as in Perfetto.
 *
 * The tree is built per call in one vector of nodes (children by index).
 */
#include <math.h>
#include <stdio.h>

#include "sql_int.h"

/* Nesting deeper than this is refused rather than recursed into, and so is
 * an array index above the cap (it would pad the array with nulls). */
#define ARGS_JSON_MAX_DEPTH 256
#define ARGS_JSON_MAX_INDEX (1u << 20)

enum jkind { J_NULL, J_VALUE, J_ARRAY, J_DICT };

struct jnode {
	enum jkind kind;
	uint32_t row;    /* J_VALUE: the args row */
	const char *key; /* dictionary member: its name (not terminated) */
	size_t key_len;
	VEC(uint32_t) kids; /* J_ARRAY, J_DICT: node indexes */
};

struct jtree {
	VEC(struct jnode) n;
};

static uint32_t node_new(struct jtree *t, const char *key, size_t key_len)
{
	struct jnode *j = vec_push_zeroed(&t->n);
	j->key = key;
	j->key_len = key_len;
	return (uint32_t)(t->n.len - 1);
}

/* Turn node `i` into an empty container of kind k. */
static void node_make(struct jtree *t, uint32_t i, enum jkind k)
{
	t->n.data[i].kind = k;
	vec_clear(&t->n.data[i].kids);
}

/* The member `key` of dictionary node d, added (null) if absent. */
static uint32_t dict_get(struct jtree *t, uint32_t d, const char *key, size_t len)
{
	for (size_t k = 0; k < t->n.data[d].kids.len; k++) {
		uint32_t c = t->n.data[d].kids.data[k];
		if (t->n.data[c].key_len == len && memcmp(t->n.data[c].key, key, len) == 0)
			return c;
	}
	uint32_t c = node_new(t, key, len);
	vec_push(&t->n.data[d].kids, c);
	return c;
}

/* Element `idx` of array node a, padding with nulls. */
static uint32_t array_get(struct jtree *t, uint32_t a, uint32_t idx)
{
	while (t->n.data[a].kids.len <= idx) {
		uint32_t c = node_new(t, NULL, 0);
		vec_push(&t->n.data[a].kids, c);
	}
	return t->n.data[a].kids.data[idx];
}

/* Node i as a container of kind k: made one if it is null; false if it
 * holds something else. */
static bool node_expect(struct jtree *t, uint32_t i, enum jkind k)
{
	if (t->n.data[i].kind == J_NULL)
		node_make(t, i, k);
	return t->n.data[i].kind == k;
}

/* Place args row `row` (key `key`) into the tree. NULL or an error message
 * (sqlite3_mprintf'd, Perfetto's wording). */
static char *tree_add(struct jtree *t, const char *key, size_t key_len, uint32_t row,
                      enum tp_arg_type type)
{
	uint32_t cur = 0; /* the root dictionary */
	const char *p = key, *end = key + key_len, *part_end;
	unsigned depth = 0;
	enum jkind want = J_DICT;
	for (;;) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		part_end = dot ? dot : end;
		const char *br = memchr(p, '[', (size_t)(part_end - p));
		const char *name_end = br ? br : part_end;
		if (++depth > ARGS_JSON_MAX_DEPTH)
			return sqlite3_mprintf("arg key '%.*s' is nested too deeply", (int)key_len,
			                       key);
		if (!node_expect(t, cur, want = J_DICT))
			goto wrong_kind;
		cur = dict_get(t, cur, p, (size_t)(name_end - p));
		while (br) {
			const char *close = memchr(br, ']', (size_t)(part_end - br));
			uint64_t idx = 0;
			const char *d = br + 1;
			if (!close || d == close)
				goto bad_index;
			for (; d < close; d++) {
				if (*d < '0' || *d > '9' ||
				    (idx = idx * 10 + (uint64_t)(*d - '0')) > ARGS_JSON_MAX_INDEX)
					goto bad_index;
			}
			if (!node_expect(t, cur, want = J_ARRAY))
				goto wrong_kind;
			cur = array_get(t, cur, (uint32_t)idx);
			br = memchr(close, '[', (size_t)(part_end - close));
		}
		if (!dot)
			break;
		p = dot + 1;
	}
	node_make(t, cur, type == TP_ARG_NULL ? J_NULL : J_VALUE);
	t->n.data[cur].row = row;
	return NULL;
bad_index:
	return sqlite3_mprintf("Expected to be able to extract index from key %.*s", (int)key_len,
	                       key);
wrong_kind:
	return sqlite3_mprintf("Failed to insert key %.*s: tried to insert %.*s into a %s object",
	                       (int)key_len, key, (int)(part_end - p), p,
	                       want == J_DICT ? "non-dictionary" : "non-array");
}

static void json_string(sqlite3_str *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	sqlite3_str_appendchar(o, 1, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		}
		if (esc) {
			sqlite3_str_appendall(o, esc);
			continue;
		}
		if (c >= 0x20 && c <= 0x7e) {
			sqlite3_str_appendchar(o, 1, (char)c);
			continue;
		}
		/* A UTF-8 sequence (its length from the lead byte, cut at the end
		 * of the string; a stray byte counts as a one-byte sequence). */
		size_t extra = 1 + (c >= 0xc0) + (c >= 0xe0) + (c >= 0xf0);
		size_t stop = i + extra < n ? i + extra : n;
		uint32_t cp = c & (0xffu >> (extra + 1));
		for (size_t j = i + 1; j < stop; j++)
			cp = (cp << 6) | ((unsigned char)s[j] & 0x3f);
		i = stop - 1;
		uint32_t units[2] = {cp, 0};
		int nu = 1;
		if (cp > 0xffff) {
			units[0] = ((cp - 0x10000) >> 10) + 0xd800;
			units[1] = (cp & 0x3ff) + 0xdc00;
			nu = 2;
		}
		for (int u = 0; u < nu; u++) {
			char b[6] = {'\\',
			             'u',
			             hex[(units[u] >> 12) & 0xf],
			             hex[(units[u] >> 8) & 0xf],
			             hex[(units[u] >> 4) & 0xf],
			             hex[units[u] & 0xf]};
			sqlite3_str_append(o, b, 6);
		}
	}
	sqlite3_str_appendchar(o, 1, '"');
}

static void json_value(sqlite3_str *o, const struct tp *tp, uint32_t row)
{
	struct tp_arg a = tp_args_row(tp, row);
	size_t len;
	const char *s;
	switch (a.type) {
	case TP_ARG_INT:
		sqlite3_str_appendf(o, "%lld", (long long)a.v.i);
		break;
	case TP_ARG_UINT:
		sqlite3_str_appendf(o, "%llu", (unsigned long long)a.v.i);
		break;
	case TP_ARG_BOOL:
		sqlite3_str_appendall(o, a.v.i ? "true" : "false");
		break;
	case TP_ARG_POINTER:
		sqlite3_str_appendf(o, "\"0x%llx\"", (unsigned long long)a.v.i);
		break;
	case TP_ARG_REAL: {
		char buf[40];
		if (isnan(a.v.d))
			sqlite3_str_appendall(o, "\"NaN\"");
		else if (isinf(a.v.d))
			sqlite3_str_appendall(o, a.v.d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		else {
			/* SQLite's printf has no %g precision beyond 15/16 digits
			 * rounding guarantees; the C library's matches Perfetto's. */
			snprintf(buf, sizeof buf, "%.16g", a.v.d);
			sqlite3_str_appendall(o, buf);
		}
		break;
	}
	case TP_ARG_STRING:
	case TP_ARG_JSON:
		s = strpool_get(&tp->strings, a.v.s, &len);
		json_string(o, s, len);
		break;
	default:
		sqlite3_str_appendall(o, "null");
	}
}

static void json_node(sqlite3_str *o, const struct tp *tp, const struct jtree *t, uint32_t i)
{
	const struct jnode *j = &t->n.data[i];
	switch (j->kind) {
	case J_NULL:
		sqlite3_str_appendall(o, "null");
		break;
	case J_VALUE:
		json_value(o, tp, j->row);
		break;
	case J_ARRAY:
	case J_DICT:
		sqlite3_str_appendchar(o, 1, j->kind == J_ARRAY ? '[' : '{');
		for (size_t k = 0; k < j->kids.len; k++) {
			uint32_t c = j->kids.data[k];
			if (k)
				sqlite3_str_appendchar(o, 1, ',');
			if (j->kind == J_DICT) {
				json_string(o, t->n.data[c].key, t->n.data[c].key_len);
				sqlite3_str_appendchar(o, 1, ':');
			}
			json_node(o, tp, t, c);
		}
		sqlite3_str_appendchar(o, 1, j->kind == J_ARRAY ? ']' : '}');
		break;
	}
}

static void tree_release(struct jtree *t)
{
	for (size_t i = 0; i < t->n.len; i++)
		vec_release(&t->n.data[i].kids);
	vec_release(&t->n);
}

void tp_sql_fn_arg_set_to_json(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct tp_sql *sql = sqlite3_user_data(ctx);
	struct jtree t = {VEC_INIT};
	uint32_t first, end;
	char *err = NULL;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "PRINT_ARGS: 1st argument should be arg set id", -1);
		return;
	}
	if (!sql->args || !sql->args_cols.ok) {
		sqlite3_result_error(ctx, "PRINT_ARGS: no usable args table", -1);
		return;
	}
	tp_sql_args_range(sql, sqlite3_value_int64(argv[0]), &first, &end);
	const uint32_t *sets = tp_sql_col_data(sql->args, (uint32_t)sql->args_cols.set);
	const uint32_t *keys = tp_sql_col_data(sql->args, (uint32_t)sql->args_cols.key);
	const struct tp *tp = sql->tp;
	node_new(&t, NULL, 0);
	node_make(&t, 0, J_DICT);
	for (uint32_t r = first; r < end && !err; r++) {
		if (sets[r] != (uint32_t)sqlite3_value_int64(argv[0]))
			continue;
		size_t klen;
		const char *key = strpool_get(&tp->strings, keys[r], &klen);
		err = tree_add(&t, key, klen, r, tp_args_row(tp, r).type);
	}
	if (err) {
		sqlite3_result_error(ctx, err, -1);
		sqlite3_free(err);
		tree_release(&t);
		return;
	}
	sqlite3_str *o = sqlite3_str_new(NULL);
	json_node(o, tp, &t, 0);
	tree_release(&t);
	int n = sqlite3_str_length(o);
	char *res = sqlite3_str_finish(o);
	if (!res) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text64(ctx, res, (sqlite3_uint64)n, sqlite3_free, SQLITE_UTF8);
}
