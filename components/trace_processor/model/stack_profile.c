/*
 * Stack profiles: interning of mappings, frames and callsites into the
 * stack_profile_* tables. Importers that read sampled
 * callstacks (perf script text, traced_perf packets) own one
 * struct tp_stack_profile each and ask it for ids; equal keys give the same
 * row, so a callsite tree is shared by every sample that walks it. The
 * samples themselves are profiler.c's.
 *
 * The maps hash the key tuple and store the row id; equality is checked
 * against the table row itself, so no key is stored twice.
 */
#include "../tp_int.h"
#include "model.h"

void tp_stack_profile_init(struct tp_stack_profile *sp)
{
	hmap_init(&sp->mappings);
	hmap_init(&sp->frames);
	hmap_init(&sp->callsites);
}

void tp_stack_profile_release(struct tp_stack_profile *sp)
{
	hmap_release(&sp->mappings);
	hmap_release(&sp->frames);
	hmap_release(&sp->callsites);
}

struct sp_key {
	const struct tp *tp;
	uint32_t a, b, c;
	int64_t pc;
};

static uint64_t hash_key(const struct sp_key *k)
{
	uint64_t v[4] = {k->a, k->b, k->c, (uint64_t)k->pc};
	return tb_hash_bytes(v, sizeof(v), 0x5eed);
}

static bool mapping_eq(const void *ctx, uint64_t row)
{
	const struct sp_key *k = ctx;
	const struct tp_stack_profile_mapping_table *t = &k->tp->t.stack_profile_mapping;
	return t->name[row] == k->a && t->build_id[row] == k->b;
}

uint32_t tp_stack_profile_mapping(struct tp *tp, struct tp_stack_profile *sp, uint32_t name,
                                  uint32_t build_id)
{
	struct sp_key k = {tp, name, build_id, 0, 0};
	uint64_t h = hash_key(&k);
	size_t slot = hmap_lookup(&sp->mappings, h, mapping_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)sp->mappings.slots[slot].key;
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t row = tp_stack_profile_mapping_append(t);
	t->name[row] = name;
	t->build_id[row] = build_id;
	hmap_insert(&sp->mappings, h, row, row);
	return row;
}

static bool frame_eq(const void *ctx, uint64_t row)
{
	const struct sp_key *k = ctx;
	const struct tp_stack_profile_frame_table *t = &k->tp->t.stack_profile_frame;
	return t->mapping[row] == k->a && t->name[row] == k->b && t->rel_pc[row] == k->pc;
}

uint32_t tp_stack_profile_frame(struct tp *tp, struct tp_stack_profile *sp, uint32_t mapping,
                                int64_t rel_pc, uint32_t name)
{
	struct sp_key k = {tp, mapping, name, 1, rel_pc};
	uint64_t h = hash_key(&k);
	size_t slot = hmap_lookup(&sp->frames, h, frame_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)sp->frames.slots[slot].key;
	struct tp_stack_profile_frame_table *t = &tp->t.stack_profile_frame;
	uint32_t row = tp_stack_profile_frame_append(t);
	t->mapping[row] = mapping;
	t->rel_pc[row] = rel_pc;
	t->name[row] = name;
	hmap_insert(&sp->frames, h, row, row);
	return row;
}

static bool callsite_eq(const void *ctx, uint64_t row)
{
	const struct sp_key *k = ctx;
	const struct tp_stack_profile_callsite_table *t = &k->tp->t.stack_profile_callsite;
	int64_t parent = k->a == TP_NULL_U32 ? TP_NULL_I64 : (int64_t)k->a;
	return t->parent_id[row] == parent && t->frame_id[row] == k->b;
}

uint32_t tp_stack_profile_callsite(struct tp *tp, struct tp_stack_profile *sp, uint32_t parent,
                                   uint32_t frame)
{
	struct sp_key k = {tp, parent, frame, 2, 0};
	uint64_t h = hash_key(&k);
	size_t slot = hmap_lookup(&sp->callsites, h, callsite_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)sp->callsites.slots[slot].key;
	struct tp_stack_profile_callsite_table *t = &tp->t.stack_profile_callsite;
	uint32_t depth = parent == TP_NULL_U32 ? 0 : t->depth[parent] + 1;
	uint32_t row = tp_stack_profile_callsite_append(t);
	t->parent_id[row] = parent == TP_NULL_U32 ? TP_NULL_I64 : (int64_t)parent;
	t->frame_id[row] = frame;
	t->depth[row] = depth;
	hmap_insert(&sp->callsites, h, row, row);
	return row;
}
