/*
 * Machines and their cpus. A trace may hold the packets of several machines
 * (TracePacket.machine_id, stamped by a relay); each machine is a row of
 * the `machine` table, row 0 the host. As in Perfetto, every machine has
 * its own processes and threads (pids and tids are looked up among its
 * own), its own swapper (pid/tid 0), its own tracks and its own block of
 * TP_MAX_CPUS rows in the `cpu` table:
 *
 *   ucpu = machine * TP_MAX_CPUS + cpu
 *
 *   cpu table:  | host: 0 .. 4095 | machine 1: 4096 .. 8191 | ...
 *                 rows up to the highest ucpu used; `cpu` NULL where unseen
 *
 * The importers say which machine they are importing (tp_machine_use); the
 * pid/tid lookups of the current machine live in struct tp itself, those of
 * the others are parked in tp->machine_maps until they are current again.
 */
#include "../tp_int.h"
#include "model.h"

#include <string.h>

/* A machine's empty lookups. */
static struct tp_machine_maps maps_new(void)
{
	struct tp_machine_maps m;
	hmap_init(&m.pid_to_upid);
	hmap_init(&m.tid_to_utid);
	m.tid_cache = tb_calloc(TP_TID_CACHE, sizeof *m.tid_cache);
	return m;
}

void tp_machine_use_slow(struct tp *tp, uint32_t machine)
{
	struct tp_machine_maps *old = &tp->machine_maps.data[tp->machine];
	old->pid_to_upid = tp->pid_to_upid;
	old->tid_to_utid = tp->tid_to_utid;
	old->tid_cache = tp->tid_cache;
	const struct tp_machine_maps *m = &tp->machine_maps.data[machine];
	tp->pid_to_upid = m->pid_to_upid;
	tp->tid_to_utid = m->tid_to_utid;
	tp->tid_cache = m->tid_cache;
	tp->machine = machine;
}

uint32_t tp_machine_for_raw(struct tp *tp, int64_t raw)
{
	struct tp_machine_table *t = &tp->t.machine;
	/* A handful of rows at most. */
	for (uint32_t i = 0; i < t->n; i++)
		if (t->raw_id[i] == raw)
			return i;
	uint32_t row = tp_machine_append(t);
	t->raw_id[row] = raw;
	vec_push(&tp->machine_maps, maps_new());
	if (row == 0) {
		/* The host: its lookups are the current ones from the start. */
		const struct tp_machine_maps *m = &tp->machine_maps.data[0];
		tp->pid_to_upid = m->pid_to_upid;
		tp->tid_to_utid = m->tid_to_utid;
		tp->tid_cache = m->tid_cache;
		tp->machine = 0;
	}
	/* Its swapper: the idle process and thread, pid/tid 0 on it (for
	 * the host, upid/utid 0). */
	uint32_t prev = tp->machine;
	tp_machine_use(tp, row);
	uint32_t utid = tp_thread_for_tid(tp, 0, 0);
	tp->t.thread.is_idle[utid] = 1;
	if (row != 0)
		tp_thread_name_idle(tp);
	tp_machine_use(tp, prev);
	return row;
}

uint32_t tp_cpu_for(struct tp *tp, uint32_t cpu)
{
	TB_CHECK(cpu < TP_MAX_CPUS);
	struct tp_cpu_table *t = &tp->t.cpu;
	uint32_t ucpu = tp->machine * TP_MAX_CPUS + cpu;
	while (t->n <= ucpu) {
		uint32_t row = tp_cpu_append(t);
		t->machine_id[row] = row / TP_MAX_CPUS;
	}
	t->cpu[ucpu] = cpu;
	return ucpu;
}

void tp_machines_release(struct tp *tp)
{
	if (!tp->machine_maps.len)
		return;
	tp_machine_use(tp, 0);
	struct tp_machine_maps *host = &tp->machine_maps.data[0];
	host->pid_to_upid = tp->pid_to_upid;
	host->tid_to_utid = tp->tid_to_utid;
	host->tid_cache = tp->tid_cache;
	for (size_t i = 0; i < tp->machine_maps.len; i++) {
		struct tp_machine_maps *m = &tp->machine_maps.data[i];
		hmap_release(&m->pid_to_upid);
		hmap_release(&m->tid_to_utid);
		tb_free(m->tid_cache);
	}
	vec_release(&tp->machine_maps);
	memset(&tp->pid_to_upid, 0, sizeof tp->pid_to_upid);
	memset(&tp->tid_to_utid, 0, sizeof tp->tid_to_utid);
	tp->tid_cache = NULL;
}
