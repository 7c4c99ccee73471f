/*
 * Tracks of legacy async TrackEvents (LegacyEvent phases b/e/n and
 * S/T/p/F with an id), as Perfetto's TrackCompressor interns them:
 *
 *   set   = (global | process upid, scope, root name): scope is the
 *           category (b/e/n) or the name (S/T/p/F), "category:id_scope"
 *           when the event has an id_scope; the root name is the name of
 *           the first event seen with the id (in the process, for local
 *           ids), so an end without a name finds its begin's set;
 *   lanes = the set's tracks: an id keeps its lane; a new id takes the
 *           first lane with nothing open, else a new one (its index is the
 *           track_compressor_idx dimension); b/S open (nest), e/T close, an
 *           instant (n/p/F) does both.
 *
 * A lane's track is made on first use: type legacy_async_global_slice or
 * legacy_async_process_slice, named after the event that made it, with
 * dimension args (upid,) scope, name, track_compressor_idx and source args
 * source "chrome", trace_id_is_process_scoped, upid (the event's process,
 * 0 unknown), source_scope; its
 * track_group_id is the set's (one per set, numbered across the trace).
 */
#include "proto_int.h"

#include <string.h>

struct async_lane {
	uint64_t cookie;
	uint32_t nest;
	uint32_t track; /* TP_NULL_U32 until made */
};

struct async_set {
	uint32_t group; /* track_group_id */
	VEC(struct async_lane) lanes;
};

struct proto_legacy_async {
	struct hmap roots; /* hash(process?, upid, id) -> root name */
	struct hmap sets;  /* hash(process?, upid, scope, root) -> index in set */
	VEC(struct async_set) set;
};

void tp_proto_legacy_async_free(struct proto_importer *im)
{
	struct proto_legacy_async *a = im->legacy_async;
	if (!a)
		return;
	for (size_t i = 0; i < a->set.len; i++)
		vec_release(&a->set.data[i].lanes);
	vec_release(&a->set);
	hmap_release(&a->roots);
	hmap_release(&a->sets);
	tb_free(a);
	im->legacy_async = NULL;
}

static uint64_t key_hash(const uint64_t *v, size_t n, uint64_t seed)
{
	return tb_hash_bytes(v, n * sizeof *v, seed);
}

/* The lane of cookie in s (Perfetto's GetOrCreateTrackForCookie). */
static uint32_t lane_for(struct async_set *s, uint64_t cookie)
{
	for (uint32_t i = 0; i < s->lanes.len; i++)
		if (s->lanes.data[i].cookie == cookie)
			return i;
	for (uint32_t i = 0; i < s->lanes.len; i++) {
		if (s->lanes.data[i].nest == 0) {
			s->lanes.data[i].cookie = cookie; /* adopted for the cookie */
			return i;
		}
	}
	vec_push(&s->lanes, ((struct async_lane){cookie, 0, TP_NULL_U32}));
	return (uint32_t)s->lanes.len - 1;
}

static uint32_t lane_track(struct proto_importer *im, const struct async_set *s, uint32_t lane,
                           uint32_t name, uint32_t upid, uint32_t event_upid, uint32_t scope,
                           uint32_t root)
{
	struct tp *tp = im->tp;
	bool process = upid != TP_NULL_U32;
	struct tp_track_key key = {
	    .type = process ? "legacy_async_process_slice" : "legacy_async_global_slice",
	    .event_type = "slice",
	    .utid = -1,
	    .upid = process ? (int64_t)upid : -1,
	    .cpu = -1,
	    .name = name,
	};
	uint32_t track = tp_track_new(tp, &key);
	struct tp_track_table *t = &tp->t.track;
	struct tp_args_builder *b = &tp->args_scratch;
	uint32_t k;
	tp_args_begin(b);
	if (process) {
		k = tp_intern_cstr(tp, "upid");
		tp_args_add_int(b, k, k, upid);
	}
	k = tp_intern_cstr(tp, "scope");
	tp_args_add_string(b, k, k, scope);
	k = tp_intern_cstr(tp, "name");
	tp_args_add_string(b, k, k, root);
	k = tp_intern_cstr(tp, "track_compressor_idx");
	tp_args_add_int(b, k, k, lane);
	t->dimension_arg_set_id[track] = tp_args_commit(tp, b);
	tp_args_begin(b);
	k = tp_intern_cstr(tp, "source");
	tp_args_add_string(b, k, k, tp_intern_cstr(tp, "chrome"));
	k = tp_intern_cstr(tp, "trace_id_is_process_scoped");
	tp_args_add_bool(b, k, k, process);
	k = tp_intern_cstr(tp, "upid");
	tp_args_add_uint(b, k, k, event_upid != TP_NULL_U32 ? event_upid : 0);
	k = tp_intern_cstr(tp, "source_scope");
	tp_args_add_string(b, k, k, scope);
	t->source_arg_set_id[track] = tp_args_commit(tp, b);
	t->track_group_id[track] = s->group;
	return track;
}

uint32_t tp_proto_legacy_async_track(struct proto_importer *im, int phase, uint32_t name,
                                     uint32_t upid, uint32_t event_upid, uint64_t id,
                                     uint32_t scope)
{
	struct tp *tp = im->tp;
	if (!im->legacy_async) {
		im->legacy_async = tb_calloc(1, sizeof *im->legacy_async);
		hmap_init(&im->legacy_async->roots);
		hmap_init(&im->legacy_async->sets);
	}
	struct proto_legacy_async *a = im->legacy_async;
	bool process = upid != TP_NULL_U32;
	uint64_t rk[3] = {process, process ? upid : 0, id};
	bool is_new;
	uint64_t *rp = hmap_upsert(&a->roots, key_hash(rk, 3, 0x726f6f74), &is_new);
	if (is_new)
		*rp = name;
	uint32_t root = (uint32_t)*rp;
	uint64_t sk[4] = {process, process ? upid : 0, scope, root};
	uint64_t *si = hmap_upsert(&a->sets, key_hash(sk, 4, 0x73657473), &is_new);
	if (is_new) {
		*si = a->set.len;
		struct async_set s = {.group = tp->track_groups++};
		vec_push(&a->set, s);
	}
	struct async_set *s = &a->set.data[*si];
	uint32_t lane = lane_for(s, id);
	struct async_lane *l = &s->lanes.data[lane];
	bool begin = phase == 'b' || phase == 'S';
	bool end = phase == 'e' || phase == 'T';
	if (begin) {
		l->nest++;
	} else if (end) {
		if (l->nest > 0)
			l->nest--;
	} else {
		/* An instant: a begin and an end on one lane. */
		l->nest++;
		lane = lane_for(s, id);
		l = &s->lanes.data[lane];
		if (l->nest > 0)
			l->nest--;
	}
	if (l->track == TP_NULL_U32)
		l->track = lane_track(im, s, lane, name, upid, event_upid, scope, root);
	return l->track;
}
