/*
 * V8 CPU profiles (.cpuprofile): the JSON that Node's --cpu-prof, Chrome
 * DevTools' "Save profile" and the DevTools protocol's Profiler.stop write.
 * Two shapes:
 *
 *   {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)", "url": "",
 *               ...}, "children": [2, 3]}, ...],       a flat node list
 *    "startTime": µs, "endTime": µs,
 *    "samples": [node id...], "timeDeltas": [µs...]}   each from the previous
 *
 *   {"head": {"functionName": "(root)", "url": "", "id": 1,
 *             "children": [{...nested nodes...}]},     old (Node <= 10)
 *    "startTime": s, "endTime": s,
 *    "samples": [node id...], "timestamps": [µs...]}   absolute
 *
 * They become what Perfetto makes of the same profile inside a Chrome JSON
 * trace (the 'P' events, json/v8.c): each node a callsite under its parent
 * (given by "parent" or by the parent's "children"), its frame a dummy frame
 * named after the function, with the script url as the symbol's file, in a
 * mapping named ""; each sample a profiler sample of source "legacy_v8" (the
 * cpu_profile_stack_sample view) at its time, on thread 1 of process 1
 * ("V8 CPU profile"; the file does not say which). Samples are written in
 * time order (Chrome's deltas may be negative). A node that cannot be placed
 * counts legacy_v8_cpu_profile_invalid_callsite, a sample of an unknown node
 * or without a time legacy_v8_cpu_profile_invalid_sample; a file that is not
 * such an object fails the load with one line.
 */
#include "profiles.h"

#include <stdlib.h>
#include <string.h>

#include "../json/json_int.h"

#define CPUPROFILE_MAX_BYTES (2ull << 30) /* held whole; beyond this, refused */
#define CPUPROFILE_MAX_DEPTH 4096         /* nesting of the old "head" tree */
#define CPUPROFILE_PID 1

VEC_DEFINE(cp_bytes, char);
VEC_DEFINE(cp_u32s, uint32_t);
VEC_DEFINE(cp_i64s, int64_t);

struct cp_node {
	uint32_t id, parent; /* parent TP_NULL_U32: none given */
	uint32_t function, url;
	uint32_t callsite; /* TP_NULL_U32 until placed */
};

struct cp_sample {
	int64_t ts;
	uint32_t callsite, seq;
};

struct tp_importer {
	struct tp *tp;
	struct cp_bytes buf;
	bool too_big;
};

struct cp {
	struct tp *tp;
	struct json_buf key, str;
	VEC(struct cp_node) nodes;
	struct hmap by_id, parents; /* node id -> index; child id -> parent id */
	struct cp_u32s samples, children, chain;
	struct cp_i64s deltas, stamps;
	bool has_deltas, has_stamps, old;
	int64_t start_us;
};

/* json_member, out of line (it is forced inline for the JSON importer's
 * hot loop; here one copy is enough). */
static __attribute__((noinline)) const char *cp_member(const char *p, const char *end,
                                                       struct json_buf *buf, const char **k,
                                                       size_t *kn, bool *closed)
{
	return json_member(p, end, buf, k, kn, closed);
}

static bool cp_key(const char *k, size_t kn, const char *want)
{
	return kn == strlen(want) && memcmp(k, want, kn) == 0;
}

/* An array of numbers into u32s or i64s (others skipped); p at '['. */
static const char *cp_numbers(const char *p, const char *end, struct cp_u32s *u32s,
                              struct cp_i64s *i64s)
{
	if (*p != '[')
		return tp_json_skip_value(p, end);
	for (p++;;) {
		p = json_skip_sep(p, end);
		if (p >= end)
			return NULL;
		if (*p == ']')
			return p + 1;
		struct json_num n;
		const char *q = tp_json_number(p, end, &n);
		if (!q) {
			if (!(p = tp_json_skip_value(p, end)))
				return NULL;
			continue;
		}
		int64_t v = n.is_int ? n.i : n.d > -9.2e18 && n.d < 9.2e18 ? (int64_t)n.d : 0;
		if (u32s && v >= 0 && v <= UINT32_MAX)
			vec_push(u32s, (uint32_t)v);
		else if (u32s)
			vec_push(u32s, UINT32_MAX); /* an id no node has */
		else
			vec_push(i64s, v);
		p = q;
	}
}

static uint32_t cp_intern(struct tp *tp, const char *s, size_t n)
{
	return n ? tp_intern(tp, s, n) : strpool_empty(&tp->strings);
}

static const char *cp_node(struct cp *c, const char *p, const char *end, uint32_t parent,
                           int depth);

/* The members of a node object (p after '{'), or of its callFrame. */
static const char *cp_members(struct cp *c, const char *p, const char *end, struct cp_node *n,
                              int depth, bool frame)
{
	for (;;) {
		const char *k, *s, *next = NULL;
		size_t kn, sn;
		bool closed;
		if (!(p = cp_member(p, end, &c->key, &k, &kn, &closed)) || closed)
			return p;
		struct json_num num;
		if ((cp_key(k, kn, "functionName") || cp_key(k, kn, "url")) && *p == '"') {
			if (!(next = json_string(p, end, &c->str, &s, &sn)))
				return NULL;
			if (k[0] == 'u')
				n->url = cp_intern(c->tp, s, sn);
			else
				n->function = cp_intern(c->tp, s, sn);
		} else if (frame) {
			/* only the two above */
		} else if (cp_key(k, kn, "id") && (next = tp_json_number(p, end, &num))) {
			n->id = num.is_int && num.i >= 0 && num.i < UINT32_MAX ? (uint32_t)num.i
			                                                       : UINT32_MAX;
		} else if (cp_key(k, kn, "parent") && (next = tp_json_number(p, end, &num))) {
			n->parent = num.is_int && num.i >= 0 && num.i < UINT32_MAX ? (uint32_t)num.i
			                                                           : UINT32_MAX;
		} else if (cp_key(k, kn, "callFrame") && *p == '{') {
			next = cp_members(c, p + 1, end, n, depth, true);
		} else if (cp_key(k, kn, "children") && *p == '[' && !c->old) {
			next = cp_numbers(p, end, &c->children, NULL);
		} else if (cp_key(k, kn, "children") && *p == '[') {
			/* old: nested nodes, read once this node's id is known
			 * (it comes before "children" in every writer's output) */
			for (next = p + 1;;) {
				next = json_skip_sep(next, end);
				if (next >= end)
					return NULL;
				if (*next == ']') {
					next++;
					break;
				}
				if (!(next = cp_node(c, next, end, n->id, depth + 1)))
					return NULL;
			}
		}
		if (!next && !(next = tp_json_skip_value(p, end)))
			return NULL;
		p = next;
	}
}

/* One node object at p; its parent in the old tree (TP_NULL_U32: none). */
static const char *cp_node(struct cp *c, const char *p, const char *end, uint32_t parent, int depth)
{
	if (*p != '{' || depth > CPUPROFILE_MAX_DEPTH)
		return depth > CPUPROFILE_MAX_DEPTH ? NULL : tp_json_skip_value(p, end);
	struct cp_node n = {UINT32_MAX, parent, strpool_empty(&c->tp->strings),
	                    strpool_empty(&c->tp->strings), TP_NULL_U32};
	size_t children_from = c->children.len, at = c->nodes.len;
	vec_push(&c->nodes, n); /* the old tree's children come after it */
	p = cp_members(c, p + 1, end, &n, depth, false);
	if (!p)
		return NULL;
	c->nodes.data[at] = n;
	if (n.id == UINT32_MAX || !hmap_put(&c->by_id, n.id, at)) {
		tp_stat_inc(c->tp, TP_STAT_legacy_v8_cpu_profile_invalid_callsite);
		c->nodes.data[at].id = UINT32_MAX;
	}
	for (size_t i = children_from; i < c->children.len; i++)
		if (n.id == UINT32_MAX || !hmap_put(&c->parents, c->children.data[i], n.id))
			tp_stat_inc(c->tp, TP_STAT_legacy_v8_cpu_profile_invalid_callsite);
	c->children.len = children_from;
	return p;
}

/* The callsite of node index i, placing its ancestors first: walk up to a
 * placed node or a root, then intern from the top down. TP_NULL_U32 when an
 * ancestor is unknown or the parents loop. */
static uint32_t cp_callsite(struct cp *c, struct tp_stack_profile *sp, struct hmap *frames,
                            uint32_t mapping, size_t i)
{
	uint32_t up = TP_NULL_U32;
	uint64_t j, parent;
	c->chain.len = 0;
	for (;;) {
		const struct cp_node *n = &c->nodes.data[i];
		if (n->callsite != TP_NULL_U32) {
			up = n->callsite;
			break;
		}
		if (c->chain.len > c->nodes.len)
			return TP_NULL_U32;
		vec_push(&c->chain, (uint32_t)i);
		parent = n->parent;
		if (parent == TP_NULL_U32 && !hmap_get(&c->parents, n->id, &parent))
			break;
		if (!hmap_get(&c->by_id, parent, &j))
			return TP_NULL_U32;
		i = (size_t)j;
	}
	while (c->chain.len > 0) {
		struct cp_node *n = &c->nodes.data[c->chain.data[--c->chain.len]];
		uint32_t frame = tp_profiles_dummy_frame(c->tp, frames, mapping, n->function,
		                                         n->url, TP_NULL_U32);
		n->callsite = up = tp_stack_profile_callsite(c->tp, sp, up, frame);
	}
	return up;
}

static int cp_cmp(const void *a, const void *b)
{
	const struct cp_sample *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cp_load(struct tp *tp, const char *p, const char *end)
{
	struct cp c = {.tp = tp};
	struct tp_stack_profile sp;
	struct hmap frames;
	VEC(struct cp_sample) out = VEC_INIT;
	int rc = 0;
	tp_stack_profile_init(&sp);
	hmap_init(&frames);
	hmap_init(&c.by_id);
	hmap_init(&c.parents);
	p = json_skip_ws(p, end);
	if (p >= end || *p != '{')
		goto bad;
	p++;
	struct json_num start = {0};
	bool has_start = false;
	for (;;) {
		const char *k, *next = NULL;
		size_t kn;
		bool closed;
		if (!(p = cp_member(p, end, &c.key, &k, &kn, &closed)))
			goto bad;
		if (closed)
			break;
		if (cp_key(k, kn, "nodes") && *p == '[') {
			for (next = p + 1;;) {
				next = json_skip_sep(next, end);
				if (next >= end)
					goto bad;
				if (*next == ']') {
					next++;
					break;
				}
				if (!(next = cp_node(&c, next, end, TP_NULL_U32, 0)))
					goto bad;
			}
		} else if (cp_key(k, kn, "head") && *p == '{') {
			c.old = true;
			next = cp_node(&c, p, end, TP_NULL_U32, 0);
			c.old = false;
		} else if (cp_key(k, kn, "startTime")) {
			has_start = (next = tp_json_number(p, end, &start)) != NULL;
		} else if (cp_key(k, kn, "samples")) {
			next = cp_numbers(p, end, &c.samples, NULL);
		} else if (cp_key(k, kn, "timeDeltas")) {
			c.has_deltas = (next = cp_numbers(p, end, NULL, &c.deltas)) != NULL;
		} else if (cp_key(k, kn, "timestamps")) {
			c.has_stamps = (next = cp_numbers(p, end, NULL, &c.stamps)) != NULL;
		}
		if (!next && !(next = tp_json_skip_value(p, end)))
			goto bad;
		p = next;
	}
	if (!c.nodes.len)
		goto bad;
	/* Old profiles give startTime in seconds, new ones in µs. */
	bool old = c.has_stamps && !c.has_deltas;
	int64_t ts_us = !has_start     ? 0
	                : old          ? (int64_t)(start.d * 1e6)
	                : start.is_int ? start.i
	                               : (int64_t)start.d;
	uint32_t mapping = tp_profiles_dummy_mapping(tp, "");
	uint32_t source = tp_intern_cstr(tp, "legacy_v8");
	uint32_t upid = tp_process_for_pid(tp, CPUPROFILE_PID);
	uint32_t utid = tp_thread_for_tid(tp, CPUPROFILE_PID, CPUPROFILE_PID);
	tp_process_set_name(tp, upid, tp_intern_cstr(tp, "V8 CPU profile"));
	uint32_t task = tp_profiler_task_context(tp, upid, utid, TP_NULL_U32);
	for (size_t i = 0; i < c.nodes.len; i++)
		if (c.nodes.data[i].id != UINT32_MAX &&
		    cp_callsite(&c, &sp, &frames, mapping, i) == TP_NULL_U32)
			tp_stat_inc(tp, TP_STAT_legacy_v8_cpu_profile_invalid_callsite);
	for (size_t i = 0; i < c.samples.len; i++) {
		uint64_t j;
		bool timed = old ? i < c.stamps.len : c.has_deltas && i < c.deltas.len;
		if (timed)
			ts_us = old ? c.stamps.data[i] : ts_us + c.deltas.data[i];
		if (!timed || !hmap_get(&c.by_id, c.samples.data[i], &j) ||
		    c.nodes.data[j].callsite == TP_NULL_U32) {
			tp_stat_inc(tp, TP_STAT_legacy_v8_cpu_profile_invalid_sample);
			continue;
		}
		struct cp_sample s = {ts_us * 1000, c.nodes.data[j].callsite, (uint32_t)i};
		vec_push(&out, s);
	}
	if (out.len)
		qsort(out.data, out.len, sizeof *out.data, cp_cmp);
	for (size_t i = 0; i < out.len; i++) {
		struct tp_profiler_sample s = {
		    .ts = out.data[i].ts,
		    .source = source,
		    .task_context = task,
		    .execution_context = TP_NULL_U32,
		    .callsite = out.data[i].callsite,
		    .session = TP_NULL_U32,
		    .counter_set = TP_NULL_U32,
		};
		tp_profiler_sample_add(tp, &s);
	}
	goto out;
bad:
	rc = tp_fail(tp, -EINVAL, "malformed .cpuprofile: not a V8 CPU profile JSON object");
out:
	vec_release(&out);
	vec_release(&c.nodes);
	vec_release(&c.samples);
	vec_release(&c.children);
	vec_release(&c.chain);
	vec_release(&c.deltas);
	vec_release(&c.stamps);
	vec_release(&c.key.v);
	vec_release(&c.str.v);
	hmap_release(&c.by_id);
	hmap_release(&c.parents);
	hmap_release(&frames);
	tp_stack_profile_release(&sp);
	return rc;
}

/* '{' then a first key that only a CPU profile starts with. */
static bool cpuprofile_sniff(const uint8_t *up, size_t n)
{
	static const char *const keys[] = {"\"nodes\"", "\"head\"", "\"startTime\"",
	                                   "\"timeDeltas\""};
	const char *p = (const char *)up, *e = p + n;
	p = json_skip_ws(p, e);
	if (p >= e || *p != '{')
		return false;
	p = json_skip_ws(p + 1, e);
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		size_t k = strlen(keys[i]);
		if ((size_t)(e - p) > k && memcmp(p, keys[i], k) == 0) {
			const char *q = json_skip_ws(p + k, e);
			return q < e && *q == ':';
		}
	}
	return false;
}

static struct tp_importer *cpuprofile_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	return imp;
}

static int cpuprofile_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	imp->tp->bytes_parsed += n;
	if (n == 0)
		return 0;
	if (imp->too_big || imp->buf.len + n > CPUPROFILE_MAX_BYTES) {
		imp->too_big = true;
		return tp_fail(imp->tp, -EFBIG, ".cpuprofile larger than %llu bytes",
		               (unsigned long long)CPUPROFILE_MAX_BYTES);
	}
	vec_reserve(&imp->buf, n);
	memcpy(imp->buf.data + imp->buf.len, p, n);
	imp->buf.len += n;
	return 0;
}

static int cpuprofile_eof(struct tp_importer *imp)
{
	const char *p = imp->buf.len ? imp->buf.data : "";
	int rc = cp_load(imp->tp, p, p + imp->buf.len);
	vec_release(&imp->buf);
	return rc;
}

static void cpuprofile_destroy(struct tp_importer *imp)
{
	vec_release(&imp->buf);
	tb_free(imp);
}

const struct tp_importer_ops tp_cpuprofile_importer = {
    .name = "cpuprofile",
    .sniff = cpuprofile_sniff,
    .create = cpuprofile_create,
    .parse = cpuprofile_parse,
    .eof = cpuprofile_eof,
    .destroy = cpuprofile_destroy,
};
