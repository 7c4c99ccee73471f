/*
 * Processes and threads: maps from the pids and tids a trace mentions to
 * upids and utids (rows of the process and thread tables). A pid or tid maps
 * to its live row until the trace says it ended, so reuse gets a new row.
 * utid 0 and upid 0 are the swapper placeholders created by tp_new().
 */
#include "../tp_int.h"

uint32_t tp_process_for_pid(struct tp *tp, int64_t pid)
{
	uint64_t v;
	if (hmap_get(&tp->pid_to_upid, (uint64_t)pid, &v))
		return (uint32_t)v;
	struct tp_process_table *t = &tp->t.process;
	uint32_t upid = tp_process_append(t);
	t->pid[upid] = pid;
	t->machine_id[upid] = TP_NULL_I64;
	hmap_put(&tp->pid_to_upid, (uint64_t)pid, upid);
	/* A process comes with its main thread, as in Perfetto (threads of
	 * it seen before are matched by tid). */
	tp_thread_for_tid(tp, pid, pid);
	return upid;
}

static struct tp_tid_slot *tid_slot(struct tp *tp, int64_t tid)
{
	return &tp->tid_cache[(uint64_t)tid % TB_ARRAY_SIZE(tp->tid_cache)];
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
		/* The tid now belongs to another process: a new thread. */
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
	if (pid >= 0) {
		t->upid[utid] = upid;
		t->is_main_thread[utid] = tid == pid;
	}
	hmap_put(&tp->tid_to_utid, (uint64_t)tid, utid);
	struct tp_tid_slot *s = tid_slot(tp, tid);
	s->tid = tid;
	s->utid1 = utid + 1;
	return utid;
}

void tp_process_set_name(struct tp *tp, uint32_t upid, uint32_t name_id)
{
	if (name_id)
		tp->t.process.name[upid] = name_id;
}

void tp_thread_set_name(struct tp *tp, uint32_t utid, uint32_t name_id)
{
	if (name_id)
		tp->t.thread.name[utid] = name_id;
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
	if (hmap_get(&tp->tid_to_utid, (uint64_t)t->tid[utid], &v) && v == utid) {
		hmap_del(&tp->tid_to_utid, (uint64_t)t->tid[utid], NULL);
		struct tp_tid_slot *s = tid_slot(tp, t->tid[utid]);
		if (s->tid == t->tid[utid])
			s->utid1 = 0;
	}
}
