/*
 * Arg sets (model/args.c): the args table's rows, built by importers
 * through a builder, committed as deduplicated sets, merged and read back.
 */
#ifndef TB_TP_ARGS_H
#define TB_TP_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct tp;

/* An arg set under construction. Importers add key/value pairs, then commit
 * it to get an arg_set_id (TP_NULL_U32 for an empty set). Keys are
 * Perfetto's: `flat_key` drops array indexes ("args.a.b"), `key` keeps them
 * ("args.a[0].b"). Strings are copied into the pool. */
enum tp_arg_type { /* TP_ARG_NULL = 0: a new args row is a null arg */
	           TP_ARG_NULL,
	           TP_ARG_INT,
	           TP_ARG_UINT,
	           TP_ARG_STRING,
	           TP_ARG_REAL,
	           TP_ARG_BOOL,
	           TP_ARG_POINTER,
	           TP_ARG_JSON,
	           TP_ARG_COUNT
};
struct tp_arg {
	uint32_t flat_key, key;
	enum tp_arg_type type;
	union {
		int64_t i;
		double d;
		uint32_t s; /* string id */
	} v;
};
struct tp_args_builder {
	VEC(struct tp_arg) args;
};

void tp_args_begin(struct tp_args_builder *b);
void tp_args_add_int(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, int64_t v);
void tp_args_add_uint(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, uint64_t v);
void tp_args_add_real(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, double v);
void tp_args_add_bool(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, bool v);
void tp_args_add_string(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, uint32_t s);
void tp_args_add_pointer(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, uint64_t v);
void tp_args_add_json(struct tp_args_builder *b, uint32_t flat_key, uint32_t key, uint32_t s);
void tp_args_add_null(struct tp_args_builder *b, uint32_t flat_key, uint32_t key);
/* Store the set; returns its arg_set_id (TP_NULL_U32 if empty). Identical
 * sets may share an id. The builder is emptied for reuse. */
uint32_t tp_args_commit(struct tp *tp, struct tp_args_builder *b);
/* The content hash that finds identical sets: TP_ARGS_HASH_SEED, then
 * tp_args_hash_add of each arg in order, then tp_args_hash_end. Per arg
 * two multiply-xorshift steps; the end mixes fully. */
#define TP_ARGS_HASH_SEED 0x61726773u
static inline uint64_t tp_args_hash_add(uint64_t h, const struct tp_arg *a)
{
	uint64_t v = (uint64_t)a->v.i;
	if (a->type == TP_ARG_STRING || a->type == TP_ARG_JSON)
		v = a->v.s;
	else if (a->type == TP_ARG_NULL)
		v = 0;
	h = (h ^ ((uint64_t)a->flat_key << 32 | a->key)) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	h = (h ^ v ^ (uint64_t)a->type << 59) * 0xc2b2ae3d27d4eb4full;
	return h ^ h >> 29;
}
static inline uint64_t tp_args_hash_end(uint64_t h)
{
	return tb_hash_u64(h);
}
/* How many times the dedup map of recent sets was emptied. Within one
 * epoch, committing the same contents again returns the same id, so an
 * importer may remember (contents -> id) while the epoch is unchanged. */
uint32_t tp_args_dedup_epoch(const struct tp *tp);
/* tp_args_commit when the builder's hash is already known. */
uint32_t tp_args_commit_hashed(struct tp *tp, struct tp_args_builder *b, uint64_t hash);
/* A hint well before a commit of a set with this hash: starts loading the
 * part of the dedup map the commit will probe, which for traces of mostly
 * unique sets is otherwise a cache miss per set. */
void tp_args_prefetch(const struct tp *tp, uint64_t hash);
/* A JSON value as args (importers/json/args.c, the JSON importer's rules:
 * an object's members append ".name" to the key, an array's elements
 * "[i]" to the key only, nulls skipped, leaves int, real, string or bool),
 * for formats that carry JSON inside (TrackEvent legacy_json_value). The
 * handle keeps caches between calls; _new/_free. tp_json_args_add appends
 * the value text[0, n) under key (pool id) to b and returns true, or false
 * (b unchanged) when it is not one well-formed JSON value. */
struct tp_json_args;
struct tp_json_args *tp_json_args_new(void);
void tp_json_args_free(struct tp_json_args *j);
bool tp_json_args_add(struct tp *tp, struct tp_json_args *j, uint32_t key, const char *text,
                      size_t n, struct tp_args_builder *b);
/* Append the args of set (TP_NULL_U32: none) to b. */
void tp_args_load(struct tp *tp, uint32_t set, struct tp_args_builder *b);
/* Merge add[0, n) into `into` as Perfetto's per-slice ArgsTracker does
 * with an end event's args: an array element goes after the elements its
 * array (the key up to its first '[') already has there; an equal key
 * replaces the value, unless it is keep_key (pool id, 0: none), which keeps
 * the first value. */
void tp_args_merge_into(struct tp *tp, struct tp_args_builder *into, const struct tp_arg *add,
                        size_t n, uint32_t keep_key);
/* A new set = the args of a, then those of b (b wins on equal keys). */
uint32_t tp_args_merge(struct tp *tp, uint32_t a, uint32_t b);
void tp_args_builder_release(struct tp_args_builder *b);
/* Row `row` of the args table as a builder entry (keys resolved). */
struct tp_arg tp_args_row(const struct tp *tp, uint32_t row);
/* The pool id of a type's value_type name ("int", "string", ...), 0 if no
 * arg of that type was stored yet. */
uint32_t tp_args_type_name_id(const struct tp *tp, enum tp_arg_type type);

/* The args tracker's state: made by tp_new, freed by tp_free. */
void tp_args_init(struct tp *tp);
void tp_args_free(struct tp *tp);

#endif /* TB_TP_ARGS_H */
