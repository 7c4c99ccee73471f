/*
 * The plan of an archive with a manifest: which machine each member (and
 * each machine embedded in a protobuf member) is, and the shift that puts
 * its timestamps on the merged timeline. Made once, after the manifest and
 * before any trace member is imported, so members may refer to each other
 * in any order.
 *
 * Every clock is a node: (machine row, builtin clock) or a member's private
 * timeline (a clockless file: JSON, systrace text ...). Edges say that at
 * one instant node b reads what node a reads plus d:
 *
 *   clock snapshots      (m, A) -> (m, B)     d = B - A, one machine's clocks
 *   remote_clock_sync    (vm, C) -> (host, C) d = host - client
 *   manifest `clocks`    source -> sync_to     d = offset_ns
 *   REALTIME rendezvous  (m1, REALTIME) -> (m2, REALTIME), d = 0
 *
 * The trace time is one node G (trace_time, or the first protobuf member's
 * own clock). Shifts spread from G over the edges; a node no edge reaches
 * is then overlaid on G when it is the same clock on another machine, or a
 * private timeline (both assumed aligned, as Perfetto does); what is still
 * unreached is a different real clock domain: its events are dropped and
 * counted in clock_sync_unrelatable_clock_domains.
 *
 * The offsets are taken at each machine's first snapshot: a constant shift
 * per (member, machine), applied after the member's own conversion to its
 * clock (protobuf: BOOTTIME or its primary_trace_clock).
 */
#include "../../tp_int.h"
#include "../../model/model.h"
#include "manifest.h"
#include "../proto/clock_snapshot.h"
#include "../../io/io.h"
#include "pb.h"
#include "pb_fields.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* TracePacket.remote_clock_sync, a field our trace_packet.proto does not
 * declare (the proto importer's PKT_REMOTE_CLOCK_SYNC). */
enum { PKT_REMOTE_CLOCK_SYNC = 107 };

/* Manifest machines get raw ids above the 32-bit ids packets carry. */
#define FIRST_MANIFEST_RAW ((int64_t)1 << 32)
#define NCLOCKS 7 /* builtin clocks 1..6 */
#define MF_BOOTTIME 6u
#define MF_REALTIME 1u
#define MF_TRACE_FILE 11u
#define MF_MAX_SHIFT ((int64_t)1 << 62) /* a file's own timeline, in clock_snapshot */
#define PRIVATE_NODE ((uint64_t)1 << 62)
/* RemoteClockSync (protos/perfetto/trace/remote_clock_sync.proto), not in
 * our generated field list. */
#define RCS_SYNCED_CLOCKS 1
#define RCS_CLIENT_CLOCKS 2
#define RCS_HOST_CLOCKS 3
/* compressed_packets seen by the scan: the proto importer's bounds
 * (PROTO_MAX_INFLATED, PROTO_MAX_COMPRESSED_DEPTH). A payload beyond them,
 * or not zlib, is skipped here and counted when the member is imported. */
#define SCAN_MAX_INFLATED ((size_t)512 << 20)
#define SCAN_MAX_DEPTH 4

struct unit {
	uint32_t member;
	uint64_t raw;
	uint32_t row;
	uint64_t node;
	int64_t shift;
	bool drop;
};

struct snap {
	uint32_t row;
	bool has[NCLOCKS];
	int64_t v[NCLOCKS];
};

struct node {
	uint64_t key;
	int64_t shift;
	bool reached;
	bool manual_src; /* a manifest `clocks` entry places it */
};

struct edge {
	uint64_t a, b;
	int64_t d; /* at one instant b reads a + d */
};

/* A `clocks` entry's snapshot: its two clocks' machine rows (the nodes and
 * the offset are the entry's edge, edges[k] for the k-th snapshot). */
struct msnap {
	uint32_t arow, brow;
};

struct pmember {
	const char *name;
	bool is_proto, is_manifest;
	const struct tp_mf_file *e;
	uint32_t base_row;
	uint32_t native; /* a protobuf member's trace clock */
};

struct tp_mf_plan {
	struct tp_manifest *m;
	size_t n;
	struct pmember *pm;
	VEC(struct unit) units;
	VEC(struct snap) snaps;
	VEC(struct node) nodes;
	VEC(struct edge) edges;
	VEC(struct msnap) msnaps; /* the first msnaps.len edges are theirs */
	size_t cur;
	bool importing;
	uint64_t g;
};

static uint64_t clock_node(uint32_t row, uint32_t clock)
{
	return (uint64_t)row << 8 | clock;
}

static struct snap *snap_of(struct tp_mf_plan *p, uint32_t row)
{
	for (size_t i = 0; i < p->snaps.len; i++)
		if (p->snaps.data[i].row == row)
			return &p->snaps.data[i];
	struct snap *s = vec_push_zeroed(&p->snaps);
	s->row = row;
	return s;
}

static struct node *node_of(struct tp_mf_plan *p, uint64_t key)
{
	for (size_t i = 0; i < p->nodes.len; i++)
		if (p->nodes.data[i].key == key)
			return &p->nodes.data[i];
	struct node *nd = vec_push_zeroed(&p->nodes);
	nd->key = key;
	return nd;
}

static void edge_add(struct tp_mf_plan *p, uint64_t a, uint64_t b, int64_t d)
{
	node_of(p, a);
	node_of(p, b);
	vec_push(&p->edges, ((struct edge){a, b, d}));
}

/* The machine row named name (made, with the next manifest raw id). */
static uint32_t named_row(struct tp *tp, const char *name)
{
	struct tp_machine_table *t = &tp->t.machine;
	uint32_t id = tp_intern_cstr(tp, name);
	int64_t next = FIRST_MANIFEST_RAW;
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->raw_id[i] >= FIRST_MANIFEST_RAW) {
			if (t->name[i] == id)
				return i;
			next = t->raw_id[i] + 1 > next ? t->raw_id[i] + 1 : next;
		}
	}
	uint32_t row = tp_machine_for_raw(tp, next);
	t->name[row] = id;
	return row;
}

static const struct tp_mf_machine_id *declared(const struct tp_mf_file *e, uint64_t raw)
{
	for (size_t i = 0; e && i < e->nmachines; i++)
		if ((uint64_t)e->machines[i].id == raw)
			return &e->machines[i];
	return NULL;
}

static bool declares_name(const struct tp_mf_file *e, const char *name)
{
	if (e->machine && !strcmp(e->machine, name))
		return true;
	for (size_t i = 0; i < e->nmachines; i++)
		if (!strcmp(e->machines[i].name, name))
			return true;
	return false;
}

static int member_of(struct tp_mf_plan *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->pm[i].name && !strcmp(p->pm[i].name, path))
			return (int)i;
	return -1;
}

/* A reference (file, machine) to a machine row; fallback without file. */
static int resolve_ref(struct tp *tp, const char *file_label, const char *machine_label,
                       const char *file, const char *machine, uint32_t fallback, uint32_t *row)
{
	const struct tp_manifest *m = tp->manifest;
	if (machine && !file)
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: %s '%s' needs %s too: a machine name alone is "
		               "ambiguous because embedded machine ids are scoped to their trace.",
		               machine_label, machine, file_label);
	if (!file) {
		*row = fallback;
		return 0;
	}
	const struct tp_mf_file *r = tp_manifest_file(m, file);
	if (!r)
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: %s names unknown file '%s'. It must match the "
		               "`path` of an entry in the `files` array.",
		               file_label, file);
	if (!machine) {
		if (r->nmachines)
			return tp_fail(tp, -EINVAL,
			               "perfetto_manifest: %s '%s' is a multi-machine trace; also "
			               "name the machine with %s.",
			               file_label, file, machine_label);
		*row = 0;
		if (r->machine)
			*row = named_row(tp, r->machine);
		return 0;
	}
	if (!declares_name(r, machine))
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: %s '%s' is not a machine declared by file '%s'.",
		               machine_label, machine, file);
	*row = named_row(tp, machine);
	return 0;
}

/* ---- scanning a protobuf member ------------------------------------------ */

/* A ClockSnapshot's builtin clocks into has/v; its primary clock, if any. */
static void read_snapshot(const uint8_t *p, size_t n, bool *has, int64_t *v, uint32_t *primary)
{
	struct tp_clock_reading rd[64];
	size_t k = tp_clock_snapshot_read(p, n, rd, TB_ARRAY_SIZE(rd), primary);
	for (size_t i = 0; i < k; i++) {
		uint64_t id = rd[i].id;
		if (id > 0 && id < NCLOCKS && !has[id]) {
			has[id] = true;
			v[id] = (int64_t)(rd[i].ts * rd[i].mult);
		}
	}
}

static struct unit *unit_of(struct tp_mf_plan *p, uint32_t member, uint64_t raw)
{
	for (size_t i = 0; i < p->units.len; i++)
		if (p->units.data[i].member == member && p->units.data[i].raw == raw)
			return &p->units.data[i];
	return NULL;
}

/* Checks a packet of embedded machine raw against the member's entry, as
 * Perfetto's proto reader does when it meets one. */
static int check_machine(struct tp *tp, const struct tp_mf_file *e, uint64_t raw)
{
	if (!e || raw == 0)
		return 0;
	if (e->has_machines) {
		if (!declared(e, raw))
			return tp_fail(tp, -EINVAL,
			               "perfetto_manifest: machines: trace has a packet from "
			               "undeclared machine id %" PRIu64,
			               raw);
		return 0;
	}
	if (e->machine)
		return tp_fail(
		    tp, -EINVAL,
		    "perfetto_manifest: a `machine` override attributes the file to one machine, "
		    "but the file contains packets from multiple machines. Replace `machine` with "
		    "a `machines` block that maps each embedded machine_id to a named machine, "
		    "e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
		    "\"vm\"}].");
	if (e->has_clocks && !e->clock)
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: a `clocks` override applies only to a "
		               "single-machine file, but the file contains packets from multiple "
		               "machines. Remove the `clocks` override and let the trace's own "
		               "remote clock snapshots align the machines.");
	return 0;
}

/* The row of embedded machine raw of member i. */
static uint32_t embedded_row(struct tp *tp, struct tp_mf_plan *p, uint32_t i, uint64_t raw)
{
	const struct tp_mf_machine_id *d = declared(p->pm[i].e, raw);
	if (d)
		return named_row(tp, d->name);
	if (raw == 0)
		return p->pm[i].base_row;
	return tp_machine_for_raw(tp, (int64_t)raw);
}

static void remote_sync(struct tp_mf_plan *p, uint32_t client_row, uint32_t host_row,
                        const uint8_t *d, size_t n)
{
	bool ch[NCLOCKS] = {0}, hh[NCLOCKS] = {0};
	int64_t cv[NCLOCKS] = {0}, hv[NCLOCKS] = {0};
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, d, n);
	while (pb_next(&r, &f)) {
		if (f.id != RCS_SYNCED_CLOCKS || f.wire != PB_WIRE_LEN)
			continue;
		/* The last round of the sync wins. */
		bool c1[NCLOCKS] = {0}, h1[NCLOCKS] = {0};
		int64_t c1v[NCLOCKS] = {0}, h1v[NCLOCKS] = {0};
		struct pb_reader sr;
		struct pb_field sf = {0};
		pb_reader_init_field(&sr, &f);
		while (pb_next(&sr, &sf)) {
			if (sf.wire != PB_WIRE_LEN)
				continue;
			if (sf.id == RCS_CLIENT_CLOCKS)
				read_snapshot(sf.data, sf.len, c1, c1v, NULL);
			else if (sf.id == RCS_HOST_CLOCKS)
				read_snapshot(sf.data, sf.len, h1, h1v, NULL);
		}
		memcpy(ch, c1, sizeof ch);
		memcpy(hh, h1, sizeof hh);
		memcpy(cv, c1v, sizeof cv);
		memcpy(hv, h1v, sizeof hv);
	}
	for (uint32_t k = 1; k < NCLOCKS; k++)
		if (ch[k] && hh[k])
			edge_add(p, clock_node(client_row, k), clock_node(host_row, k),
			         hv[k] - cv[k]);
}

static int scan_proto(struct tp *tp, struct tp_mf_plan *p, uint32_t i, const uint8_t *data,
                      size_t len, unsigned depth);

/* The packets deflated in one compressed_packets payload, scanned as if
 * they stood in its place (they carry their own machine ids). */
static int scan_compressed(struct tp *tp, struct tp_mf_plan *p, uint32_t i, const uint8_t *z,
                           size_t n, unsigned depth)
{
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc = 0;
	if (depth < SCAN_MAX_DEPTH && tp_zlib_inflate(z, n, SCAN_MAX_INFLATED, &out, &out_len) == 0)
		rc = scan_proto(tp, p, i, out, out_len, depth + 1);
	tb_free(out);
	return rc;
}

/* Scan member i's packets: its machines (units), snapshots, remote syncs,
 * and the checks its manifest entry asks for. */
static int scan_proto(struct tp *tp, struct tp_mf_plan *p, uint32_t i, const uint8_t *data,
                      size_t len, unsigned depth)
{
	const struct tp_mf_file *e = p->pm[i].e;
	bool pinned = e && e->has_clocks && !e->clock;
	struct pb_reader tr;
	struct pb_field pf = {0};
	pb_reader_init(&tr, data, len);
	while (pb_next(&tr, &pf)) {
		if (pf.id != PB_F_Trace_packet || pf.wire != PB_WIRE_LEN)
			continue;
		uint64_t raw = 0;
		struct pb_field snap = {0}, sync = {0}, zpk = {0};
		bool has_snap = false, has_sync = false, has_zpk = false;
		struct pb_reader r;
		struct pb_field f = {0};
		pb_reader_init_field(&r, &pf);
		while (pb_next(&r, &f)) {
			if (f.id == PB_F_TracePacket_machine_id && f.wire == PB_WIRE_VARINT)
				raw = (uint32_t)f.val;
			else if (f.id == PB_F_TracePacket_clock_snapshot && f.wire == PB_WIRE_LEN)
				snap = f, has_snap = true;
			else if (f.id == PKT_REMOTE_CLOCK_SYNC && f.wire == PB_WIRE_LEN)
				sync = f, has_sync = true;
			else if (f.id == PB_F_TracePacket_compressed_packets &&
			         f.wire == PB_WIRE_LEN)
				zpk = f, has_zpk = true;
		}
		if (has_zpk) {
			if (scan_compressed(tp, p, i, zpk.data, zpk.len, depth) < 0)
				return -EINVAL;
			continue;
		}
		if (check_machine(tp, e, raw) < 0)
			return -EINVAL;
		if (pinned && (has_snap || has_sync))
			return tp_fail(
			    tp, -EINVAL,
			    "perfetto_manifest: clock overrides require the trace to use "
			    "a single clock");
		struct unit *u = unit_of(p, i, raw);
		if (!u) {
			u = vec_push_zeroed(&p->units);
			u->member = i;
			u->raw = raw;
			u->row = embedded_row(tp, p, i, raw);
		}
		if (has_snap) {
			struct snap *s = snap_of(p, u->row);
			bool had = false;
			for (int k = 1; k < NCLOCKS; k++)
				had |= s->has[k];
			uint32_t primary = 0;
			bool h[NCLOCKS] = {0};
			int64_t v[NCLOCKS] = {0};
			read_snapshot(snap.data, snap.len, h, v, &primary);
			if (!had)
				for (int k = 1; k < NCLOCKS; k++)
					s->has[k] = h[k], s->v[k] = v[k];
			if (raw == 0 && primary > 0 && primary < NCLOCKS)
				p->pm[i].native = primary;
		}
		if (has_sync && raw != 0)
			remote_sync(p, u->row, p->pm[i].base_row, sync.data, sync.len);
	}
	return 0;
}

/* ---- the plan ------------------------------------------------------------- */

/* Spread the shifts from the reached nodes along the edges. A shift past
 * 2^62 ns either way (offsets add up that far; 146 years, and timestamps
 * plus it could leave int64) fails the load. */
static int relax(struct tp *tp, struct tp_mf_plan *p)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < p->edges.len; i++) {
			struct edge *e = &p->edges.data[i];
			struct node *a = node_of(p, e->a), *b = node_of(p, e->b);
			bool over = false;
			if (a->reached && !b->reached) {
				b->reached = true;
				over = __builtin_sub_overflow(a->shift, e->d, &b->shift);
				changed = true;
			} else if (b->reached && !a->reached) {
				a->reached = true;
				over = __builtin_add_overflow(b->shift, e->d, &a->shift);
				changed = true;
			}
			if (over || a->shift > MF_MAX_SHIFT || a->shift < -MF_MAX_SHIFT ||
			    b->shift > MF_MAX_SHIFT || b->shift < -MF_MAX_SHIFT)
				return tp_fail(tp, -EINVAL,
				               "perfetto_manifest: clocks: offsets add up to more "
				               "than 2^62 ns");
		}
	}
	return 0;
}

static int clock_edges(struct tp *tp, struct tp_mf_plan *p)
{
	const struct tp_manifest *m = tp->manifest;
	for (size_t k = 0; k < m->nfiles; k++) {
		const struct tp_mf_file *e = &m->files[k];
		if (!e->has_clocks)
			continue;
		uint32_t src = 0, ref;
		if (!e->clock_machine) {
			if (e->nmachines)
				return tp_fail(
				    tp, -EINVAL,
				    "perfetto_manifest: clocks: file '%s' is a multi-machine "
				    "trace; name which machine the clock is on with clocks: "
				    "machine.",
				    e->path);
			src = e->machine ? named_row(tp, e->machine) : 0;
		} else {
			if (!declares_name(e, e->clock_machine))
				return tp_fail(
				    tp, -EINVAL,
				    "perfetto_manifest: clocks: machine '%s' is not a machine "
				    "declared by file '%s'.",
				    e->clock_machine, e->path);
			src = named_row(tp, e->clock_machine);
		}
		if (resolve_ref(tp, "clocks: sync_to.file", "clocks: sync_to.machine", e->sync_file,
		                e->sync_machine, src, &ref) < 0)
			return -EINVAL;
		uint64_t a, b;
		if (e->clock) {
			a = clock_node(src, e->clock);
		} else {
			int mi = member_of(p, e->path);
			if (mi < 0)
				goto unresolved;
			a = PRIVATE_NODE | (uint32_t)mi;
		}
		if (e->sync_clock) {
			b = clock_node(ref, e->sync_clock);
		} else {
			int mi = member_of(p, e->sync_file);
			if (mi < 0) {
				e = NULL;
				goto unresolved;
			}
			b = PRIVATE_NODE | (uint32_t)mi;
		}
		/* The entry is a snapshot of its two clocks: one clock twice is
		 * refused, as Perfetto's clock graph does. */
		if (a == b && !(a & PRIVATE_NODE)) {
			char id[64];
			if (src)
				snprintf(id, sizeof id, "%u(seq=0,tf=0,m=%u)", e->clock, src);
			else
				snprintf(id, sizeof id, "%u", e->clock);
			return tp_fail(tp, -EINVAL,
			               "Clock sync error: duplicate clock domain with id=%s at "
			               "snapshot %zu.",
			               id, p->msnaps.len);
		}
		edge_add(p, a, b, e->offset_ns);
		vec_push(&p->msnaps, ((struct msnap){src, ref}));
		node_of(p, a)->manual_src = true;
		continue;
	unresolved:
		return tp_fail(tp, -EINVAL,
		               "perfetto_manifest: clocks: could not resolve file '%s'. It must "
		               "match the `path` of an entry in the `files` array.",
		               e ? e->path : m->files[k].sync_file);
	}
	return 0;
}

/* The value node g reads when node s reads v, over the first n edges by a
 * shortest path of at most 4 of them (Perfetto's longest clock path). */
static bool convert(struct tp_mf_plan *p, size_t n, uint64_t s, int64_t v, uint64_t g, int64_t *out)
{
	enum { MAX_HOPS = 4, MAX_SEEN = 64 };
	uint64_t key[MAX_SEEN];
	int64_t val[MAX_SEEN];
	size_t seen = 1, from = 0;
	key[0] = s, val[0] = v;
	for (int hop = 0; hop <= MAX_HOPS; hop++) {
		size_t to = seen;
		for (size_t i = from; i < to; i++)
			if (key[i] == g) {
				*out = val[i];
				return true;
			}
		for (size_t i = from; hop < MAX_HOPS && i < to; i++) {
			for (size_t k = 0; k < n && seen < MAX_SEEN; k++) {
				const struct edge *e = &p->edges.data[k];
				uint64_t nk;
				int64_t nv;
				/* A value past int64 is no path (offsets are the
				 * user's: they may be anything). */
				if (e->a == key[i]) {
					nk = e->b;
					if (__builtin_add_overflow(val[i], e->d, &nv))
						continue;
				} else if (e->b == key[i]) {
					nk = e->a;
					if (__builtin_sub_overflow(val[i], e->d, &nv))
						continue;
				} else {
					continue;
				}
				bool dup = false;
				for (size_t j = 0; j < seen && !dup; j++)
					dup = key[j] == nk;
				if (!dup)
					key[seen] = nk, val[seen++] = nv;
			}
		}
		from = to;
	}
	return false;
}

/* The clock_snapshot rows of the `clocks` entries, as Perfetto adds them
 * when it reads the manifest: the k-th entry is snapshot k of its two
 * clocks, and each clock that the entries so far relate to the trace time
 * (g, none when the manifest names no trace_time) gets a row. */
static void manifest_snapshot_rows(struct tp *tp, struct tp_mf_plan *p, bool has_g, uint64_t g)
{
	struct tp_clock_snapshot_table *t = &tp->t.clock_snapshot;
	for (size_t k = 0; k < p->msnaps.len; k++) {
		const struct edge *e = &p->edges.data[k];
		uint64_t key[2] = {e->a, e->b};
		uint32_t row[2] = {p->msnaps.data[k].arow, p->msnaps.data[k].brow};
		int64_t v[2] = {e->d < 0 ? -e->d : 0, e->d > 0 ? e->d : 0};
		for (int c = 0; c < 2 && has_g; c++) {
			int64_t ts;
			if (!convert(p, k + 1, key[c], v[c], g, &ts))
				continue;
			bool priv = key[c] & PRIVATE_NODE;
			uint32_t clock = priv ? MF_TRACE_FILE : (uint32_t)(key[c] & 0xff);
			const char *name = priv ? NULL : tp_manifest_clock_name(clock);
			uint32_t r = tp_clock_snapshot_append(t);
			t->ts[r] = ts;
			t->clock_id[r] = clock;
			t->clock_name[r] = name ? tp_intern_cstr(tp, name) : 0;
			t->clock_value[r] = v[c];
			t->snapshot_id[r] = (int64_t)k;
			t->machine_id[r] = row[c];
		}
	}
}

int64_t tp_manifest_snapshot_ids(struct tp *tp)
{
	return tp->mplan ? (int64_t)tp->mplan->msnaps.len : 0;
}

int tp_manifest_plan(struct tp *tp, const struct tp_mf_member *ms, size_t n)
{
	struct tp_manifest *m = tp->manifest;
	struct tp_mf_plan *p = tb_calloc(1, sizeof *p);
	tp->mplan = p;
	p->m = m;
	p->n = n;
	p->pm = tb_calloc(n ? n : 1, sizeof *p->pm);
	/* Every named machine gets its row, in the manifest's order. */
	for (size_t k = 0; k < m->nfiles; k++) {
		if (m->files[k].machine)
			named_row(tp, m->files[k].machine);
		for (size_t j = 0; j < m->files[k].nmachines; j++)
			named_row(tp, m->files[k].machines[j].name);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct pmember *pm = &p->pm[i];
		pm->name = ms[i].name;
		pm->is_proto = ms[i].is_proto;
		pm->is_manifest = ms[i].is_manifest;
		pm->e = tp_manifest_file(m, ms[i].name);
		pm->native = MF_BOOTTIME;
		const struct tp_mf_machine_id *d0 = declared(pm->e, 0);
		if (pm->e && pm->e->machine)
			pm->base_row = named_row(tp, pm->e->machine);
		else if (d0)
			pm->base_row = named_row(tp, d0->name);
	}
	/* The trace time. */
	uint32_t tt_row = 0;
	if (m->trace_clock && resolve_ref(tp, "trace_time: file", "trace_time: machine", m->tt_file,
	                                  m->tt_machine, 0, &tt_row) < 0)
		return -EINVAL;
	if (clock_edges(tp, p) < 0)
		return -EINVAL;
	manifest_snapshot_rows(tp, p, m->trace_clock != 0, clock_node(tt_row, m->trace_clock));
	int first_proto = -1;
	for (uint32_t i = 0; i < n; i++) {
		if (p->pm[i].is_manifest)
			continue;
		if (p->pm[i].is_proto) {
			if (scan_proto(tp, p, i, ms[i].data, ms[i].len, 0) < 0)
				return -EINVAL;
			if (first_proto < 0 &&
			    !(p->pm[i].e && p->pm[i].e->has_clocks && !p->pm[i].e->clock))
				first_proto = (int)i;
		}
		if (!unit_of(p, i, 0)) {
			struct unit *u = vec_push_zeroed(&p->units);
			u->member = i;
			u->row = p->pm[i].base_row;
		}
	}
	/* Each unit's node. */
	for (size_t k = 0; k < p->units.len; k++) {
		struct unit *u = &p->units.data[k];
		const struct pmember *pm = &p->pm[u->member];
		bool pinned = pm->e && pm->e->has_clocks && !pm->e->clock;
		if (pm->is_proto && !pinned)
			u->node = clock_node(u->row, u->raw ? MF_BOOTTIME : pm->native);
		else if (!pm->is_proto && pm->e && pm->e->has_clocks && pm->e->clock)
			u->node = clock_node(u->row, pm->e->clock);
		else
			u->node = PRIVATE_NODE | u->member;
		node_of(p, u->node);
	}
	if (m->trace_clock)
		p->g = clock_node(tt_row, m->trace_clock);
	else if (first_proto >= 0)
		p->g = unit_of(p, (uint32_t)first_proto, 0)->node;
	else
		p->g = clock_node(0, MF_BOOTTIME);
	/* One machine's clocks, and REALTIME across machines. */
	bool rt_seen = false;
	uint64_t rt_first = 0;
	for (size_t s = 0; s < p->snaps.len; s++) {
		const struct snap *sn = &p->snaps.data[s];
		int first = 0;
		for (int k = 1; k < NCLOCKS; k++) {
			if (!sn->has[k])
				continue;
			if (!first)
				first = k;
			else
				edge_add(p, clock_node(sn->row, (uint32_t)first),
				         clock_node(sn->row, (uint32_t)k), sn->v[k] - sn->v[first]);
		}
		if (sn->has[MF_REALTIME]) {
			uint64_t rt = clock_node(sn->row, MF_REALTIME);
			if (rt_seen)
				edge_add(p, rt_first, rt, 0);
			rt_seen = true;
			rt_first = rt;
		}
	}
	if (rt_seen && (p->g & 0xff) == MF_REALTIME && !(p->g & PRIVATE_NODE))
		edge_add(p, rt_first, p->g, 0);
	struct node *g = node_of(p, p->g);
	g->reached = true;
	if (relax(tp, p) < 0)
		return -EINVAL;
	/* What no edge reaches: the same clock as the trace time on another
	 * machine, or a private timeline, is overlaid on it; first those no
	 * `clocks` entry places, so that one placed relative to them follows. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nodes.len; i++) {
			struct node *nd = &p->nodes.data[i];
			if (nd->reached || nd->manual_src != (pass == 1))
				continue;
			if ((nd->key & PRIVATE_NODE) || (nd->key & 0xff) == (p->g & 0xff)) {
				edge_add(p, p->g, nd->key, 0);
				if (relax(tp, p) < 0)
					return -EINVAL;
			}
		}
	}
	for (size_t k = 0; k < p->units.len; k++) {
		struct unit *u = &p->units.data[k];
		const struct node *nd = node_of(p, u->node);
		u->shift = nd->shift;
		u->drop = !nd->reached;
		if (u->drop)
			tp_stat_inc(tp, TP_STAT_clock_sync_unrelatable_clock_domains);
	}
	return 0;
}

void tp_manifest_begin_member(struct tp *tp, size_t i)
{
	struct tp_mf_plan *p = tp->mplan;
	if (!p || i >= p->n)
		return;
	p->cur = i;
	p->importing = true;
	const struct unit *u = unit_of(p, (uint32_t)i, 0);
	tp_machine_use(tp, u ? u->row : p->pm[i].base_row);
	tp->ts_shift = p->pm[i].is_proto ? 0 : tp_manifest_member_shift(tp, i);
	/* A text member whose clock the manifest relates is not also
	 * converted through the first protobuf member's snapshots. */
	tp->ts_raw =
	    !p->pm[i].is_proto && p->pm[i].e && p->pm[i].e->has_clocks && p->pm[i].e->clock;
}

int64_t tp_manifest_member_shift(struct tp *tp, size_t i)
{
	struct tp_mf_plan *p = tp->mplan;
	const struct unit *u = p ? unit_of(p, (uint32_t)i, 0) : NULL;
	return u ? u->shift : 0;
}

bool tp_manifest_machine(struct tp *tp, uint64_t raw, uint32_t *row)
{
	struct tp_mf_plan *p = tp->mplan;
	if (!p || !p->importing)
		return false;
	const struct pmember *pm = &p->pm[p->cur];
	if (check_machine(tp, pm->e, raw) < 0) {
		*row = 0;
		return true;
	}
	const struct unit *u = unit_of(p, (uint32_t)p->cur, raw);
	if (u) {
		*row = u->row;
		return true;
	}
	if (declared(pm->e, raw)) {
		*row = named_row(tp, declared(pm->e, raw)->name);
		return true;
	}
	return false;
}

int64_t tp_manifest_shift(struct tp *tp, uint64_t raw, bool *drop)
{
	struct tp_mf_plan *p = tp->mplan;
	*drop = false;
	if (!p || !p->importing)
		return 0;
	const struct unit *u = unit_of(p, (uint32_t)p->cur, raw);
	if (!u)
		return 0;
	*drop = u->drop;
	return u->shift;
}

uint32_t tp_manifest_trace_clock(struct tp *tp)
{
	return tp->manifest ? tp->manifest->trace_clock : 0;
}

void tp_manifest_plan_free(struct tp *tp)
{
	struct tp_mf_plan *p = tp->mplan;
	if (p) {
		tb_free(p->pm);
		vec_release(&p->units);
		vec_release(&p->snaps);
		vec_release(&p->nodes);
		vec_release(&p->edges);
		vec_release(&p->msnaps);
		tb_free(p);
		tp->mplan = NULL;
	}
	tp_manifest_free(tp->manifest);
	tp->manifest = NULL;
}
