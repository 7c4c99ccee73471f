/*
 * The hash map. Open addressing with linear probing over two parallel
 * arrays (one allocation): meta[] holds 32 bits of each entry's hash with
 * bit 31 set (0 marks an empty slot), slots[] the key and value. Probing
 * scans the dense meta array and only looks at a key when its hash bits
 * match, which keeps caller-supplied equality callbacks (string keys) off the
 * hot path. The home slot is meta & mask; capacity is capped at 2^30 so the
 * mask never reaches bit 31, which means growth re-places entries from meta
 * alone, without rehashing keys.
 *
 * Deletion shifts the following entries of the probe run back into the hole
 * (Knuth's algorithm R), so there are no tombstones and lookups never slow
 * down with churn. Load factor is kept at or below 3/4.
 */
#include "base.h"

#define MIN_CAP 16
#define MAX_CAP ((size_t)1 << 30)

static inline uint32_t meta_of(uint64_t hash)
{
	return (uint32_t)(hash >> 32) | 0x80000000u;
}

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof *m);
}

void hmap_release(struct hmap *m)
{
	tb_free(m->slots);
	hmap_init(m);
}

void hmap_clear(struct hmap *m)
{
	if (m->cap)
		memset(m->meta, 0, m->cap * sizeof *m->meta);
	m->len = 0;
}

/* Place an entry known to be absent; there is always an empty slot. */
static size_t place(struct hmap *m, uint32_t meta, uint64_t key, uint64_t val)
{
	size_t mask = m->cap - 1;
	size_t i = meta & mask;
	while (m->meta[i])
		i = (i + 1) & mask;
	m->meta[i] = meta;
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->len++;
	return i;
}

static void resize(struct hmap *m, size_t ncap)
{
	TB_CHECK(ncap <= MAX_CAP);
	struct hmap old = *m;
	/* slots then meta: the 16-byte array first keeps both aligned. */
	char *mem = tb_malloc(ncap * (sizeof(struct hmap_slot) + sizeof(uint32_t)));
	m->slots = (struct hmap_slot *)mem;
	m->meta = (uint32_t *)(m->slots + ncap);
	memset(m->meta, 0, ncap * sizeof *m->meta);
	m->cap = ncap;
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.meta[i])
			place(m, old.meta[i], old.slots[i].key, old.slots[i].val);
	}
	tb_free(old.slots);
}

void hmap_reserve(struct hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : MIN_CAP;
	/* n <= cap * 3/4 */
	while (cap < MAX_CAP && n > cap / 4 * 3)
		cap *= 2;
	TB_CHECK(n <= cap / 4 * 3);
	if (cap != m->cap)
		resize(m, cap);
}

static void grow_for_one(struct hmap *m)
{
	if (m->len + 1 > m->cap / 4 * 3)
		hmap_reserve(m, m->len + 1);
}

size_t hmap_lookup(const struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *ctx)
{
	if (!m->len)
		return HMAP_END;
	uint32_t mt = meta_of(hash);
	size_t mask = m->cap - 1;
	for (size_t i = mt & mask;; i = (i + 1) & mask) {
		uint32_t s = m->meta[i];
		if (!s)
			return HMAP_END;
		if (s == mt && eq(ctx, m->slots[i].key))
			return i;
	}
}

void hmap_prefetch(const struct hmap *m, uint64_t hash)
{
	if (!m->cap)
		return;
	size_t i = meta_of(hash) & (m->cap - 1);
	__builtin_prefetch(&m->meta[i]);
	__builtin_prefetch(&m->slots[i]);
}

size_t hmap_insert(struct hmap *m, uint64_t hash, uint64_t key, uint64_t val)
{
	grow_for_one(m);
	return place(m, meta_of(hash), key, val);
}

void hmap_remove_at(struct hmap *m, size_t i)
{
	TB_DCHECK(i < m->cap && m->meta[i]);
	size_t mask = m->cap - 1;
	for (size_t j = (i + 1) & mask; m->meta[j]; j = (j + 1) & mask) {
		size_t home = m->meta[j] & mask;
		/* The entry at j may fill the hole at i if its home is not
		 * cyclically inside (i, j]: its probe distance covers the hole. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->meta[i] = m->meta[j];
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->meta[i] = 0;
	m->len--;
}

size_t hmap_next(const struct hmap *m, size_t i)
{
	for (; i < m->cap; i++) {
		if (m->meta[i])
			return i;
	}
	return HMAP_END;
}

/* Integer keys: the same probe with the key compared inline. */
static size_t find_u64(const struct hmap *m, uint64_t key, uint32_t mt)
{
	if (!m->len)
		return HMAP_END;
	size_t mask = m->cap - 1;
	for (size_t i = mt & mask;; i = (i + 1) & mask) {
		uint32_t s = m->meta[i];
		if (!s)
			return HMAP_END;
		if (s == mt && m->slots[i].key == key)
			return i;
	}
}

bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *val)
{
	size_t i = find_u64(m, key, meta_of(tb_hash_u64(key)));
	if (i == HMAP_END)
		return false;
	if (val)
		*val = m->slots[i].val;
	return true;
}

uint64_t *hmap_upsert(struct hmap *m, uint64_t key, bool *is_new)
{
	uint32_t mt = meta_of(tb_hash_u64(key));
	size_t i = find_u64(m, key, mt);
	if (is_new)
		*is_new = i == HMAP_END;
	if (i == HMAP_END) {
		grow_for_one(m);
		i = place(m, mt, key, 0);
	}
	return &m->slots[i].val;
}

bool hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	bool is_new;
	*hmap_upsert(m, key, &is_new) = val;
	return is_new;
}

bool hmap_del(struct hmap *m, uint64_t key, uint64_t *val)
{
	size_t i = find_u64(m, key, meta_of(tb_hash_u64(key)));
	if (i == HMAP_END)
		return false;
	if (val)
		*val = m->slots[i].val;
	hmap_remove_at(m, i);
	return true;
}
