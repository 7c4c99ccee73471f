/*
 * Ftrace events into the model, whatever the input: the proto importer
 * (FtraceEventBundle, compact_sched) and the text importer (tracefs `trace`,
 * trace-cmd report, systrace) decode their own encodings, then call these
 * with plain values. As Perfetto's FtraceSchedEventTracker, ThreadState
 * tracker and SystraceParser do:
 *
 *   sched_switch    close the cpu's pending `sched` row (end_state from
 *                   prev_state) and open one for next; thread_state: prev
 *                   gets its end state, next becomes Running on the cpu
 *   waking          thread_state Runnable ("R") with waker_utid, unless the
 *                   wakee is already running or runnable
 *   blocked reason  io_wait / blocked_function of the thread's last D state
 *   new task        a new process (fork) or thread (CLONE_THREAD) named
 *                   comm, runnable, woken by its creator
 *   cpu counters    cpu_frequency ("cpufreq"), cpu_idle ("cpuidle"),
 *                   cpu_frequency_limits ("Cpu N Min/Max Freq Limit"), ...
 *   print           atrace text, split as Perfetto does: B|tgid|name,
 *                   E|tgid, I|tgid|name, C|tgid|name|value,
 *                   S|tgid|name|cookie, F|tgid|name|cookie,
 *                   N|tgid|track|name, G|tgid|track|name|cookie,
 *                   H|tgid|track|[name|]cookie
 *   raw             one `ftrace_event` row
 *
 * End states are pool ids of Perfetto's letters: tp_ftrace_end_state_raw()
 * decodes a kernel prev_state number (TASK_REPORT bits of kernels >= 4.14),
 * tp_ftrace_end_state_text() the letters a text trace prints ("R+", "D|K").
 */
#include "../tp_int.h"
#include "model.h"
#include "ftrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The (name, ucpu, common_flags) of ftrace_event rows of one kind. */
struct tp_ftrace_kind {
	uint32_t name, ucpu, flags;
};
#define TP_FTRACE_KIND_CACHE_BITS 8
/* ftrace_event's narrow columns (struct tp's ftrace_rows): the (name, ucpu,
 * common_flags) triple of each kind, kinds by content, a cache of
 * recent ones; the ts of each block's first row; the ts of rows whose
 * offset does not fit. */
struct tp_ftrace_rows {
	VEC(struct tp_ftrace_kind) kinds;
	struct hmap kind_map;
	uint32_t kind_cache[1u << TP_FTRACE_KIND_CACHE_BITS]; /* kind + 1, 0 = empty */
	VEC(int64_t) ts_base;
	struct hmap ts_wide; /* row -> ts */
};

void tp_ftrace_init(struct tp *tp, struct tp_ftrace *f)
{
	memset(f, 0, sizeof *f);
	f->running = tp_intern_cstr(tp, "Running");
	f->runnable = tp_intern_cstr(tp, "R");
}

void tp_ftrace_release(struct tp_ftrace *f)
{
	vec_release(&f->cpus);
	vec_release(&f->threads);
	hmap_release(&f->async_open);
	hmap_release(&f->async_busy);
	tp_binder_free(f);
}

struct tp_ftrace_cpu *tp_ftrace_cpu_slow(struct tp *tp, struct tp_ftrace *f, uint32_t cpu)
{
	if (cpu >= f->cpus.len) {
		size_t old = f->cpus.len;
		vec_resize(&f->cpus, cpu + 1);
		for (size_t i = old; i <= cpu; i++) {
			memset(&f->cpus.data[i], 0, sizeof f->cpus.data[i]);
			f->cpus.data[i].pending = TP_NULL_U32;
			f->cpus.data[i].ucpu = TP_NULL_U32;
		}
	}
	struct tp_ftrace_cpu *c = &f->cpus.data[cpu];
	if (c->ucpu == TP_NULL_U32)
		c->ucpu = tp_cpu_for(tp, cpu);
	return c;
}

uint32_t tp_ftrace_thread_named_slow(struct tp *tp, int64_t tid, uint32_t comm)
{
	uint32_t utid = tp_thread_for_tid(tp, tid, -1);
	if (comm && tid != 0)
		tp_thread_set_name_prio(tp, utid, comm, TP_NAME_FTRACE);
	return utid;
}

/* ---- end states ------------------------------------------------------------ */

uint32_t tp_ftrace_end_state_raw(struct tp *tp, int64_t s)
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

uint32_t tp_ftrace_end_state_text(struct tp *tp, const char *s, size_t n)
{
	/* Perfetto's order of the letters once parsed into flags. */
	static const char order[] = "SDTtXZPxKWNI";
	bool seen[sizeof order] = {0};
	if (n == 0)
		return tp_intern_cstr(tp, "?");
	if (s[0] == 'R')
		return tp_intern_cstr(tp, n == 2 && s[1] == '+' ? "R+" : n == 1 ? "R" : "?");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '|')
			continue;
		const char *k = memchr(order, s[i], sizeof order - 1);
		if (!k)
			return tp_intern_cstr(tp, "?");
		seen[k - order] = true;
	}
	/* D + N (uninterruptible, no load) is the idle state. */
	if (seen[1] && seen[10]) {
		bool other = false;
		for (size_t i = 0; i < sizeof order - 1; i++)
			other |= seen[i] && i != 1 && i != 10;
		if (!other)
			return tp_intern_cstr(tp, "I");
	}
	char buf[sizeof order];
	size_t m = 0;
	for (size_t i = 0; i < sizeof order - 1; i++)
		if (seen[i])
			buf[m++] = order[i];
	return m ? tp_intern(tp, buf, m) : tp_intern_cstr(tp, "?");
}

/* ---- thread_state ---------------------------------------------------------- */

/* utid's latest rows, the array grown (TP_NULL_U32-filled) to hold it. */
static struct tp_ftrace_thread *thread_of(struct tp_ftrace *fs, uint32_t utid)
{
	if (utid >= fs->threads.len) {
		size_t old = fs->threads.len;
		vec_resize(&fs->threads, (size_t)utid + 1);
		memset(fs->threads.data + old, 0xff,
		       (fs->threads.len - old) * sizeof *fs->threads.data);
	}
	return &fs->threads.data[utid];
}

/* Does state st (a pool id) say uninterruptible sleep? The states of a
 * trace are few and repeat, so the answers are cached. */
static bool state_is_d(struct tp *tp, struct tp_ftrace *fs, uint32_t st)
{
	if (st == fs->running || st == fs->runnable)
		return false;
	uint32_t k = st % TP_FTRACE_D_CACHE;
	if (st != fs->d_state[k]) {
		const char *name = tp_str(tp, st);
		fs->d_state[k] = st;
		fs->d_state_is_d[k] = name && strchr(name, 'D');
	}
	return fs->d_state_is_d[k];
}

/* utid's thread_state moves on at ts: its open row (if any) ends there
 * and a row of state st begins (cpu ucpu while Running, woken by waker).
 * The swapper has no thread states. */
static inline void state_next(struct tp *tp, struct tp_ftrace *fs, uint32_t utid, int64_t ts,
                              uint32_t st, uint32_t ucpu, uint32_t waker)
{
	if (utid == 0)
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	struct tp_ftrace_thread *th = thread_of(fs, utid);
	if (th->state != TP_NULL_U32 && t->dur_lo[th->state] == TP_DUR_OPEN)
		tp_thread_state_set_dur(tp, th->state, ts - t->ts[th->state]);
	uint32_t row = tp_thread_state_open(tp, ts, utid, st, ucpu, waker);
	th->state = row;
	if (state_is_d(tp, fs, st))
		th->blocked = row;
}

void tp_ftrace_sched_switch(struct tp *tp, struct tp_ftrace *fs, int64_t ts, uint32_t cpu,
                            bool compact, int64_t prev_pid, uint32_t prev_comm, uint32_t end_state,
                            int64_t next_pid, uint32_t next_comm, int32_t next_prio)
{
	struct tp_ftrace_cpu *c = tp_ftrace_cpu(tp, fs, cpu);
	uint32_t next_utid = tp_ftrace_thread_named(tp, next_pid, next_comm);
	uint32_t prev_utid;
	if (compact) {
		prev_utid = c->last_utid;
		prev_pid = c->last_pid;
	} else {
		prev_utid = tp_ftrace_thread_named(tp, prev_pid, prev_comm);
	}
	struct tp_sched_table *s = &tp->t.sched;
	if (c->pending != TP_NULL_U32) {
		if (compact || prev_pid == c->last_pid) {
			tp_sched_set_dur(tp, c->pending, ts - s->ts[c->pending]);
			s->end_state[c->pending] = end_state;
		} else {
			tp_stat_inc(tp, TP_STAT_mismatched_sched_switch_tids);
		}
	}
	uint32_t row = tp_sched_append(s);
	s->ts[row] = ts;
	s->dur_lo[row] = TP_DUR_OPEN;
	s->ucpu[row] = c->ucpu;
	s->utid[row] = next_utid;
	tp_sched_set_priority(tp, row, next_prio);
	c->pending = row;
	c->has_last = true;
	c->last_pid = next_pid;
	c->last_utid = next_utid;
	c->last_prio = next_prio;

	state_next(tp, fs, prev_utid, ts, end_state, TP_NULL_U32, TP_NULL_U32);
	state_next(tp, fs, next_utid, ts, fs->running, c->ucpu, TP_NULL_U32);
}

void tp_ftrace_waking(struct tp *tp, struct tp_ftrace *fs, int64_t ts, uint32_t utid,
                      uint32_t waker)
{
	/* A thread with no state yet just becomes runnable. */
	uint32_t row = utid < fs->threads.len ? fs->threads.data[utid].state : TP_NULL_U32;
	if (row != TP_NULL_U32) {
		uint32_t st = tp->t.thread_state.state[row];
		if (st == fs->running || st == fs->runnable)
			return;
	}
	state_next(tp, fs, utid, ts, fs->runnable, TP_NULL_U32, waker);
}

void tp_ftrace_blocked_reason(struct tp *tp, struct tp_ftrace *fs, uint32_t utid, int64_t io_wait,
                              uint32_t blocked_function)
{
	uint32_t row = utid < fs->threads.len ? fs->threads.data[utid].blocked : TP_NULL_U32;
	if (row == TP_NULL_U32)
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	if (io_wait != TP_NULL_I64)
		tp_set_thread_state_io_wait(t, row, io_wait);
	if (blocked_function)
		tp_set_thread_state_blocked_function(t, row, blocked_function);
}

void tp_ftrace_new_task(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid, uint32_t comm,
                        int64_t clone_flags, uint32_t creator)
{
	/* init creating the idle tasks (boot-time tracing): not new threads. */
	if (tid == 0)
		return;
	uint32_t nu;
	if (clone_flags >= 0 && !(clone_flags & TP_CLONE_THREAD)) {
		/* fork(): a new process, child of the creator's. */
		uint32_t upid = tp_process_start_new(tp, ts, tid, comm, TP_NAME_FTRACE);
		int64_t parent = tp->t.thread.upid[creator];
		if (parent != TP_NULL_I64)
			tp->t.process.parent_upid[upid] = parent;
		nu = tp_thread_for_tid(tp, tid, -1);
	} else {
		nu = tp_thread_start_new(tp, ts, tid, creator);
		tp_thread_set_name_prio(tp, nu, comm, TP_NAME_FTRACE);
	}
	/* The new task is runnable, woken by its creator. */
	tp_ftrace_waking(tp, fs, ts, nu, creator);
}

void tp_ftrace_process_exit(struct tp *tp, int64_t ts, int64_t tid)
{
	uint32_t u = tp_thread_for_tid(tp, tid, -1);
	if (u != 0)
		tp->t.thread.end_ts[u] = ts;
}

void tp_ftrace_freq_limits(struct tp *tp, uint32_t cpu, int64_t ts, double min, double max)
{
	char name[48];
	snprintf(name, sizeof name, "Cpu %u Max Freq Limit", cpu);
	tp_ftrace_cpu_counter(tp, "cpu_max_frequency_limit", tp_intern_cstr(tp, name), cpu, ts,
	                      max);
	snprintf(name, sizeof name, "Cpu %u Min Freq Limit", cpu);
	tp_ftrace_cpu_counter(tp, "cpu_min_frequency_limit", tp_intern_cstr(tp, name), cpu, ts,
	                      min);
}

/* ---- ftrace_event rows ---------------------------------------------------- */

/* Equality of a stored kind (its index) with the triple in ctx: {wanted,
 * the kinds array}. */
static bool kind_eq(const void *ctx, uint64_t key)
{
	const struct tp_ftrace_kind *const *c = ctx;
	const struct tp_ftrace_kind *k = &c[1][key];
	return k->name == c[0]->name && k->ucpu == c[0]->ucpu && k->flags == c[0]->flags;
}

/* The kind of (name, ucpu, flags), added on first use. */
static uint32_t row_kind(struct tp *tp, uint32_t name, uint32_t ucpu, uint32_t flags)
{
	struct tp_ftrace_rows *fr = tp->ftrace_rows;
	/* Names, cpus and flags are small numbers: a cheap mix will do for
	 * the cache; the map takes the full hash. */
	uint32_t *c =
	    &fr->kind_cache[(name * 0x9e3779b1u ^ ucpu * 0x85ebca77u ^ flags * 0xc2b2ae3du) >>
	                    (32 - TP_FTRACE_KIND_CACHE_BITS)];
	if (*c) {
		const struct tp_ftrace_kind *k = &fr->kinds.data[*c - 1];
		if (k->name == name && k->ucpu == ucpu && k->flags == flags)
			return *c - 1;
	}
	uint64_t h = tb_hash_u64((uint64_t)name << 32 ^ (uint64_t)ucpu << 16 ^ flags);
	struct tp_ftrace_kind want = {name, ucpu, flags};
	const struct tp_ftrace_kind *ctx[2] = {&want, fr->kinds.data};
	size_t at = hmap_lookup(&fr->kind_map, h, kind_eq, ctx);
	uint32_t kind;
	if (at != HMAP_END) {
		kind = (uint32_t)fr->kind_map.slots[at].val;
	} else {
		TB_CHECK(fr->kinds.len < UINT32_MAX - 1);
		kind = (uint32_t)fr->kinds.len;
		vec_push(&fr->kinds, want);
		hmap_insert(&fr->kind_map, h, kind, kind);
	}
	*c = kind + 1;
	return kind;
}

uint32_t tp_ftrace_raw(struct tp *tp, struct tp_ftrace *fs, int64_t ts, uint32_t cpu, uint32_t name,
                       uint32_t utid, uint32_t flags, uint32_t args)
{
	struct tp_ftrace_cpu *c = tp_ftrace_cpu(tp, fs, cpu);
	struct tp_ftrace_event_table *t = &tp->t.ftrace_event;
	struct tp_ftrace_rows *fr = tp->ftrace_rows;
	uint32_t row = tp_ftrace_event_append(t);
	if (row % TP_FTRACE_TS_BLOCK == 0)
		vec_push(&fr->ts_base, ts);
	/* Rows come in ts order, so the offset is small; not so across the
	 * members of an archive (each sorted on its own). */
	int64_t base = fr->ts_base.data[row / TP_FTRACE_TS_BLOCK];
	uint64_t off = (uint64_t)ts - (uint64_t)base;
	if (ts >= base && off < UINT32_MAX) {
		t->ts_off[row] = (uint32_t)off;
	} else {
		t->ts_off[row] = UINT32_MAX;
		hmap_put(&fr->ts_wide, row, (uint64_t)ts);
	}
	t->kind[row] = row_kind(tp, name, c->ucpu, flags);
	t->utid[row] = utid;
	t->arg_set_id[row] = args;
	return row;
}

void tp_ftrace_rows_init(struct tp *tp)
{
	tp->ftrace_rows = tb_calloc(1, sizeof *tp->ftrace_rows);
}

void tp_ftrace_rows_counts(const struct tp *tp, size_t *kinds, size_t *ts_wide)
{
	*kinds = tp->ftrace_rows->kinds.len;
	*ts_wide = tp->ftrace_rows->ts_wide.len;
}

void tp_ftrace_rows_release(struct tp *tp)
{
	struct tp_ftrace_rows *fr = tp->ftrace_rows;
	if (fr) {
		vec_release(&fr->kinds);
		hmap_release(&fr->kind_map);
		vec_release(&fr->ts_base);
		hmap_release(&fr->ts_wide);
		tb_free(fr);
		tp->ftrace_rows = NULL;
	}
	hmap_release(&tp->sched_dur_wide);
	hmap_release(&tp->thread_state_dur_wide);
	hmap_release(&tp->sched_prio_wide);
}

void tp_ftrace_event_computed_ts(const struct tp *tp, uint32_t row, void *out)
{
	const struct tp_ftrace_rows *fr = tp->ftrace_rows;
	uint32_t off = tp->t.ftrace_event.ts_off[row];
	uint64_t ts = 0;
	if (off == UINT32_MAX)
		hmap_get(&fr->ts_wide, row, &ts);
	else
		ts = (uint64_t)fr->ts_base.data[row / TP_FTRACE_TS_BLOCK] + off;
	*(int64_t *)out = (int64_t)ts;
}

bool tp_ftrace_event_ts_range(const struct tp *tp, int64_t *min, int64_t *max)
{
	const struct tp_ftrace_rows *fr = tp->ftrace_rows;
	const uint32_t *off = tp->t.ftrace_event.ts_off;
	uint32_t n = tp->t.ftrace_event.n;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t b = 0; b * TP_FTRACE_TS_BLOCK < n; b++) {
		uint32_t from = b * TP_FTRACE_TS_BLOCK;
		uint32_t to = n - from < TP_FTRACE_TS_BLOCK ? n : from + TP_FTRACE_TS_BLOCK;
		/* UINT32_MAX marks a row in ts_wide: out of the max, and the
		 * min is only taken when some row is not wide. */
		uint32_t omin = UINT32_MAX, omax = 0;
		bool wide = false;
		for (uint32_t i = from; i < to; i++) {
			uint32_t o = off[i];
			omin = o < omin ? o : omin;
			omax = o != UINT32_MAX && o > omax ? o : omax;
			wide |= o == UINT32_MAX;
		}
		int64_t base = fr->ts_base.data[b];
		if (omin != UINT32_MAX) {
			int64_t a = (int64_t)((uint64_t)base + omin);
			int64_t z = (int64_t)((uint64_t)base + omax);
			lo = a < lo ? a : lo;
			hi = z > hi ? z : hi;
		}
		for (uint32_t i = from; wide && i < to; i++) {
			uint64_t ts = 0;
			if (off[i] == UINT32_MAX) {
				hmap_get(&fr->ts_wide, i, &ts);
				lo = (int64_t)ts < lo ? (int64_t)ts : lo;
				hi = (int64_t)ts > hi ? (int64_t)ts : hi;
			}
		}
	}
	*min = lo;
	*max = hi;
	return n > 0;
}

static const struct tp_ftrace_kind *kind_of(const struct tp *tp, uint32_t row)
{
	return &tp->ftrace_rows->kinds.data[tp->t.ftrace_event.kind[row]];
}

void tp_ftrace_event_computed_name(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = kind_of(tp, row)->name;
}

void tp_ftrace_event_computed_common_flags(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = kind_of(tp, row)->flags;
}

void tp_ftrace_event_computed_ucpu(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = kind_of(tp, row)->ucpu;
}

/* The cpu columns of sched, thread_state and ftrace_event: the row's ucpu,
 * as in Perfetto's views (the cpu number itself on the host; for another
 * machine's cpus, join the `cpu` table on ucpu). */
static uint32_t cpu_of_ucpu(const struct tp *tp, uint32_t ucpu)
{
	(void)tp;
	return ucpu;
}

/* The dur_lo of a duration that does not fit in it (tp_dur_lo's slow
 * path, kept out of the hot callers). */
__attribute__((noinline, cold)) uint32_t tp_dur_lo_wide(struct hmap *wide, uint32_t row,
                                                        int64_t dur)
{
	if (dur == -1)
		return TP_DUR_OPEN;
	hmap_put(wide, row, (uint64_t)dur);
	return TP_DUR_WIDE;
}

__attribute__((noinline, cold)) void tp_sched_set_priority_wide(struct tp *tp, uint32_t row,
                                                                int32_t prio)
{
	tp->t.sched.priority_lo[row] = TP_PRIO_WIDE;
	hmap_put(&tp->sched_prio_wide, row, (uint64_t)(int64_t)prio);
}

void tp_sched_computed_priority(const struct tp *tp, uint32_t row, void *out)
{
	*(int64_t *)out = tp_sched_priority(tp, row);
}

void tp_sched_computed_dur(const struct tp *tp, uint32_t row, void *out)
{
	*(int64_t *)out = tp_sched_dur(tp, row);
}

void tp_thread_state_computed_dur(const struct tp *tp, uint32_t row, void *out)
{
	*(int64_t *)out = tp_thread_state_dur(tp, row);
}

void tp_sched_computed_cpu(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = cpu_of_ucpu(tp, tp->t.sched.ucpu[row]);
}

/* thread_state's ucpu (Running rows) and waker_utid (others) share one
 * stored column. */
static uint32_t state_ucpu(const struct tp *tp, uint32_t row)
{
	uint32_t v = tp->t.thread_state.ucpu_or_waker[row];
	return v != TP_NULL_U32 && (v & TP_THREAD_STATE_UCPU) ? v & ~TP_THREAD_STATE_UCPU
	                                                      : TP_NULL_U32;
}

void tp_thread_state_computed_ucpu(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = state_ucpu(tp, row);
}

void tp_thread_state_computed_waker_utid(const struct tp *tp, uint32_t row, void *out)
{
	uint32_t v = tp->t.thread_state.ucpu_or_waker[row];
	*(uint32_t *)out = v & TP_THREAD_STATE_UCPU ? TP_NULL_U32 : v;
}

void tp_thread_state_computed_cpu(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = cpu_of_ucpu(tp, state_ucpu(tp, row));
}

void tp_ftrace_event_computed_cpu(const struct tp *tp, uint32_t row, void *out)
{
	*(uint32_t *)out = cpu_of_ucpu(tp, kind_of(tp, row)->ucpu);
}

void tp_ftrace_cpu_counter(struct tp *tp, const char *type, uint32_t name, uint32_t cpu, int64_t ts,
                           double value)
{
	struct tp_track_key key = {
	    .type = type,
	    .event_type = "counter",
	    .utid = -1,
	    .upid = -1,
	    .cpu = cpu,
	    .name = name,
	};
	tp_counter_add(tp, tp_track_get(tp, &key), ts, value, TP_NULL_U32);
}

/* ---- print (atrace) -------------------------------------------------------- */

/* One marker, split as Perfetto's ParseSystraceTracePoint does: fields
 * separated by '|', the phase is the first character of the first. */
struct atrace_point {
	char phase;
	bool has_tgid;
	int64_t tgid;
	const char *name, *track;
	size_t name_len, track_len;
	int64_t value; /* C value, S/F/G/H cookie */
};

struct field_reader {
	const char *s;
	size_t len, off;
};

static void next_field(struct field_reader *r, const char **f, size_t *n)
{
	size_t start = r->off;
	while (r->off < r->len && r->s[r->off] != '|' && r->s[r->off] != '\0')
		r->off++;
	*f = r->s + (start < r->len ? start : r->len);
	*n = start < r->off ? r->off - start : 0;
	r->off++; /* the separator */
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
	char tmp[24];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *e;
	long long v = strtoll(tmp, &e, 10);
	if (*e)
		return false;
	*out = v;
	return true;
}

enum { ATRACE_OK, ATRACE_FAILURE, ATRACE_UNSUPPORTED };

static int atrace_parse(const char *s, size_t len, struct atrace_point *pt)
{
	memset(pt, 0, sizeof *pt);
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\0'))
		len--;
	struct field_reader r = {s, len, 0};
	const char *f, *f2, *f3, *f4;
	size_t n, n2, n3, n4;
	next_field(&r, &f, &n);
	if (n == 0)
		return ATRACE_FAILURE;
	pt->phase = f[0];
	next_field(&r, &f, &n);
	pt->has_tgid =
	    n && f[0] != '-' && f[0] != '+' && parse_i64(f, n, &pt->tgid) && pt->tgid <= UINT32_MAX;
	if (!pt->has_tgid)
		pt->tgid = 0;
	switch (pt->phase) {
	case 'B': /* the name is the rest, '|' included */
		if (!pt->has_tgid)
			return ATRACE_FAILURE;
		pt->name = r.off < len ? s + r.off : "[empty slice name]";
		pt->name_len = r.off < len ? len - r.off : strlen("[empty slice name]");
		return ATRACE_OK;
	case 'E':
		return ATRACE_OK;
	case 'S':
	case 'F':
	case 'C':
		next_field(&r, &f2, &n2);
		next_field(&r, &f3, &n3);
		if (!pt->has_tgid || !n2 || !parse_i64(f3, n3, &pt->value))
			return ATRACE_FAILURE;
		pt->name = f2;
		pt->name_len = n2;
		return ATRACE_OK;
	case 'I':
		next_field(&r, &f2, &n2);
		if (!pt->has_tgid || !n2)
			return ATRACE_FAILURE;
		pt->name = f2;
		pt->name_len = n2;
		return ATRACE_OK;
	case 'N':
	case 'G':
		next_field(&r, &f2, &n2);
		next_field(&r, &f3, &n3);
		if (!pt->has_tgid || !n2 || !n3)
			return ATRACE_FAILURE;
		if (pt->phase == 'G') {
			next_field(&r, &f4, &n4);
			if (!parse_i64(f4, n4, &pt->value))
				return ATRACE_FAILURE;
		}
		pt->track = f2;
		pt->track_len = n2;
		pt->name = f3;
		pt->name_len = n3;
		return ATRACE_OK;
	case 'H':
		next_field(&r, &f2, &n2);
		next_field(&r, &f3, &n3);
		next_field(&r, &f4, &n4);
		if (!pt->has_tgid || !n2 || !parse_i64(n4 ? f4 : f3, n4 ? n4 : n3, &pt->value))
			return ATRACE_FAILURE;
		pt->track = f2;
		pt->track_len = n2;
		return ATRACE_OK;
	default:
		if (len >= 23 && memcmp(s, "trace_event_clock_sync:", 23) == 0)
			return ATRACE_UNSUPPORTED;
		return ATRACE_FAILURE;
	}
}

/* An async slice on a track of the process: S/F on the track named after
 * the slice, G/H on the named track. Slices open at once with other
 * cookies go on further lanes of that name (as Perfetto's track compressor
 * does), so they do not nest; a repeated S of an open cookie is ignored. */
static uint64_t async_key(uint32_t upid, uint32_t name, uint64_t x, uint64_t salt)
{
	return tb_hash_u64(((uint64_t)upid << 32 | name) ^ tb_hash_u64(x ^ salt));
}

static void async_event(struct tp *tp, struct tp_ftrace *fs, int64_t ts, bool for_track,
                        int64_t tgid, bool begin, uint32_t track_name, uint32_t name,
                        int64_t cookie, uint32_t args)
{
	uint32_t upid = tp_process_for_pid(tp, tgid);
	uint64_t salt = for_track ? 2 : 0;
	uint64_t key = async_key(upid, track_name, (uint64_t)cookie, salt);
	uint64_t v;
	if (begin) {
		if (hmap_get(&fs->async_open, key, &v))
			return;
		uint64_t lane = 0;
		while (hmap_get(&fs->async_busy, async_key(upid, track_name, lane, salt + 1), NULL))
			lane++;
		struct tp_track_key k = {
		    .type = for_track ? "atrace_async_slice_for_track" : "atrace_async_slice",
		    .event_type = "slice",
		    .utid = -1,
		    .upid = upid,
		    .cpu = -1,
		    .extra_dim = lane,
		    .name = track_name,
		};
		uint32_t track = tp_track_get(tp, &k);
		tp_slice_begin(tp, track, ts, 0, name, args);
		hmap_put(&fs->async_open, key, lane << 32 | track);
		hmap_put(&fs->async_busy, async_key(upid, track_name, lane, salt + 1), 1);
		return;
	}
	if (!hmap_get(&fs->async_open, key, &v)) {
		tp_stat_inc(tp, TP_STAT_misplaced_end_event);
		return;
	}
	tp_slice_end(tp, (uint32_t)v, ts, 0, 0, args);
	hmap_del(&fs->async_open, key, NULL);
	hmap_del(&fs->async_busy, async_key(upid, track_name, v >> 32, salt + 1), NULL);
}

static uint32_t one_int_arg(struct tp *tp, const char *key, int64_t v)
{
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_begin(&tp->args_scratch);
	tp_args_add_int(&tp->args_scratch, k, k, v);
	return tp_args_commit(tp, &tp->args_scratch);
}

static void atrace_apply(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t pid,
                         const struct atrace_point *p);

void tp_ftrace_print(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t pid, const char *s,
                     size_t len)
{
	struct atrace_point pt;
	switch (atrace_parse(s, len, &pt)) {
	case ATRACE_FAILURE:
		tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
		return;
	case ATRACE_UNSUPPORTED:
		return;
	default:
		atrace_apply(tp, fs, ts, pid, &pt);
		break;
	}
}

void tp_ftrace_kernel_mark(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t pid, char phase,
                           int64_t tgid, const char *name, size_t name_len, int64_t value)
{
	struct atrace_point pt = {
	    .phase = phase,
	    .has_tgid = true,
	    .tgid = tgid,
	    .name = name,
	    .name_len = name_len,
	    .value = value,
	};
	if (phase != 'B' && phase != 'E' && phase != 'C' && phase != 'I') {
		tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
		return;
	}
	atrace_apply(tp, fs, ts, pid, &pt);
}

/* One parsed marker into slices, async slices or counters. */
static void atrace_apply(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t pid,
                         const struct atrace_point *p)
{
	struct atrace_point pt = *p;
	/* tgid 0 (kernel markers, old end events): the thread alone. */
	int64_t tgid = pt.tgid ? pt.tgid : -1;
	uint32_t name = pt.name ? tp_intern(tp, pt.name, pt.name_len) : 0;
	switch (pt.phase) {
	case 'B':
	case 'I': {
		uint32_t track = tp_track_for_thread(tp, tp_thread_for_tid(tp, pid, tgid));
		if (pt.phase == 'B')
			tp_slice_begin(tp, track, ts, 0, name, TP_NULL_U32);
		else
			tp_slice_complete(tp, track, ts, 0, 0, name, TP_NULL_U32);
		break;
	}
	case 'E': {
		uint64_t utid;
		if (pt.tgid == 0) {
			/* A thread never seen cannot have begun a slice. */
			if (!hmap_get(&tp->tid_to_utid, (uint64_t)pid, &utid))
				break;
		} else {
			utid = tp_thread_for_tid(tp, pid, pt.tgid);
		}
		tp_slice_end(tp, tp_track_for_thread(tp, (uint32_t)utid), ts, 0, 0, TP_NULL_U32);
		break;
	}
	case 'S':
	case 'F':
		async_event(tp, fs, ts, false, pt.tgid, pt.phase == 'S', name, name, pt.value,
		            pt.phase == 'S' ? one_int_arg(tp, "cookie", pt.value) : TP_NULL_U32);
		break;
	case 'N':
	case 'G':
	case 'H': {
		uint32_t track_name = tp_intern(tp, pt.track, pt.track_len);
		uint32_t utid = tp_thread_for_tid(tp, pid, -1);
		if (pt.phase == 'N') {
			struct tp_track_key k = {
			    .type = "atrace_async_slice_for_track",
			    .event_type = "slice",
			    .utid = -1,
			    .upid = tp_process_for_pid(tp, pt.tgid),
			    .cpu = -1,
			    .name = track_name,
			};
			tp_slice_complete(tp, tp_track_get(tp, &k), ts, 0, 0, name,
			                  one_int_arg(tp, "utid", utid));
			break;
		}
		async_event(tp, fs, ts, true, pt.tgid, pt.phase == 'G', track_name, name, pt.value,
		            one_int_arg(tp, pt.phase == 'G' ? "utid" : "end_utid", utid));
		break;
	}
	case 'C': {
		struct tp_track_key key = {
		    .type = "atrace_counter",
		    .event_type = "counter",
		    .utid = -1,
		    .upid = tp_process_for_pid(tp, pt.tgid),
		    .cpu = -1,
		    .name = name,
		};
		tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)pt.value, TP_NULL_U32);
		break;
	}
	default:
		break;
	}
}
