/*
 * What the profile importers share (collapsed stacks, pprof, .cpuprofile):
 * rows of Perfetto's imported-profile tables, __intrinsic_aggregate_profile
 * (one row per metric of a file) and __intrinsic_aggregate_sample (a value
 * of a metric at a callsite); and "dummy" frames, a function name in a
 * pseudo-mapping, with a stack_profile_symbol row each, as Perfetto's
 * DummyMemoryMapping makes them.
 */
#ifndef TB_TP_PROFILES_H
#define TB_TP_PROFILES_H

#include "../../tp_int.h"
#include "../../model/model.h"
#include "../importer.h"

/* A new aggregate_profile row (strings are pool ids); its id. */
uint32_t tp_profiles_agg_profile(struct tp *tp, uint32_t scope, uint32_t name, uint32_t type,
                                 uint32_t unit);
/* A sample of value at callsite in profile. */
static inline void tp_profiles_agg_sample(struct tp *tp, uint32_t profile, uint32_t callsite,
                                          double value)
{
	struct tp_aggregate_sample_table *t = &tp->t.aggregate_sample;
	uint32_t r = tp_aggregate_sample_append(t);
	t->aggregate_profile_id[r] = profile;
	t->callsite_id[r] = callsite;
	t->value[r] = value;
}

/* A pseudo-mapping named name (Perfetto's dummy mapping: start 0, end the
 * top of the address space, build id ""). */
uint32_t tp_profiles_dummy_mapping(struct tp *tp, const char *name);
/* The frame named name (pool id) in a dummy mapping, interned by (name,
 * source_file) in frames (one map per mapping), with its symbol row
 * (source_file and line given, or 0 / TP_NULL_U32). */
uint32_t tp_profiles_dummy_frame(struct tp *tp, struct hmap *frames, uint32_t mapping,
                                 uint32_t name, uint32_t source_file, uint32_t line);

#endif
