/*
 * Clock domains and their conversion to the trace clock, from the
 * ClockSnapshots in the trace.
 *
 * Every clock is a node; each snapshot adds, for every ordered pair of its
 * clocks, a sample (value on a, value on b) to the edge a->b. Converting ts
 * from clock s walks the shortest path of edges from s to the trace clock
 * (found by BFS, cached until the next snapshot); on each hop the sample
 * with the largest source value <= ts is used (or the first one if ts is
 * before all), and ts is shifted by the difference, as Perfetto's
 * ClockTracker does.
 *
 * Clock ids 64..127 are scoped to their sequence: the node key includes the
 * sequence id. A clock marked is_incremental takes deltas: each packet's
 * value adds to the last one (the snapshot value to start), then the sum is
 * scaled by unit_multiplier_ns.
 */
#include "proto_int.h"
#include "pb_fields.h"
#include "clock_snapshot.h"
#include "../manifest/manifest.h"

#include <string.h>

struct sample {
	int64_t a, b;
};

struct edge {
	uint32_t from, to;
	VEC(struct sample) samples;
};

struct node {
	uint64_t key;
	bool incremental;
	int64_t mult;
	uint64_t last_raw;   /* incremental clocks: last absolute raw value */
	VEC(uint32_t) out;   /* edge indexes */
	VEC(uint32_t) path;  /* edges to the trace clock (cached) */
	uint32_t path_epoch; /* snapshot epoch the path was computed in, 0 never */
	bool path_ok;
};

struct proto_clocks {
	uint32_t trace_clock;
	uint32_t epoch;        /* bumped by every snapshot */
	int64_t snapshot_rows; /* snapshots put into clock_snapshot */
	bool converted;        /* a conversion happened: trace clock is fixed */
	struct hmap node_by_key, edge_by_pair;
	VEC(struct node) nodes;
	VEC(struct edge) edges;
	VEC(uint32_t) queue, via; /* BFS scratch */
	int64_t shift;            /* tp_proto_clocks_set_shift */
	bool drop;
	/* The last clock converted and its node (UINT32_MAX: none yet; nodes
	 * are never removed, so only a new node can change the answer). */
	uint64_t memo_key;
	uint32_t memo_node;
	bool memo_valid;
};

static uint64_t clock_key(uint32_t seq_id, uint32_t clock_id)
{
	if (clock_id >= 64 && clock_id < 128)
		return (uint64_t)seq_id << 32 | clock_id;
	return clock_id;
}

struct proto_clocks *tp_proto_clocks_new(void)
{
	struct proto_clocks *c = tb_calloc(1, sizeof *c);
	c->trace_clock = PROTO_CLOCK_BOOTTIME;
	c->epoch = 1;
	hmap_init(&c->node_by_key);
	hmap_init(&c->edge_by_pair);
	return c;
}

void tp_proto_clocks_free(struct proto_clocks *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nodes.len; i++) {
		vec_release(&c->nodes.data[i].out);
		vec_release(&c->nodes.data[i].path);
	}
	for (size_t i = 0; i < c->edges.len; i++)
		vec_release(&c->edges.data[i].samples);
	vec_release(&c->nodes);
	vec_release(&c->edges);
	vec_release(&c->queue);
	vec_release(&c->via);
	hmap_release(&c->node_by_key);
	hmap_release(&c->edge_by_pair);
	tb_free(c);
}

uint32_t tp_proto_clocks_trace_clock(const struct proto_clocks *c)
{
	return c->trace_clock;
}

void tp_proto_clocks_set_shift(struct proto_clocks *c, int64_t shift, bool drop)
{
	c->shift = shift;
	c->drop = drop;
}

static uint32_t node_for(struct proto_clocks *c, uint64_t key, bool create)
{
	uint64_t v;
	if (hmap_get(&c->node_by_key, key, &v))
		return (uint32_t)v;
	if (!create)
		return UINT32_MAX;
	c->memo_valid = false;
	struct node *n = vec_push_zeroed(&c->nodes);
	n->key = key;
	n->mult = 1;
	uint32_t idx = (uint32_t)(c->nodes.len - 1);
	hmap_put(&c->node_by_key, key, idx);
	return idx;
}

static struct edge *edge_for(struct proto_clocks *c, uint32_t a, uint32_t b)
{
	uint64_t k = (uint64_t)a << 32 | b, v;
	if (hmap_get(&c->edge_by_pair, k, &v))
		return &c->edges.data[v];
	struct edge *e = vec_push_zeroed(&c->edges);
	e->from = a;
	e->to = b;
	uint32_t idx = (uint32_t)(c->edges.len - 1);
	hmap_put(&c->edge_by_pair, k, idx);
	vec_push(&c->nodes.data[a].out, idx);
	return &c->edges.data[idx];
}

#define MAX_SNAPSHOT_CLOCKS 32

size_t tp_clock_snapshot_read(const uint8_t *p, size_t n, struct tp_clock_reading *out, size_t cap,
                              uint32_t *primary)
{
	size_t k = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ClockSnapshot_primary_trace_clock && f.wire == PB_WIRE_VARINT) {
			if (primary)
				*primary = (uint32_t)f.val;
			continue;
		}
		if (f.id != PB_F_ClockSnapshot_clocks || f.wire != PB_WIRE_LEN || k == cap)
			continue;
		struct tp_clock_reading *c = &out[k++];
		*c = (struct tp_clock_reading){.mult = 1};
		struct pb_reader cr;
		struct pb_field cf = {0};
		pb_reader_init_field(&cr, &f);
		while (pb_next(&cr, &cf)) {
			if (cf.wire != PB_WIRE_VARINT)
				continue;
			if (cf.id == PB_F_ClockSnapshot_Clock_clock_id)
				c->id = cf.val;
			else if (cf.id == PB_F_ClockSnapshot_Clock_timestamp)
				c->ts = cf.val;
			else if (cf.id == PB_F_ClockSnapshot_Clock_is_incremental)
				c->incremental = cf.val != 0;
			else if (cf.id == PB_F_ClockSnapshot_Clock_unit_multiplier_ns)
				c->mult = cf.val ? cf.val : 1;
		}
	}
	return k;
}

void tp_proto_clocks_add_snapshot(struct proto_clocks *c, uint32_t seq_id, const uint8_t *p,
                                  size_t n)
{
	struct tp_clock_reading rd[MAX_SNAPSHOT_CLOCKS];
	uint32_t idx[MAX_SNAPSHOT_CLOCKS];
	int64_t val[MAX_SNAPSHOT_CLOCKS];
	uint32_t primary = 0;
	size_t k = tp_clock_snapshot_read(p, n, rd, MAX_SNAPSHOT_CLOCKS, &primary);
	if (!c->converted && primary > 0 && primary < 64)
		c->trace_clock = primary;
	for (size_t i = 0; i < k; i++) {
		uint32_t ni = node_for(c, clock_key(seq_id, (uint32_t)rd[i].id), true);
		struct node *nd = &c->nodes.data[ni];
		nd->incremental = rd[i].incremental;
		nd->mult = (int64_t)rd[i].mult;
		nd->last_raw = rd[i].ts;
		idx[i] = ni;
		val[i] = (int64_t)(rd[i].ts * rd[i].mult);
	}
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < k; j++) {
			if (i == j || idx[i] == idx[j])
				continue;
			struct edge *e = edge_for(c, idx[i], idx[j]);
			vec_push(&e->samples, ((struct sample){val[i], val[j]}));
		}
	c->epoch++;
}

static const char *builtin_clock_name(uint32_t id)
{
	static const char *const names[] = {NULL,        "REALTIME",         "REALTIME_COARSE",
	                                    "MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
	                                    "BOOTTIME"};
	return id < TB_ARRAY_SIZE(names) ? names[id] : NULL;
}

void tp_proto_clocks_snapshot_rows(struct proto_clocks *c, struct tp *tp, uint32_t machine,
                                   const uint8_t *p, size_t n)
{
	struct {
		uint32_t id;
		int64_t value;
	} clk[MAX_SNAPSHOT_CLOCKS];
	size_t k = 0;
	bool have_trace = false;
	int64_t trace_ts = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_ClockSnapshot_clocks || f.wire != PB_WIRE_LEN ||
		    k == MAX_SNAPSHOT_CLOCKS)
			continue;
		uint32_t id = 0;
		uint64_t ts = 0, mult = 1;
		struct pb_reader cr;
		struct pb_field cf = {0};
		pb_reader_init_field(&cr, &f);
		while (pb_next(&cr, &cf)) {
			if (cf.wire != PB_WIRE_VARINT)
				continue;
			if (cf.id == PB_F_ClockSnapshot_Clock_clock_id)
				id = (uint32_t)cf.val;
			else if (cf.id == PB_F_ClockSnapshot_Clock_timestamp)
				ts = cf.val;
			else if (cf.id == PB_F_ClockSnapshot_Clock_unit_multiplier_ns)
				mult = cf.val ? cf.val : 1;
		}
		clk[k].id = id;
		clk[k].value = (int64_t)(ts * mult);
		if (id == c->trace_clock && !have_trace)
			have_trace = true, trace_ts = clk[k].value;
		k++;
	}
	if (!have_trace)
		return;
	struct tp_clock_snapshot_table *t = &tp->t.clock_snapshot;
	for (size_t i = 0; i < k; i++) {
		uint32_t row = tp_clock_snapshot_append(t);
		const char *name = builtin_clock_name(clk[i].id);
		t->ts[row] = trace_ts;
		t->clock_id[row] = clk[i].id;
		t->clock_name[row] = name ? tp_intern_cstr(tp, name) : 0;
		t->clock_value[row] = clk[i].value;
		t->snapshot_id[row] = c->snapshot_rows + tp_manifest_snapshot_ids(tp);
		t->machine_id[row] = machine;
	}
	c->snapshot_rows++;
}

/* BFS from node s to the trace clock; fills s's cached path. */
static bool find_path(struct proto_clocks *c, uint32_t s, uint32_t t)
{
	struct node *ns = &c->nodes.data[s];
	ns->path_epoch = c->epoch;
	ns->path_ok = false;
	vec_clear(&ns->path);
	vec_resize(&c->via, c->nodes.len);
	for (size_t i = 0; i < c->nodes.len; i++)
		c->via.data[i] = UINT32_MAX;
	vec_clear(&c->queue);
	vec_push(&c->queue, s);
	c->via.data[s] = UINT32_MAX - 1;
	for (size_t qi = 0; qi < c->queue.len; qi++) {
		uint32_t u = c->queue.data[qi];
		if (u == t)
			break;
		struct node *nu = &c->nodes.data[u];
		for (size_t i = 0; i < nu->out.len; i++) {
			uint32_t ei = nu->out.data[i];
			uint32_t v = c->edges.data[ei].to;
			if (c->via.data[v] != UINT32_MAX)
				continue;
			c->via.data[v] = ei;
			vec_push(&c->queue, v);
		}
	}
	if (c->via.data[t] == UINT32_MAX)
		return false;
	/* Walk back from t, then reverse. */
	ns = &c->nodes.data[s];
	for (uint32_t v = t; v != s;) {
		uint32_t ei = c->via.data[v];
		vec_push(&ns->path, ei);
		v = c->edges.data[ei].from;
	}
	for (size_t i = 0, j = ns->path.len; i + 1 < j; i++, j--) {
		uint32_t tmp = ns->path.data[i];
		ns->path.data[i] = ns->path.data[j - 1];
		ns->path.data[j - 1] = tmp;
	}
	ns->path_ok = true;
	return true;
}

static int64_t hop(const struct edge *e, int64_t ts)
{
	const struct sample *s = e->samples.data;
	size_t n = e->samples.len;
	/* Samples are usually appended in increasing order: check the last. */
	const struct sample *best = &s[0];
	if (s[n - 1].a <= ts) {
		best = &s[n - 1];
	} else {
		size_t lo = 0, hi = n; /* first sample with a > ts */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (s[mid].a <= ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0)
			best = &s[lo - 1];
	}
	return (int64_t)((uint64_t)best->b + ((uint64_t)ts - (uint64_t)best->a));
}

static bool to_trace(struct proto_clocks *c, uint64_t key, uint64_t raw, int64_t *out);

bool tp_proto_clocks_to_trace(struct proto_clocks *c, uint32_t seq_id, uint32_t clock_id,
                              uint64_t raw, int64_t *out)
{
	uint64_t key = clock_key(seq_id, clock_id);
	if (key == c->trace_clock && !c->nodes.len && !c->drop) {
		/* No snapshot yet: the trace clock is taken as it is. */
		c->converted = true;
		*out = (int64_t)raw + c->shift;
		return true;
	}
	if (c->drop || !to_trace(c, key, raw, out))
		return false;
	*out += c->shift;
	return true;
}

/* The general case: through the clock graph. */
static __attribute__((noinline)) bool to_trace(struct proto_clocks *c, uint64_t key, uint64_t raw,
                                               int64_t *out)
{
	uint32_t ni;
	int64_t ts;
	if (c->memo_valid && c->memo_key == key) {
		ni = c->memo_node;
	} else {
		ni = node_for(c, key, false);
		c->memo_key = key;
		c->memo_node = ni;
		c->memo_valid = true;
	}
	if (ni != UINT32_MAX) {
		struct node *nd = &c->nodes.data[ni];
		if (nd->incremental) {
			nd->last_raw += raw;
			raw = nd->last_raw;
		}
		ts = (int64_t)(raw * (uint64_t)nd->mult);
	} else {
		ts = (int64_t)raw;
	}
	if (key == c->trace_clock) {
		c->converted = true;
		*out = ts;
		return true;
	}
	uint32_t ti = node_for(c, c->trace_clock, false);
	if (ni == UINT32_MAX || ti == UINT32_MAX)
		return false;
	struct node *nd = &c->nodes.data[ni];
	if (nd->path_epoch != c->epoch && !find_path(c, ni, ti))
		return false;
	nd = &c->nodes.data[ni];
	if (!nd->path_ok)
		return false;
	for (size_t i = 0; i < nd->path.len; i++)
		ts = hop(&c->edges.data[nd->path.data[i]], ts);
	c->converted = true;
	*out = ts;
	return true;
}

/* tp_clock_sync.convert over a protobuf trace's clocks (sequence 0). */
static bool sync_convert(void *ctx, uint32_t clock, int64_t ts, int64_t *out)
{
	struct proto_clocks *c = ctx;
	return ts >= 0 && tp_proto_clocks_to_trace(c, 0, clock, (uint64_t)ts, out);
}

static void sync_free(void *ctx)
{
	tp_proto_clocks_free(ctx);
}

void tp_proto_clocks_share(struct tp *tp, struct proto_clocks **c)
{
	if (tp->clock_sync.convert || !*c || (*c)->epoch == 1)
		return; /* taken already, or no snapshot came */
	tp->clock_sync = (struct tp_clock_sync){*c, sync_convert, sync_free};
	*c = NULL;
}
