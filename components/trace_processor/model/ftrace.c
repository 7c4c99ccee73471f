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
 *   new task        a new thread named comm, runnable, woken by its creator
 *   cpu counters    cpu_frequency ("cpufreq"), cpu_idle ("cpuidle"), ...
 *   print           atrace text: B|pid|name, E|pid, I|pid|name,
 *                   C|pid|name|value, S|pid|name|cookie, F|pid|name|cookie
 *   raw             one `ftrace_event` row
 *
 * End states are pool ids of Perfetto's letters: tp_ftrace_end_state_raw()
 * decodes a kernel prev_state number (TASK_REPORT bits of kernels >= 4.14),
 * tp_ftrace_end_state_text() the letters a text trace prints ("R+", "D|K").
 */
#include "../tp_int.h"

#include <stdlib.h>
#include <string.h>

void tp_ftrace_init(struct tp *tp, struct tp_ftrace *f)
{
	memset(f, 0, sizeof *f);
	f->running = tp_intern_cstr(tp, "Running");
	f->runnable = tp_intern_cstr(tp, "R");
}

void tp_ftrace_release(struct tp_ftrace *f)
{
	vec_release(&f->cpus);
	hmap_release(&f->last_state);
	hmap_release(&f->last_blocked);
	hmap_release(&f->async_open);
	hmap_release(&f->async_busy);
}

struct tp_ftrace_cpu *tp_ftrace_cpu(struct tp *tp, struct tp_ftrace *f, uint32_t cpu)
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
	if (c->ucpu == TP_NULL_U32) {
		c->ucpu = tp_cpu_append(&tp->t.cpu);
		tp->t.cpu.cpu[c->ucpu] = cpu;
	}
	return c;
}

uint32_t tp_ftrace_thread_named(struct tp *tp, int64_t tid, uint32_t comm)
{
	uint32_t utid = tp_thread_for_tid(tp, tid, -1);
	if (comm && tid != 0)
		tp_thread_set_name(tp, utid, comm);
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

static void state_close(struct tp *tp, struct tp_ftrace *fs, uint32_t utid, int64_t ts)
{
	uint64_t row;
	if (!hmap_get(&fs->last_state, utid, &row))
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	if (t->dur[row] == -1)
		t->dur[row] = ts - t->ts[row];
}

static void state_open(struct tp *tp, struct tp_ftrace *fs, uint32_t utid, int64_t ts, uint32_t st,
                       uint32_t cpu, uint32_t ucpu, uint32_t waker)
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
	const char *name = tp_str(tp, st);
	if (name && strchr(name, 'D'))
		hmap_put(&fs->last_blocked, utid, row);
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
			s->dur[c->pending] = ts - s->ts[c->pending];
			s->end_state[c->pending] = end_state;
		} else {
			tp_stat_inc(tp, TP_STAT_mismatched_sched_switch_tids);
		}
	}
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
	state_open(tp, fs, prev_utid, ts, end_state, TP_NULL_U32, TP_NULL_U32, TP_NULL_U32);
	state_close(tp, fs, next_utid, ts);
	state_open(tp, fs, next_utid, ts, fs->running, cpu, c->ucpu, TP_NULL_U32);
}

void tp_ftrace_waking(struct tp *tp, struct tp_ftrace *fs, int64_t ts, uint32_t utid,
                      uint32_t waker)
{
	uint64_t row;
	/* A thread with no state yet just becomes runnable. */
	if (hmap_get(&fs->last_state, utid, &row)) {
		uint32_t st = tp->t.thread_state.state[row];
		if (st == fs->running || st == fs->runnable)
			return;
	}
	state_close(tp, fs, utid, ts);
	state_open(tp, fs, utid, ts, fs->runnable, TP_NULL_U32, TP_NULL_U32, waker);
}

void tp_ftrace_blocked_reason(struct tp *tp, struct tp_ftrace *fs, uint32_t utid, int64_t io_wait,
                              uint32_t blocked_function)
{
	uint64_t row;
	if (!hmap_get(&fs->last_blocked, utid, &row))
		return;
	struct tp_thread_state_table *t = &tp->t.thread_state;
	if (io_wait != TP_NULL_I64)
		t->io_wait[row] = io_wait;
	if (blocked_function)
		t->blocked_function[row] = blocked_function;
}

void tp_ftrace_new_task(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid, uint32_t comm,
                        uint32_t creator)
{
	/* A new task with that tid: the previous one (if any) ended. */
	uint32_t old = tp_thread_for_tid(tp, tid, -1);
	if (old != 0 && tp->t.thread.start_ts[old] != TP_NULL_I64)
		tp_thread_end(tp, old, ts);
	uint32_t nu = tp_thread_for_tid(tp, tid, -1);
	tp->t.thread.start_ts[nu] = ts;
	tp_thread_set_name(tp, nu, comm);
	/* The new task is runnable, woken by its creator. */
	tp_ftrace_waking(tp, fs, ts, nu, creator);
}

void tp_ftrace_process_exit(struct tp *tp, int64_t ts, int64_t tid)
{
	uint32_t u = tp_thread_for_tid(tp, tid, -1);
	if (u != 0)
		tp->t.thread.end_ts[u] = ts;
}

uint32_t tp_ftrace_raw(struct tp *tp, struct tp_ftrace *fs, int64_t ts, uint32_t cpu, uint32_t name,
                       uint32_t utid, uint32_t flags, uint32_t args)
{
	struct tp_ftrace_cpu *c = tp_ftrace_cpu(tp, fs, cpu);
	struct tp_ftrace_event_table *t = &tp->t.ftrace_event;
	uint32_t row = tp_ftrace_event_append(t);
	t->ts[row] = ts;
	t->name[row] = name;
	t->cpu[row] = cpu;
	t->ucpu[row] = c->ucpu;
	t->utid[row] = utid;
	t->common_flags[row] = flags;
	t->arg_set_id[row] = args;
	return row;
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

/* S/F: an async slice on a track of the process named after it. Slices
 * open at once with other cookies go on further lanes of that name (as
 * Perfetto's track compressor does), so they do not nest. */
static uint64_t async_key(uint32_t upid, uint32_t name, uint64_t x, uint64_t salt)
{
	return tb_hash_u64(((uint64_t)upid << 32 | name) ^ tb_hash_u64(x ^ salt));
}

static void async_event(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tgid, bool begin,
                        uint32_t name, int64_t cookie)
{
	uint32_t upid = tp_process_for_pid(tp, tgid);
	uint64_t key = async_key(upid, name, (uint64_t)cookie, 0);
	uint64_t v;
	if (begin) {
		if (hmap_get(&fs->async_open, key, &v))
			return; /* unnestable: a repeated S is ignored */
		uint64_t lane = 0;
		while (hmap_get(&fs->async_busy, async_key(upid, name, lane, 1), NULL))
			lane++;
		struct tp_track_key k = {
		    .type = "atrace_async_slice",
		    .event_type = "slice",
		    .utid = -1,
		    .upid = upid,
		    .cpu = -1,
		    .extra_dim = lane,
		    .name = name,
		};
		uint32_t track = tp_track_get(tp, &k);
		uint32_t ck = tp_intern_cstr(tp, "cookie");
		tp_args_begin(&tp->args_scratch);
		tp_args_add_int(&tp->args_scratch, ck, ck, cookie);
		tp_slice_begin(tp, track, ts, 0, name, tp_args_commit(tp, &tp->args_scratch));
		hmap_put(&fs->async_open, key, lane << 32 | track);
		hmap_put(&fs->async_busy, async_key(upid, name, lane, 1), 1);
		return;
	}
	if (!hmap_get(&fs->async_open, key, &v)) {
		tp_stat_inc(tp, TP_STAT_misplaced_end_event);
		return;
	}
	tp_slice_end(tp, (uint32_t)v, ts, 0, 0, TP_NULL_U32);
	hmap_del(&fs->async_open, key, NULL);
	hmap_del(&fs->async_busy, async_key(upid, name, v >> 32, 1), NULL);
}

void tp_ftrace_print(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t pid, const char *s,
                     size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\0'))
		len--;
	/* Split on '|' into at most 4 parts; the last keeps any further '|'. */
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
	if (np > 1 && plen[1] && !parse_i64(part[1], plen[1], &tgid)) {
		tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
		return;
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
	case 'S':
	case 'F': {
		/* S|tgid|name|cookie: the name may itself hold '|'. */
		if (np < 4 || tgid < 0) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		const char *bar = NULL;
		for (size_t i = plen[3]; i-- > 0;)
			if (part[3][i] == '|') {
				bar = part[3] + i;
				break;
			}
		const char *name = part[2];
		size_t name_len = plen[2];
		const char *ck = part[3];
		size_t ck_len = plen[3];
		if (bar) {
			name_len = (size_t)(bar - part[2]);
			ck = bar + 1;
			ck_len = (size_t)(part[3] + plen[3] - ck);
		}
		int64_t cookie;
		if (!parse_i64(ck, ck_len, &cookie)) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		async_event(tp, fs, ts, tgid, part[0][0] == 'S', tp_intern(tp, name, name_len),
		            cookie);
		break;
	}
	case 'C': {
		if (np < 4 || tgid < 0) {
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
			return;
		}
		/* C|tgid|name|value|category: the value ends at the next '|'. */
		const char *vend = memchr(part[3], '|', plen[3]);
		size_t vl = vend ? (size_t)(vend - part[3]) : plen[3];
		char tmp[64];
		size_t l = vl < sizeof tmp - 1 ? vl : sizeof tmp - 1;
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
