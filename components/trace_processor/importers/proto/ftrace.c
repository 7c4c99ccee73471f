/*
 * Ftrace (TracePacket.ftrace_events, an FtraceEventBundle) in the proto
 * importer. At tokenize time each event of a bundle is pushed to the sorter
 * at its own timestamp (ftrace clock = BOOTTIME unless the bundle says
 * otherwise); compact_sched arrays are expanded into one fixed record per
 * switch / waking; generic_event_descriptors name the dynamic (65536+)
 * event fields. At parse time the fields are decoded and handed to the
 * shared ftrace model (model/ftrace.c: sched_switch, waking, task_newtask,
 * task_rename, process exit, cpu_frequency / cpu_idle counters, print's
 * atrace text), and every event (but the first compact switch of a cpu,
 * whose prev task is unknown) is a row of `ftrace_event` with its fields as
 * args, named after the FtraceEvent oneof field (or the generic
 * descriptor).
 */
#include "proto_int.h"
#include "../../sorter/sorter.h"

#include <stdio.h>
#include <string.h>

#include "protos.h"
#include "pb_fields.h"

/* FtraceEvent field ids from here on are generic events (their descriptors
 * in the bundle). */
enum { FE_GENERIC_MIN = 65536 };

#define FTRACE_MAX_CPUS TP_MAX_CPUS

/* The fixed record of one compact_sched event (no payload). */
struct ftrace_compact_rec {
	uint32_t kind; /* EV_FTRACE_COMPACT_SWITCH / _WAKING */
	uint32_t cpu;
	int64_t a;   /* switch: prev_state; waking: pid */
	int32_t pid; /* switch: next_pid; waking: target_cpu */
	int32_t prio;
	uint32_t comm; /* pool id */
	uint32_t flags;
};

/* The arg sets of compact events repeat (a few threads, states and
 * priorities): a cache (2-way set associative) from their values to the
 * committed set saves building, hashing and comparing them for every
 * event. */
#define COMPACT_ARGS_BITS 9
#define COMPACT_ARGS_CACHE (1u << COMPACT_ARGS_BITS)
struct compact_args_slot {
	uint64_t k0, k1, k2; /* k2 = kind << 32 | comm; 0 = empty */
	uint64_t k3;         /* switch: prev_pid << 32 | prev_prio */
	uint32_t k4;         /* switch: prev_comm */
	uint32_t set;
};

/* What a compact switch inherits from the cpu's previous one (Perfetto
 * fills the prev_* args of a compact sched_switch from it). */
struct compact_prev {
	int64_t pid;
	int32_t prio;
	uint32_t comm;
};

VEC_DEFINE(ftrace_u64s, uint64_t);

struct proto_ftrace {
	struct tp_ftrace model;
	/* compact_sched decode scratch, kept between bundles: the arrays by
	 * field number, the comm table, the records and their timestamps. */
	struct ftrace_u64s arrays[13];
	VEC(uint32_t) intern;
	VEC(int64_t) ts;
	VEC(struct ftrace_compact_rec) recs;
	VEC(bool) keep;
	struct compact_args_slot args_cache[COMPACT_ARGS_CACHE];
	/* Arg keys of compact events, interned once. */
	uint32_t k_prev_comm, k_prev_pid, k_prev_prio, k_prev_state;
	uint32_t k_next_pid, k_next_prio, k_next_comm;
	uint32_t k_comm, k_pid, k_prio, k_target_cpu;
	struct hmap generic; /* field id -> (name pool id) */
	uint32_t name_sched_switch, name_sched_waking, name_cpufreq, name_cpuidle;
};

static __attribute__((noinline)) struct proto_ftrace *state_new(struct proto_importer *im)
{
	{
		im->ftrace = tb_calloc(1, sizeof *im->ftrace);
		tp_ftrace_init(im->tp, &im->ftrace->model);
		im->ftrace->name_cpufreq = tp_intern_cstr(im->tp, "cpufreq");
		im->ftrace->name_cpuidle = tp_intern_cstr(im->tp, "cpuidle");
		im->ftrace->name_sched_switch = tp_intern_cstr(im->tp, "sched_switch");
		im->ftrace->name_sched_waking = tp_intern_cstr(im->tp, "sched_waking");
		im->ftrace->k_prev_comm = tp_intern_cstr(im->tp, "prev_comm");
		im->ftrace->k_prev_pid = tp_intern_cstr(im->tp, "prev_pid");
		im->ftrace->k_prev_prio = tp_intern_cstr(im->tp, "prev_prio");
		im->ftrace->k_prev_state = tp_intern_cstr(im->tp, "prev_state");
		im->ftrace->k_next_pid = tp_intern_cstr(im->tp, "next_pid");
		im->ftrace->k_next_prio = tp_intern_cstr(im->tp, "next_prio");
		im->ftrace->k_next_comm = tp_intern_cstr(im->tp, "next_comm");
		im->ftrace->k_comm = tp_intern_cstr(im->tp, "comm");
		im->ftrace->k_pid = tp_intern_cstr(im->tp, "pid");
		im->ftrace->k_prio = tp_intern_cstr(im->tp, "prio");
		im->ftrace->k_target_cpu = tp_intern_cstr(im->tp, "target_cpu");
	}
	return im->ftrace;
}

static inline struct proto_ftrace *state(struct proto_importer *im)
{
	return im->ftrace ? im->ftrace : state_new(im);
}

void tp_proto_ftrace_free(struct proto_importer *im)
{
	struct proto_ftrace *f = im->ftrace;
	if (!f)
		return;
	tp_ftrace_release(&f->model);
	hmap_release(&f->generic);
	for (size_t i = 0; i < TB_ARRAY_SIZE(f->arrays); i++)
		vec_release(&f->arrays[i]);
	vec_release(&f->intern);
	vec_release(&f->ts);
	vec_release(&f->recs);
	vec_release(&f->keep);
	tb_free(f);
	im->ftrace = NULL;
}

/* ---- tokenize ------------------------------------------------------------- */

/* Decode a repeated scalar field (packed or not) into v; a malformed varint
 * ends it (the values before it are kept). */
static void packed(struct ftrace_u64s *v, const struct pb_field *f)
{
	if (f->wire == PB_WIRE_VARINT) {
		vec_push(v, f->val);
		return;
	}
	if (f->wire != PB_WIRE_LEN)
		return;
	/* At most one value a byte: reserve once, store without checks. */
	vec_reserve(v, f->len);
	const uint8_t *p = f->data, *end = f->data + f->len;
	uint64_t *out = v->data + v->len;
	while (p < end) {
		uint64_t x;
		if (!(p = pb_read_varint_short(p, end, &x)))
			break;
		*out++ = x;
	}
	v->len = (size_t)(out - v->data);
}

/* The sorter runs of seq's ftrace events on a cpu: compact_sched switches
 * (i = 3 cpu), compact wakings (3 cpu + 1) and FtraceEvents (3 cpu + 2).
 * Each comes in ts order, where the cpus of one sequence, and a bundle's
 * switches, wakings and events, interleave. */
enum { RUN_SWITCH, RUN_WAKING, RUN_EVENTS, RUNS_PER_CPU };
static uint32_t cpu_src(struct proto_importer *im, struct proto_seq *seq, uint32_t i)
{
	if (i >= seq->cpu_src.len) {
		size_t old = seq->cpu_src.len;
		vec_resize(&seq->cpu_src, (size_t)i + 1);
		memset(seq->cpu_src.data + old, 0xff, (seq->cpu_src.len - old) * sizeof(uint32_t));
	}
	if (seq->cpu_src.data[i] == UINT32_MAX) {
		/* Each of a cpu's runs is a queue of its own, as Perfetto's
		 * per-cpu ftrace and inline sched queues. */
		seq->cpu_src.data[i] = proto_new_src(im);
		tp_sorter_own_queue(im->tp->sorter, seq->cpu_src.data[i]);
	}
	return seq->cpu_src.data[i];
}

/* The timestamps of a delta-coded array, in the trace clock, into ts[0, n);
 * false for an event whose clock cannot be converted (counted). */
static bool compact_ts(struct proto_importer *im, struct proto_seq *seq, int64_t clock_off,
                       const uint64_t *delta, int64_t *ts, size_t n, bool *keep)
{
	uint64_t t = 0;
	bool all = true;
	for (size_t i = 0; i < n; i++) {
		t += delta[i];
		keep[i] = tp_proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
		                                   (uint64_t)((int64_t)t + clock_off), &ts[i]);
		if (!keep[i]) {
			tp_stat_inc(im->tp, TP_STAT_clock_sync_failure);
			all = false;
		}
	}
	return all;
}

/* Push the n records of one compact array to run src, leaving out those
 * whose timestamp did not convert. */
static void compact_push(struct proto_importer *im, uint32_t src, int64_t *ts,
                         struct ftrace_compact_rec *recs, const bool *keep, bool all, size_t n)
{
	if (!all) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (keep[i]) {
				ts[m] = ts[i];
				recs[m++] = recs[i];
			}
		}
		n = m;
	}
	tp_sorter_push_many(im->tp->sorter, src, ts, recs, sizeof *recs, n);
}

static void compact_sched(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu,
                          int64_t clock_off, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_ftrace *fs = state(im);
	struct ftrace_u64s *a = fs->arrays;
	for (size_t i = 0; i < 13; i++)
		vec_clear(&a[i]);
	vec_clear(&fs->intern);
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_FtraceEventBundle_CompactSched_intern_table &&
		    f.wire == PB_WIRE_LEN)
			vec_push(&fs->intern, tp_intern(tp, (const char *)f.data, f.len));
		else if (f.id >= PB_F_FtraceEventBundle_CompactSched_switch_timestamp &&
		         f.id <= PB_F_FtraceEventBundle_CompactSched_waking_common_flags)
			packed(&a[f.id], &f);
	}
	const uint32_t *intern = fs->intern.data;
	size_t n_intern = fs->intern.len;
	/* switch: 1 ts, 2 prev_state, 3 next_pid, 4 next_prio, 6 comm index */
	size_t ns = a[1].len;
	if (a[2].len != ns || a[3].len != ns || a[4].len != ns || a[6].len != ns) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		ns = 0;
	}
	/* waking: 7 ts, 8 pid, 9 target_cpu, 10 prio, 11 comm index, 12 flags */
	size_t nw = a[7].len;
	if (a[8].len != nw || a[9].len != nw || a[10].len != nw || a[11].len != nw ||
	    (a[12].len && a[12].len != nw)) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		nw = 0;
	}
	size_t most = ns > nw ? ns : nw;
	vec_clear(&fs->ts);
	vec_clear(&fs->recs);
	vec_clear(&fs->keep);
	vec_reserve(&fs->ts, most);
	vec_reserve(&fs->recs, most);
	vec_reserve(&fs->keep, most);
	int64_t *ts = fs->ts.data;
	struct ftrace_compact_rec *recs = fs->recs.data;
	bool *keep = fs->keep.data;

	bool all = compact_ts(im, seq, clock_off, a[1].data, ts, ns, keep);
	for (size_t i = 0; i < ns; i++) {
		uint64_t ci = a[6].data[i];
		recs[i] = (struct ftrace_compact_rec){
		    .kind = EV_FTRACE_COMPACT_SWITCH | im->tag,
		    .cpu = cpu,
		    .a = (int64_t)a[2].data[i],
		    .pid = (int32_t)a[3].data[i],
		    .prio = (int32_t)a[4].data[i],
		    .comm = ci < n_intern ? intern[ci] : 0,
		};
	}
	compact_push(im, cpu_src(im, seq, RUNS_PER_CPU * cpu + RUN_SWITCH), ts, recs, keep, all,
	             ns);

	all = compact_ts(im, seq, clock_off, a[7].data, ts, nw, keep);
	for (size_t i = 0; i < nw; i++) {
		uint64_t ci = a[11].data[i];
		recs[i] = (struct ftrace_compact_rec){
		    .kind = EV_FTRACE_COMPACT_WAKING | im->tag,
		    .cpu = cpu,
		    .a = (int32_t)a[8].data[i],
		    .pid = (int32_t)a[9].data[i],
		    .prio = (int32_t)a[10].data[i],
		    .comm = ci < n_intern ? intern[ci] : 0,
		    .flags = a[12].len ? (uint32_t)a[12].data[i] : TP_NULL_U32,
		};
	}
	compact_push(im, cpu_src(im, seq, RUNS_PER_CPU * cpu + RUN_WAKING), ts, recs, keep, all,
	             nw);
}

/* A generic event descriptor: field_id -> the event name. event_descriptor
 * is a serialized google.protobuf.DescriptorProto, whose name is field 1 (a
 * schema protos/ does not hold, hence the number). */
static void generic_descriptor(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct pb_field id = {0}, d = {0}, name = {0};
	if (pb_find_field(p, n, PB_F_FtraceEventBundle_GenericEventDescriptor_field_id, &id) != 1 ||
	    id.wire != PB_WIRE_VARINT)
		return;
	if (pb_find_field(p, n, PB_F_FtraceEventBundle_GenericEventDescriptor_event_descriptor,
	                  &d) != 1 ||
	    d.wire != PB_WIRE_LEN)
		return;
	if (pb_find_field(d.data, d.len, PB_F_DescriptorProto_name, &name) != 1 ||
	    name.wire != PB_WIRE_LEN)
		return;
	hmap_put(&state(im)->generic, (uint32_t)id.val,
	         tp_intern(im->tp, (const char *)name.data, name.len));
}

/* An FtraceEvent's timestamp (exactly one), its event field id (0 none),
 * and whether it is an event whose fields refer to interned kernel symbols
 * (sched_blocked_reason, funcgraph_entry / _exit). */
static bool event_header(const uint8_t *p, size_t n, uint64_t *ts, uint32_t *id, bool *symbols)
{
	struct pb_reader r;
	struct pb_field f = {0};
	int seen = 0;
	*symbols = false;
	*id = 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_FtraceEvent_timestamp) {
			seen++;
			*ts = f.val;
			if (f.wire != PB_WIRE_VARINT)
				return false;
		} else if (f.id == PB_F_FtraceEvent_sched_blocked_reason ||
		           f.id == PB_F_FtraceEvent_funcgraph_entry ||
		           f.id == PB_F_FtraceEvent_funcgraph_exit) {
			*symbols = true;
		}
		if (f.wire == PB_WIRE_LEN && f.id > PB_F_FtraceEvent_pid)
			*id = f.id;
	}
	return seen == 1 && !pb_reader_error(&r);
}

/* Streaming: a recorder reads cpu after cpu, so a cpu's first bundle can
 * come after other cpus' bundles of the same (and later) drains. At the
 * sequence's first bundle every cpu SystemInfo.num_cpus announces is
 * expected (the sorter holds back until it is heard from, or has been idle
 * long); a cpu's first bundle ends its wait. */
static void cpu_heard(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu)
{
	struct tp_sorter *so = im->tp->sorter;
	if (!seq->ftrace_started) {
		seq->ftrace_started = true;
		vec_resize(&seq->cpu_seen, im->num_cpus > cpu ? im->num_cpus : (size_t)cpu + 1);
		memset(seq->cpu_seen.data, 0, seq->cpu_seen.len * sizeof *seq->cpu_seen.data);
		for (uint32_t c = 0; c < im->num_cpus; c++)
			if (c != cpu)
				tp_sorter_expect(so, cpu_src(im, seq, RUNS_PER_CPU * c), true);
	}
	if (cpu >= seq->cpu_seen.len) {
		size_t old = seq->cpu_seen.len;
		vec_resize(&seq->cpu_seen, (size_t)cpu + 1);
		memset(seq->cpu_seen.data + old, 0, (seq->cpu_seen.len - old) * sizeof(bool));
	}
	if (seq->cpu_seen.data[cpu])
		return;
	seq->cpu_seen.data[cpu] = true;
	tp_sorter_expect(so, cpu_src(im, seq, RUNS_PER_CPU * cpu), false);
}

void tp_proto_ftrace_tokenize(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                              size_t n)
{
	struct tp *tp = im->tp;
	uint32_t cpu = 0;
	uint64_t clock = 0;
	int64_t fts = 0, bts = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_FtraceEventBundle_cpu && f.wire == PB_WIRE_VARINT)
			cpu = (uint32_t)f.val;
		else if (f.id == PB_F_FtraceEventBundle_ftrace_clock && f.wire == PB_WIRE_VARINT)
			clock = f.val;
		else if (f.id == PB_F_FtraceEventBundle_ftrace_timestamp &&
		         f.wire == PB_WIRE_VARINT)
			fts = (int64_t)f.val;
		else if (f.id == PB_F_FtraceEventBundle_boot_timestamp && f.wire == PB_WIRE_VARINT)
			bts = (int64_t)f.val;
		else if (f.id == PB_F_FtraceEventBundle_generic_event_descriptors &&
		         f.wire == PB_WIRE_LEN)
			generic_descriptor(im, f.data, f.len);
	}
	if (pb_reader_error(&r) || cpu >= FTRACE_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		return;
	}
	/* A non-boot ftrace clock is aligned by the bundle's (ftrace, boot)
	 * timestamp pair. */
	int64_t off = clock > 1 && fts && bts ? bts - fts : 0;
	cpu_heard(im, seq, cpu);
	tp_proto_ftrace_kernel_bundle(im, seq, cpu, off, p, n);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_LEN)
			continue;
		if (f.id == PB_F_FtraceEventBundle_compact_sched) {
			compact_sched(im, seq, cpu, off, f.data, f.len);
			continue;
		}
		if (f.id != PB_F_FtraceEventBundle_event)
			continue;
		uint64_t t;
		uint32_t id;
		bool symbols;
		if (!event_header(f.data, f.len, &t, &id, &symbols)) {
			tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
			continue;
		}
		int64_t ts;
		if (!tp_proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
		                              (uint64_t)((int64_t)t + off), &ts)) {
			tp_stat_inc(tp, TP_STAT_clock_sync_failure);
			continue;
		}
		if (tp_proto_ftrace_kernel_place(im, seq, cpu, ts, id, f.data, f.len))
			continue;
		/* Only events naming interned kernel symbols hold the
		 * sequence's interning generation. */
		tp_proto_push_src(im, cpu_src(im, seq, RUNS_PER_CPU * cpu + RUN_EVENTS), ts,
		                  EV_FTRACE, symbols ? seq->gen : NULL, seq, f.data, f.len, &cpu,
		                  sizeof cpu);
	}
}

/* Build and commit the arg set of compact event r (a cache miss). */
static __attribute__((noinline)) uint32_t compact_args_commit(struct proto_importer *im,
                                                              struct proto_ftrace *fs,
                                                              const struct ftrace_compact_rec *r,
                                                              const struct compact_prev *prev)
{
	tp_args_begin(&im->args);
	if (r->kind == EV_FTRACE_COMPACT_SWITCH) {
		/* Perfetto's order: the fields of SchedSwitchFtraceEvent. */
		tp_args_add_string(&im->args, fs->k_prev_comm, fs->k_prev_comm, prev->comm);
		tp_args_add_int(&im->args, fs->k_prev_pid, fs->k_prev_pid, prev->pid);
		tp_args_add_int(&im->args, fs->k_prev_prio, fs->k_prev_prio, prev->prio);
		tp_args_add_int(&im->args, fs->k_prev_state, fs->k_prev_state, r->a);
		tp_args_add_string(&im->args, fs->k_next_comm, fs->k_next_comm, r->comm);
		tp_args_add_int(&im->args, fs->k_next_pid, fs->k_next_pid, r->pid);
		tp_args_add_int(&im->args, fs->k_next_prio, fs->k_next_prio, r->prio);
	} else {
		tp_args_add_string(&im->args, fs->k_comm, fs->k_comm, r->comm);
		tp_args_add_int(&im->args, fs->k_pid, fs->k_pid, r->a);
		tp_args_add_int(&im->args, fs->k_prio, fs->k_prio, r->prio);
		tp_args_add_int(&im->args, fs->k_target_cpu, fs->k_target_cpu, r->pid);
	}
	return tp_args_commit(im->tp, &im->args);
}

/* The arg set of a compact event, as Perfetto's: switch {prev_comm,
 * prev_pid, prev_prio (from the cpu's previous switch, prev: NULL for a
 * waking), prev_state, next_comm, next_pid, next_prio}, waking {comm, pid,
 * prio, target_cpu}. */
static inline uint32_t compact_args(struct proto_importer *im, struct proto_ftrace *fs,
                                    const struct ftrace_compact_rec *r,
                                    const struct compact_prev *prev)
{
	uint64_t k0 = (uint64_t)r->a, k1 = (uint64_t)(uint32_t)r->pid << 32 | (uint32_t)r->prio;
	uint64_t k2 = (uint64_t)r->kind << 32 | r->comm;
	uint64_t k3 = prev ? (uint64_t)(uint32_t)prev->pid << 32 | (uint32_t)prev->prio : 0;
	uint32_t k4 = prev ? prev->comm : 0;
	/* Each key multiplied by its own odd constant, then folded and mixed
	 * once more, so that keys differing in any few low bits spread. */
	uint64_t h = (k0 * 0x9e3779b97f4a7c15ull) ^ (k1 * 0xc2b2ae3d27d4eb4full) ^
	             (k2 * 0x165667b19e3779f9ull) ^
	             ((k3 ^ (uint64_t)k4 << 7) * 0xd6e8feb86659fd93ull);
	h = (h ^ (h >> 32)) * 0xff51afd7ed558ccdull;
	/* Two ways a bucket: the newest first, the one it displaced second. */
	struct compact_args_slot *slot = &fs->args_cache[(h >> (64 - COMPACT_ARGS_BITS)) & ~1ull];
	for (int i = 0; i < 2; i++)
		if (slot[i].k2 == k2 && slot[i].k0 == k0 && slot[i].k1 == k1 && slot[i].k3 == k3 &&
		    slot[i].k4 == k4)
			return slot[i].set;
	slot[1] = slot[0];
	slot[0] =
	    (struct compact_args_slot){k0, k1, k2, k3, k4, compact_args_commit(im, fs, r, prev)};
	return slot[0].set;
}

void tp_proto_ftrace_compact_parse(struct proto_importer *im, int64_t ts, const void *payload)
{
	struct tp *tp = im->tp;
	struct ftrace_compact_rec r;
	memcpy(&r, payload, sizeof r);
	r.kind &= PROTO_KIND_MASK;
	struct proto_ftrace *fs = state(im);
	struct tp_ftrace_cpu *c = tp_ftrace_cpu(tp, &fs->model, r.cpu);
	bool row_only = ts < tp_proto_ftrace_kernel_crop(im);
	if (r.kind == EV_FTRACE_COMPACT_SWITCH) {
		if (!c->has_last) {
			tp_stat_inc(tp, TP_STAT_compact_sched_switch_skipped);
			c->has_last = true;
			c->last_pid = r.pid;
			c->last_utid = tp_ftrace_thread_named(tp, r.pid, r.comm);
			c->last_prio = r.prio;
			return;
		}
		uint32_t prev_utid = c->last_utid;
		if (!tp->cfg.no_ftrace_raw) {
			/* prev_comm: the thread's name now (a task_rename while it
			 * ran shows), as Perfetto looks it up. */
			struct compact_prev prev = {
			    c->last_pid, c->last_prio,
			    prev_utid < tp->t.thread.n ? tp->t.thread.name[prev_utid] : 0};
			tp_ftrace_raw(tp, &fs->model, ts, r.cpu, fs->name_sched_switch, prev_utid,
			              TP_NULL_U32, compact_args(im, fs, &r, &prev));
		}
		if (row_only) {
			/* Before the crop time: the next switch still knows
			 * who ran, but no sched row is opened. */
			c->last_pid = r.pid;
			c->last_utid = tp_ftrace_thread_named(tp, r.pid, r.comm);
			c->last_prio = r.prio;
			return;
		}
		tp_ftrace_sched_switch(tp, &fs->model, ts, r.cpu, true, -1, 0,
		                       tp_ftrace_end_state(tp, &fs->model, r.a), r.pid, r.comm,
		                       r.prio);
		return;
	}
	if (!c->has_last) {
		tp_stat_inc(tp, TP_STAT_compact_sched_waking_skipped);
		return;
	}
	uint32_t wakee = tp_ftrace_thread_named(tp, r.a, r.comm);
	if (!tp->cfg.no_ftrace_raw)
		tp_ftrace_raw(tp, &fs->model, ts, r.cpu, fs->name_sched_waking, c->last_utid,
		              r.flags, compact_args(im, fs, &r, NULL));
	if (row_only)
		return;
	tp_ftrace_waking(tp, &fs->model, ts, wakee, c->last_utid);
}

/* The field of event `id` that holds an interned kernel symbol (0: none),
 * as Perfetto's list of kernel function fields. */
static uint32_t symbol_field(uint32_t id)
{
	switch (id) {
	case PB_F_FtraceEvent_sched_blocked_reason:
		return PB_F_SchedBlockedReasonFtraceEvent_caller;
	case PB_F_FtraceEvent_funcgraph_entry:
		return PB_F_FuncgraphEntryFtraceEvent_func;
	case PB_F_FtraceEvent_funcgraph_exit:
		return PB_F_FuncgraphExitFtraceEvent_func;
	default:
		return 0;
	}
}

/* Args of a typed event: its message's scalar fields by name, through the
 * generated descriptors; a kernel symbol field is the symbol's name when
 * the sequence interned it. */
static void typed_args(struct proto_importer *im, const struct proto_gen *gen, uint32_t id,
                       const ProtobufCMessageDescriptor *md, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	uint32_t sym = gen ? symbol_field(id) : 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		const ProtobufCFieldDescriptor *fd =
		    protobuf_c_message_descriptor_get_field(md, f.id);
		if (!fd || fd->label == PROTOBUF_C_LABEL_REPEATED)
			continue;
		uint32_t k = tp_intern_cstr(tp, fd->name);
		if (f.id == sym && f.wire == PB_WIRE_VARINT &&
		    proto_gen_lookup(gen, INTERN_KERNEL_SYMBOLS, f.val)) {
			tp_args_add_string(
			    &im->args, k, k,
			    proto_interned_str(tp, gen, INTERN_KERNEL_SYMBOLS, f.val));
			continue;
		}
		switch (fd->type) {
		case PROTOBUF_C_TYPE_STRING:
			if (f.wire == PB_WIRE_LEN)
				tp_args_add_string(&im->args, k, k,
				                   tp_intern(tp, (const char *)f.data, f.len));
			break;
		case PROTOBUF_C_TYPE_INT32:
		case PROTOBUF_C_TYPE_ENUM:
		case PROTOBUF_C_TYPE_SINT32:
			if (f.wire == PB_WIRE_VARINT)
				tp_args_add_int(&im->args, k, k,
				                fd->type == PROTOBUF_C_TYPE_SINT32
				                    ? (int32_t)((f.val >> 1) ^ -(f.val & 1))
				                    : (int32_t)f.val);
			break;
		case PROTOBUF_C_TYPE_INT64:
			if (f.wire == PB_WIRE_VARINT)
				tp_args_add_int(&im->args, k, k, (int64_t)f.val);
			break;
		case PROTOBUF_C_TYPE_UINT32:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_BOOL:
			if (f.wire == PB_WIRE_VARINT)
				tp_args_add_uint(&im->args, k, k, f.val);
			break;
		default:
			break;
		}
	}
}

static int64_t field_int(const uint8_t *p, size_t n, uint32_t id, int64_t def)
{
	struct pb_field f = {0};
	if (pb_find_field(p, n, id, &f) != 1 || f.wire != PB_WIRE_VARINT)
		return def;
	return (int64_t)f.val;
}

static uint32_t field_str(struct tp *tp, const uint8_t *p, size_t n, uint32_t id)
{
	struct pb_field f = {0};
	if (pb_find_field(p, n, id, &f) != 1 || f.wire != PB_WIRE_LEN)
		return 0;
	return tp_intern(tp, (const char *)f.data, f.len);
}

/* The args of a typed sched_switch row: prev_comm, prev_pid, prev_prio,
 * prev_state, next_comm, next_pid, next_prio (fields 1-7), each present. */
static void switch_args(struct proto_importer *im, const uint8_t *p, size_t n)
{
	static const char *const keys[] = {"prev_comm", "prev_pid", "prev_prio", "prev_state",
	                                   "next_comm", "next_pid", "next_prio"};
	struct tp *tp = im->tp;
	for (uint32_t f = PB_F_SchedSwitchFtraceEvent_prev_comm;
	     f <= PB_F_SchedSwitchFtraceEvent_next_prio; f++) {
		uint32_t k = tp_intern_cstr(tp, keys[f - 1]);
		if (f == PB_F_SchedSwitchFtraceEvent_prev_comm ||
		    f == PB_F_SchedSwitchFtraceEvent_next_comm) {
			uint32_t sid = field_str(tp, p, n, f);
			tp_args_add_string(&im->args, k, k, sid ? sid : tp_intern(tp, "", 0));
		} else if (f == PB_F_SchedSwitchFtraceEvent_prev_state) {
			tp_args_add_int(&im->args, k, k, field_int(p, n, f, 0));
		} else {
			tp_args_add_int(&im->args, k, k, (int32_t)field_int(p, n, f, 0));
		}
	}
}

/* print: the atrace text of a userspace trace_marker write (field 2). */
static void print_event(struct proto_importer *im, int64_t ts, int64_t pid, const uint8_t *p,
                        size_t n)
{
	struct pb_field b = {0};
	if (pb_find_field(p, n, PB_F_PrintFtraceEvent_buf, &b) != 1 || b.wire != PB_WIRE_LEN ||
	    b.len < 1)
		return;
	tp_ftrace_print(im->tp, &state(im)->model, ts, pid, (const char *)b.data, b.len);
}

/* sched_cpu_util_cfs: "Cpu N Util", "Cpu N Cap" and "Cpu N Nr Running"
 * cpu counters, as Perfetto's ParseSchedCpuUtilCfs. */
static void cpu_util_cfs(struct tp *tp, int64_t ts, const uint8_t *p, size_t n)
{
	static const struct {
		const char *type, *fmt;
		uint32_t field;
	} c[] = {
	    {"cpu_utilization", "Cpu %u Util", PB_F_SchedCpuUtilCfsFtraceEvent_cpu_util},
	    {"cpu_capacity", "Cpu %u Cap", PB_F_SchedCpuUtilCfsFtraceEvent_capacity},
	    {"cpu_nr_running", "Cpu %u Nr Running", PB_F_SchedCpuUtilCfsFtraceEvent_nr_running},
	};
	uint32_t cpu = (uint32_t)field_int(p, n, PB_F_SchedCpuUtilCfsFtraceEvent_cpu, 0);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char name[48];
		snprintf(name, sizeof name, c[i].fmt, cpu);
		tp_ftrace_cpu_counter(tp, c[i].type, tp_intern_cstr(tp, name), cpu, ts,
		                      (double)(uint64_t)field_int(p, n, c[i].field, 0));
	}
}

/* dpu and g2d marks are read through one set of numbers, and so is every
 * mark's pid (tgid). */
_Static_assert(
    PB_F_DpuTracingMarkWriteFtraceEvent_type == PB_F_G2dTracingMarkWriteFtraceEvent_type &&
        PB_F_DpuTracingMarkWriteFtraceEvent_name == PB_F_G2dTracingMarkWriteFtraceEvent_name &&
        PB_F_DpuTracingMarkWriteFtraceEvent_value == PB_F_G2dTracingMarkWriteFtraceEvent_value,
    "dpu and g2d mark fields differ");
_Static_assert(PB_F_TracingMarkWriteFtraceEvent_pid == PB_F_SdeTracingMarkWriteFtraceEvent_pid &&
                   PB_F_TracingMarkWriteFtraceEvent_pid ==
                       PB_F_DpuTracingMarkWriteFtraceEvent_pid &&
                   PB_F_TracingMarkWriteFtraceEvent_pid == PB_F_G2dTracingMarkWriteFtraceEvent_pid,
               "mark pid fields differ");

/* A display driver's tracing_mark_write (sde, dpu, g2d, mdss): an
 * atrace-style marker with its fields split, as Perfetto's
 * ParseKernelTracingMarkWrite takes them. The phase is the type character,
 * or from trace_begin where the driver has no type. */
static void kernel_mark(struct proto_importer *im, int64_t ts, int64_t pid, uint32_t id,
                        const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	/* Field numbers: type, trace_begin, name, value (0: none). */
	uint32_t f_type = 0, f_begin = PB_F_TracingMarkWriteFtraceEvent_trace_begin,
	         f_name = PB_F_TracingMarkWriteFtraceEvent_trace_name, f_value = 0;
	struct pb_field type = {0}, begin = {0}, name = {0};
	bool has_type, has_begin;
	if (id == PB_F_FtraceEvent_sde_tracing_mark_write)
		f_type = PB_F_SdeTracingMarkWriteFtraceEvent_trace_type,
		f_begin = PB_F_SdeTracingMarkWriteFtraceEvent_trace_begin,
		f_name = PB_F_SdeTracingMarkWriteFtraceEvent_trace_name,
		f_value = PB_F_SdeTracingMarkWriteFtraceEvent_value;
	else if (id == PB_F_FtraceEvent_dpu_tracing_mark_write ||
	         id == PB_F_FtraceEvent_g2d_tracing_mark_write)
		f_type = PB_F_DpuTracingMarkWriteFtraceEvent_type, f_begin = 0,
		f_name = PB_F_DpuTracingMarkWriteFtraceEvent_name,
		f_value = PB_F_DpuTracingMarkWriteFtraceEvent_value;
	has_type = f_type && pb_find_field(p, n, f_type, &type) >= 1 && type.wire == PB_WIRE_VARINT;
	has_begin =
	    f_begin && pb_find_field(p, n, f_begin, &begin) >= 1 && begin.wire == PB_WIRE_VARINT;
	/* sde needs either; dpu/g2d a non-zero type; mdss trace_begin. */
	if ((id == PB_F_FtraceEvent_sde_tracing_mark_write && !has_type && !has_begin) ||
	    (f_type && !f_begin && (!has_type || !type.val)) ||
	    (id == PB_F_FtraceEvent_tracing_mark_write && !has_begin)) {
		tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
		return;
	}
	char phase = has_type && type.val ? (char)type.val : has_begin && begin.val ? 'B' : 'E';
	int64_t tgid = (int32_t)field_int(p, n, PB_F_TracingMarkWriteFtraceEvent_pid, 0);
	/* dpu: only counters can trust the payload's tgid (Perfetto). */
	if (id == PB_F_FtraceEvent_dpu_tracing_mark_write && phase != 'C')
		tgid = 0;
	const char *s = "";
	size_t len = 0;
	if (pb_find_field(p, n, f_name, &name) >= 1 && name.wire == PB_WIRE_LEN)
		s = (const char *)name.data, len = name.len;
	int64_t value = f_value ? (int32_t)field_int(p, n, f_value, 0) : 0;
	tp_ftrace_kernel_mark(tp, &state(im)->model, ts, pid, phase, tgid, s, len, value);
}

/* Typed events our protos do not describe (FtraceEvent oneof numbers). */
static const char *other_event_name(uint32_t id)
{
	static const struct {
		uint32_t id;
		const char *name;
	} t[] = {
	    {24, "softirq_entry"},
	    {25, "softirq_exit"},
	    {36, "irq_handler_entry"},
	    {37, "irq_handler_exit"},
	    {57, "workqueue_execute_end"},
	    {58, "workqueue_execute_start"},
	    {113, "suspend_resume"},
	    {241, "sched_process_hang"},
	    {242, "sched_process_wait"},
	    {313, "rss_stat"},
	    {326, "oom_score_adj_update"},
	    {329, "sys_enter"},
	    {330, "sys_exit"},
	    {332, "gpu_frequency"},
	    {408, "console"},
	    {491, "sched_migrate_task"},
	    {555, "timer_start"},
	    {614, "psci_domain_idle_exit"},
	    {615, "psci_domain_idle_enter"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].id == id)
			return t[i].name;
	return tp_proto_ftrace_misc_name(id);
}

/* The ftrace_event name of event field id (0: unknown, skip it) and, for
 * typed events our protos describe, their message (for the args). */
static uint32_t event_name(struct proto_importer *im, uint32_t id,
                           const ProtobufCMessageDescriptor **md)
{
	struct tp *tp = im->tp;
	if (id >= FE_GENERIC_MIN) {
		uint64_t v;
		if (!hmap_get(&state(im)->generic, id, &v)) {
			tp_stat_inc(tp, TP_STAT_ftrace_generic_descriptor_errors);
			return 0;
		}
		return (uint32_t)v;
	}
	const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(
	    &perfetto__protos__ftrace_event__descriptor, id);
	if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
		*md = fd->descriptor;
		return tp_intern_cstr(tp, fd->name);
	}
	const char *known = other_event_name(id);
	return known ? tp_intern_cstr(tp, known) : 0; /* no args: fields unknown here */
}

_Static_assert(PB_F_SchedWakingFtraceEvent_pid == PB_F_SchedWakeupFtraceEvent_pid &&
                   PB_F_SchedWakingFtraceEvent_pid == PB_F_SchedWakeupNewFtraceEvent_pid &&
                   PB_F_SchedWakingFtraceEvent_comm == PB_F_SchedWakeupFtraceEvent_comm &&
                   PB_F_SchedWakingFtraceEvent_comm == PB_F_SchedWakeupNewFtraceEvent_comm,
               "sched wakeup event fields differ");

void tp_proto_ftrace_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                           const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint32_t cpu;
	memcpy(&cpu, p + n, sizeof cpu);
	/* A placed event (ftrace_kernel.c) is either its row or its effect. */
	struct ftrace_placed pl = {.mode = FTRACE_PLACED_ROW | FTRACE_PLACED_EFFECT, .raw_ts = ts};
	if (ev->kind == EV_FTRACE_PLACED)
		memcpy(&pl, p + n, sizeof pl);
	bool effect =
	    (pl.mode & FTRACE_PLACED_EFFECT) && pl.raw_ts >= tp_proto_ftrace_kernel_crop(im);
	int64_t pid = field_int(p, n, PB_F_FtraceEvent_pid, 0);
	uint32_t flags = TP_NULL_U32;
	struct pb_reader r;
	struct pb_field f = {0}, body = {0};
	bool has_body = false;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_FtraceEvent_common_flags && f.wire == PB_WIRE_VARINT)
			flags = (uint32_t)f.val;
		else if (f.wire == PB_WIRE_LEN && f.id > PB_F_FtraceEvent_pid &&
		         f.id != PB_F_FtraceEvent_common_flags) {
			body = f;
			has_body = true;
		}
	}
	/* sched_switch before the crop time: neither row nor effect. */
	if (!has_body || (!effect && body.id == PB_F_FtraceEvent_sched_switch))
		return;
	const ProtobufCMessageDescriptor *md = NULL;
	uint32_t name = event_name(im, body.id, &md);
	if (!name)
		return;
	uint32_t utid = tp_thread_for_tid(tp, pid, -1);
	struct proto_ftrace *fs = state(im);
	if ((pl.mode & FTRACE_PLACED_ROW) && !tp->cfg.no_ftrace_raw) {
		uint32_t row_utid = utid;
		tp_args_begin(&im->args);
		if (body.id == PB_F_FtraceEvent_sched_switch) {
			/* As Perfetto: the row is the previous task's, with all
			 * seven fields (0 or "" when absent), in proto order. */
			row_utid = tp_thread_for_tid(
			    tp,
			    field_int(body.data, body.len, PB_F_SchedSwitchFtraceEvent_prev_pid, 0),
			    -1);
			switch_args(im, body.data, body.len);
		} else if (md) {
			typed_args(im, ev->gen, body.id, md, body.data, body.len);
		}
		uint32_t args = tp_args_commit(tp, &im->args);
		tp_ftrace_raw(tp, &fs->model, ts, cpu, name, row_utid, flags, args);
	}
	if (!effect)
		return;

	const uint8_t *bp = body.data;
	size_t bn = body.len;
	switch (body.id) {
	case PB_F_FtraceEvent_sched_switch:
		tp_ftrace_sched_switch(
		    tp, &fs->model, ts, cpu, false,
		    field_int(bp, bn, PB_F_SchedSwitchFtraceEvent_prev_pid, 0),
		    field_str(tp, bp, bn, PB_F_SchedSwitchFtraceEvent_prev_comm),
		    tp_ftrace_end_state(
		        tp, &fs->model,
		        field_int(bp, bn, PB_F_SchedSwitchFtraceEvent_prev_state, 0)),
		    (int32_t)field_int(bp, bn, PB_F_SchedSwitchFtraceEvent_next_pid, 0),
		    field_str(tp, bp, bn, PB_F_SchedSwitchFtraceEvent_next_comm),
		    (int32_t)field_int(bp, bn, PB_F_SchedSwitchFtraceEvent_next_prio, 0));
		break;
	case PB_F_FtraceEvent_sched_waking:
	case PB_F_FtraceEvent_sched_wakeup:
	case PB_F_FtraceEvent_sched_wakeup_new: {
		/* The three messages share the field numbers (asserted above). */
		uint32_t wakee = tp_ftrace_thread_named(
		    tp, (int32_t)field_int(bp, bn, PB_F_SchedWakingFtraceEvent_pid, 0),
		    field_str(tp, bp, bn, PB_F_SchedWakingFtraceEvent_comm));
		if (body.id == PB_F_FtraceEvent_sched_waking)
			tp_ftrace_waking(tp, &fs->model, ts, wakee, utid);
		break;
	}
	case PB_F_FtraceEvent_task_newtask:
		tp_ftrace_new_task(tp, &fs->model, ts,
		                   (int32_t)field_int(bp, bn, PB_F_TaskNewtaskFtraceEvent_pid, 0),
		                   field_str(tp, bp, bn, PB_F_TaskNewtaskFtraceEvent_comm),
		                   field_int(bp, bn, PB_F_TaskNewtaskFtraceEvent_clone_flags, 0) &
		                       INT64_MAX,
		                   utid);
		break;
	case PB_F_FtraceEvent_task_rename:
		tp_thread_rename(
		    tp,
		    tp_thread_for_tid(
		        tp, (int32_t)field_int(bp, bn, PB_F_TaskRenameFtraceEvent_pid, 0), -1),
		    field_str(tp, bp, bn, PB_F_TaskRenameFtraceEvent_newcomm), TP_NAME_FTRACE);
		break;
	case PB_F_FtraceEvent_sched_process_free:
		tp_thread_free(tp, ts,
		               (int32_t)field_int(bp, bn, PB_F_SchedProcessFreeFtraceEvent_pid, 0));
		break;
	case PB_F_FtraceEvent_sched_blocked_reason: {
		/* caller: an interned kernel symbol (unknown iid: no function) */
		uint32_t fn = 0;
		uint64_t iid =
		    (uint64_t)field_int(bp, bn, PB_F_SchedBlockedReasonFtraceEvent_caller, 0);
		const struct proto_interned *e =
		    ev->gen ? proto_gen_lookup(ev->gen, INTERN_KERNEL_SYMBOLS, iid) : NULL;
		if (e)
			fn = proto_interned_str(tp, ev->gen, INTERN_KERNEL_SYMBOLS, iid);
		tp_ftrace_blocked_reason(
		    tp, &fs->model,
		    tp_thread_for_tid(
		        tp, (int32_t)field_int(bp, bn, PB_F_SchedBlockedReasonFtraceEvent_pid, 0),
		        -1),
		    (uint32_t)field_int(bp, bn, PB_F_SchedBlockedReasonFtraceEvent_io_wait, 0), fn);
		break;
	}
	case PB_F_FtraceEvent_cpu_frequency_limits:
		tp_ftrace_freq_limits(
		    tp, (uint32_t)field_int(bp, bn, PB_F_CpuFrequencyLimitsFtraceEvent_cpu_id, 0),
		    ts,
		    (double)(uint32_t)field_int(bp, bn, PB_F_CpuFrequencyLimitsFtraceEvent_min_freq,
		                                0),
		    (double)(uint32_t)field_int(bp, bn, PB_F_CpuFrequencyLimitsFtraceEvent_max_freq,
		                                0));
		break;
	case PB_F_FtraceEvent_sched_cpu_util_cfs:
		cpu_util_cfs(tp, ts, bp, bn);
		break;
	case PB_F_FtraceEvent_sde_tracing_mark_write:
	case PB_F_FtraceEvent_dpu_tracing_mark_write:
	case PB_F_FtraceEvent_g2d_tracing_mark_write:
	case PB_F_FtraceEvent_tracing_mark_write:
		kernel_mark(im, ts, pid, body.id, bp, bn);
		break;
	case PB_F_FtraceEvent_cpu_frequency:
		tp_ftrace_cpu_counter(
		    tp, "cpu_frequency", fs->name_cpufreq,
		    (uint32_t)field_int(bp, bn, PB_F_CpuFrequencyFtraceEvent_cpu_id, 0), ts,
		    (double)(uint32_t)field_int(bp, bn, PB_F_CpuFrequencyFtraceEvent_state, 0));
		break;
	case PB_F_FtraceEvent_cpu_idle:
		tp_ftrace_cpu_counter(
		    tp, "cpu_idle", fs->name_cpuidle,
		    (uint32_t)field_int(bp, bn, PB_F_CpuIdleFtraceEvent_cpu_id, 0), ts,
		    (double)(uint32_t)field_int(bp, bn, PB_F_CpuIdleFtraceEvent_state, 0));
		break;
	case PB_F_FtraceEvent_print:
		print_event(im, ts, pid, bp, bn);
		break;
	default:
		if (!tp_proto_ftrace_kernel_parse(im, ts, ev, cpu, pid, body.id, bp, bn))
			tp_proto_ftrace_misc_parse(im, &fs->model, ts, pid, body.id, bp, bn);
		break;
	}
}
