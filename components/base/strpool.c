/*
 * The string pool: every distinct byte string the trace processor sees
 * (thread names, slice names, arg keys) is stored once and referred to by a
 * dense 32-bit id. The bytes live in 1 MiB arena blocks as records
 *
 *     +-----------+----------------+----+
 *     | len (u32) | bytes (len)    | \0 |
 *     +-----------+----------------+----+
 *                 ^ strs[id] points here
 *
 * so interning costs no malloc per string, pointers never move, and a lookup
 * of an id is one array load. The hash map's key is the address of the
 * bytes and its value the id; equality compares against the record, so the
 * bytes are not duplicated in the map and a hit touches three cache lines
 * (meta, slot, record). Id 0 is the empty string and is never stored.
 */
#include "base.h"

#define POOL_BLOCK ((size_t)1 << 20)
#define POOL_SEED 0x5851f42d4c957f2dull

struct probe {
	const char *s;
	size_t len;
};

static inline uint32_t rec_len(const char *str)
{
	uint32_t len;
	memcpy(&len, str - sizeof len, sizeof len);
	return len;
}

static bool probe_eq(const void *ctx, uint64_t key)
{
	const struct probe *pr = ctx;
	const char *str = (const char *)(uintptr_t)key;
	return rec_len(str) == pr->len && memcmp(str, pr->s, pr->len) == 0;
}

void strpool_init(struct strpool *p)
{
	hmap_init(&p->map);
	arena_init(&p->mem, POOL_BLOCK);
	p->strs = NULL;
	p->count = p->cap = 0;
	p->empty = 0;
}

void strpool_release(struct strpool *p)
{
	hmap_release(&p->map);
	arena_release(&p->mem);
	tb_free(p->strs);
	strpool_init(p);
}

bool strpool_find(const struct strpool *p, const char *s, size_t len, uint32_t *id)
{
	if (!s || !len) {
		*id = p->empty; /* the present empty string if there is one, else 0 */
		return true;
	}
	struct probe pr = {s, len};
	size_t slot = hmap_lookup(&p->map, tb_hash_bytes(s, len, POOL_SEED), probe_eq, &pr);
	if (slot == HMAP_END)
		return false;
	*id = (uint32_t)p->map.slots[slot].val;
	return true;
}

/* A new id for the len bytes at s, stored as a record (not mapped). */
static uint32_t add_record(struct strpool *p, const char *s, size_t len)
{
	if (!p->count) {
		vec_grow_(&p->strs, &p->cap, 0, 1024, sizeof *p->strs, false);
		p->strs[0] = "";
		p->count = 1;
	}
	TB_CHECK(p->count < UINT32_MAX);
	vec_grow_(&p->strs, &p->cap, p->count, 1, sizeof *p->strs, false);

	uint32_t len32 = (uint32_t)len;
	char *rec = arena_alloc(&p->mem, sizeof len32 + len + 1, 1);
	memcpy(rec, &len32, sizeof len32);
	memcpy(rec + sizeof len32, s, len);
	rec[sizeof len32 + len] = '\0';

	uint32_t id = (uint32_t)p->count++;
	p->strs[id] = rec + sizeof len32;
	return id;
}

uint32_t strpool_intern(struct strpool *p, const char *s, size_t len)
{
	if (!s || !len)
		return 0;
	TB_CHECK(len <= STRPOOL_MAX_LEN);
	uint64_t hash = tb_hash_bytes(s, len, POOL_SEED);
	struct probe pr = {s, len};
	size_t slot = hmap_lookup(&p->map, hash, probe_eq, &pr);
	if (slot != HMAP_END)
		return (uint32_t)p->map.slots[slot].val;

	uint32_t id = add_record(p, s, len);
	hmap_insert(&p->map, hash, (uint64_t)(uintptr_t)p->strs[id], id);
	return id;
}

uint32_t strpool_empty(struct strpool *p)
{
	if (!p->empty)
		p->empty = add_record(p, "", 0); /* not in the map: "" interns as 0 */
	return p->empty;
}

uint32_t strpool_intern_cstr(struct strpool *p, const char *s)
{
	return s ? strpool_intern(p, s, strlen(s)) : 0;
}

const char *strpool_get(const struct strpool *p, uint32_t id, size_t *len)
{
	if (id == 0) {
		if (len)
			*len = 0;
		return "";
	}
	TB_DCHECK(id < p->count);
	const char *str = p->strs[id];
	if (len)
		*len = rec_len(str);
	return str;
}

size_t strpool_bytes(const struct strpool *p)
{
	return p->mem.held + p->cap * sizeof *p->strs +
	       p->map.cap * (sizeof(struct hmap_slot) + sizeof(uint32_t));
}
