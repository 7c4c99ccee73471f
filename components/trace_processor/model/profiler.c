/*
 * Profiler samples, as Perfetto's ProfilerSampleTracker: every sampling
 * profiler's samples go to one table, profiler_sample, each attributed to a
 * task context (process, thread, async context) and an execution context
 * (cpu, privilege mode), both interned so that a million samples of one
 * thread share one row, and to a counter set (the counter rows recorded at
 * the sample: its timebase and followers).
 *
 *   profiler_sample ──task_context_id──▶ profiler_task_context (upid, utid, async)
 *        │         ──execution_context_id──▶ profiler_execution_context (ucpu, mode)
 *        │         ──session_id──▶ profiler_session (source, timebase_unit)
 *        └──counter_set_id──▶ profiler_counter_set rows ──counter_id──▶ counter
 *
 * The importers own everything else (callstacks: stack_profile.c).
 */
#include "../tp_int.h"
#include "model.h"

struct tp_profiler {
	struct hmap tasks; /* hash(upid, utid, async) -> task context row */
	struct hmap execs; /* hash(ucpu, mode) -> execution context row */
};

static struct tp_profiler *profiler(struct tp *tp)
{
	if (!tp->profiler) {
		tp->profiler = tb_calloc(1, sizeof *tp->profiler);
		hmap_init(&tp->profiler->tasks);
		hmap_init(&tp->profiler->execs);
	}
	return tp->profiler;
}

void tp_profiler_free(struct tp *tp)
{
	if (!tp->profiler)
		return;
	hmap_release(&tp->profiler->tasks);
	hmap_release(&tp->profiler->execs);
	tb_free(tp->profiler);
	tp->profiler = NULL;
}

uint32_t tp_profiler_session_new(struct tp *tp, uint32_t source, uint32_t cmdline)
{
	struct tp_profiler_session_table *t = &tp->t.profiler_session;
	uint32_t row = tp_profiler_session_append(t);
	t->source[row] = source;
	t->cmdline[row] = cmdline;
	return row;
}

struct ctx_key {
	const struct tp *tp;
	uint32_t v[3];
};

static bool task_eq(const void *ctx, uint64_t row)
{
	const struct ctx_key *k = ctx;
	const struct tp_profiler_task_context_table *t = &k->tp->t.profiler_task_context;
	return t->upid[row] == k->v[0] && t->utid[row] == k->v[1] &&
	       t->async_context_id[row] == k->v[2];
}

uint32_t tp_profiler_task_context(struct tp *tp, uint32_t upid, uint32_t utid, uint32_t async)
{
	struct tp_profiler *p = profiler(tp);
	struct ctx_key k = {tp, {upid, utid, async}};
	uint64_t h = tb_hash_bytes(k.v, sizeof k.v, 0x7461736b);
	size_t slot = hmap_lookup(&p->tasks, h, task_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)p->tasks.slots[slot].key;
	struct tp_profiler_task_context_table *t = &tp->t.profiler_task_context;
	uint32_t row = tp_profiler_task_context_append(t);
	t->upid[row] = upid;
	t->utid[row] = utid;
	t->async_context_id[row] = async;
	hmap_insert(&p->tasks, h, row, row);
	return row;
}

static bool exec_eq(const void *ctx, uint64_t row)
{
	const struct ctx_key *k = ctx;
	const struct tp_profiler_execution_context_table *t = &k->tp->t.profiler_execution_context;
	return t->ucpu[row] == k->v[0] && t->cpu_mode[row] == k->v[1];
}

uint32_t tp_profiler_execution_context(struct tp *tp, uint32_t ucpu, uint32_t cpu_mode)
{
	struct tp_profiler *p = profiler(tp);
	struct ctx_key k = {tp, {ucpu, cpu_mode, 0}};
	uint64_t h = tb_hash_bytes(k.v, sizeof k.v, 0x65786563);
	size_t slot = hmap_lookup(&p->execs, h, exec_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)p->execs.slots[slot].key;
	struct tp_profiler_execution_context_table *t = &tp->t.profiler_execution_context;
	uint32_t row = tp_profiler_execution_context_append(t);
	t->ucpu[row] = ucpu;
	t->cpu_mode[row] = cpu_mode;
	hmap_insert(&p->execs, h, row, row);
	return row;
}

uint32_t tp_profiler_counter_set(struct tp *tp, const uint32_t *ids, size_t n)
{
	struct tp_profiler_counter_set_table *t = &tp->t.profiler_counter_set;
	if (!n)
		return TP_NULL_U32;
	uint32_t set = t->n;
	for (size_t i = 0; i < n; i++) {
		uint32_t row = tp_profiler_counter_set_append(t);
		t->counter_set_id[row] = set;
		t->counter_id[row] = ids[i];
	}
	return set;
}

uint32_t tp_profiler_sample_add(struct tp *tp, const struct tp_profiler_sample *s)
{
	struct tp_profiler_sample_table *t = &tp->t.profiler_sample;
	uint32_t row = tp_profiler_sample_append(t);
	t->ts[row] = s->ts;
	t->source[row] = s->source;
	t->task_context_id[row] = s->task_context;
	t->execution_context_id[row] = s->execution_context;
	t->callsite_id[row] = s->callsite;
	t->unwind_error[row] = s->unwind_error;
	t->session_id[row] = s->session;
	t->counter_set_id[row] = s->counter_set;
	return row;
}

struct tp_profiler_sample_row tp_profiler_sample_row(const struct tp *tp, uint32_t row)
{
	const struct tp_profiler_sample_table *t = &tp->t.profiler_sample;
	struct tp_profiler_sample_row r = {
	    .ts = t->ts[row],
	    .period = tp_get_profiler_sample_period(t, row),
	    .source = t->source[row],
	    .utid = TP_NULL_U32,
	    .upid = TP_NULL_U32,
	    .ucpu = TP_NULL_U32,
	    .cpu = TP_NULL_U32,
	    .callsite = t->callsite_id[row],
	    .unwind_error = t->unwind_error[row],
	    .session = t->session_id[row],
	    .counter_set = t->counter_set_id[row],
	    .event_name = tp_get_profiler_sample_event_name(t, row),
	    .comm = tp_get_profiler_sample_comm(t, row),
	};
	uint32_t task = t->task_context_id[row], exec = t->execution_context_id[row];
	if (task != TP_NULL_U32) {
		r.utid = tp->t.profiler_task_context.utid[task];
		r.upid = tp->t.profiler_task_context.upid[task];
	}
	if (exec != TP_NULL_U32) {
		r.ucpu = tp->t.profiler_execution_context.ucpu[exec];
		r.cpu_mode = tp->t.profiler_execution_context.cpu_mode[exec];
		if (r.ucpu != TP_NULL_U32)
			r.cpu = tp->t.cpu.cpu[r.ucpu];
	}
	return r;
}
