/*
 * The aggregate profile rows and dummy frames the profile importers share
 * (profiles.h).
 */
#include "profiles.h"

uint32_t tp_profiles_agg_profile(struct tp *tp, uint32_t scope, uint32_t name, uint32_t type,
                                 uint32_t unit)
{
	struct tp_aggregate_profile_table *t = &tp->t.aggregate_profile;
	uint32_t r = tp_aggregate_profile_append(t);
	t->scope[r] = scope;
	t->name[r] = name;
	t->sample_type_type[r] = type;
	t->sample_type_unit[r] = unit;
	return r;
}

uint32_t tp_profiles_dummy_mapping(struct tp *tp, const char *name)
{
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t m = tp_stack_profile_mapping_append(t);
	t->build_id[m] = strpool_empty(&tp->strings);
	t->end[m] = -1; /* 2^64 - 1, as an int64 */
	t->name[m] = tp_intern_cstr(tp, name);
	return m;
}

uint32_t tp_profiles_dummy_frame(struct tp *tp, struct hmap *frames, uint32_t mapping,
                                 uint32_t name, uint32_t source_file, uint32_t line)
{
	uint64_t k = (uint64_t)name << 32 | source_file, row;
	if (hmap_get(frames, k, &row))
		return (uint32_t)row;
	struct tp_stack_profile_symbol_table *y = &tp->t.stack_profile_symbol;
	uint32_t s = tp_stack_profile_symbol_append(y);
	y->symbol_set_id[s] = s;
	y->name[s] = name;
	y->source_file[s] = source_file;
	y->line_number[s] = line;
	struct tp_stack_profile_frame_table *t = &tp->t.stack_profile_frame;
	uint32_t r = tp_stack_profile_frame_append(t);
	t->name[r] = name;
	t->mapping[r] = mapping;
	t->symbol_set_id[r] = s;
	hmap_put(frames, k, r);
	return r;
}
