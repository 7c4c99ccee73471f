/*
 * Generic kernel events (TracePacket 117, 118, 120, 122): scheduling, task
 * lifetimes, names and cpu frequency reported by a producer for kernels
 * without ftrace, as Perfetto's GenericKernelParser imports them.
 *
 * A GenericKernelTaskStateEvent says one task changed state on a cpu, so a
 * context switch arrives as two events in either order:
 *
 *   A Running, A S, B Running      A's sched slice closes with end state S
 *   A Running, B Running, A S      B's Running closes A's slice without an
 *                                  end state; A's later S at that very ts
 *                                  supplies it ("hanging" slice of A)
 *
 * thread_state: each event closes the task's open state and opens the new
 * one (Running on the cpu); a Running that closes another task's slice
 * also gives that task an open state without a name until its own event
 * says which. Created starts a new thread, Destroyed ends it; Dead may only
 * be followed by Destroyed and Running not by Running
 * (generic_task_state_invalid_order, event skipped). State names:
 * Created, R, Running, S, D, T, Z, X.
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <string.h>

/* TaskStateEnum values 0 .. GK_STATES - 1. */
#define GK_STATES (PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_DESTROYED + 1)

/* The cpu's open sched slice and the task it belongs to. */
struct gk_cpu {
	uint32_t slice; /* sched row, TP_NULL_U32 none */
	int64_t tid;
	uint32_t utid;
};

struct gk_thread {
	uint32_t state;   /* last thread_state row, TP_NULL_U32 none */
	uint32_t hanging; /* sched row closed by another task's Running */
};

struct proto_generic_kernel {
	uint32_t names[GK_STATES]; /* state enum -> pool id */
	VEC(struct gk_cpu) cpus;
	VEC(struct gk_thread) threads;
};

static struct proto_generic_kernel *gstate(struct proto_importer *im)
{
	static const char *const names[GK_STATES] = {"Unknown", "Created", "R", "Running", "S",
	                                             "D",       "T",       "Z", "X"};
	if (!im->generic_kernel) {
		struct proto_generic_kernel *g = tb_calloc(1, sizeof *g);
		for (size_t i = 0; i < GK_STATES; i++)
			g->names[i] = tp_intern_cstr(im->tp, names[i]);
		im->generic_kernel = g;
	}
	return im->generic_kernel;
}

void tp_proto_generic_kernel_free(struct proto_importer *im)
{
	struct proto_generic_kernel *g = im->generic_kernel;
	if (!g)
		return;
	vec_release(&g->cpus);
	vec_release(&g->threads);
	tb_free(g);
	im->generic_kernel = NULL;
}

static struct gk_cpu *gk_cpu(struct proto_generic_kernel *g, uint32_t cpu)
{
	if (cpu >= g->cpus.len) {
		size_t old = g->cpus.len;
		vec_resize(&g->cpus, (size_t)cpu + 1);
		for (size_t i = old; i < g->cpus.len; i++)
			g->cpus.data[i] = (struct gk_cpu){.slice = TP_NULL_U32};
	}
	return &g->cpus.data[cpu];
}

static struct gk_thread *gk_thread(struct proto_generic_kernel *g, uint32_t utid)
{
	if (utid >= g->threads.len) {
		size_t old = g->threads.len;
		vec_resize(&g->threads, (size_t)utid + 1);
		for (size_t i = old; i < g->threads.len; i++)
			g->threads.data[i] = (struct gk_thread){TP_NULL_U32, TP_NULL_U32};
	}
	return &g->threads.data[utid];
}

/* The state of utid's last thread_state row (0: none). */
static uint32_t last_state(struct proto_importer *im, uint32_t utid)
{
	struct proto_generic_kernel *g = gstate(im);
	uint32_t row = utid < g->threads.len ? g->threads.data[utid].state : TP_NULL_U32;
	return row == TP_NULL_U32 ? 0 : im->tp->t.thread_state.state[row];
}

/* Close utid's open state at ts and open `state` (0: no name). */
static void push_state(struct proto_importer *im, int64_t ts, uint32_t utid, uint32_t state,
                       uint32_t ucpu)
{
	struct tp *tp = im->tp;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	struct gk_thread *th = gk_thread(gstate(im), utid);
	if (th->state != TP_NULL_U32) {
		tp_thread_state_set_dur(tp, th->state, ts - t->ts[th->state]);
		if (t->ts[th->state] == ts)
			tp_stat_inc(tp, TP_STAT_generic_task_state_invalid_order);
	}
	if (utid == 0) /* the swapper has no thread states */
		return;
	th->state = tp_thread_state_open(tp, ts, utid, state, ucpu, TP_NULL_U32);
}

/* The thread an event of `state` is about, or false when the event is out
 * of order and skipped. */
static bool task_utid(struct proto_importer *im, int64_t ts, int64_t tid, uint32_t comm,
                      uint64_t state, uint32_t *utid)
{
	struct tp *tp = im->tp;
	struct proto_generic_kernel *g = gstate(im);
	bool known = tp_thread_find(tp, tid, utid);
	switch (state) {
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_CREATED:
		if (known) {
			tp_stat_inc(tp, TP_STAT_generic_task_state_invalid_order);
			return false;
		}
		*utid = tp_thread_start(tp, ts, tid);
		break;
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_DESTROYED:
		if (!known) {
			*utid = tp_thread_for_tid(tp, tid, -1);
			tp_thread_set_name_prio(tp, *utid, comm, TP_NAME_FTRACE);
		}
		tp_thread_free(tp, ts, tid);
		return true;
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_RUNNABLE:
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_RUNNING:
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_INTERRUPTIBLE_SLEEP:
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_UNINTERRUPTIBLE_SLEEP:
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_STOPPED:
	case PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_DEAD:
		if (known) {
			uint32_t prev = last_state(im, *utid);
			if (prev ==
			        g->names
			            [PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_DEAD] ||
			    (state ==
			         PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_RUNNING &&
			     prev ==
			         g->names
			             [PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_RUNNING])) {
				tp_stat_inc(tp, TP_STAT_generic_task_state_invalid_order);
				return false;
			}
		} else {
			*utid = tp_thread_for_tid(tp, tid, -1);
		}
		break;
	default:
		tp_stat_inc(tp, TP_STAT_task_state_invalid);
		return false;
	}
	tp_thread_set_name_prio(tp, *utid, comm, TP_NAME_FTRACE);
	return true;
}

static void task_state(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_generic_kernel *g = gstate(im);
	uint32_t cpu = 0, comm = 0;
	int64_t tid = 0;
	int32_t prio = 0;
	uint64_t state = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_GenericKernelTaskStateEvent_comm && f.wire == PB_WIRE_LEN)
			comm = tp_intern(tp, (const char *)f.data, f.len);
		else if (f.wire != PB_WIRE_VARINT)
			continue;
		else if (f.id == PB_F_GenericKernelTaskStateEvent_cpu)
			cpu = (uint32_t)f.val;
		else if (f.id == PB_F_GenericKernelTaskStateEvent_tid)
			tid = (int64_t)f.val;
		else if (f.id == PB_F_GenericKernelTaskStateEvent_state)
			state = f.val;
		else if (f.id == PB_F_GenericKernelTaskStateEvent_prio)
			prio = (int32_t)f.val;
	}
	if (cpu >= TP_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_task_state_invalid);
		return;
	}
	uint32_t utid;
	if (!task_utid(im, ts, tid, comm, state, &utid))
		return;
	uint32_t name = g->names[state];
	struct tp_sched_table *s = &tp->t.sched;
	struct gk_cpu *c = gk_cpu(g, cpu);
	if (state == PB_E_GenericKernelTaskStateEvent_TaskStateEnum_TASK_STATE_RUNNING) {
		uint32_t ucpu = tp_cpu_for(tp, cpu);
		if (c->slice != TP_NULL_U32) {
			/* Another task's Running closes this cpu's slice; its
			 * own event may come at the same ts with the state. */
			tp_sched_set_dur(tp, c->slice, ts - s->ts[c->slice]);
			s->end_state[c->slice] = 0;
			gk_thread(g, c->utid)->hanging = c->slice;
			push_state(im, ts, c->utid, 0, TP_NULL_U32);
		}
		uint32_t row = tp_sched_append(s);
		s->ts[row] = ts;
		s->dur_lo[row] = TP_DUR_OPEN;
		s->utid[row] = utid;
		s->end_state[row] = 0;
		tp_sched_set_priority(tp, row, prio);
		s->ucpu[row] = ucpu;
		*c = (struct gk_cpu){.slice = row, .tid = tid, .utid = utid};
		push_state(im, ts, utid, name, ucpu);
		return;
	}
	if (c->slice != TP_NULL_U32 && tid == c->tid) {
		tp_sched_set_dur(tp, c->slice, ts - s->ts[c->slice]);
		s->end_state[c->slice] = name;
		*c = (struct gk_cpu){.slice = TP_NULL_U32};
	} else {
		struct gk_thread *th = gk_thread(g, utid);
		uint32_t h = th->hanging;
		if (h != TP_NULL_U32 && tp_sched_dur(tp, h) >= 0 &&
		    s->ts[h] + tp_sched_dur(tp, h) == ts) {
			/* The end state of the slice another task closed. */
			s->end_state[h] = name;
			th->hanging = TP_NULL_U32;
			if (th->state != TP_NULL_U32)
				tp->t.thread_state.state[th->state] = name;
			return;
		}
	}
	push_state(im, ts, utid, name, TP_NULL_U32);
}

static void task_rename(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field tid = {0}, comm = {0};
	if (pb_find_field(p, n, PB_F_GenericKernelTaskRenameEvent_tid, &tid) < 1 ||
	    tid.wire != PB_WIRE_VARINT)
		tid.val = 0;
	uint32_t name = 0;
	if (pb_find_field(p, n, PB_F_GenericKernelTaskRenameEvent_comm, &comm) >= 1 &&
	    comm.wire == PB_WIRE_LEN)
		name = tp_intern(tp, (const char *)comm.data, comm.len);
	tp_thread_rename(tp, tp_thread_for_tid(tp, (int64_t)tid.val, -1), name, TP_NAME_FTRACE);
}

/* A process: pid, ppid, cmdline (name: up to the first space). */
static void tree_process(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	int64_t pid = 0, ppid = 0;
	struct pb_field cmd = {0};
	bool has_cmd = false;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_GenericKernelProcessTree_Process_pid && f.wire == PB_WIRE_VARINT)
			pid = (int64_t)f.val;
		else if (f.id == PB_F_GenericKernelProcessTree_Process_ppid &&
		         f.wire == PB_WIRE_VARINT)
			ppid = (int64_t)f.val;
		else if (f.id == PB_F_GenericKernelProcessTree_Process_cmdline &&
		         f.wire == PB_WIRE_LEN)
			cmd = f, has_cmd = true;
	}
	if (!has_cmd)
		return;
	uint32_t parent = tp_process_for_pid_bare(tp, ppid);
	uint32_t upid = tp_process_for_pid_bare(tp, pid);
	struct tp_process_table *t = &tp->t.process;
	t->parent_upid[upid] = parent;
	const char *sp = memchr(cmd.data, ' ', cmd.len);
	size_t name_len = sp ? (size_t)(sp - (const char *)cmd.data) : cmd.len;
	tp_process_set_name(tp, upid, tp_intern(tp, (const char *)cmd.data, name_len));
	t->cmdline[upid] = tp_intern(tp, (const char *)cmd.data, cmd.len);
}

static void tree_thread(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	int64_t tid = 0, pid = 0;
	bool main_thread = false, idle = false;
	uint32_t comm = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_GenericKernelProcessTree_Thread_comm && f.wire == PB_WIRE_LEN)
			comm = tp_intern(tp, (const char *)f.data, f.len);
		else if (f.wire != PB_WIRE_VARINT)
			continue;
		else if (f.id == PB_F_GenericKernelProcessTree_Thread_tid)
			tid = (int64_t)f.val;
		else if (f.id == PB_F_GenericKernelProcessTree_Thread_pid)
			pid = (int64_t)f.val;
		else if (f.id == PB_F_GenericKernelProcessTree_Thread_is_main_thread)
			main_thread = f.val != 0;
		else if (f.id == PB_F_GenericKernelProcessTree_Thread_is_idle)
			idle = f.val != 0;
	}
	tp_process_for_pid_bare(tp, pid);
	uint32_t utid = tp_thread_for_tid(tp, tid, pid);
	tp->t.thread.is_main_thread[utid] = main_thread;
	tp->t.thread.is_idle[utid] = idle;
	tp_thread_set_name_prio(tp, utid, comm, TP_NAME_PROCESS_TREE);
}

static void process_tree(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_GenericKernelProcessTree_processes && f.wire == PB_WIRE_LEN)
			tree_process(im, f.data, f.len);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_GenericKernelProcessTree_threads && f.wire == PB_WIRE_LEN)
			tree_thread(im, f.data, f.len);
}

/* cpu frequency in Hz: the cpu's "cpufreq" counter, in kHz as ftrace's. */
static void cpu_freq(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct pb_field cpu = {0}, hz = {0};
	if (pb_find_field(p, n, PB_F_GenericKernelCpuFrequencyEvent_cpu, &cpu) < 1 ||
	    cpu.wire != PB_WIRE_VARINT)
		cpu.val = 0;
	if (pb_find_field(p, n, PB_F_GenericKernelCpuFrequencyEvent_freq_hz, &hz) < 1 ||
	    hz.wire != PB_WIRE_VARINT)
		hz.val = 0;
	if ((uint32_t)cpu.val >= TP_MAX_CPUS)
		return;
	tp_ftrace_cpu_counter(im->tp, "cpu_frequency", tp_intern_cstr(im->tp, "cpufreq"),
	                      (uint32_t)cpu.val, ts, (double)(int64_t)hz.val / 1000.0);
}

void tp_proto_generic_kernel_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                   size_t n)
{
	uint32_t field;
	memcpy(&field, p + n, sizeof field);
	switch (field) {
	case PKT_GENERIC_KERNEL_TASK_STATE:
		task_state(im, ts, p, n);
		break;
	case PKT_GENERIC_KERNEL_CPU_FREQ:
		cpu_freq(im, ts, p, n);
		break;
	case PKT_GENERIC_KERNEL_TASK_RENAME:
		task_rename(im, p, n);
		break;
	case PKT_GENERIC_KERNEL_PROCESS_TREE:
		process_tree(im, p, n);
		break;
	default:
		break;
	}
}
