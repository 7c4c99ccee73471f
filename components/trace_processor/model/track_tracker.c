/*
 * Tracks: the timelines slices and counters live on. A track is identified by
 * its machine (the current one), type, dimensions (utid, upid, cpu, an opaque
 * extra key such as an async cookie or a lane index) and name; asking twice
 * gives the same track id.
 * The identity of each track is kept beside the table (tracks->keys) so the
 * hash map can resolve collisions exactly.
 */
#include "../tp_int.h"
#include "model.h"

#include <string.h>

struct track_ident {
	uint32_t type, event_type, name, machine;
	int64_t utid, upid, cpu;
	uint64_t extra_dim;
};

/* The track tracker's state (struct tp's `tracks`). */
struct tp_tracks {
	VEC(struct track_ident) keys; /* by track id */
	struct hmap by_key;           /* hash of the identity -> track id */
	struct hmap thread;           /* utid -> its thread_execution track */
};

static uint64_t ident_hash(const struct track_ident *k)
{
	return tb_hash_bytes(k, sizeof *k, 0x7472616b);
}

static void ident_from_key(struct tp *tp, const struct tp_track_key *key, struct track_ident *k)
{
	memset(k, 0, sizeof *k); /* padding takes part in the hash */
	k->type = tp_intern_cstr(tp, key->type);
	k->event_type = tp_intern_cstr(tp, key->event_type ? key->event_type : "slice");
	k->name = key->name;
	k->machine = tp->machine;
	k->utid = key->utid;
	k->upid = key->upid;
	k->cpu = key->cpu;
	k->extra_dim = key->extra_dim;
}

struct eq_ctx {
	const struct tp_tracks *tracks;
	const struct track_ident *want;
};

static bool ident_eq(const void *ctx, uint64_t track)
{
	const struct eq_ctx *c = ctx;
	return memcmp(&c->tracks->keys.data[track], c->want, sizeof *c->want) == 0;
}

static uint32_t append_track(struct tp *tp, const struct track_ident *k)
{
	struct tp_track_table *t = &tp->t.track;
	uint32_t id = tp_track_append(t);
	t->type[id] = k->type;
	t->event_type[id] = k->event_type;
	t->name[id] = k->name;
	t->utid[id] = k->utid >= 0 ? k->utid : TP_NULL_I64;
	t->upid[id] = k->upid >= 0 ? k->upid : TP_NULL_I64;
	t->cpu[id] = k->cpu >= 0 ? k->cpu : TP_NULL_I64;
	t->machine_id[id] = k->machine;
	/* A cpu track makes its cpu one the machine has, as in Perfetto. */
	if (k->cpu >= 0 && k->cpu < TP_MAX_CPUS)
		tp_cpu_for(tp, (uint32_t)k->cpu);
	vec_push(&tp->tracks->keys, *k);
	return id;
}

uint32_t tp_track_new(struct tp *tp, const struct tp_track_key *key)
{
	struct track_ident k;
	ident_from_key(tp, key, &k);
	/* Never shared: a unique extra dimension keeps lookups from finding it. */
	k.extra_dim = ~(uint64_t)tp->t.track.n;
	return append_track(tp, &k);
}

uint32_t tp_track_get(struct tp *tp, const struct tp_track_key *key)
{
	struct track_ident k;
	ident_from_key(tp, key, &k);
	uint64_t h = ident_hash(&k);
	if (tp->tracks->keys.len) {
		struct eq_ctx c = {tp->tracks, &k};
		size_t slot = hmap_lookup(&tp->tracks->by_key, h, ident_eq, &c);
		if (slot != HMAP_END)
			return (uint32_t)tp->tracks->by_key.slots[slot].val;
	}
	uint32_t id = append_track(tp, &k);
	hmap_insert(&tp->tracks->by_key, h, id, id);
	return id;
}

uint32_t tp_track_for_thread(struct tp *tp, uint32_t utid)
{
	uint64_t v;
	if (hmap_get(&tp->tracks->thread, utid, &v))
		return (uint32_t)v;
	struct tp_track_key key = {
	    .type = "thread_execution", .event_type = "slice", .utid = utid, .upid = -1, .cpu = -1};
	uint32_t id = tp_track_get(tp, &key);
	hmap_put(&tp->tracks->thread, utid, id);
	/* Its dimension args now, not at the end (tp_tracks_finish): Perfetto
	 * adds them when it interns the track, which numbers the arg sets. */
	if (tp->t.track.dimension_arg_set_id[id] == TP_NULL_U32) {
		uint32_t k = tp_intern_cstr(tp, "utid");
		tp_args_begin(&tp->args_scratch);
		tp_args_add_int(&tp->args_scratch, k, k, utid);
		tp->t.track.dimension_arg_set_id[id] = tp_args_commit(tp, &tp->args_scratch);
	}
	return id;
}

void tp_tracks_init(struct tp *tp)
{
	tp->tracks = tb_calloc(1, sizeof *tp->tracks);
}

void tp_tracks_release(struct tp *tp)
{
	struct tp_tracks *t = tp->tracks;
	if (!t)
		return;
	vec_release(&t->keys);
	hmap_release(&t->by_key);
	hmap_release(&t->thread);
	tb_free(t);
	tp->tracks = NULL;
}

void tp_tracks_finish(struct tp *tp)
{
	struct tp_track_table *t = &tp->t.track;
	uint32_t kutid = tp_intern_cstr(tp, "utid"), kupid = tp_intern_cstr(tp, "upid"),
	         kcpu = tp_intern_cstr(tp, "cpu");
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->dimension_arg_set_id[i] != TP_NULL_U32)
			continue;
		bool any = false;
		tp_args_begin(&tp->args_scratch);
		if (t->utid[i] != TP_NULL_I64) {
			tp_args_add_int(&tp->args_scratch, kutid, kutid, t->utid[i]);
			any = true;
		} else if (t->upid[i] != TP_NULL_I64) {
			tp_args_add_int(&tp->args_scratch, kupid, kupid, t->upid[i]);
			any = true;
		}
		if (t->cpu[i] != TP_NULL_I64) {
			tp_args_add_int(&tp->args_scratch, kcpu, kcpu, t->cpu[i]);
			any = true;
		}
		if (any)
			t->dimension_arg_set_id[i] = tp_args_commit(tp, &tp->args_scratch);
	}
}
