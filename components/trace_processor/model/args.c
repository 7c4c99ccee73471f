/*
 * Arg sets: the key/value pairs attached to slices, counters, tracks and the
 * rest, stored once in the args table and referenced by arg_set_id.
 *
 * Importers fill a builder and commit it. Rows of a set are appended
 * together and a set's id is the id of its first row (Perfetto's
 * numbering: the args table's row count when the set is added), so
 * arg_set_id is non-decreasing down the table and a set is found by binary
 * search. Identical sets share one id, found by a content
 * hash in `sets` (struct tp_arg_dedup). That map only remembers the last
 * ARG_SETS_RECENT distinct sets (it is emptied when full): big traces whose arg sets are
 * mostly unique would otherwise pay for it in memory, and repeats are
 * nearly always close together. It is an open-addressing table of 8-byte
 * slots (32 bits of the hash, the set id), so a probe of a mostly unique set
 * costs one cache line, which a caller can prefetch (tp_args_prefetch), and
 * once the map spans 2 MiB it sits on huge pages, so a probe is not also a
 * TLB miss (sets_alloc). The home slot comes from the stored hash bits,
 * so growth re-places entries without rehashing sets. A merge (end-event args added to a begin's
 * set) makes a new set; the old one stays, since another row may share it.
 *
 * A row stores the key, the type (1 byte) and one 8-byte value; flat_key
 * only where it differs from key (a sparse column, so traces without array
 * args never allocate it). Perfetto's flat_key, int_value, string_value,
 * real_value and value_type columns are computed here for the SQL layer.
 * The value_type strings ("int", "string", ...) are interned once per trace
 * (type_ids), when the first arg of the type is stored.
 */
#include "../tp_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define ARG_SETS_RECENT (1u << 18)

/* The args tracker's state (struct tp's arg_dedup). */
struct tp_arg_dedup {
	struct {
		uint64_t *slot; /* hash tag << 32 | arg_set_id; 0 = empty */
		size_t cap, len;
	} sets;                          /* content hash -> arg_set_id of recent sets */
	uint32_t type_ids[TP_ARG_COUNT]; /* pool ids of "int", "real"...; 0 = not yet */
	uint32_t epoch;                  /* times sets was emptied */
};

uint32_t tp_args_dedup_epoch(const struct tp *tp)
{
	return tp->arg_dedup->epoch;
}

void tp_args_init(struct tp *tp)
{
	tp->arg_dedup = tb_calloc(1, sizeof *tp->arg_dedup);
}

static const char *const type_names[] = {
    [TP_ARG_INT] = "int",   [TP_ARG_UINT] = "uint", [TP_ARG_STRING] = "string",
    [TP_ARG_REAL] = "real", [TP_ARG_BOOL] = "bool", [TP_ARG_POINTER] = "pointer",
    [TP_ARG_JSON] = "json", [TP_ARG_NULL] = "null",
};

/* The pool id of the value_type string of type. */
static uint32_t type_id(struct tp *tp, int type)
{
	uint32_t *id = &tp->arg_dedup->type_ids[type];
	if (!*id)
		*id = tp_intern_cstr(tp, type_names[type]);
	return *id;
}

void tp_args_begin(struct tp_args_builder *b)
{
	vec_clear(&b->args);
}

static struct tp_arg *add(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, int type)
{
	vec_push_zeroed(&b->args);
	struct tp_arg *a = vec_last(&b->args);
	a->flat_key = flat_key;
	a->key = key;
	a->type = type;
	return a;
}

void tp_args_add_int(struct tp_args_builder *b, uint32_t fk, uint32_t k, int64_t v)
{
	add(b, fk, k, TP_ARG_INT)->v.i = v;
}
void tp_args_add_uint(struct tp_args_builder *b, uint32_t fk, uint32_t k, uint64_t v)
{
	add(b, fk, k, TP_ARG_UINT)->v.i = (int64_t)v;
}
void tp_args_add_real(struct tp_args_builder *b, uint32_t fk, uint32_t k, double v)
{
	add(b, fk, k, TP_ARG_REAL)->v.d = v;
}
void tp_args_add_bool(struct tp_args_builder *b, uint32_t fk, uint32_t k, bool v)
{
	add(b, fk, k, TP_ARG_BOOL)->v.i = v;
}
void tp_args_add_string(struct tp_args_builder *b, uint32_t fk, uint32_t k, uint32_t s)
{
	add(b, fk, k, TP_ARG_STRING)->v.s = s;
}
void tp_args_add_pointer(struct tp_args_builder *b, uint32_t fk, uint32_t k, uint64_t v)
{
	add(b, fk, k, TP_ARG_POINTER)->v.i = (int64_t)v;
}
void tp_args_add_json(struct tp_args_builder *b, uint32_t fk, uint32_t k, uint32_t s)
{
	add(b, fk, k, TP_ARG_JSON)->v.s = s;
}
void tp_args_add_null(struct tp_args_builder *b, uint32_t fk, uint32_t k)
{
	add(b, fk, k, TP_ARG_NULL);
}

void tp_args_builder_release(struct tp_args_builder *b)
{
	vec_release(&b->args);
}

/* The 8-byte value column of an arg: the integer, the double's bits or the
 * string id; 0 for null. */
static int64_t packed_value(const struct tp_arg *a)
{
	int64_t v = 0;
	switch (a->type) {
	case TP_ARG_REAL:
		memcpy(&v, &a->v.d, sizeof v);
		break;
	case TP_ARG_STRING:
	case TP_ARG_JSON:
		v = a->v.s;
		break;
	case TP_ARG_NULL:
		break;
	default:
		v = a->v.i;
	}
	return v;
}

static void store_row(struct tp *tp, uint32_t set, const struct tp_arg *a)
{
	struct tp_args_table *t = &tp->t.args;
	uint32_t row = tp_args_append(t);
	type_id(tp, a->type);
	t->arg_set_id[row] = set;
	t->key[row] = a->key;
	if (a->flat_key != a->key)
		tp_set_args_flat_key_diff(t, row, a->flat_key);
	t->value[row] = packed_value(a);
	t->type[row] = (uint8_t)a->type;
}

struct tp_arg tp_args_row(const struct tp *tp, uint32_t row)
{
	const struct tp_args_table *t = &tp->t.args;
	struct tp_arg a = {0};
	uint32_t fk = tp_get_args_flat_key_diff(t, row);
	int64_t v = t->value[row];
	a.key = t->key[row];
	a.flat_key = fk ? fk : a.key;
	a.type = (enum tp_arg_type)t->type[row];
	switch (a.type) {
	case TP_ARG_REAL:
		memcpy(&a.v.d, &v, sizeof v);
		break;
	case TP_ARG_STRING:
	case TP_ARG_JSON:
		a.v.s = (uint32_t)v;
		break;
	case TP_ARG_NULL:
		break;
	default:
		a.v.i = v;
	}
	return a;
}

uint32_t tp_args_type_name_id(const struct tp *tp, enum tp_arg_type type)
{
	const uint32_t *ids = tp->arg_dedup->type_ids;
	return (unsigned)type < TP_ARG_COUNT ? ids[type] : 0;
}

/* Perfetto's columns, computed for the SQL layer. */
void tp_args_computed_flat_key(const struct tp *tp, uint32_t row, void *out)
{
	uint32_t fk = tp_get_args_flat_key_diff(&tp->t.args, row);
	*(uint32_t *)out = fk ? fk : tp->t.args.key[row];
}

void tp_args_computed_int_value(const struct tp *tp, uint32_t row, void *out)
{
	struct tp_arg a = tp_args_row(tp, row);
	bool is_int = a.type == TP_ARG_INT || a.type == TP_ARG_UINT || a.type == TP_ARG_BOOL ||
	              a.type == TP_ARG_POINTER;
	*(int64_t *)out = is_int ? a.v.i : TP_NULL_I64;
}

void tp_args_computed_string_value(const struct tp *tp, uint32_t row, void *out)
{
	struct tp_arg a = tp_args_row(tp, row);
	bool is_str = a.type == TP_ARG_STRING || a.type == TP_ARG_JSON;
	*(uint32_t *)out = is_str ? a.v.s : TP_NULL_STR;
}

void tp_args_computed_real_value(const struct tp *tp, uint32_t row, void *out)
{
	struct tp_arg a = tp_args_row(tp, row);
	*(double *)out = a.type == TP_ARG_REAL ? a.v.d : TP_NULL_DBL;
}

void tp_args_computed_value_type(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = tp_args_type_name_id(tp, (enum tp_arg_type)tp->t.args.type[row]);
}

static uint64_t args_hash(const struct tp_arg *a, size_t n)
{
	uint64_t h = TP_ARGS_HASH_SEED;
	for (size_t i = 0; i < n; i++)
		h = tp_args_hash_add(h, &a[i]);
	return tp_args_hash_end(h);
}

/* The row after the last of a set: its rows are together, from row set on. */
static uint32_t set_end(const struct tp *tp, uint32_t set)
{
	const struct tp_args_table *t = &tp->t.args;
	uint32_t r = set;
	while (r < t->n && t->arg_set_id[r] == set)
		r++;
	return r;
}

/* Does the stored set equal the builder's args? */
static bool set_eq(const struct tp *tp, const struct tp_arg *args, size_t n, uint32_t set)
{
	uint32_t start = set, end = set_end(tp, set);
	if (end - start != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct tp_arg *a = &args[i];
		uint32_t r = start + (uint32_t)i;
		struct tp_arg s = tp_args_row(tp, r);
		if (s.key != a->key || s.flat_key != a->flat_key || s.type != a->type)
			return false;
		switch (a->type) {
		case TP_ARG_REAL:
			if (s.v.d != a->v.d)
				return false;
			break;
		case TP_ARG_STRING:
		case TP_ARG_JSON:
			if (s.v.s != a->v.s)
				return false;
			break;
		case TP_ARG_NULL:
			break;
		default:
			if (s.v.i != a->v.i)
				return false;
		}
	}
	return true;
}

/* ---- the dedup map ----------------------------------------------------- */

#define SET_TAG(h) ((uint64_t)((uint32_t)((h) >> 32) | 0x80000000u) << 32)
#define SETS_MIN_CAP 1024u

/* The home slot of a tag (cap <= 2 * ARG_SETS_RECENT keeps the mask below
 * the tag's always-set bit 31). */
static size_t sets_home(uint64_t tag, size_t cap)
{
	return (size_t)(tag >> 32) & (cap - 1);
}

void tp_args_prefetch(const struct tp *tp, uint64_t hash)
{
	const struct tp_arg_dedup *d = tp->arg_dedup;
	if (d->sets.cap)
		__builtin_prefetch(&d->sets.slot[sets_home(SET_TAG(hash), d->sets.cap)]);
}

/* The id of the stored set equal to a[0, n) with this hash, or TP_NULL_U32. */
static uint32_t sets_find(struct tp *tp, uint64_t hash, const struct tp_arg *a, size_t n)
{
	if (!tp->arg_dedup->sets.len)
		return TP_NULL_U32;
	uint64_t tag = SET_TAG(hash);
	size_t mask = tp->arg_dedup->sets.cap - 1;
	for (size_t i = sets_home(tag, tp->arg_dedup->sets.cap);; i = (i + 1) & mask) {
		uint64_t s = tp->arg_dedup->sets.slot[i];
		if (!s)
			return TP_NULL_U32;
		if ((s & ~0xffffffffull) == tag && set_eq(tp, a, n, (uint32_t)s))
			return (uint32_t)s;
	}
}

static void sets_place(uint64_t *slot, size_t cap, uint64_t v)
{
	size_t i = sets_home(v, cap);
	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = v;
}

/* A zeroed slot array. Probes land anywhere in it, so once it spans
 * megabytes each one is also a TLB miss, which costs more than the cache
 * miss the prefetch hides (a page walk, nested under virtualization): a
 * big map is placed on a 2 MiB boundary and asks for huge pages before it
 * is first touched. The allocation's start is kept in the word before the
 * slots (sets_free). */
#define SETS_HUGE ((size_t)2 << 20)
static uint64_t *sets_alloc(size_t cap)
{
	size_t bytes = cap * sizeof(uint64_t);
	bool huge = bytes >= SETS_HUGE;
	char *base = tb_malloc(bytes + sizeof(void *) + (huge ? SETS_HUGE : 0));
	uintptr_t at = (uintptr_t)base + sizeof(void *);
	if (huge) {
		at = (at + SETS_HUGE - 1) & ~(SETS_HUGE - 1);
		(void)madvise((void *)at, bytes, MADV_HUGEPAGE);
	}
	memcpy((char *)at - sizeof(void *), &base, sizeof base);
	return memset((void *)at, 0, bytes);
}

static void sets_free(uint64_t *slot)
{
	char *base;
	if (!slot)
		return;
	memcpy(&base, (char *)slot - sizeof(void *), sizeof base);
	tb_free(base);
}

/* Remember set under hash; the map is emptied once it holds
 * ARG_SETS_RECENT sets, and kept at most 3/4 full. */
static void sets_insert(struct tp *tp, uint64_t hash, uint32_t set)
{
	if (tp->arg_dedup->sets.len >= ARG_SETS_RECENT) {
		memset(tp->arg_dedup->sets.slot, 0,
		       tp->arg_dedup->sets.cap * sizeof *tp->arg_dedup->sets.slot);
		tp->arg_dedup->sets.len = 0;
		tp->arg_dedup->epoch++;
	}
	if (tp->arg_dedup->sets.len + 1 > tp->arg_dedup->sets.cap / 4 * 3) {
		size_t ncap = tp->arg_dedup->sets.cap ? tp->arg_dedup->sets.cap * 2 : SETS_MIN_CAP;
		uint64_t *ns = sets_alloc(ncap);
		for (size_t i = 0; i < tp->arg_dedup->sets.cap; i++)
			if (tp->arg_dedup->sets.slot[i])
				sets_place(ns, ncap, tp->arg_dedup->sets.slot[i]);
		sets_free(tp->arg_dedup->sets.slot);
		tp->arg_dedup->sets.slot = ns;
		tp->arg_dedup->sets.cap = ncap;
	}
	sets_place(tp->arg_dedup->sets.slot, tp->arg_dedup->sets.cap, SET_TAG(hash) | set);
	tp->arg_dedup->sets.len++;
}

static uint32_t commit_array(struct tp *tp, const struct tp_arg *a, size_t n, uint64_t h)
{
	if (n == 0)
		return TP_NULL_U32;
	uint32_t found = sets_find(tp, h, a, n);
	if (found != TP_NULL_U32)
		return found;
	/* As Perfetto's: a set's id is the id of its first row. */
	uint32_t set = tp->t.args.n;
	for (size_t i = 0; i < n; i++)
		store_row(tp, set, &a[i]);
	sets_insert(tp, h, set);
	return set;
}

uint32_t tp_args_commit(struct tp *tp, struct tp_args_builder *b)
{
	return tp_args_commit_hashed(tp, b, args_hash(b->args.data, b->args.len));
}

uint32_t tp_args_commit_hashed(struct tp *tp, struct tp_args_builder *b, uint64_t hash)
{
	uint32_t set = commit_array(tp, b->args.data, b->args.len, hash);
	vec_clear(&b->args);
	return set;
}

/* Rebuild the args of a stored set as builder entries. */
static void load_set(struct tp *tp, uint32_t set, struct tp_args_builder *b)
{
	uint32_t end = set_end(tp, set);
	for (uint32_t r = set; r < end; r++)
		vec_push(&b->args, tp_args_row(tp, r));
}

void tp_args_load(struct tp *tp, uint32_t set, struct tp_args_builder *b)
{
	if (set != TP_NULL_U32)
		load_set(tp, set, b);
}

/* The key text up to its first '[' (n), and the index there; false when
 * the key has no array index. */
static bool first_index(const char *k, size_t len, size_t *n, uint64_t *idx, size_t *after)
{
	const char *br = memchr(k, '[', len);
	if (!br)
		return false;
	*n = (size_t)(br - k);
	uint64_t v = 0;
	size_t i = *n + 1;
	for (; i < len && k[i] >= '0' && k[i] <= '9' && v < UINT32_MAX; i++)
		v = v * 10 + (uint64_t)(k[i] - '0');
	if (i == *n + 1 || i >= len || k[i] != ']')
		return false;
	*idx = v;
	*after = i + 1;
	return true;
}

/* How many elements the array prefix[0, n) has in a[0, na): its highest
 * index + 1. */
static uint64_t array_len(const struct tp *tp, const struct tp_arg *a, size_t na,
                          const char *prefix, size_t n)
{
	uint64_t len = 0;
	for (size_t i = 0; i < na; i++) {
		if (a[i].key == a[i].flat_key)
			continue;
		size_t kl, pn, after;
		uint64_t idx;
		const char *k = strpool_get(&tp->strings, a[i].key, &kl);
		if (first_index(k, kl, &pn, &idx, &after) && pn == n && !memcmp(k, prefix, n) &&
		    idx + 1 > len)
			len = idx + 1;
	}
	return len;
}

/* Where each key of a merge is in the builder: open addressing over
 * (key, index), index UINT32_MAX for an empty slot, for merges of up to
 * MERGE_SET_MAX args; a linear scan past that and below MERGE_SET_MIN,
 * where the scan is as fast. */
#define MERGE_SET_BITS 7
#define MERGE_SET_MAX 64
#define MERGE_SET_MIN 12
struct merge_set {
	uint32_t key[1u << MERGE_SET_BITS], at[1u << MERGE_SET_BITS];
};

/* The slot of key: its own, or the empty one where it would go. */
static uint32_t merge_slot(const struct merge_set *m, uint32_t key)
{
	uint32_t h = (key * 0x9e3779b1u) >> (32 - MERGE_SET_BITS);
	while (m->at[h] != UINT32_MAX && m->key[h] != key)
		h = (h + 1) & ((1u << MERGE_SET_BITS) - 1);
	return h;
}

void tp_args_merge_into(struct tp *tp, struct tp_args_builder *into, const struct tp_arg *add,
                        size_t n, uint32_t keep_key)
{
	size_t base = into->args.len; /* the arrays' lengths before the merge */
	char buf[1024];
	struct merge_set set;
	bool hashed = base + n >= MERGE_SET_MIN && base + n <= MERGE_SET_MAX;
	if (hashed) {
		memset(set.at, 0xff, sizeof set.at);
		for (size_t j = 0; j < base; j++) {
			uint32_t h = merge_slot(&set, into->args.data[j].key);
			if (set.at[h] == UINT32_MAX) {
				set.key[h] = into->args.data[j].key;
				set.at[h] = (uint32_t)j;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct tp_arg a = add[i];
		if (a.key != a.flat_key && base) { /* (no array to extend when empty) */
			/* An array element: after the elements already there. */
			size_t kl, pn, after;
			uint64_t idx;
			const char *k = strpool_get(&tp->strings, a.key, &kl);
			if (first_index(k, kl, &pn, &idx, &after)) {
				uint64_t off = array_len(tp, into->args.data, base, k, pn);
				if (off) {
					int m = snprintf(buf, sizeof buf, "%.*s[%llu]%.*s", (int)pn,
					                 k, (unsigned long long)(idx + off),
					                 (int)(kl - after), k + after);
					if (m > 0 && (size_t)m < sizeof buf)
						a.key = tp_intern(tp, buf, (size_t)m);
				}
			}
		}
		size_t j = 0;
		if (hashed) {
			uint32_t h = merge_slot(&set, a.key);
			if (set.at[h] == UINT32_MAX) {
				set.key[h] = a.key;
				set.at[h] = (uint32_t)into->args.len;
			}
			j = set.at[h];
		} else {
			while (j < into->args.len && into->args.data[j].key != a.key)
				j++;
		}
		if (j == into->args.len)
			vec_push(&into->args, a);
		else if (a.key != keep_key)
			into->args.data[j] = a;
	}
}

uint32_t tp_args_merge(struct tp *tp, uint32_t a, uint32_t b)
{
	if (a == TP_NULL_U32)
		return b;
	if (b == TP_NULL_U32 || a == b)
		return a;
	struct tp_args_builder m = {VEC_INIT};
	load_set(tp, a, &m);
	struct tp_args_builder nb = {VEC_INIT};
	load_set(tp, b, &nb);
	/* b wins on equal keys: overwrite in place, append the new ones. */
	for (size_t i = 0; i < nb.args.len; i++) {
		size_t j = 0;
		while (j < m.args.len && m.args.data[j].key != nb.args.data[i].key)
			j++;
		if (j < m.args.len)
			m.args.data[j] = nb.args.data[i];
		else
			vec_push(&m.args, nb.args.data[i]);
	}
	uint32_t set =
	    commit_array(tp, m.args.data, m.args.len, args_hash(m.args.data, m.args.len));
	tp_args_builder_release(&m);
	tp_args_builder_release(&nb);
	return set;
}

void tp_args_free(struct tp *tp)
{
	if (!tp->arg_dedup)
		return;
	sets_free(tp->arg_dedup->sets.slot);
	tb_free(tp->arg_dedup);
	tp->arg_dedup = NULL;
}
