/*
 * Ftrace (TracePacket.ftrace_events, an FtraceEventBundle) in the proto
 * importer. At tokenize time each event of a bundle is pushed to the sorter
 * at its own timestamp (ftrace clock = BOOTTIME unless the bundle says
 * otherwise); compact_sched arrays are expanded into one fixed record per
 * switch / waking; generic_event_descriptors name the dynamic (65536+)
 * event fields. At parse time, as Perfetto's FtraceParser,
 * SchedEventTracker and ThreadStateTracker do:
 *
 *   sched_switch    close the cpu's pending `sched` row (end_state from
 *                   prev_state) and open one for next; thread_state: prev
 *                   gets its end state, next becomes Running on the cpu
 *   sched_waking    thread_state Runnable ("R") with waker_utid, unless the
 *                   wakee is already running or runnable
 *   task_newtask    a new thread (CLONE_THREAD) named comm
 *   task_rename     the thread's new name
 *   process exit    the thread ends; free ends nothing more here
 *   cpu_frequency   counter on the cpu's "cpufreq" track (cpu_frequency)
 *   cpu_idle        counter on the cpu's "cpuidle" track (cpu_idle)
 *   print           atrace text: B|pid|name, E|pid, C|pid|name|value, I
 *
 * and every event (but the first compact switch of a cpu, whose prev task
 * is unknown) is a row of `ftrace_event` with its fields as args, named
 * after the FtraceEvent oneof field (or the generic descriptor).
 *
 * prev_state letters (kernel >= 4.14 TASK_REPORT bits): 0 = R, preempted
 * (0x100) = R+, else one letter per bit: S D T t X Z P I.
 */
#include "proto_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protos.h"

enum {
	BUNDLE_CPU = 1,
	BUNDLE_EVENT = 2,
	BUNDLE_COMPACT = 4,
	BUNDLE_CLOCK = 5,
	BUNDLE_FTRACE_TS = 6,
	BUNDLE_BOOT_TS = 7,
	BUNDLE_GENERIC_DESC = 11,

	FE_TIMESTAMP = 1,
	FE_PID = 2,
	FE_COMMON_FLAGS = 5,
	FE_PRINT = 3,
	FE_SCHED_SWITCH = 4,
	FE_CPU_FREQUENCY = 11,
	FE_CPU_IDLE = 13,
	FE_SCHED_WAKEUP = 17,
	FE_SCHED_WAKING = 20,
	FE_SCHED_WAKEUP_NEW = 114,
	FE_TASK_NEWTASK = 235,
	FE_TASK_RENAME = 236,
	FE_PROCESS_EXIT = 238,
	FE_PROCESS_FORK = 239,
	FE_GENERIC_MIN = 65536,
};

#define FTRACE_MAX_CPUS 4096u
#define CLONE_THREAD 0x00010000u

/* The fixed record of one compact_sched event (no payload). */
struct ftrace_compact_rec {
	uint32_t kind; /* EV_FTRACE_COMPACT_SWITCH / _WAKING */
	uint32_t cpu;
	int64_t a;     /* switch: prev_state; waking: pid */
	int32_t pid;   /* switch: next_pid; waking: target_cpu */
	int32_t prio;
	uint32_t comm; /* pool id */
	uint32_t flags;
};

struct ftrace_cpu {
	bool has_last;
	uint32_t pending; /* sched row, TP_NULL_U32 none */
	int64_t last_pid;
	uint32_t last_utid;
	int32_t last_prio;
	uint32_t ucpu;
};

/* The arg sets of compact events repeat (a few threads, states and
 * priorities): a direct-mapped cache from their values to the committed
 * set saves building, hashing and comparing them for every event. */
#define COMPACT_ARGS_CACHE 512
struct compact_args_slot {
	uint64_t k0, k1, k2; /* k2 = kind << 32 | comm; 0 = empty */
	uint32_t set;
};

struct proto_ftrace {
	VEC(struct ftrace_cpu) cpus;
	struct compact_args_slot args_cache[COMPACT_ARGS_CACHE];
	/* Arg keys of compact events, interned once. */
	uint32_t k_prev_state, k_next_pid, k_next_prio, k_next_comm;
	uint32_t k_comm, k_pid, k_prio, k_target_cpu;
	struct hmap last_state; /* utid -> thread_state row */
	struct hmap generic;    /* field id -> (name pool id) */
	uint32_t running, runnable, name_sched_switch, name_sched_waking;
};

static struct proto_ftrace *state(struct proto_importer *im)
{
	if (!im->ftrace) {
		im->ftrace = tb_calloc(1, sizeof *im->ftrace);
		im->ftrace->running = tp_intern_cstr(im->tp, "Running");
		im->ftrace->runnable = tp_intern_cstr(im->tp, "R");
		im->ftrace->name_sched_switch = tp_intern_cstr(im->tp, "sched_switch");
		im->ftrace->name_sched_waking = tp_intern_cstr(im->tp, "sched_waking");
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

void proto_ftrace_free(struct proto_importer *im)
{
	struct proto_ftrace *f = im->ftrace;
	if (!f)
		return;
	vec_release(&f->cpus);
	hmap_release(&f->last_state);
	hmap_release(&f->generic);
	tb_free(f);
	im->ftrace = NULL;
}

static struct ftrace_cpu *cpu_state(struct proto_importer *im, uint32_t cpu)
{
	struct proto_ftrace *f = state(im);
	if (cpu >= f->cpus.len) {
		size_t old = f->cpus.len;
		vec_resize(&f->cpus, cpu + 1);
		for (size_t i = old; i <= cpu; i++) {
			f->cpus.data[i].pending = TP_NULL_U32;
			f->cpus.data[i].ucpu = TP_NULL_U32;
		}
	}
	struct ftrace_cpu *c = &f->cpus.data[cpu];
	if (c->ucpu == TP_NULL_U32) {
		c->ucpu = tp_cpu_append(&im->tp->t.cpu);
		im->tp->t.cpu.cpu[c->ucpu] = cpu;
	}
	return c;
}

/* ---- tokenize ------------------------------------------------------------- */

VEC_DEFINE(ftrace_u64s, uint64_t);

/* Decode a repeated scalar field (packed or not) into v. */
static void packed(struct ftrace_u64s *v, const struct pb_field *f)
{
	if (f->wire == PB_WIRE_VARINT) {
		vec_push(v, f->val);
		return;
	}
	if (f->wire != PB_WIRE_LEN)
		return;
	const uint8_t *p = f->data, *end = f->data + f->len;
	while (p < end) {
		uint64_t x;
		if (!(p = pb_read_varint(p, end, &x)))
			return;
		vec_push(v, x);
	}
}

static void compact_sched(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu,
			  int64_t clock_off, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct ftrace_u64s a[13];
	VEC(uint32_t) intern = VEC_INIT;
	memset(a, 0, sizeof a);
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == 5 && f.wire == PB_WIRE_LEN)
			vec_push(&intern, tp_intern(tp, (const char *)f.data, f.len));
		else if (f.id >= 1 && f.id <= 12)
			packed(&a[f.id], &f);
	}
	/* switch: 1 ts, 2 prev_state, 3 next_pid, 4 next_prio, 6 comm index */
	size_t ns = a[1].len;
	if (a[2].len != ns || a[3].len != ns || a[4].len != ns || a[6].len != ns) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		ns = 0;
	}
	uint64_t t = 0;
	for (size_t i = 0; i < ns; i++) {
		t += a[1].data[i];
		int64_t ts;
		if (!proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
					   (uint64_t)((int64_t)t + clock_off), &ts)) {
			tp_stat_inc(tp, TP_STAT_clock_sync_failure);
			continue;
		}
		struct ftrace_compact_rec rec = {
			.kind = EV_FTRACE_COMPACT_SWITCH,
			.cpu = cpu,
			.a = (int64_t)a[2].data[i],
			.pid = (int32_t)a[3].data[i],
			.prio = (int32_t)a[4].data[i],
			.comm = a[6].data[i] < intern.len ? intern.data[a[6].data[i]] : 0,
		};
		tp_sorter_push_src(tp->sorter, seq->src, ts, &rec, sizeof rec);
	}
	/* waking: 7 ts, 8 pid, 9 target_cpu, 10 prio, 11 comm index, 12 flags */
	size_t nw = a[7].len;
	if (a[8].len != nw || a[9].len != nw || a[10].len != nw || a[11].len != nw ||
	    (a[12].len && a[12].len != nw)) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		nw = 0;
	}
	t = 0;
	for (size_t i = 0; i < nw; i++) {
		t += a[7].data[i];
		int64_t ts;
		if (!proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
					   (uint64_t)((int64_t)t + clock_off), &ts)) {
			tp_stat_inc(tp, TP_STAT_clock_sync_failure);
			continue;
		}
		struct ftrace_compact_rec rec = {
			.kind = EV_FTRACE_COMPACT_WAKING,
			.cpu = cpu,
			.a = (int32_t)a[8].data[i],
			.pid = (int32_t)a[9].data[i],
			.prio = (int32_t)a[10].data[i],
			.comm = a[11].data[i] < intern.len ? intern.data[a[11].data[i]] : 0,
			.flags = a[12].len ? (uint32_t)a[12].data[i] : TP_NULL_U32,
		};
		tp_sorter_push_src(tp->sorter, seq->src, ts, &rec, sizeof rec);
	}
	for (size_t i = 0; i < 13; i++)
		vec_release(&a[i]);
	vec_release(&intern);
}

/* A generic event descriptor: field_id -> the event name (DescriptorProto
 * name, field 1). */
static void generic_descriptor(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct pb_field id = {0}, d = {0}, name = {0};
	if (pb_find_field(p, n, 1, &id) != 1 || id.wire != PB_WIRE_VARINT)
		return;
	if (pb_find_field(p, n, 2, &d) != 1 || d.wire != PB_WIRE_LEN)
		return;
	if (pb_find_field(d.data, d.len, 1, &name) != 1 || name.wire != PB_WIRE_LEN)
		return;
	hmap_put(&state(im)->generic, (uint32_t)id.val,
		 tp_intern(im->tp, (const char *)name.data, name.len));
}

void proto_ftrace_tokenize(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
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
		if (f.id == BUNDLE_CPU && f.wire == PB_WIRE_VARINT)
			cpu = (uint32_t)f.val;
		else if (f.id == BUNDLE_CLOCK && f.wire == PB_WIRE_VARINT)
			clock = f.val;
		else if (f.id == BUNDLE_FTRACE_TS && f.wire == PB_WIRE_VARINT)
			fts = (int64_t)f.val;
		else if (f.id == BUNDLE_BOOT_TS && f.wire == PB_WIRE_VARINT)
			bts = (int64_t)f.val;
		else if (f.id == BUNDLE_GENERIC_DESC && f.wire == PB_WIRE_LEN)
			generic_descriptor(im, f.data, f.len);
	}
	if (pb_reader_error(&r) || cpu >= FTRACE_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		return;
	}
	/* A non-boot ftrace clock is aligned by the bundle's (ftrace, boot)
	 * timestamp pair. */
	int64_t off = clock > 1 && fts && bts ? bts - fts : 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_LEN)
			continue;
		if (f.id == BUNDLE_COMPACT) {
			compact_sched(im, seq, cpu, off, f.data, f.len);
			continue;
		}
		if (f.id != BUNDLE_EVENT)
			continue;
		struct pb_field t = {0};
		if (pb_find_field(f.data, f.len, FE_TIMESTAMP, &t) != 1 || t.wire != PB_WIRE_VARINT) {
			tp_stat_inc(tp, TP_STAT_ftrace_bundle_tokenizer_errors);
			continue;
		}
		int64_t ts;
		if (!proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
					   (uint64_t)((int64_t)t.val + off), &ts)) {
			tp_stat_inc(tp, TP_STAT_clock_sync_failure);
			continue;
		}
		proto_push_extra(im, ts, EV_FTRACE, NULL, seq, f.data, f.len, &cpu, sizeof cpu);
	}
}

/* ---- thread_state --------------------------------------------------------- */

static bool is_running_or_runnable(struct proto_ftrace *fs, uint32_t st)
{
	return st == fs->running || st == fs->runnable;
}

static void state_close(struct tp *tp, struct proto_ftrace *fs, uint32_t utid, int64_t ts)
{
	uint64_t row;
	if (!hmap_get(&fs->last_state, utid, &row))
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	if (t->dur[row] == -1)
		t->dur[row] = ts - t->ts[row];
}

static void state_open(struct tp *tp, struct proto_ftrace *fs, uint32_t utid, int64_t ts,
		       uint32_t st, uint32_t cpu, uint32_t ucpu, uint32_t waker)
{
	if (utid == 0) /* the swapper has no thread states */
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	uint32_t row = tp_thread_state_append(t);
	t->ts[row] = ts;
	t->dur[row] = -1;
	t->utid[row] = utid;
	t->state[row] = st;
	t->cpu[row] = cpu;
	t->ucpu[row] = ucpu;
	t->waker_utid[row] = waker;
	hmap_put(&fs->last_state, utid, row);
}

/* ---- parse ---------------------------------------------------------------- */

static uint32_t end_state_str(struct tp *tp, int64_t s)
{
	static const char letters[] = "SDTtXZPI";
	char buf[16];
	size_t n = 0;
	if (s & 0x100)
		return tp_intern_cstr(tp, "R+");
	if ((s & 0xff) == 0)
		return tp_intern_cstr(tp, "R");
	for (unsigned b = 0; b < 8; b++)
		if (s & (1 << b))
			buf[n++] = letters[b];
	return tp_intern(tp, buf, n);
}

static uint32_t thread_named(struct tp *tp, int64_t tid, uint32_t comm)
{
	uint32_t utid = tp_thread_for_tid(tp, tid, -1);
	if (comm && tid != 0)
		tp_thread_set_name(tp, utid, comm);
	return utid;
}

static void sched_switch(struct proto_importer *im, int64_t ts, uint32_t cpu, bool compact,
			 int64_t prev_pid, uint32_t prev_comm, int64_t prev_state,
			 int64_t next_pid, uint32_t next_comm, int32_t next_prio)
{
	struct tp *tp = im->tp;
	struct proto_ftrace *fs = state(im);
	struct ftrace_cpu *c = cpu_state(im, cpu);
	uint32_t next_utid = thread_named(tp, next_pid, next_comm);
	uint32_t prev_utid;
	if (compact) {
		prev_utid = c->last_utid;
		prev_pid = c->last_pid;
	} else {
		prev_utid = thread_named(tp, prev_pid, prev_comm);
	}
	uint32_t end = end_state_str(tp, prev_state);
	if (c->pending != TP_NULL_U32) {
		if (compact || prev_pid == c->last_pid) {
			struct tp_sched_table *s = &tp->t.sched;
			s->dur[c->pending] = ts - s->ts[c->pending];
			s->end_state[c->pending] = end;
		} else {
			tp_stat_inc(tp, TP_STAT_mismatched_sched_switch_tids);
		}
	}
	struct tp_sched_table *s = &tp->t.sched;
	uint32_t row = tp_sched_append(s);
	s->ts[row] = ts;
	s->dur[row] = -1;
	s->cpu[row] = cpu;
	s->ucpu[row] = c->ucpu;
	s->utid[row] = next_utid;
	s->priority[row] = next_prio;
	c->pending = row;
	c->has_last = true;
	c->last_pid = next_pid;
	c->last_utid = next_utid;
	c->last_prio = next_prio;

	state_close(tp, fs, prev_utid, ts);
	state_open(tp, fs, prev_utid, ts, end, TP_NULL_U32, TP_NULL_U32, TP_NULL_U32);
	state_close(tp, fs, next_utid, ts);
	state_open(tp, fs, next_utid, ts, fs->running, cpu, c->ucpu, TP_NULL_U32);
}

static void waking(struct proto_importer *im, int64_t ts, uint32_t utid, uint32_t waker)
{
	struct tp *tp = im->tp;
	struct proto_ftrace *fs = state(im);
	uint64_t row;
	/* A thread with no state yet just becomes runnable. */
	if (hmap_get(&fs->last_state, utid, &row) &&
	    is_running_or_runnable(fs, tp->t.thread_state.state[row]))
		return;
	state_close(tp, fs, utid, ts);
	state_open(tp, fs, utid, ts, fs->runnable, TP_NULL_U32, TP_NULL_U32, waker);
}

static void raw_row(struct proto_importer *im, int64_t ts, uint32_t cpu, uint32_t name,
		    uint32_t utid, uint32_t flags, uint32_t args)
{
	struct tp *tp = im->tp;
	struct ftrace_cpu *c = cpu_state(im, cpu);
	struct tp_ftrace_event_table *t = &tp->t.ftrace_event;
	uint32_t row = tp_ftrace_event_append(t);
	t->ts[row] = ts;
	t->name[row] = name;
	t->cpu[row] = cpu;
	t->ucpu[row] = c->ucpu;
	t->utid[row] = utid;
	t->common_flags[row] = flags;
	t->arg_set_id[row] = args;
}

/* The arg set of a compact event: switch {prev_state, next_pid, next_prio,
 * next_comm}, waking {comm, pid, prio, target_cpu}, as Perfetto names them. */
static uint32_t compact_args(struct proto_importer *im, const struct ftrace_compact_rec *r)
{
	struct proto_ftrace *fs = state(im);
	uint64_t k0 = (uint64_t)r->a, k1 = (uint64_t)(uint32_t)r->pid << 32 | (uint32_t)r->prio;
	uint64_t k2 = (uint64_t)r->kind << 32 | r->comm;
	uint64_t h = (k0 * 0x9e3779b97f4a7c15ull) ^ (k1 * 0xc2b2ae3d27d4eb4full) ^
		     (k2 * 0x165667b19e3779f9ull);
	struct compact_args_slot *slot = &fs->args_cache[(h ^ (h >> 29)) % COMPACT_ARGS_CACHE];
	if (slot->k2 == k2 && slot->k0 == k0 && slot->k1 == k1)
		return slot->set;
	tp_args_begin(&im->args);
	if (r->kind == EV_FTRACE_COMPACT_SWITCH) {
		tp_args_add_int(&im->args, fs->k_prev_state, fs->k_prev_state, r->a);
		tp_args_add_int(&im->args, fs->k_next_pid, fs->k_next_pid, r->pid);
		tp_args_add_int(&im->args, fs->k_next_prio, fs->k_next_prio, r->prio);
		tp_args_add_string(&im->args, fs->k_next_comm, fs->k_next_comm, r->comm);
	} else {
		tp_args_add_string(&im->args, fs->k_comm, fs->k_comm, r->comm);
		tp_args_add_int(&im->args, fs->k_pid, fs->k_pid, r->a);
		tp_args_add_int(&im->args, fs->k_prio, fs->k_prio, r->prio);
		tp_args_add_int(&im->args, fs->k_target_cpu, fs->k_target_cpu, r->pid);
	}
	slot->k0 = k0, slot->k1 = k1, slot->k2 = k2;
	slot->set = tp_args_commit(im->tp, &im->args);
	return slot->set;
}

void proto_ftrace_compact_parse(struct proto_importer *im, int64_t ts, const void *payload)
{
	struct tp *tp = im->tp;
	struct ftrace_compact_rec r;
	memcpy(&r, payload, sizeof r);
	struct ftrace_cpu *c = cpu_state(im, r.cpu);
	if (r.kind == EV_FTRACE_COMPACT_SWITCH) {
		if (!c->has_last) {
			tp_stat_inc(tp, TP_STAT_compact_sched_switch_skipped);
			tp->event_dropped = true;
			c->has_last = true;
			c->last_pid = r.pid;
			c->last_utid = thread_named(tp, r.pid, r.comm);
			c->last_prio = r.prio;
			return;
		}
		uint32_t prev_utid = c->last_utid;
		uint32_t args = compact_args(im, &r);
		raw_row(im, ts, r.cpu, state(im)->name_sched_switch, prev_utid, TP_NULL_U32, args);
		sched_switch(im, ts, r.cpu, true, -1, 0, r.a, r.pid, r.comm, r.prio);
		return;
	}
	if (!c->has_last) {
		tp_stat_inc(tp, TP_STAT_compact_sched_waking_skipped);
		tp->event_dropped = true;
		return;
	}
	uint32_t wakee = thread_named(tp, r.a, r.comm);
	uint32_t args = compact_args(im, &r);
	raw_row(im, ts, r.cpu, state(im)->name_sched_waking, c->last_utid, r.flags, args);
	waking(im, ts, wakee, c->last_utid);
}

/* Args of a typed event: its message's scalar fields by name, through the
 * generated descriptors. */
static void typed_args(struct proto_importer *im, const ProtobufCMessageDescriptor *md,
		       const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(md, f.id);
		if (!fd || fd->label == PROTOBUF_C_LABEL_REPEATED)
			continue;
		uint32_t k = tp_intern_cstr(tp, fd->name);
		switch (fd->type) {
		case PROTOBUF_C_TYPE_STRING:
			if (f.wire == PB_WIRE_LEN)
				tp_args_add_string(&im->args, k, k,
						   tp_intern(tp, (const char *)f.data, f.len));
			break;
		case PROTOBUF_C_TYPE_INT32:
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

static uint32_t cpu_counter_track(struct tp *tp, const char *type, const char *name, uint32_t cpu)
{
	struct tp_track_key key = {
		.type = type,
		.event_type = "counter",
		.utid = -1,
		.upid = -1,
		.cpu = cpu,
		.name = tp_intern_cstr(tp, name),
	};
	return tp_track_get(tp, &key);
}

/* print: the atrace text of a userspace trace_marker write. */
static void print_event(struct proto_importer *im, int64_t ts, int64_t pid, const uint8_t *p,
			size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field b = {0};
	if (pb_find_field(p, n, 2, &b) != 1 || b.wire != PB_WIRE_LEN || b.len < 1)
		return;
	const char *s = (const char *)b.data;
	size_t len = b.len;
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\0'))
		len--;
	/* Split on '|' into at most 4 parts. */
	const char *part[4] = {0};
	size_t plen[4] = {0};
	size_t np = 0, st = 0;
	for (size_t i = 0; i <= len && np < 4; i++) {
		if (i == len || (s[i] == '|' && np < 3)) {
			part[np] = s + st;
			plen[np++] = i - st;
			st = i + 1;
		}
	}
	if (np == 0 || plen[0] != 1)
		return;
	int64_t tgid = -1;
	if (np > 1 && plen[1]) {
		char tmp[24];
		size_t l = plen[1] < sizeof tmp - 1 ? plen[1] : sizeof tmp - 1;
		memcpy(tmp, part[1], l);
		tmp[l] = 0;
		char *e;
		long long v = strtoll(tmp, &e, 10);
		if (*e) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		tgid = v;
	}
	switch (part[0][0]) {
	case 'B':
	case 'I': {
		if (np < 3) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		uint32_t utid = tp_thread_for_tid(tp, pid, tgid);
		uint32_t track = tp_track_for_thread(tp, utid);
		uint32_t name = tp_intern(tp, part[2], plen[2]);
		if (part[0][0] == 'B')
			tp_slice_begin(tp, track, ts, 0, name, TP_NULL_U32);
		else
			tp_slice_complete(tp, track, ts, 0, 0, name, TP_NULL_U32);
		break;
	}
	case 'E': {
		uint32_t utid = tp_thread_for_tid(tp, pid, tgid);
		tp_slice_end(tp, tp_track_for_thread(tp, utid), ts, 0, 0, TP_NULL_U32);
		break;
	}
	case 'C': {
		if (np < 4 || tgid < 0) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		char tmp[64];
		size_t l = plen[3] < sizeof tmp - 1 ? plen[3] : sizeof tmp - 1;
		memcpy(tmp, part[3], l);
		tmp[l] = 0;
		char *e;
		double v = strtod(tmp, &e);
		if (e == tmp) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		struct tp_track_key key = {
			.type = "atrace_counter",
			.event_type = "counter",
			.utid = -1,
			.upid = tp_process_for_pid(tp, tgid),
			.cpu = -1,
			.name = tp_intern(tp, part[2], plen[2]),
		};
		tp_counter_add(tp, tp_track_get(tp, &key), ts, v, TP_NULL_U32);
		break;
	}
	default:
		break;
	}
}

/* Typed events our protos do not describe (FtraceEvent oneof numbers). */
static const char *other_event_name(uint32_t id)
{
	static const struct {
		uint32_t id;
		const char *name;
	} t[] = {
		{12, "cpu_frequency_limits"}, {18, "sched_blocked_reason"},
		{24, "softirq_entry"},        {25, "softirq_exit"},
		{36, "irq_handler_entry"},    {37, "irq_handler_exit"},
		{57, "workqueue_execute_end"}, {58, "workqueue_execute_start"},
		{113, "suspend_resume"},      {241, "sched_process_hang"},
		{242, "sched_process_wait"},  {313, "rss_stat"},
		{326, "oom_score_adj_update"}, {329, "sys_enter"},
		{330, "sys_exit"},            {332, "gpu_frequency"},
		{408, "console"},             {491, "sched_migrate_task"},
		{555, "timer_start"},         {614, "psci_domain_idle_exit"},
		{615, "psci_domain_idle_enter"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].id == id)
			return t[i].name;
	return NULL;
}

void proto_ftrace_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
			const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint32_t cpu;
	memcpy(&cpu, p + n, sizeof cpu);
	int64_t pid = field_int(p, n, FE_PID, 0);
	uint32_t flags = TP_NULL_U32;
	struct pb_reader r;
	struct pb_field f = {0}, body = {0};
	bool has_body = false;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == FE_COMMON_FLAGS && f.wire == PB_WIRE_VARINT)
			flags = (uint32_t)f.val;
		else if (f.wire == PB_WIRE_LEN && f.id >= 3 && f.id != FE_COMMON_FLAGS) {
			body = f;
			has_body = true;
		}
	}
	(void)ev;
	if (!has_body)
		return;
	uint32_t name = 0;
	const ProtobufCMessageDescriptor *md = NULL;
	if (body.id >= FE_GENERIC_MIN) {
		uint64_t v;
		if (!hmap_get(&state(im)->generic, body.id, &v)) {
			tp_stat_inc(tp, TP_STAT_ftrace_generic_descriptor_errors);
			return;
		}
		name = (uint32_t)v;
	} else {
		const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(
			&perfetto__protos__ftrace_event__descriptor, body.id);
		if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
			md = fd->descriptor;
			name = tp_intern_cstr(tp, fd->name);
		} else {
			const char *known = other_event_name(body.id);
			if (!known)
				return;
			name = tp_intern_cstr(tp, known); /* no args: fields unknown here */
		}
	}
	uint32_t utid = tp_thread_for_tid(tp, pid, -1);
	tp_args_begin(&im->args);
	if (md)
		typed_args(im, md, body.data, body.len);
	uint32_t args = tp_args_commit(tp, &im->args);
	raw_row(im, ts, cpu, name, utid, flags, args);

	const uint8_t *bp = body.data;
	size_t bn = body.len;
	switch (body.id) {
	case FE_SCHED_SWITCH:
		sched_switch(im, ts, cpu, false, field_int(bp, bn, 2, 0), field_str(tp, bp, bn, 1),
			     field_int(bp, bn, 4, 0), (int32_t)field_int(bp, bn, 6, 0),
			     field_str(tp, bp, bn, 5), (int32_t)field_int(bp, bn, 7, 0));
		break;
	case FE_SCHED_WAKING:
	case FE_SCHED_WAKEUP:
	case FE_SCHED_WAKEUP_NEW: {
		uint32_t wakee = thread_named(tp, (int32_t)field_int(bp, bn, 2, 0),
					      field_str(tp, bp, bn, 1));
		if (body.id == FE_SCHED_WAKING)
			waking(im, ts, wakee, utid);
		break;
	}
	case FE_TASK_NEWTASK: {
		int64_t tid = (int32_t)field_int(bp, bn, 1, 0);
		uint64_t clone = (uint64_t)field_int(bp, bn, 3, 0);
		uint32_t comm = field_str(tp, bp, bn, 2);
		uint32_t old;
		(void)clone;
		/* A new task with that tid: the previous one (if any) ended. */
		old = tp_thread_for_tid(tp, tid, -1);
		if (old != 0 && tp->t.thread.start_ts[old] != TP_NULL_I64)
			tp_thread_end(tp, old, ts);
		uint32_t nu = tp_thread_for_tid(tp, tid, -1);
		tp->t.thread.start_ts[nu] = ts;
		tp_thread_set_name(tp, nu, comm);
		/* The new task is runnable, woken by its creator. */
		waking(im, ts, nu, utid);
		break;
	}
	case FE_TASK_RENAME:
		thread_named(tp, (int32_t)field_int(bp, bn, 1, 0), field_str(tp, bp, bn, 3));
		break;
	case FE_PROCESS_EXIT: {
		uint32_t u = tp_thread_for_tid(tp, (int32_t)field_int(bp, bn, 2, 0), -1);
		if (u != 0)
			tp->t.thread.end_ts[u] = ts;
		break;
	}
	case FE_CPU_FREQUENCY:
		tp_counter_add(tp,
			       cpu_counter_track(tp, "cpu_frequency", "cpufreq",
						 (uint32_t)field_int(bp, bn, 2, 0)),
			       ts, (double)(uint32_t)field_int(bp, bn, 1, 0), TP_NULL_U32);
		break;
	case FE_CPU_IDLE:
		tp_counter_add(tp,
			       cpu_counter_track(tp, "cpu_idle", "cpuidle",
						 (uint32_t)field_int(bp, bn, 2, 0)),
			       ts, (double)(uint32_t)field_int(bp, bn, 1, 0), TP_NULL_U32);
		break;
	case FE_PRINT:
		print_event(im, ts, pid, bp, bn);
		break;
	default:
		break;
	}
}
