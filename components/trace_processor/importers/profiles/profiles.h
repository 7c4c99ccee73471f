/*
 * What the aggregated-profile importers share (collapsed stacks, pprof,
 * .cpuprofile): Perfetto's imported-profile tables, __intrinsic_aggregate_
 * profile (one row per metric of a file) and __intrinsic_aggregate_sample
 * (a value of a metric at a callsite), which are plain SQLite tables of the
 * prelude (sql/stdlib/prelude/tables.sql); and "dummy" frames, a function
 * name in a pseudo-mapping, with a stack_profile_symbol row each, as
 * Perfetto's DummyMemoryMapping makes them.
 */
#ifndef TB_TP_PROFILES_H
#define TB_TP_PROFILES_H

#include "../../tp_int.h"

#include "sqlite3.h"

/* Rows for the aggregate tables, written in one transaction that begins on
 * the first row and ends at tp_profiles_agg_end. Ids continue after the rows
 * already there (the members of an archive). Embed, zeroed. */
struct tp_profiles_agg {
	sqlite3_stmt *profile, *sample;
	int64_t next_profile, next_sample;
	bool begun;
};
/* A new aggregate_profile row (strings are pool ids); its id, or -1 when the
 * database refused it (the load fails with tp_fail). */
int64_t tp_profiles_agg_profile(struct tp *tp, struct tp_profiles_agg *a, uint32_t scope,
                                uint32_t name, uint32_t type, uint32_t unit);
/* A sample of value at callsite in profile. */
void tp_profiles_agg_sample(struct tp *tp, struct tp_profiles_agg *a, int64_t profile,
                            uint32_t callsite, double value);
/* Commit and release (also on an importer's error path; idempotent). */
int tp_profiles_agg_end(struct tp *tp, struct tp_profiles_agg *a);

/* A pseudo-mapping named name (Perfetto's dummy mapping: start 0, end the
 * top of the address space, build id ""). */
uint32_t tp_profiles_dummy_mapping(struct tp *tp, const char *name);
/* The frame named name (pool id) in a dummy mapping, interned by (name,
 * source_file) in frames (one map per mapping), with its symbol row
 * (source_file and line given, or 0 / TP_NULL_U32). */
uint32_t tp_profiles_dummy_frame(struct tp *tp, struct hmap *frames, uint32_t mapping,
                                 uint32_t name, uint32_t source_file, uint32_t line);

#endif
