/*
 * Processes and threads: maps from the pids and tids a trace mentions to
 * upids and utids (rows of the process and thread tables). A pid or tid maps
 * to its live row until the trace says it ended, so reuse gets a new row.
 * utid 0 and upid 0 are the host's swapper placeholders created by tp_new();
 * each other machine has its own (machine.c). The maps are the current
 * machine's: rows made here are its (machine_id).
 */
#include "../tp_int.h"
#include "model.h"

#include <string.h>

uint32_t tp_process_for_pid_bare(struct tp *tp, int64_t pid)
{
	uint64_t v;
	if (hmap_get(&tp->pid_to_upid, (uint64_t)pid, &v))
		return (uint32_t)v;
	struct tp_process_table *t = &tp->t.process;
	uint32_t upid = tp_process_append(t);
	t->pid[upid] = pid;
	t->machine_id[upid] = tp->machine;
	hmap_put(&tp->pid_to_upid, (uint64_t)pid, upid);
	return upid;
}

uint32_t tp_process_for_pid(struct tp *tp, int64_t pid)
{
	uint64_t v;
	if (hmap_get(&tp->pid_to_upid, (uint64_t)pid, &v))
		return (uint32_t)v;
	uint32_t upid = tp_process_for_pid_bare(tp, pid);
	/* A process comes with its main thread, as in Perfetto (threads of
	 * it seen before are matched by tid). */
	tp_thread_for_tid(tp, pid, pid);
	return upid;
}

static struct tp_tid_slot *tid_slot(struct tp *tp, int64_t tid)
{
	return &tp->tid_cache[(uint64_t)tid % TP_TID_CACHE];
}

/* tid_to_utid through its cache. */
static bool tid_lookup(struct tp *tp, int64_t tid, uint64_t *v)
{
	struct tp_tid_slot *s = tid_slot(tp, tid);
	if (s->utid1 && s->tid == tid) {
		*v = s->utid1 - 1;
		return true;
	}
	if (!hmap_get(&tp->tid_to_utid, (uint64_t)tid, v))
		return false;
	s->tid = tid;
	s->utid1 = (uint32_t)*v + 1;
	return true;
}

/* Every change of tid_to_utid goes through these two, so the cache never
 * holds a tid the map no longer maps that way. */
static void tid_map_put(struct tp *tp, int64_t tid, uint32_t utid)
{
	hmap_put(&tp->tid_to_utid, (uint64_t)tid, utid);
	struct tp_tid_slot *s = tid_slot(tp, tid);
	s->tid = tid;
	s->utid1 = utid + 1;
}

/* A new utid for tid becomes the mapped one; the one it replaces stays
 * reachable through tid_prev, for lookups by (tid, pid). */
static void tid_map_push(struct tp *tp, int64_t tid, uint32_t utid)
{
	uint64_t v;
	uint32_t prev = hmap_get(&tp->tid_to_utid, (uint64_t)tid, &v) ? (uint32_t)v : TP_NULL_U32;
	if (utid >= tp->tid_prev.len)
		vec_resize(&tp->tid_prev, (size_t)utid + 1);
	tp->tid_prev.data[utid] = prev;
	tid_map_put(tp, tid, utid);
}

static void tid_map_del(struct tp *tp, int64_t tid)
{
	hmap_del(&tp->tid_to_utid, (uint64_t)tid, NULL);
	struct tp_tid_slot *s = tid_slot(tp, tid);
	if (s->tid == tid)
		s->utid1 = 0;
}

/* Is utid still a live thread: not ended, nor its process ended or
 * replaced by a newer one with its pid (Perfetto's IsThreadAlive)? */
static bool thread_alive(struct tp *tp, uint32_t utid)
{
	const struct tp_thread_table *t = &tp->t.thread;
	if (t->end_ts[utid] != TP_NULL_I64)
		return false;
	int64_t upid = t->upid[utid];
	if (upid == TP_NULL_I64)
		return true;
	if (tp->t.process.end_ts[upid] != TP_NULL_I64)
		return false;
	uint64_t v;
	return !hmap_get(&tp->pid_to_upid, (uint64_t)tp->t.process.pid[upid], &v) ||
	       v == (uint64_t)upid;
}

/* An older live thread of tid in the process of pid, or one whose process
 * is not known yet, reached from utid through tid_prev; TP_NULL_U32 if
 * none. A tid seen in turn under two pids is one thread in each. */
static uint32_t older_thread(struct tp *tp, uint32_t utid, int64_t pid)
{
	const struct tp_thread_table *t = &tp->t.thread;
	for (uint32_t u = utid < tp->tid_prev.len ? tp->tid_prev.data[utid] : TP_NULL_U32;
	     u != TP_NULL_U32; u = u < tp->tid_prev.len ? tp->tid_prev.data[u] : TP_NULL_U32) {
		if (!thread_alive(tp, u))
			continue;
		int64_t upid = t->upid[u];
		if (upid == TP_NULL_I64 || tp->t.process.pid[upid] == pid)
			return u;
	}
	return TP_NULL_U32;
}

uint32_t tp_thread_for_tid(struct tp *tp, int64_t tid, int64_t pid)
{
	struct tp_thread_table *t = &tp->t.thread;
	uint64_t v;
	if (tid_lookup(tp, tid, &v)) {
		uint32_t utid = (uint32_t)v;
		if (pid < 0)
			return utid;
		int64_t upid = t->upid[utid];
		if (upid == TP_NULL_I64) {
			/* First time we learn the thread's process (which may
			 * append its main thread: columns can move). */
			uint32_t p = tp_process_for_pid(tp, pid);
			t->upid[utid] = p;
			if (t->is_main_thread[utid] == TP_NULL_I64)
				t->is_main_thread[utid] = tid == pid;
			return utid;
		}
		if (tp->t.process.pid[upid] == pid)
			return utid;
		/* The tid is another process's now: an older thread of it in
		 * this one, else a new thread. */
		uint32_t old = older_thread(tp, utid, pid);
		if (old != TP_NULL_U32) {
			if (t->upid[old] == TP_NULL_I64) {
				uint32_t p = tp_process_for_pid(tp, pid);
				t->upid[old] = p;
				if (t->is_main_thread[old] == TP_NULL_I64)
					t->is_main_thread[old] = tid == pid;
			}
			return old;
		}
	}
	/* The process first: a new one creates its main thread, which may be
	 * this very thread. */
	uint32_t upid = TP_NULL_U32;
	if (pid >= 0) {
		upid = tp_process_for_pid(tp, pid);
		if (tid == pid && hmap_get(&tp->tid_to_utid, (uint64_t)tid, &v) &&
		    t->upid[v] == upid)
			return (uint32_t)v;
	}
	uint32_t utid = tp_thread_append(t);
	t->tid[utid] = tid;
	t->machine_id[utid] = tp->machine;
	if (pid >= 0) {
		t->upid[utid] = upid;
		t->is_main_thread[utid] = tid == pid;
	}
	tid_map_push(tp, tid, utid);
	return utid;
}

void tp_process_set_name(struct tp *tp, uint32_t upid, uint32_t name_id)
{
	if (name_id)
		tp->t.process.name[upid] = name_id;
}

void tp_thread_set_name(struct tp *tp, uint32_t utid, uint32_t name_id)
{
	tp_thread_set_name_prio(tp, utid, name_id, TP_NAME_DESCRIPTOR);
}

void tp_thread_set_name_prio(struct tp *tp, uint32_t utid, uint32_t name_id, enum tp_name_prio prio)
{
	if (!name_id)
		return;
	if (utid >= tp->thread_name_prio.len) {
		size_t old = tp->thread_name_prio.len;
		vec_resize(&tp->thread_name_prio, utid + 1);
		memset(tp->thread_name_prio.data + old, TP_NAME_OTHER, utid + 1 - old);
	}
	if (prio < tp->thread_name_prio.data[utid])
		return;
	tp->thread_name_prio.data[utid] = (uint8_t)prio;
	tp->t.thread.name[utid] = name_id;
}

void tp_thread_rename(struct tp *tp, uint32_t utid, uint32_t name_id, enum tp_name_prio prio)
{
	tp_thread_set_name_prio(tp, utid, name_id, prio);
	struct tp_thread_table *t = &tp->t.thread;
	int64_t upid = t->upid[utid];
	if (upid != TP_NULL_I64 && tp->t.process.pid[upid] == t->tid[utid])
		tp_process_set_name(tp, (uint32_t)upid, name_id);
}

void tp_thread_name_idle(struct tp *tp)
{
	uint32_t utid;
	if (tp_thread_find(tp, 0, &utid))
		tp_thread_set_name_prio(tp, utid, tp_intern_cstr(tp, "swapper"), TP_NAME_CONSTANT);
}

/* A new utid for tid, mapped as the live one. */
static uint32_t thread_new(struct tp *tp, int64_t ts, int64_t tid)
{
	struct tp_thread_table *t = &tp->t.thread;
	uint32_t utid = tp_thread_append(t);
	t->tid[utid] = tid;
	t->machine_id[utid] = tp->machine;
	t->start_ts[utid] = ts;
	tid_map_push(tp, tid, utid);
	return utid;
}

uint32_t tp_process_start_new(struct tp *tp, int64_t ts, int64_t pid, uint32_t comm,
                              enum tp_name_prio prio)
{
	hmap_del(&tp->pid_to_upid, (uint64_t)pid, NULL);
	tid_map_del(tp, pid);
	uint32_t utid = thread_new(tp, ts, pid);
	tp_thread_set_name_prio(tp, utid, comm, prio);
	/* Creating the process attaches the fresh main thread to it. */
	uint32_t upid = tp_process_for_pid(tp, pid);
	tp->t.process.start_ts[upid] = ts;
	tp_process_set_name(tp, upid, comm);
	return upid;
}

bool tp_thread_find(struct tp *tp, int64_t tid, uint32_t *utid)
{
	uint64_t v;
	if (!tid_lookup(tp, tid, &v))
		return false;
	*utid = (uint32_t)v;
	return true;
}

uint32_t tp_thread_start(struct tp *tp, int64_t ts, int64_t tid)
{
	return thread_new(tp, ts, tid);
}

uint32_t tp_thread_start_new(struct tp *tp, int64_t ts, int64_t tid, uint32_t creator)
{
	uint32_t utid = thread_new(tp, ts, tid);
	struct tp_thread_table *t = &tp->t.thread;
	int64_t upid = t->upid[creator];
	if (upid != TP_NULL_I64) {
		t->upid[utid] = upid;
		t->is_main_thread[utid] = tp->t.process.pid[upid] == tid;
	}
	return utid;
}

void tp_thread_free(struct tp *tp, int64_t ts, int64_t tid)
{
	uint64_t v;
	/* A thread never seen is not created just to be ended. */
	if (!hmap_get(&tp->tid_to_utid, (uint64_t)tid, &v))
		return;
	uint32_t utid = (uint32_t)v;
	tp_thread_end(tp, utid, ts);
	int64_t upid = tp->t.thread.upid[utid];
	if (upid != TP_NULL_I64 && tp->t.process.pid[upid] == tid)
		tp_process_end(tp, (uint32_t)upid, ts);
}

void tp_process_end(struct tp *tp, uint32_t upid, int64_t ts)
{
	struct tp_process_table *t = &tp->t.process;
	t->end_ts[upid] = ts;
	uint64_t v;
	if (hmap_get(&tp->pid_to_upid, (uint64_t)t->pid[upid], &v) && v == upid)
		hmap_del(&tp->pid_to_upid, (uint64_t)t->pid[upid], NULL);
}

void tp_thread_end(struct tp *tp, uint32_t utid, int64_t ts)
{
	struct tp_thread_table *t = &tp->t.thread;
	t->end_ts[utid] = ts;
	uint64_t v;
	if (hmap_get(&tp->tid_to_utid, (uint64_t)t->tid[utid], &v) && v == utid)
		tid_map_del(tp, t->tid[utid]);
}

void tp_pid_zero_idle(struct tp *tp, bool idle)
{
	uint64_t v;
	if (idle) {
		hmap_put(&tp->pid_to_upid, 0, 0);
		tid_map_put(tp, 0, 0);
		return;
	}
	if (hmap_get(&tp->pid_to_upid, 0, &v) && v == 0)
		hmap_del(&tp->pid_to_upid, 0, NULL);
	if (tid_lookup(tp, 0, &v) && v == 0)
		tid_map_del(tp, 0);
}
