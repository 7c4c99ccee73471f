/*
 * Legacy V8 CPU profiles in JSON traces: the 'P' events Chrome writes
 * ("Profile" with args.data.startTime, then "ProfileChunk"s with
 * args.data.cpuProfile.{nodes, samples} and args.data.timeDeltas), turned
 * into stack_profile_* callsites and cpu_profile_stack_sample rows the way
 * Perfetto's legacy V8 profile tracker does.
 *
 * A profile session is keyed by (event id, pid). Everything but the samples
 * happens at tokenize time, in file order, as in Perfetto: "Profile" sets
 * (or resets) the session's start time; a chunk's nodes become callsites
 * (a frame on the session's own mapping, named after the function, under
 * the node's parent, given or inferred from an earlier node's children);
 * its samples advance the session's clock by their deltas and are pushed,
 * one record each, into the event stream in time order. At parse time a
 * sample whose session and node exist becomes a row on its thread (which it
 * creates, as any event does); the others are counted.
 *
 *   args: {"data": {"startTime": µs,
 *                   "cpuProfile": {"nodes": [{"id", "parent", "children",
 *                                             "callFrame": {"functionName",
 *                                                           "url"}}...],
 *                                  "samples": [node id...]},
 *                   "timeDeltas": [µs...]}}
 */
#include "json_int.h"
#include "../../model/model.h"

#include <string.h>

VEC_DEFINE(v8_u32s, uint32_t);
VEC_DEFINE(v8_i64s, int64_t);

struct v8_session {
	int64_t ts;            /* ns: start time plus the deltas so far */
	uint32_t mapping;      /* the session's dummy mapping row */
	struct hmap callsites; /* node id -> callsite row */
	struct hmap parents;   /* node id -> parent node id, from "children" */
	struct hmap frames;    /* hash(function, url) -> frame row */
};

struct json_v8 {
	struct hmap sessions; /* hash(id, pid) -> index in all */
	VEC(struct v8_session) all;
	struct tp_stack_profile sp;
	struct json_buf key, str;
	struct v8_u32s samples, children;
	struct v8_i64s deltas;
};

/* One node of a chunk, as read. */
struct v8_node {
	uint32_t id;
	bool has_parent;
	uint32_t parent;
	uint32_t function, url;            /* pool ids; url 0 when absent or empty */
	size_t children_from, children_to; /* in v8->children */
};

struct json_v8 *tp_json_v8_new(void)
{
	struct json_v8 *v = tb_calloc(1, sizeof *v);
	hmap_init(&v->sessions);
	tp_stack_profile_init(&v->sp);
	return v;
}

void tp_json_v8_free(struct json_v8 *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->all.len; i++) {
		hmap_release(&v->all.data[i].callsites);
		hmap_release(&v->all.data[i].parents);
		hmap_release(&v->all.data[i].frames);
	}
	vec_release(&v->all);
	hmap_release(&v->sessions);
	tp_stack_profile_release(&v->sp);
	vec_release(&v->key.v);
	vec_release(&v->str.v);
	vec_release(&v->samples);
	vec_release(&v->deltas);
	vec_release(&v->children);
	tb_free(v);
}

static uint64_t session_key(uint64_t id, int64_t pid)
{
	return tb_hash_u64(id ^ tb_hash_u64((uint64_t)pid));
}

static struct v8_session *session_find(struct json_v8 *v, uint64_t id, int64_t pid)
{
	uint64_t i;
	return hmap_get(&v->sessions, session_key(id, pid), &i) ? &v->all.data[i] : NULL;
}

/* ---- reading the args ------------------------------------------------------ */

static bool is_num(const char *p, const char *end)
{
	return p < end && (*p == '-' || (*p >= '0' && *p <= '9'));
}

/* Perfetto's GetUint32: a number >= 0, truncated; else none. */
static bool get_u32(const char *p, const char *end, uint32_t *out, const char **next)
{
	struct json_num n;
	*next = NULL;
	if (!is_num(p, end))
		return false;
	if (!(*next = tp_json_number(p, end, &n)))
		return false;
	if (n.is_int ? n.i < 0 : !(n.d >= 0))
		return false;
	*out = n.is_int ? (uint32_t)n.i : (uint32_t)(uint64_t)n.d;
	return true;
}

/* Perfetto's GetInt64: an integer, or a number truncated. */
static bool get_i64(const char *p, const char *end, int64_t *out, const char **next)
{
	struct json_num n;
	*next = NULL;
	if (!is_num(p, end))
		return false;
	if (!(*next = tp_json_number(p, end, &n)))
		return false;
	*out = n.is_int ? n.i : (n.d > -9.2e18 && n.d < 9.2e18 ? (int64_t)n.d : INT64_MIN);
	return true;
}

/* The elements of an array of numbers that read as u32 (or as i64), others
 * skipped, as Perfetto collects them. p at '['; returns past ']' or NULL. */
static const char *num_array(const char *p, const char *end, struct v8_u32s *u32s,
                             struct v8_i64s *i64s)
{
	p = json_skip_ws(p + 1, end);
	for (;;) {
		p = json_skip_sep(p, end);
		if (p >= end)
			return NULL;
		if (*p == ']')
			return p + 1;
		const char *next;
		uint32_t u;
		int64_t i;
		bool ok = u32s ? get_u32(p, end, &u, &next) : get_i64(p, end, &i, &next);
		if (ok && u32s)
			vec_push(u32s, u);
		else if (ok)
			vec_push(i64s, i);
		if (!next)
			next = tp_json_skip_value(p, end);
		if (!(p = next))
			return NULL;
	}
}

static const char *call_frame(struct json_v8 *v, struct tp *tp, const char *p, const char *end,
                              struct v8_node *n)
{
	p++;
	for (;;) {
		const char *k, *s;
		size_t kn, sn;
		bool closed;
		if (!(p = json_member(p, end, &v->key, &k, &kn, &closed)) || closed)
			return p;
		bool url = kn == 3 && memcmp(k, "url", 3) == 0;
		bool fn = kn == 12 && memcmp(k, "functionName", 12) == 0;
		if ((url || fn) && *p == '"') {
			if (!(p = json_string(p, end, &v->str, &s, &sn)))
				return NULL;
			if (url)
				n->url = sn ? tp_intern(tp, s, sn) : 0;
			else
				n->function =
				    sn ? tp_intern(tp, s, sn) : strpool_empty(&tp->strings);
			continue;
		}
		if (!(p = tp_json_skip_value(p, end)))
			return NULL;
	}
}

static const char *node(struct json_v8 *v, struct tp *tp, const char *p, const char *end,
                        struct v8_node *n)
{
	memset(n, 0, sizeof *n);
	n->function = strpool_empty(&tp->strings);
	n->children_from = n->children_to = v->children.len;
	p++;
	for (;;) {
		const char *k, *next = NULL;
		size_t kn;
		bool closed;
		if (!(p = json_member(p, end, &v->key, &k, &kn, &closed)) || closed)
			return p;
		if (kn == 2 && memcmp(k, "id", 2) == 0) {
			get_u32(p, end, &n->id, &next);
		} else if (kn == 6 && memcmp(k, "parent", 6) == 0) {
			n->has_parent = get_u32(p, end, &n->parent, &next);
		} else if (kn == 8 && memcmp(k, "children", 8) == 0 && *p == '[') {
			v->children.len = n->children_from;
			next = num_array(p, end, &v->children, NULL);
			n->children_to = v->children.len;
		} else if (kn == 9 && memcmp(k, "callFrame", 9) == 0 && *p == '{') {
			next = call_frame(v, tp, p, end, n);
		}
		if (!next && !(next = tp_json_skip_value(p, end)))
			return NULL;
		p = next;
	}
}

/* ---- sessions and callsites -------------------------------------------------- */

static uint32_t frame_for(struct tp *tp, struct v8_session *s, uint32_t function, uint32_t url)
{
	uint64_t k = tb_hash_u64((uint64_t)function << 32 | url), row;
	if (hmap_get(&s->frames, k, &row))
		return (uint32_t)row;
	struct tp_stack_profile_frame_table *t = &tp->t.stack_profile_frame;
	uint32_t r = tp_stack_profile_frame_append(t);
	t->name[r] = function;
	t->mapping[r] = s->mapping;
	t->rel_pc[r] = 0;
	hmap_put(&s->frames, k, r);
	return r;
}

/* Perfetto's AddCallsite: false when the node cannot be added (counted by
 * the caller). */
static bool add_callsite(struct json_v8 *v, struct tp *tp, struct v8_session *s,
                         const struct v8_node *n)
{
	if (hmap_get(&s->callsites, n->id, NULL))
		return false;
	uint32_t frame = frame_for(tp, s, n->function, n->url);
	bool has_parent = n->has_parent;
	uint64_t parent = n->parent;
	if (!has_parent)
		has_parent = hmap_get(&s->parents, n->id, &parent);
	uint32_t callsite;
	if (has_parent) {
		uint64_t pc;
		if (!hmap_get(&s->callsites, parent, &pc))
			return false;
		callsite = tp_stack_profile_callsite(tp, &v->sp, (uint32_t)pc, frame);
	} else {
		callsite = tp_stack_profile_callsite(tp, &v->sp, TP_NULL_U32, frame);
	}
	hmap_put(&s->callsites, n->id, callsite);
	/* Children named before they come get this node as their parent;
	 * those already there are moved under it. */
	struct tp_stack_profile_callsite_table *t = &tp->t.stack_profile_callsite;
	for (size_t i = n->children_from; i < n->children_to; i++) {
		uint32_t child = v->children.data[i];
		if (hmap_get(&s->parents, child, NULL))
			return false;
		hmap_put(&s->parents, child, n->id);
		uint64_t cc;
		if (hmap_get(&s->callsites, child, &cc)) {
			t->depth[cc] = t->depth[callsite] + 1;
			t->parent_id[cc] = callsite;
		}
	}
	return true;
}

static void start_session(struct json_v8 *v, struct tp *tp, uint64_t id, int64_t pid, int64_t ts)
{
	struct v8_session *s = session_find(v, id, pid);
	if (!s) {
		hmap_put(&v->sessions, session_key(id, pid), v->all.len);
		s = vec_push_zeroed(&v->all);
		hmap_init(&s->callsites);
		hmap_init(&s->parents);
		hmap_init(&s->frames);
		struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
		s->mapping = tp_stack_profile_mapping_append(t);
		t->name[s->mapping] = strpool_empty(&tp->strings);
		t->end[s->mapping] = INT64_MAX;
	}
	s->ts = ts;
}

/* ---- the 'P' event ------------------------------------------------------------- */

bool tp_json_v8_event(struct json_v8 *v, struct tp *tp, const struct json_event *e,
                      const char *args, const char *args_end, json_v8_sample_fn push, void *ctx)
{
	if (!e->id)
		return true; /* no id: nothing, as Perfetto */
	if (!(e->flags & JSON_EV_V1_ID))
		return false; /* not a hex id */
	if (!args)
		return true;
	int64_t pid = (e->flags & JSON_EV_PID_NAME) ? (int64_t)1 << 32 | e->pid : e->pid;
	const char *p = json_skip_ws(args, args_end), *end = args_end;
	const char *data = NULL, *k;
	size_t kn;
	bool closed;
	if (p >= end || *p != '{')
		return true;
	for (p++;;) {
		if (!(p = json_member(p, end, &v->key, &k, &kn, &closed)))
			return true;
		if (closed)
			break;
		if (kn == 4 && memcmp(k, "data", 4) == 0 && *p == '{')
			data = p;
		if (!(p = tp_json_skip_value(p, end)))
			return true;
	}
	if (!data)
		return true;
	bool has_start = false;
	int64_t start = 0;
	size_t nodes_from = 0, nodes_to = 0;
	VEC(struct v8_node) nodes = VEC_INIT;
	v->samples.len = v->deltas.len = v->children.len = 0;
	bool ok = true;
	for (p = data + 1;;) {
		const char *next = NULL;
		if (!(p = json_member(p, end, &v->key, &k, &kn, &closed)))
			goto bad;
		if (closed)
			break;
		if (kn == 9 && memcmp(k, "startTime", 9) == 0) {
			has_start = get_i64(p, end, &start, &next);
		} else if (kn == 10 && memcmp(k, "timeDeltas", 10) == 0 && *p == '[') {
			v->deltas.len = 0;
			next = num_array(p, end, NULL, &v->deltas);
		} else if (kn == 10 && memcmp(k, "cpuProfile", 10) == 0 && *p == '{') {
			for (p++;;) {
				if (!(p = json_member(p, end, &v->key, &k, &kn, &closed)))
					goto bad;
				if (closed) {
					next = p;
					break;
				}
				const char *q = NULL;
				if (kn == 5 && memcmp(k, "nodes", 5) == 0 && *p == '[') {
					for (q = p + 1;;) {
						q = json_skip_sep(q, end);
						if (q >= end) {
							q = NULL;
							break;
						}
						if (*q == ']') {
							q++;
							break;
						}
						if (*q == '{') {
							struct v8_node n;
							q = node(v, tp, q, end, &n);
							if (q)
								vec_push(&nodes, n);
						} else {
							q = tp_json_skip_value(q, end);
						}
						if (!q)
							break;
					}
				} else if (kn == 7 && memcmp(k, "samples", 7) == 0 && *p == '[') {
					v->samples.len = 0;
					q = num_array(p, end, &v->samples, NULL);
				}
				if (!q && !(q = tp_json_skip_value(p, end)))
					goto bad;
				p = q;
			}
		}
		if (!next && !(next = tp_json_skip_value(p, end)))
			goto bad;
		p = next;
		continue;
	bad:
		ok = false;
		break;
	}
	nodes_to = nodes.len;
	bool result = true;
	if (!ok)
		goto out; /* args Perfetto cannot read: nothing */
	if (has_start) {
		start_session(v, tp, e->v1_id, pid, (int64_t)((uint64_t)start * 1000u));
		goto out;
	}
	struct v8_session *s = session_find(v, e->v1_id, pid);
	for (size_t i = nodes_from; i < nodes_to; i++)
		if (!s || !add_callsite(v, tp, s, &nodes.data[i]))
			tp_stat_inc(tp, TP_STAT_legacy_v8_cpu_profile_invalid_callsite);
	if (v->samples.len != v->deltas.len) {
		result = false;
		goto out;
	}
	for (size_t i = 0; i < v->samples.len; i++) {
		if (!s) {
			result = false;
			goto out;
		}
		s->ts += (int64_t)((uint64_t)v->deltas.data[i] * 1000u);
		push(ctx, e, s->ts, v->samples.data[i]);
	}
out:
	vec_release(&nodes);
	return result;
}

bool tp_json_v8_sample_callsite(struct json_v8 *v, uint64_t id, int64_t pid, uint32_t node,
                                uint32_t *callsite)
{
	struct v8_session *s = session_find(v, id, pid);
	uint64_t c;
	if (!s || !hmap_get(&s->callsites, node, &c))
		return false;
	*callsite = (uint32_t)c;
	return true;
}
