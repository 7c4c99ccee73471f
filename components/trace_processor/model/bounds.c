/*
 * The trace bounds (trace_start(), trace_end(), the trace_bounds view):
 * computed once the trace is loaded, from the rows of the event tables, as
 * Perfetto v58.2 computes them (its storage plugin's timestamp bounds).
 * Which tables count, and how:
 *
 *   ftrace_event, counter, logs, profiler_sample   ts
 *   slice, sched, thread_state, state              ts .. ts + max(dur, 0)
 *
 * So an event that makes no row (a JSON metadata event, a service event, a
 * clock snapshot) does not widen the bounds, and a complete slice does up
 * to its end. The end starts from 0, not from the first ts (Perfetto's
 * quirk, kept: a trace of only negative timestamps ends at 0); no row at
 * all gives (0, 0); a single instant gives (ts, ts + 1).
 */
#include "../tp_int.h"
#include "model.h"
#include "ftrace.h"

struct bounds {
	int64_t start, end;
};

static inline void widen(struct bounds *b, int64_t ts, int64_t end)
{
	if (ts < b->start)
		b->start = ts;
	if (end > b->end)
		b->end = end;
}

static inline int64_t end_of(int64_t ts, int64_t dur)
{
	return dur > 0 ? ts + dur : ts;
}

void tp_bounds_finish(struct tp *tp)
{
	const struct tp_tables *t = &tp->t;
	struct bounds b = {INT64_MAX, 0};
	int64_t lo, hi;
	if (tp_ftrace_event_ts_range(tp, &lo, &hi))
		widen(&b, lo, hi);
	for (uint32_t i = 0; i < t->sched.n; i++)
		widen(&b, t->sched.ts[i], end_of(t->sched.ts[i], tp_sched_dur(tp, i)));
	for (uint32_t i = 0; i < t->counter.n; i++)
		widen(&b, t->counter.ts[i], t->counter.ts[i]);
	for (uint32_t i = 0; i < t->slice.n; i++)
		widen(&b, t->slice.ts[i], end_of(t->slice.ts[i], t->slice.dur[i]));
	for (uint32_t i = 0; i < t->thread_state.n; i++)
		widen(&b, t->thread_state.ts[i],
		      end_of(t->thread_state.ts[i], tp_thread_state_dur(tp, i)));
	for (uint32_t i = 0; i < t->logs.n; i++)
		widen(&b, t->logs.ts[i], t->logs.ts[i]);
	for (uint32_t i = 0; i < t->state.n; i++)
		widen(&b, t->state.ts[i], end_of(t->state.ts[i], t->state.dur[i]));
	for (uint32_t i = 0; i < t->profiler_sample.n; i++)
		widen(&b, t->profiler_sample.ts[i], t->profiler_sample.ts[i]);
	if (b.start == INT64_MAX) {
		b.start = 0;
		b.end = 0;
	} else if (b.start == b.end) {
		b.end++;
	}
	tp->ts_min = b.start;
	tp->ts_max = b.end;
}
