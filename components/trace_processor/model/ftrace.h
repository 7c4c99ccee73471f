/*
 * The ftrace model (model/ftrace.c, model/binder.c): the scheduling state
 * every ftrace importer shares (proto bundles and text), the sched and
 * thread_state rows with their narrow dur and priority encodings, atrace
 * markers and binder transactions. Parse time, in timestamp order.
 */
#ifndef TB_TP_FTRACE_H
#define TB_TP_FTRACE_H

#include "model.h"

/* The scheduling state shared by every ftrace importer (proto bundles and
 * text): per-cpu running task, each thread's latest thread_state row, open
 * atrace async slices. Embedded in the importer; _init/_release. All of it
 * runs at parse time, in timestamp order. */
struct tp_ftrace_cpu {
	bool has_last;
	uint32_t pending; /* open sched row, TP_NULL_U32 none */
	int64_t last_pid;
	uint32_t last_utid;
	int32_t last_prio;
	uint32_t ucpu;
};
/* A thread's latest thread_state rows (TP_NULL_U32 none), by utid. */
struct tp_ftrace_thread {
	uint32_t state;   /* its latest row */
	uint32_t blocked; /* its latest D row */
};
/* End states of kernel prev_state values (only bits 0-8 matter), cached. */
#define TP_FTRACE_END_STATES 512
#define TP_FTRACE_D_CACHE 16
struct tp_ftrace {
	VEC(struct tp_ftrace_cpu) cpus;
	VEC(struct tp_ftrace_thread) threads;      /* by utid, grown on use */
	uint32_t end_states[TP_FTRACE_END_STATES]; /* pool ids, 0 not yet */
	/* States checked for 'D' (a direct-mapped cache by pool id): the
	 * id, and whether it has one. */
	uint32_t d_state[TP_FTRACE_D_CACHE];
	bool d_state_is_d[TP_FTRACE_D_CACHE];
	struct hmap async_open;     /* (upid, name, cookie) -> lane << 32 | track */
	struct hmap async_busy;     /* (upid, name, lane) -> 1 while a slice is open */
	uint32_t running, runnable; /* pool ids of "Running", "R" */
	struct tp_binder *binder;   /* model/binder.c, NULL until used */
};
void tp_ftrace_init(struct tp *tp, struct tp_ftrace *f);
void tp_ftrace_release(struct tp_ftrace *f);
/* The state of cpu (its `cpu` row created on first use). */
struct tp_ftrace_cpu *tp_ftrace_cpu_slow(struct tp *tp, struct tp_ftrace *f, uint32_t cpu);
static inline struct tp_ftrace_cpu *tp_ftrace_cpu(struct tp *tp, struct tp_ftrace *f, uint32_t cpu)
{
	if (cpu < f->cpus.len && f->cpus.data[cpu].ucpu != UINT32_MAX)
		return &f->cpus.data[cpu];
	return tp_ftrace_cpu_slow(tp, f, cpu);
}
/* The utid of tid, renamed to comm (pool id, 0 keeps the name; never the
 * swapper's). */
uint32_t tp_ftrace_thread_named_slow(struct tp *tp, int64_t tid, uint32_t comm);
static inline uint32_t tp_ftrace_thread_named(struct tp *tp, int64_t tid, uint32_t comm)
{
	/* The hot case inline: the tid is in the lookup cache and already
	 * has this name at ftrace priority or above (setting it again would
	 * change nothing). */
	const struct tp_tid_slot *s = &tp->tid_cache[(uint64_t)tid % TP_TID_CACHE];
	if (s->utid1 && s->tid == tid) {
		uint32_t utid = s->utid1 - 1;
		if (!comm || tid == 0 ||
		    (tp->t.thread.name[utid] == comm && utid < tp->thread_name_prio.len &&
		     tp->thread_name_prio.data[utid] >= TP_NAME_FTRACE))
			return utid;
	}
	return tp_ftrace_thread_named_slow(tp, tid, comm);
}
/* End-state names (pool ids): from a kernel prev_state number, or from the
 * letters a text trace prints ("S", "R+", "D|K"; "?" when unknown). */
uint32_t tp_ftrace_end_state_raw(struct tp *tp, int64_t prev_state);
/* tp_ftrace_end_state_raw through f's cache (the hot path). */
static inline uint32_t tp_ftrace_end_state(struct tp *tp, struct tp_ftrace *f, int64_t prev_state)
{
	uint32_t k = (uint32_t)prev_state & (TP_FTRACE_END_STATES - 1);
	if (!f->end_states[k])
		f->end_states[k] = tp_ftrace_end_state_raw(tp, prev_state);
	return f->end_states[k];
}
uint32_t tp_ftrace_end_state_text(struct tp *tp, const char *s, size_t n);
/* sched_switch on cpu at ts. compact: prev is the cpu's last next task
 * (prev_pid/prev_comm ignored). end_state is a pool id. */
void tp_ftrace_sched_switch(struct tp *tp, struct tp_ftrace *f, int64_t ts, uint32_t cpu,
                            bool compact, int64_t prev_pid, uint32_t prev_comm, uint32_t end_state,
                            int64_t next_pid, uint32_t next_comm, int32_t next_prio);
/* utid becomes runnable at ts, woken by waker (TP_NULL_U32 unknown). */
void tp_ftrace_waking(struct tp *tp, struct tp_ftrace *f, int64_t ts, uint32_t utid,
                      uint32_t waker);
/* sched_blocked_reason: io_wait (TP_NULL_I64 unknown) and blocked_function
 * (pool id, 0 unknown) of utid's latest D state. */
void tp_ftrace_blocked_reason(struct tp *tp, struct tp_ftrace *f, uint32_t utid, int64_t io_wait,
                              uint32_t blocked_function);
/* task_newtask: a new task tid named comm, runnable, woken by creator: a
 * new process when clone_flags lack CLONE_THREAD (its parent the creator's
 * process), else a thread of the creator's process (clone_flags < 0:
 * unknown, a thread). tid 0 (init forking the idle tasks) is ignored. */
#define TP_CLONE_THREAD 0x10000
void tp_ftrace_new_task(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid, uint32_t comm,
                        int64_t clone_flags, uint32_t creator);
/* cpu_frequency_limits: "Cpu N Min/Max Freq Limit" counters. */
void tp_ftrace_freq_limits(struct tp *tp, uint32_t cpu, int64_t ts, double min, double max);
/* sched_process_exit: thread tid ends at ts. */
void tp_ftrace_process_exit(struct tp *tp, int64_t ts, int64_t tid);
/* A `ftrace_event` row; returns its id. flags: TP_NULL_U32 unknown. */
uint32_t tp_ftrace_raw(struct tp *tp, struct tp_ftrace *f, int64_t ts, uint32_t cpu, uint32_t name,
                       uint32_t utid, uint32_t flags, uint32_t args);
/* ftrace_event's narrow columns, made by tp_new. */
void tp_ftrace_rows_init(struct tp *tp);
/* How ftrace_event stores its rows (tests): distinct (name, ucpu,
 * common_flags) kinds, and rows whose ts is in the side map. */
void tp_ftrace_rows_counts(const struct tp *tp, size_t *kinds, size_t *ts_wide);
/* The least and greatest ts of ftrace_event's rows, a block of
 * TP_FTRACE_TS_BLOCK rows at a time; false when it has none. */
bool tp_ftrace_event_ts_range(const struct tp *tp, int64_t *min, int64_t *max);
/* Free tp->ftrace_rows and the dur side maps (tp_free). */
void tp_ftrace_rows_release(struct tp *tp);

/* dur of a sched / thread_state row, stored as TP_DUR_WIDE says: the
 * setters are the only writers of dur_lo (any importer, any thread the
 * tp is used on); the getters read it back. */
uint32_t tp_dur_lo_wide(struct hmap *wide, uint32_t row, int64_t dur);
static inline uint32_t tp_dur_lo(struct hmap *wide, uint32_t row, int64_t dur)
{
	if (__builtin_expect((uint64_t)dur < TP_DUR_WIDE, 1))
		return (uint32_t)dur;
	return tp_dur_lo_wide(wide, row, dur);
}
static inline int64_t tp_dur_of(const struct hmap *wide, uint32_t row, uint32_t lo)
{
	uint64_t v = 0;
	if (lo < TP_DUR_WIDE)
		return lo;
	if (lo == TP_DUR_OPEN)
		return -1;
	hmap_get(wide, row, &v);
	return (int64_t)v;
}
static inline void tp_sched_set_dur(struct tp *tp, uint32_t row, int64_t dur)
{
	tp->t.sched.dur_lo[row] = tp_dur_lo(&tp->sched_dur_wide, row, dur);
}
static inline int64_t tp_sched_dur(const struct tp *tp, uint32_t row)
{
	return tp_dur_of(&tp->sched_dur_wide, row, tp->t.sched.dur_lo[row]);
}
static inline void tp_thread_state_set_dur(struct tp *tp, uint32_t row, int64_t dur)
{
	tp->t.thread_state.dur_lo[row] = tp_dur_lo(&tp->thread_state_dur_wide, row, dur);
}
static inline int64_t tp_thread_state_dur(const struct tp *tp, uint32_t row)
{
	return tp_dur_of(&tp->thread_state_dur_wide, row, tp->t.thread_state.dur_lo[row]);
}
/* A new open thread_state row of utid in state st from ts, on cpu ucpu
 * (Running) or woken by waker (at most one of them not TP_NULL_U32). */
static inline uint32_t tp_thread_state_open(struct tp *tp, int64_t ts, uint32_t utid, uint32_t st,
                                            uint32_t ucpu, uint32_t waker)
{
	struct tp_thread_state_table *t = &tp->t.thread_state;
	uint32_t row = tp_thread_state_append(t);
	t->ts[row] = ts;
	t->dur_lo[row] = TP_DUR_OPEN;
	t->utid[row] = utid;
	t->state[row] = st;
	TB_DCHECK(ucpu == TP_NULL_U32 || waker == TP_NULL_U32);
	t->ucpu_or_waker[row] = ucpu != TP_NULL_U32 ? ucpu | TP_THREAD_STATE_UCPU : waker;
	return row;
}
/* priority of a sched row, stored as TP_PRIO_WIDE says: the setter is the
 * only writer of priority_lo. */
void tp_sched_set_priority_wide(struct tp *tp, uint32_t row, int32_t prio);
static inline void tp_sched_set_priority(struct tp *tp, uint32_t row, int32_t prio)
{
	if (__builtin_expect((uint32_t)prio < TP_PRIO_WIDE, 1))
		tp->t.sched.priority_lo[row] = (uint8_t)prio;
	else
		tp_sched_set_priority_wide(tp, row, prio);
}
static inline int32_t tp_sched_priority(const struct tp *tp, uint32_t row)
{
	uint64_t v = 0;
	uint8_t lo = tp->t.sched.priority_lo[row];
	if (lo < TP_PRIO_WIDE)
		return lo;
	hmap_get(&tp->sched_prio_wide, row, &v);
	return (int32_t)(int64_t)v;
}
/* A value on the cpu counter track of type ("cpu_frequency", ...) named
 * name (pool id). */
void tp_ftrace_cpu_counter(struct tp *tp, const char *type, uint32_t name, uint32_t cpu, int64_t ts,
                           double value);
/* The atrace text of a print / tracing_mark_write written by thread pid
 * (B/E/I slices, S/F and G/H async slices, N instants, C counters); other
 * text is counted in systrace_parse_failure, as Perfetto does. */
void tp_ftrace_print(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t pid, const char *s,
                     size_t len);
/* A kernel driver's atrace-style marker (sde/dpu/g2d/mdss
 * tracing_mark_write), already split: phase 'B', 'E', 'C' or 'I' (else
 * systrace_parse_failure) with tgid, name and value, applied as the same
 * print text would be. name is borrowed for the call. */
void tp_ftrace_kernel_mark(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t pid, char phase,
                           int64_t tgid, const char *name, size_t name_len, int64_t value);

/* Binder transactions (model/binder.c), Perfetto's BinderTracker: slices
 * "binder transaction" / "binder reply" (and the one-way instants) on the
 * threads' tracks, flows from the sending to the receiving slice, lock
 * slices. Parse time, in timestamp order; tid is the event's thread. */
void tp_binder_transaction(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid,
                           int32_t txn_id, int32_t dest_node, int64_t dest_tgid, int64_t dest_tid,
                           bool is_reply, uint32_t flags, uint32_t code);
void tp_binder_transaction_received(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid,
                                    int32_t txn_id);
/* binder_command (BC_*) and binder_return (BR_*) codes. */
void tp_binder_command(struct tp *tp, struct tp_ftrace *f, int64_t tid, uint32_t cmd);
void tp_binder_return(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid, uint32_t cmd);
/* step 0 binder_lock, 1 binder_locked, 2 binder_unlock. */
void tp_binder_lock(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid, int step);
void tp_binder_alloc_buf(struct tp *tp, struct tp_ftrace *f, int64_t ts, int64_t tid,
                         uint64_t data_size, uint64_t offsets_size);
void tp_binder_free(struct tp_ftrace *f);

#endif /* TB_TP_FTRACE_H */
