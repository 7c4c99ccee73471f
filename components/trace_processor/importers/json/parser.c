/*
 * The JSON importer's parser: event semantics, run at end of file on the
 * events the tokenizer pushed, in timestamp order. Mirrors Perfetto's
 * json_trace_parser: B/E/X slices on thread tracks (partially overlapping X
 * events spill onto thread_overlapping_slice lanes), instants with g/p/t
 * scope, C counters, b/e/n legacy async slices, s/t/f flow v1 and bind_id
 * flow v2, M metadata (names, sort index hints). Also the tp_importer_ops
 * glue ("json").
 *
 * Ordering: events come in (ts, push order), the tokenizer's in-order log
 * merged with the sorter's late events (log_drain). Like Perfetto's "slow"
 * sorter comparator, once a trace has complete events, events with equal ts
 * are re-ordered here: E events first, then X events longest first, then
 * the rest, each in push order, so a parent X precedes its equal-ts child.
 */
#include "json_int.h"
#include "../../model/model.h"
#include "../../model/ftrace.h"
#include "../../sorter/sorter.h"
#include "../importer.h"
#include "../ftrace_text/ftrace_text.h"

#include <stdlib.h>
#include <string.h>

struct grp_ev {
	int64_t key;
	uint32_t seq;
	bool hashed;
	size_t off, len;
	uint64_t hash;
};

/* Events are parsed AHEAD events after the log or the sorter hands them
 * over: the dedup-map slot their args set will probe is prefetched
 * meanwhile. */
#define AHEAD 16
#define NOT_LOGGED UINT32_MAX
struct ahead_ev {
	struct json_event e; /* e.args points into rec */
	const char *rec;
	size_t len;
	uint32_t chunk; /* the log chunk holding rec, or NOT_LOGGED: rec is copy */
	VEC(char) copy;
	struct tp_args_builder ab; /* e's args rows, decoded (e.decoded) */
};

/* A thread's overlap lanes, as Perfetto's TrackCompressor keeps them for
 * thread_overlapping_slice tracks: the ends of the slices open on each. */
struct lane {
	VEC(int64_t) ends;
};
struct lane_set {
	VEC(struct lane) lanes;
};

/* Async tracks (async_track). */
struct async_lane {
	uint64_t cookie;
	uint32_t nest, track;
};
struct async_set {
	VEC(struct async_lane) lanes;
};

struct tp_importer {
	struct tp *tp;
	struct json_tokenizer *tok;
	struct ftrace_text *systrace; /* "systemTraceEvents" text, once seen */
	struct json_args_ctx args;
	struct json_buf sbuf;
	struct tp_args_builder ab;
	struct ahead_ev ahead[AHEAD]; /* a ring: [ahead_head, + ahead_n) */
	unsigned ahead_head, ahead_n;
	struct hmap async_roots; /* cookie (and upid) -> name of its track set */
	struct hmap async_sets;  /* set key -> index in async_sets_v */
	VEC(struct async_set) async_sets_v;
	struct hmap lanes; /* utid -> its overlap lanes in lane_sets */
	VEC(struct lane_set) lane_sets;
	VEC(char) group_mem; /* equal-ts events, when re-ordering */
	VEC(struct grp_ev) group;
	int64_t group_ts;
	uint32_t no_name; /* "[No name]" */
	uint32_t running; /* "Running" */
};

/* ---- helpers ------------------------------------------------------------ */

/* e's args in a builder (to be given to a slice, whose args are committed
 * when it leaves its stack, as in Perfetto), or NULL when it has none. */
static struct tp_args_builder *event_args(struct tp_importer *imp, const struct json_event *e)
{
	if (!(e->flags & JSON_EV_HAS_ARGS))
		return NULL;
	if (e->flags & JSON_EV_ARGS_BAD) {
		tp_stat_inc(imp->tp, TP_STAT_json_parser_failure);
		return NULL;
	}
	if ((e->flags & JSON_EV_HASHED) && e->decoded)
		return e->decoded;
	tp_args_begin(&imp->ab);
	if (e->flags & JSON_EV_ARGS_ROWS)
		tp_json_args_decode(json_event_args(e), e->args_len, &imp->ab);
	return &imp->ab;
}

/* The value of a top-level key of the args object, or NULL. */
static const char *arg_value(struct tp_importer *imp, const struct json_event *e, const char *key,
                             const char **end)
{
	if (!(e->flags & JSON_EV_HAS_ARGS))
		return NULL;
	const char *a = json_event_args(e);
	*end = a + e->args_len;
	const char *v = tp_json_object_find(a, *end, key, &imp->sbuf);
	return v && v < *end ? v : NULL;
}

/* pid and tid as numbers: a string one (a name, e->pid its pool id) is
 * placed above 2^32, clear of every numeric pid (Perfetto uses the raw
 * string id, which can collide with one). */
static int64_t event_pid(const struct json_event *e)
{
	if (!(e->flags & JSON_EV_PID))
		return 0;
	return (e->flags & JSON_EV_PID_NAME) ? (int64_t)1 << 32 | e->pid : (int64_t)e->pid;
}

static int64_t event_tid(const struct json_event *e)
{
	return (e->flags & JSON_EV_TID_NAME) ? (int64_t)1 << 32 | e->tid : (int64_t)e->tid;
}

/* The slice flows bind to on track: the top of its stack, as Perfetto's
 * FlowTracker has it (a complete slice that has ended stays on top until
 * the next slice on the track pops it), or TP_NULL_U32 (counted). */
static uint32_t flow_slice(struct tp *tp, uint32_t track)
{
	uint32_t s = tp_slice_top(tp, track);
	if (s == TP_NULL_U32)
		tp_stat_inc(tp, TP_STAT_flow_no_enclosing_slice);
	return s;
}

/* Flow v2: bind_id with flow_in / flow_out, after a B, X, b or n event on
 * track (whether or not its slice was added). */
static void maybe_flow_v2(struct tp *tp, const struct json_event *e, uint32_t track)
{
	if (!(e->flags & JSON_EV_BIND_ID))
		return;
	uint64_t id = e->bind_id;
	bool in = e->flags & JSON_EV_FLOW_IN, out = e->flags & JSON_EV_FLOW_OUT;
	uint32_t s;
	if (!in && !out)
		tp_stat_inc(tp, TP_STAT_flow_without_direction);
	else if ((s = flow_slice(tp, track)) == TP_NULL_U32)
		return;
	else if (in && out)
		tp_flow_continue(tp, id, s);
	else if (out)
		tp_flow_begin(tp, id, s);
	else
		tp_flow_end(tp, id, s, false);
}

/* Flow v1 ('s', 't', 'f'): keyed by (id, cat, name); an 'f' without
 * bp "e" ends in the next slice that begins on the thread. */
static void flow_v1(struct tp *tp, const struct json_event *e, uint32_t track)
{
	if (!(e->flags & JSON_EV_V1_ID)) {
		tp_stat_inc(tp, TP_STAT_flow_invalid_id);
		return;
	}
	uint64_t id = tp_flow_v1_id(tp, e->v1_id, e->cat, e->name);
	if (e->ph == 'f' && !(e->flags & JSON_EV_BP_E)) {
		tp_flow_end_pending(tp, track, id);
		return;
	}
	uint32_t s = flow_slice(tp, track);
	if (s == TP_NULL_U32)
		return;
	if (e->ph == 's')
		tp_flow_begin(tp, id, s);
	else if (e->ph == 't')
		tp_flow_continue(tp, id, s);
	else
		tp_flow_end(tp, id, s, false);
}

/* The first lane where [ts, ts+dur) nests inside the innermost slice still
 * open, or that has none open (ended ones popped first); else a new one. */
static uint32_t spill_track(struct tp_importer *imp, uint32_t utid, int64_t ts, int64_t dur)
{
	struct tp *tp = imp->tp;
	uint64_t idx;
	if (!hmap_get(&imp->lanes, utid, &idx)) {
		idx = imp->lane_sets.len;
		vec_push_zeroed(&imp->lane_sets);
		hmap_put(&imp->lanes, utid, idx);
	}
	struct lane_set *set = &imp->lane_sets.data[idx];
	int64_t end = ts + dur;
	size_t i;
	for (i = 0; i < set->lanes.len; i++) {
		struct lane *l = &set->lanes.data[i];
		while (l->ends.len && *vec_last(&l->ends) <= ts)
			l->ends.len--;
		if (!l->ends.len || end <= *vec_last(&l->ends))
			break;
	}
	if (i == set->lanes.len)
		vec_push_zeroed(&set->lanes);
	vec_push(&set->lanes.data[i].ends, end);
	struct tp_track_key k = {.type = "thread_overlapping_slice",
	                         .event_type = "slice",
	                         .utid = utid,
	                         .upid = -1,
	                         .cpu = -1,
	                         .extra_dim = i};
	uint32_t track = tp_track_get(tp, &k);
	/* A new lane's dimensions, Perfetto's for a compressed track (utid and
	 * its lane), added as it interns the track. */
	if (tp->t.track.dimension_arg_set_id[track] == TP_NULL_U32) {
		uint32_t ku = tp_intern_cstr(tp, "utid");
		uint32_t ki = tp_intern_cstr(tp, "track_compressor_idx");
		tp_args_begin(&tp->args_scratch);
		tp_args_add_int(&tp->args_scratch, ku, ku, utid);
		tp_args_add_uint(&tp->args_scratch, ki, ki, i);
		tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, &tp->args_scratch);
	}
	return track;
}

/* ---- phases -------------------------------------------------------------- */

static void parse_complete(struct tp_importer *imp, const struct json_event *e, uint32_t utid,
                           uint32_t cat, uint32_t name)
{
	struct tp *tp = imp->tp;
	if (e->dur == TP_NULL_I64) {
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	uint32_t track = tp_track_for_thread(tp, utid);
	struct tp_args_builder *args = event_args(imp, e);
	struct tp_slice_conflict c;
	uint32_t s =
	    tp_slice_complete_or_conflict(tp, track, e->ts, e->dur, cat, name, TP_NULL_U32, &c);
	if (c.slice != TP_NULL_U32) {
		/* It cannot nest on the thread's track: onto an overlap lane,
		 * logged (Perfetto's slice_spill_overlapping_complete_event). */
		tp_slice_log_overlap(tp, TP_STAT_slice_spill_overlapping_complete_event, e->ts,
		                     c.end, c.slice, &(struct tp_slice_event){name, 'X'});
		track = spill_track(imp, utid, e->ts, e->dur);
		s = tp_slice_complete(tp, track, e->ts, e->dur, cat, name, TP_NULL_U32);
	}
	tp_slice_defer_args(tp, track, s, args);
	if (s != TP_NULL_U32) {
		tp_set_slice_thread_ts(&tp->t.slice, s, e->tts);
		tp_set_slice_thread_dur(&tp->t.slice, s, e->tdur);
	}
	maybe_flow_v2(tp, e, track);
}

static void parse_instant(struct tp_importer *imp, const struct json_event *e, uint32_t utid,
                          uint32_t cat, uint32_t slice_name)
{
	struct tp *tp = imp->tp;
	struct tp_track_key k = {.event_type = "slice", .utid = -1, .upid = -1, .cpu = -1};
	uint32_t track;
	switch (e->scope) {
	case 'g':
		k.type = "legacy_chrome_global_instants";
		track = tp_track_get(tp, &k);
		break;
	case 'p':
		if (!(e->flags & JSON_EV_PID)) {
			tp_stat_inc(tp, TP_STAT_json_parser_failure);
			return;
		}
		k.type = "chrome_process_instant";
		k.upid = tp_process_for_pid(tp, event_pid(e));
		track = tp_track_get(tp, &k);
		break;
	case 't':
	case 0: {
		if (!(e->flags & JSON_EV_TID)) {
			tp_stat_inc(tp, TP_STAT_json_parser_failure);
			return;
		}
		track = tp_track_for_thread(tp, utid);
		uint32_t s = tp_slice_complete(tp, track, e->ts, 0, cat, slice_name, TP_NULL_U32);
		tp_slice_defer_args(tp, track, s, event_args(imp, e));
		/* Its tts, but no thread_dur (NULL, not 0), as Perfetto's. */
		if (s != TP_NULL_U32)
			tp_set_slice_thread_ts(&tp->t.slice, s, e->tts);
		return;
	}
	default:
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	uint32_t s = tp_slice_complete(tp, track, e->ts, 0, cat, e->name, TP_NULL_U32);
	tp_slice_defer_args(tp, track, s, event_args(imp, e));
}

static void parse_counter(struct tp_importer *imp, const struct json_event *e, uint32_t utid)
{
	struct tp *tp = imp->tp;
	const char *p = json_event_args(e), *end = p + e->args_len;
	p = json_skip_ws(p, end);
	if (!(e->flags & JSON_EV_HAS_ARGS) || p >= end || *p != '{') {
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	int64_t upid = tp->t.thread.upid[utid];
	if (upid == TP_NULL_I64)
		upid = tp_process_for_pid(tp, event_pid(e));
	size_t nlen = 0, ilen = 0;
	const char *name = e->name ? strpool_get(&tp->strings, e->name, &nlen) : "";
	/* Only a string id names the counter, as Perfetto. */
	const char *id =
	    e->id && !(e->flags & JSON_EV_ID_NUM) ? strpool_get(&tp->strings, e->id, &ilen) : "";
	struct json_buf *b = &imp->sbuf;
	p++;
	for (;;) {
		const char *k;
		size_t kn;
		bool closed;
		p = json_member(p, end, &imp->args.str, &k, &kn, &closed);
		if (!p || closed)
			return;
		double v;
		bool ok = false;
		if (*p == '"') {
			const char *s;
			size_t n;
			p = json_string(p, end, &imp->args.key, &s, &n);
			if (!p)
				return;
			ok = tp_json_parse_double(s, n, &v);
		} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
			struct json_num num;
			p = tp_json_number(p, end, &num);
			if (!p)
				return;
			v = num.d;
			ok = true;
		} else {
			p = tp_json_skip_value(p, end);
			if (!p)
				return;
		}
		if (!ok) {
			tp_stat_inc(tp, TP_STAT_json_parser_failure);
			continue;
		}
		vec_clear(&b->v);
		vec_reserve(&b->v, nlen + ilen + kn + 8);
		memcpy(b->v.data, name, nlen);
		b->v.len = nlen;
		if (ilen) {
			memcpy(b->v.data + b->v.len, " id: ", 5);
			memcpy(b->v.data + b->v.len + 5, id, ilen);
			b->v.len += 5 + ilen;
		}
		b->v.data[b->v.len++] = ' ';
		memcpy(b->v.data + b->v.len, k, kn);
		b->v.len += kn;
		struct tp_track_key tk = {.type = "json_counter",
		                          .event_type = "counter",
		                          .utid = -1,
		                          .upid = upid,
		                          .cpu = -1,
		                          .name = tp_intern(tp, b->v.data, b->v.len)};
		tp_counter_add(tp, tp_track_get(tp, &tk), e->ts, v, TP_NULL_U32);
	}
}

/* The track of an async event, as Perfetto's TrackCompressor picks it.
 * Tracks come in sets named after the first event of their cookie (per
 * process for id2.local); in its set a cookie keeps the track it had, else
 * takes one whose slices are all ended (by count of b and e), else a new
 * one. A 'b' counts one up, an 'e' one down, an 'n' both. */
static uint32_t async_track(struct tp_importer *imp, const struct json_event *e, uint32_t upid,
                            uint64_t cookie, bool scoped)
{
	struct tp *tp = imp->tp;
	uint64_t rk = scoped ? tb_hash_u64(cookie ^ tb_hash_u64((uint64_t)upid + 1)) : cookie;
	uint64_t root;
	if (!hmap_get(&imp->async_roots, rk, &root)) {
		root = e->name;
		hmap_put(&imp->async_roots, rk, root);
	}
	uint64_t sk = tb_hash_u64((scoped ? (uint64_t)upid + 1 : 0) << 32 | root), si;
	if (!hmap_get(&imp->async_sets, sk, &si)) {
		si = imp->async_sets_v.len;
		vec_push_zeroed(&imp->async_sets_v);
		hmap_put(&imp->async_sets, sk, si);
	}
	struct async_set *set = &imp->async_sets_v.data[si];
	size_t i, free_lane = SIZE_MAX;
	for (i = 0; i < set->lanes.len; i++) {
		if (set->lanes.data[i].cookie == cookie)
			break;
		if (free_lane == SIZE_MAX && !set->lanes.data[i].nest)
			free_lane = i;
	}
	if (i == set->lanes.len && free_lane != SIZE_MAX) {
		i = free_lane;
		set->lanes.data[i].cookie = cookie; /* adopted */
	} else if (i == set->lanes.len) {
		struct tp_track_key k = {.type = scoped ? "legacy_async_process_slice"
		                                        : "legacy_async_global_slice",
		                         .event_type = "slice",
		                         .utid = -1,
		                         .upid = scoped ? (int64_t)upid : -1,
		                         .cpu = -1,
		                         .extra_dim = tb_hash_u64(sk ^ i),
		                         .name = (uint32_t)root};
		struct async_lane l = {cookie, 0, tp_track_new(tp, &k)};
		vec_push(&set->lanes, l);
	}
	struct async_lane *l = &set->lanes.data[i];
	if (e->ph == 'b')
		l->nest++;
	else if (e->ph == 'e' && l->nest)
		l->nest--;
	return l->track;
}

static void parse_async(struct tp_importer *imp, const struct json_event *e, uint32_t cat,
                        uint32_t slice_name)
{
	struct tp *tp = imp->tp;
	if (!(e->flags & JSON_EV_PID) || (!e->id && !e->id2_global && !e->id2_local)) {
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	uint32_t upid = tp_process_for_pid(tp, event_pid(e));
	/* The cookie: (category, id), an integer id apart from the same
	 * text as a string; id2.local ones are per process. */
	bool scoped = !e->id && !e->id2_global;
	uint32_t real_id = e->id ? e->id : scoped ? e->id2_local : e->id2_global;
	bool num = e->id ? (e->flags & JSON_EV_ID_NUM) : (e->flags & JSON_EV_ID2_NUM);
	uint64_t cookie =
	    tb_hash_u64((uint64_t)cat << 32 | real_id) ^ (num ? 0x9e3779b97f4a7c15ull : 0);
	uint32_t tr = async_track(imp, e, upid, cookie, scoped);
	struct tp_args_builder *args = event_args(imp, e);
	if (e->ph == 'b') {
		tp_slice_begin_args(tp, tr, e->ts, cat, slice_name, args);
	} else if (e->ph == 'e') {
		tp_slice_end_args(tp, tr, e->ts, cat, e->name, args, 0);
		return;
	} else {
		uint32_t s = tp_slice_complete(tp, tr, e->ts, 0, cat, e->name, TP_NULL_U32);
		tp_slice_defer_args(tp, tr, s, args);
	}
	maybe_flow_v2(tp, e, tr);
}

/* The cpu table row of cpu, added when new. */
/* 'T': a thread_state row named after the event (the state), with cpu,
 * io_wait and blocked_function from integer / string args; a Running state
 * with a cpu is also a sched row, as in Perfetto. Malformed args are
 * counted but the row is kept. */
static void parse_thread_state(struct tp_importer *imp, const struct json_event *e, uint32_t utid,
                               uint32_t state)
{
	struct tp *tp = imp->tp;
	if (e->dur == TP_NULL_I64) {
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	struct tp_thread_state_table *t = &tp->t.thread_state;
	uint32_t row = tp_thread_state_open(tp, e->ts, utid, state, TP_NULL_U32, TP_NULL_U32);
	tp_thread_state_set_dur(tp, row, e->dur);
	int64_t cpu = -1;
	if (e->flags & JSON_EV_HAS_ARGS) {
		const char *p = json_skip_ws(e->args, e->args + e->args_len),
		           *end = e->args + e->args_len;
		bool closed = false;
		if (p < end && *p == '{') {
			p++;
			for (;;) {
				const char *k;
				size_t kn;
				p = json_member(p, end, &imp->sbuf, &k, &kn, &closed);
				if (!p || closed)
					break;
				bool is_cpu = kn == 3 && memcmp(k, "cpu", 3) == 0;
				bool is_io = kn == 7 && memcmp(k, "io_wait", 7) == 0;
				bool is_fn = kn == 16 && memcmp(k, "blocked_function", 16) == 0;
				struct json_num num;
				const char *s;
				size_t n;
				if ((is_cpu || is_io) && (*p == '-' || (*p >= '0' && *p <= '9'))) {
					p = tp_json_number(p, end, &num);
					if (p && num.is_int && is_cpu)
						cpu = (int64_t)(uint32_t)num.i;
					else if (p && num.is_int)
						tp_set_thread_state_io_wait(
						    t, row, (int64_t)(uint32_t)num.i);
				} else if (is_fn && *p == '"') {
					p = json_string(p, end, &imp->args.str, &s, &n);
					if (p)
						tp_set_thread_state_blocked_function(
						    t, row, tp_intern(tp, s, n));
				} else {
					p = tp_json_skip_value(p, end);
				}
				if (!p)
					break;
			}
		}
		if (!closed)
			tp_stat_inc(tp, TP_STAT_json_parser_failure);
	}
	if (cpu < 0 || state != imp->running)
		return;
	struct tp_sched_table *sc = &tp->t.sched;
	uint32_t srow = tp_sched_append(sc);
	sc->ts[srow] = e->ts;
	tp_sched_set_dur(tp, srow, e->dur);
	sc->ucpu[srow] = tp_cpu_for(tp, (uint32_t)cpu);
	sc->utid[srow] = utid;
}

static void sort_index_hint(struct tp *tp, uint32_t *set, const char *key, int64_t v)
{
	struct tp_args_builder b = {VEC_INIT};
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_add_int(&b, k, k, v);
	uint32_t add = tp_args_commit(tp, &b);
	tp_args_builder_release(&b);
	*set = *set == TP_NULL_U32 ? add : tp_args_merge(tp, *set, add);
}

static void parse_metadata(struct tp_importer *imp, const struct json_event *e, int64_t pid,
                           uint32_t utid)
{
	struct tp *tp = imp->tp;
	const char *what = e->name ? tp_str(tp, e->name) : "";
	const char *v, *end;
	if (strcmp(what, "thread_name") == 0 || strcmp(what, "process_name") == 0) {
		v = arg_value(imp, e, "name", &end);
		const char *s;
		size_t n;
		if (!v)
			return;
		if (*v != '"' || !json_string(v, end, &imp->sbuf, &s, &n) || n == 0) {
			tp_stat_inc(tp, TP_STAT_json_parser_failure);
			return;
		}
		uint32_t id = tp_intern(tp, s, n);
		if (what[0] == 't')
			tp_thread_set_name(tp, utid, id);
		else
			tp_process_set_name(tp, tp_process_for_pid(tp, pid), id);
		return;
	}
	bool proc = strcmp(what, "process_sort_index") == 0;
	if (!proc && strcmp(what, "thread_sort_index") != 0)
		return;
	v = arg_value(imp, e, "sort_index", &end);
	struct json_num num;
	if (!v)
		return;
	if (!tp_json_number(v, end, &num) ||
	    (!num.is_int && !(num.d > -9.2e18 && num.d < 9.2e18))) {
		tp_stat_inc(tp, TP_STAT_json_parser_failure);
		return;
	}
	int64_t idx = num.is_int ? num.i : (int64_t)num.d;
	if (proc)
		sort_index_hint(tp, &tp->t.process.arg_set_id[tp_process_for_pid(tp, pid)],
		                "process_sort_index_hint", idx);
	else
		sort_index_hint(tp, &tp->t.thread.arg_set_id[utid], "thread_sort_index_hint", idx);
}

/* A V8 profile sample (a record v8.c pushed): a cpu_profile_stack_sample
 * row on its thread when its session and node exist, else counted. */
static void parse_v8_sample(struct tp_importer *imp, const struct json_event *e, int64_t pid,
                            int64_t tid)
{
	struct tp *tp = imp->tp;
	uint32_t callsite;
	if (!tp_json_v8_sample_callsite(tp_json_tokenizer_v8(imp->tok), e->v1_id, pid,
	                                (uint32_t)e->bind_id, &callsite)) {
		tp_stat_inc(tp, TP_STAT_legacy_v8_cpu_profile_invalid_sample);
		return;
	}
	uint32_t utid = tp_thread_for_tid(tp, tid, pid);
	struct tp_profiler_sample s = {
	    .ts = e->ts,
	    .source = tp_intern_cstr(tp, "legacy_v8"),
	    .task_context =
	        tp_profiler_task_context(tp, tp_process_for_pid(tp, pid), utid, TP_NULL_U32),
	    .execution_context = TP_NULL_U32,
	    .callsite = callsite,
	    .session = TP_NULL_U32,
	    .counter_set = TP_NULL_U32,
	};
	tp_profiler_sample_add(tp, &s);
}

static void parse_event(struct tp_importer *imp, const struct json_event *e)
{
	struct tp *tp = imp->tp;
	int64_t pid = event_pid(e);
	/* A missing tid, or tid 0 in a real process, is the process's main
	 * thread (Perfetto's difftest json_sort_index_hints). */
	int64_t tid = (e->flags & JSON_EV_TID) && e->tid ? event_tid(e) : pid;
	if (e->ph == 'P') {
		parse_v8_sample(imp, e, pid, tid);
		return;
	}
	if (e->flags & JSON_EV_PID_NAME)
		tp_process_set_name(tp, tp_process_for_pid(tp, pid), (uint32_t)e->pid);
	if (e->flags & JSON_EV_TID_NAME) {
		/* As Perfetto: the name goes to the tid's live thread, found or
		 * made without its pid, before the (tid, pid) lookup. */
		uint32_t named;
		if (!tp_thread_find(tp, tid, &named))
			named = tp_thread_for_tid(tp, tid, -1);
		tp_thread_set_name(tp, named, (uint32_t)e->tid);
	}
	uint32_t utid = tp_thread_for_tid(tp, tid, pid);
	uint32_t cat = e->cat;
	uint32_t slice_name = e->name ? e->name : imp->no_name;

	switch (e->ph) {
	case 'B': {
		uint32_t track = tp_track_for_thread(tp, utid);
		uint32_t s =
		    tp_slice_begin_args(tp, track, e->ts, cat, slice_name, event_args(imp, e));
		if (s != TP_NULL_U32)
			tp_set_slice_thread_ts(&tp->t.slice, s, e->tts);
		maybe_flow_v2(tp, e, track);
		break;
	}
	case 'E': {
		uint32_t track = tp_track_for_thread(tp, utid);
		uint32_t s =
		    tp_slice_end_args(tp, track, e->ts, cat, e->name, event_args(imp, e), 0);
		if (s != TP_NULL_U32 && e->tts != TP_NULL_I64 &&
		    tp_get_slice_thread_ts(&tp->t.slice, s) != TP_NULL_I64)
			tp_set_slice_thread_dur(&tp->t.slice, s,
			                        e->tts - tp_get_slice_thread_ts(&tp->t.slice, s));
		break;
	}
	case 'X':
		parse_complete(imp, e, utid, cat, slice_name);
		break;
	case 'I':
	case 'i':
	case 'R':
		parse_instant(imp, e, utid, cat, slice_name);
		break;
	case 'C':
		parse_counter(imp, e, utid);
		break;
	case 'b':
	case 'e':
	case 'n':
		parse_async(imp, e, cat, slice_name);
		break;
	case 's':
	case 't':
	case 'f':
		flow_v1(tp, e, tp_track_for_thread(tp, utid));
		break;
	case 'M':
		parse_metadata(imp, e, pid, utid);
		break;
	case 'T':
		parse_thread_state(imp, e, utid, slice_name);
		break;
	default:
		/* S/F/p/O/N/D...: not imported, as in Perfetto. */
		break;
	}
}

/* ---- ordering ------------------------------------------------------------- */

static int cmp_grp(const void *a, const void *b)
{
	const struct grp_ev *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void flush_group(struct tp_importer *imp)
{
	if (!imp->group.len)
		return;
	if (imp->group.len > 1)
		qsort(imp->group.data, imp->group.len, sizeof *imp->group.data, cmp_grp);
	for (size_t i = 0; i < imp->group.len; i++) {
		const struct grp_ev *g = &imp->group.data[i];
		struct json_event e;
		tp_json_event_decode(imp->group_mem.data + g->off, imp->group_ts, &e);
		if (g->hashed) {
			e.flags |= JSON_EV_HASHED;
			e.args_hash = g->hash;
		}
		parse_event(imp, &e);
	}
	vec_clear(&imp->group);
	vec_clear(&imp->group_mem);
}

/* Parse e (its record is rec, len bytes), or hold it in the equal-ts group
 * when the event after it (next_same: known from the ring) has its ts. */
static void dispatch(struct tp_importer *imp, struct json_event *e, const char *rec, size_t len,
                     bool next_same)
{
	if (imp->group.len && e->ts != imp->group_ts)
		flush_group(imp);
	if (!tp_json_tokenizer_reorders(imp->tok, e->ts) || (!imp->group.len && !next_same)) {
		parse_event(imp, e); /* push order, or a group of one */
		return;
	}
	imp->group_ts = e->ts;
	struct grp_ev g = {
	    INT64_MAX,   (uint32_t)imp->group.len, (e->flags & JSON_EV_HASHED) != 0, 0, len,
	    e->args_hash};
	if (e->ph == 'E')
		g.key = INT64_MIN;
	else if (e->ph == 'X') /* Perfetto's key, wrapping as there: no dur is 0 */
		g.key = (int64_t)((uint64_t)INT64_MAX -
		                  (uint64_t)(e->dur == TP_NULL_I64 ? INT64_MAX : e->dur));
	size_t off = imp->group_mem.len;
	vec_reserve(&imp->group_mem, len);
	memcpy(imp->group_mem.data + off, rec, len);
	imp->group_mem.len += len;
	g.off = off;
	vec_push(&imp->group, g);
}

/* Parse the oldest event of the ring. Its successor, if any, is in the
 * ring: the ring is full except while draining at end of file. */
static void ahead_pop(struct tp_importer *imp)
{
	struct ahead_ev *a = &imp->ahead[imp->ahead_head];
	const struct ahead_ev *next =
	    imp->ahead_n > 1 ? &imp->ahead[(imp->ahead_head + 1) % AHEAD] : NULL;
	dispatch(imp, &a->e, a->rec, a->len, next && next->e.ts == a->e.ts);
	if (a->chunk != NOT_LOGGED)
		tp_json_log_done(tp_json_tokenizer_log(imp->tok), a->chunk);
	imp->ahead_head = (imp->ahead_head + 1) % AHEAD;
	imp->ahead_n--;
}

/* The next event in order enters the ring. A logged record is used in
 * place; a sorter's is copied, as the sorter may free it on return. */
static void ring_add(struct tp_importer *imp, int64_t ts, const char *rec, size_t len,
                     uint32_t chunk)
{
	if (imp->ahead_n == AHEAD)
		ahead_pop(imp);
	ts += imp->tp->ts_shift; /* a manifest's offset (0 without one) */
	struct ahead_ev *a = &imp->ahead[(imp->ahead_head + imp->ahead_n++) % AHEAD];
	if (chunk == NOT_LOGGED) {
		vec_clear(&a->copy);
		vec_reserve(&a->copy, len);
		memcpy(a->copy.data, rec, len);
		a->copy.len = len;
		rec = a->copy.data;
	}
	a->rec = rec;
	a->len = len;
	a->chunk = chunk;
	tp_json_event_decode(rec, ts, &a->e);
	if ((a->e.flags & (JSON_EV_ARGS_ROWS | JSON_EV_ARGS_BAD)) == JSON_EV_ARGS_ROWS &&
	    a->e.args_len) {
		tp_args_begin(&a->ab);
		a->e.args_hash =
		    tp_json_args_decode_hash(json_event_args(&a->e), a->e.args_len, &a->ab);
		a->e.decoded = &a->ab;
		a->e.flags |= JSON_EV_HASHED;
		tp_args_prefetch(imp->tp, a->e.args_hash);
	}
}

/* Hand the ring the logged events that come before a sorter event with
 * this ts: the older ones and those at its ts. Those were all pushed before
 * it: a sorter event is older than the newest logged event when it comes,
 * and later logged events are not older than that. So the merged stream is
 * in (ts, push) order, as the sorter's own would be. */
static void log_drain(struct tp_importer *imp, int64_t ts)
{
	struct json_log *l = tp_json_tokenizer_log(imp->tok);
	int64_t lts;
	while (tp_json_log_peek(l, &lts) && lts <= ts) {
		size_t len;
		uint32_t chunk;
		const char *rec = tp_json_log_next(l, &lts, &len, &chunk);
		ring_add(imp, lts, rec, len, chunk);
	}
}

/* The sorter's events: those that came out of ts order. */
static void on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct tp_importer *imp = ctx;
	(void)tp;
	log_drain(imp, ts);
	ring_add(imp, ts, payload, len, NOT_LOGGED);
}

/* ---- tp_importer_ops ------------------------------------------------------- */

static bool json_sniff(const uint8_t *p, size_t n)
{
	size_t i = 0;
	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3;
	while (i < n && json_is_ws(p[i]))
		i++;
	return i < n && (p[i] == '{' || p[i] == '[');
}

/* The "systemTraceEvents" string of an object trace is ftrace / systrace
 * text: it goes, unescaped and in pieces, to the ftrace text parser. */
static void systrace_piece(void *ctx, const char *s, size_t n)
{
	struct tp_importer *imp = ctx;
	if (!imp->systrace) {
		/* The ftrace model's swapper is utid 0 again from here. */
		tp_pid_zero_idle(imp->tp, true);
		imp->systrace = tp_ftrace_text_new(imp->tp);
	}
	tp_ftrace_text_parse_chunk(imp->systrace, s, n);
}

static void systrace_end(void *ctx)
{
	(void)ctx; /* the text is finished at end of file, with the JSON events */
}

static struct tp_importer *json_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	imp->tok = tp_json_tokenizer_new(tp);
	/* pid 0 is a process like any other in JSON (PyTorch's GPU 0), as in
	 * Perfetto, unless the trace processor already holds another trace. */
	if (tp->t.thread.n == 1 && tp->t.process.n == 1)
		tp_pid_zero_idle(tp, false);
	const struct json_text_sink sink = {systrace_piece, systrace_end, imp};
	tp_json_tokenizer_set_system_trace_sink(imp->tok, &sink);
	hmap_init(&imp->async_roots);
	hmap_init(&imp->async_sets);
	hmap_init(&imp->lanes);
	imp->no_name = tp_intern_cstr(tp, "[No name]");
	imp->running = tp_intern_cstr(tp, "Running");
	return imp;
}

static int json_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	return tp_json_tokenizer_feed(imp->tok, p, n);
}

static int json_eof(struct tp_importer *imp)
{
	tp_sorter_flush(imp->tp->sorter, imp->tp, on_sorted, imp);
	log_drain(imp, INT64_MAX);
	while (imp->ahead_n)
		ahead_pop(imp);
	flush_group(imp);
	if (imp->systrace)
		tp_ftrace_text_end(imp->systrace);
	return 0;
}

static void json_destroy(struct tp_importer *imp)
{
	if (!imp)
		return;
	tp_json_tokenizer_free(imp->tok);
	tp_ftrace_text_free(imp->systrace);
	tp_json_args_ctx_release(&imp->args);
	vec_release(&imp->sbuf.v);
	tp_args_builder_release(&imp->ab);
	for (size_t i = 0; i < AHEAD; i++) {
		vec_release(&imp->ahead[i].copy);
		tp_args_builder_release(&imp->ahead[i].ab);
	}
	hmap_release(&imp->async_roots);
	hmap_release(&imp->async_sets);
	for (size_t i = 0; i < imp->async_sets_v.len; i++)
		vec_release(&imp->async_sets_v.data[i].lanes);
	vec_release(&imp->async_sets_v);
	hmap_release(&imp->lanes);
	for (size_t i = 0; i < imp->lane_sets.len; i++) {
		struct lane_set *set = &imp->lane_sets.data[i];
		for (size_t j = 0; j < set->lanes.len; j++)
			vec_release(&set->lanes.data[j].ends);
		vec_release(&set->lanes);
	}
	vec_release(&imp->lane_sets);
	vec_release(&imp->group_mem);
	vec_release(&imp->group);
	tb_free(imp);
}

const struct tp_importer_ops tp_json_importer = {
    .name = "json",
    .sniff = json_sniff,
    .create = json_create,
    .parse = json_parse,
    .eof = json_eof,
    .destroy = json_destroy,
};
