/*
 * TracePacket.stack_sample (135): Perfetto's transport-neutral stack
 * samples (Python, Go, JS ... profilers), as its StackSampleModule. At
 * parse time each StackSample is a profiler sample whose
 *
 *   source          the sequence's StackSampleDefaults.source
 *   session         one profiler session per sequence; its timebase_unit
 *                   is the unit of the first timebase counter with one
 *   task context    task_context (inline or interned: InternedData 48):
 *                   pid -> process, tid -> thread (of pid when given),
 *                   async_id -> the interned AsyncContextDescriptor (51)
 *                   chain, one profiler_async_context row per descriptor
 *                   (its parent first; a cycle or an unknown iid ends it)
 *   exec. context   execution_context (inline or interned: 49): cpu, mode
 *   callsite        callstack_iid (the sequence's interned Callstack, as a
 *                   perf sample's) or an inline callstack (frames in the
 *                   "stack_sample_inline" dummy mapping)
 *   counter set     primary_weight on the timebase counter's track, then
 *                   follower_weights on the followers' tracks, in order
 *
 * Counter descriptors (CounterDescriptor: inline, interned (50) or the
 * defaults') name counter tracks: type stack_sample_session_counter
 * (dimension args session_id, source, counter_name) or, for SCOPE_CPU
 * ones, stack_sample_cpu_counter (cpu first; such a counter is skipped
 * when the sample has no cpu), the unit from its enum or unit_str, source
 * args is_timebase, unit_multiplier, description.
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <string.h>

#define STACK_SAMPLE_MAX_FOLLOWERS 64
#define STACK_SAMPLE_MAX_ASYNC_DEPTH 256

struct proto_stack_sample {
	struct hmap sessions; /* seq id -> profiler_session id */
};

static struct proto_stack_sample *state(struct proto_importer *im)
{
	if (!im->stack_sample) {
		im->stack_sample = tb_calloc(1, sizeof *im->stack_sample);
		hmap_init(&im->stack_sample->sessions);
	}
	return im->stack_sample;
}

void tp_proto_stack_sample_free(struct proto_importer *im)
{
	if (!im->stack_sample)
		return;
	hmap_release(&im->stack_sample->sessions);
	tb_free(im->stack_sample);
	im->stack_sample = NULL;
}

/* StackSample.Mode, Perfetto's labels (UNKNOWN and unknown values: NULL). */
static const char *mode_name(uint64_t mode)
{
	static const char *const names[] = {NULL,         "user",       "kernel",
	                                    "hypervisor", "guest_user", "guest_kernel"};
	return mode < TB_ARRAY_SIZE(names) ? names[mode] : NULL;
}

/* StackSample.Unit (UNSPECIFIED and unknown values: ""). */
static const char *unit_name(uint64_t unit)
{
	static const char *const names[] = {"",
	                                    "ns",
	                                    "cycles",
	                                    "instructions",
	                                    "bytes",
	                                    "page-faults",
	                                    "cache-misses",
	                                    "cache-references",
	                                    "branch-misses",
	                                    "count"};
	return unit < TB_ARRAY_SIZE(names) ? names[unit] : "";
}

/* A message field of p[0, n) into *out; false when absent. */
static bool msg_field(const uint8_t *p, size_t n, uint32_t id, struct pb_field *out)
{
	return pb_find_field(p, n, id, out) == 1 && out->wire == PB_WIRE_LEN;
}

static bool varint_field(const uint8_t *p, size_t n, uint32_t id, uint64_t *v)
{
	struct pb_field f;
	if (pb_find_field(p, n, id, &f) != 1 || f.wire != PB_WIRE_VARINT)
		return false;
	*v = f.val;
	return true;
}

/* The message of an inline field (inline_id) or interned one (iid_id, looked
 * up in InternedData field intern) of p; false when neither resolves. */
static bool inline_or_interned(const struct proto_ev *ev, const uint8_t *p, size_t n,
                               uint32_t inline_id, uint32_t iid_id, uint32_t intern,
                               struct pb_field *out)
{
	uint64_t iid;
	if (msg_field(p, n, inline_id, out))
		return true;
	if (!varint_field(p, n, iid_id, &iid))
		return false;
	const struct proto_interned *e = proto_gen_lookup(ev->gen, intern, iid);
	if (!e)
		return false;
	memset(out, 0, sizeof *out);
	out->data = e->data;
	out->len = e->len;
	out->wire = PB_WIRE_LEN;
	return true;
}

/* The profiler_async_context row of interned descriptor iid and its
 * ancestors (made on first use, the row cached in the entry's str). */
static uint32_t async_context(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
{
	struct tp *tp = im->tp;
	struct proto_interned *chain[STACK_SAMPLE_MAX_ASYNC_DEPTH];
	size_t n = 0;
	uint32_t parent = TP_NULL_U32;
	while (iid && n < STACK_SAMPLE_MAX_ASYNC_DEPTH) {
		struct proto_interned *e =
		    proto_gen_lookup(g, INTERN_STACK_SAMPLE_ASYNC_CONTEXTS, iid);
		if (!e)
			break;
		if (e->str != UINT32_MAX) {
			parent = e->str;
			break;
		}
		bool seen = false;
		for (size_t i = 0; i < n; i++)
			seen |= chain[i] == e;
		if (seen)
			break;
		chain[n++] = e;
		if (!varint_field(e->data, e->len,
		                  PB_F_StackSample_AsyncContextDescriptor_parent_iid, &iid))
			iid = 0;
	}
	struct tp_profiler_async_context_table *t = &tp->t.profiler_async_context;
	while (n--) {
		struct proto_interned *e = chain[n];
		struct pb_field f;
		uint32_t row = tp_profiler_async_context_append(t);
		if (msg_field(e->data, e->len, PB_F_StackSample_AsyncContextDescriptor_name, &f))
			t->name[row] = tp_intern(tp, (const char *)f.data, f.len);
		if (msg_field(e->data, e->len, PB_F_StackSample_AsyncContextDescriptor_kind, &f))
			t->kind[row] = tp_intern(tp, (const char *)f.data, f.len);
		t->parent_id[row] = parent;
		e->str = row;
		parent = row;
	}
	return parent;
}

/* The task context of a TaskContext message; *upid its process. */
static uint32_t task_context(struct proto_importer *im, const struct proto_ev *ev,
                             const struct pb_field *m, uint32_t *upid)
{
	struct tp *tp = im->tp;
	uint64_t pid = 0, tid = 0, async = 0;
	bool has_pid = varint_field(m->data, m->len, PB_F_StackSample_TaskContext_pid, &pid);
	bool has_tid = varint_field(m->data, m->len, PB_F_StackSample_TaskContext_tid, &tid);
	bool has_async =
	    varint_field(m->data, m->len, PB_F_StackSample_TaskContext_async_id, &async);
	uint32_t utid = TP_NULL_U32, actx = TP_NULL_U32;
	if (has_pid)
		*upid = tp_process_for_pid(tp, (int64_t)(uint32_t)pid);
	if (has_tid)
		utid = tp_thread_for_tid(tp, (int64_t)(uint32_t)tid,
		                         has_pid ? (int64_t)(uint32_t)pid : -1);
	if (has_async)
		actx = async_context(im, ev->gen, async);
	return tp_profiler_task_context(tp, *upid, utid, actx);
}

/* The track of a CounterDescriptor d for this sample (TP_NULL_U32: a
 * per-cpu counter of a sample without cpu). */
static uint32_t counter_track(struct proto_importer *im, uint32_t session, uint32_t source,
                              const struct pb_field *d, bool is_timebase, uint32_t cpu)
{
	struct tp *tp = im->tp;
	struct pb_field f;
	uint64_t v;
	uint32_t name = 0, unit = 0;
	if (msg_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_name, &f))
		name = tp_intern(tp, (const char *)f.data, f.len);
	if (varint_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_unit, &v) && v != 0)
		unit = tp_intern_cstr(tp, unit_name(v));
	else if (msg_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_unit_str, &f) &&
	         f.len)
		unit = tp_intern(tp, (const char *)f.data, f.len);
	struct tp_profiler_session_table *st = &tp->t.profiler_session;
	if (is_timebase && unit && !st->timebase_unit[session])
		st->timebase_unit[session] = unit;
	bool per_cpu =
	    varint_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_scope, &v) &&
	    v == PB_E_StackSample_CounterDescriptor_Scope_SCOPE_CPU;
	if (per_cpu && cpu == TP_NULL_U32)
		return TP_NULL_U32;
	struct tp_track_key key = {
	    .type = per_cpu ? "stack_sample_cpu_counter" : "stack_sample_session_counter",
	    .event_type = "counter",
	    .utid = -1,
	    .upid = -1,
	    .cpu = per_cpu ? (int64_t)cpu : -1,
	    .extra_dim = (uint64_t)session << 32 | source,
	    .name = name,
	};
	uint32_t track = tp_track_get(tp, &key);
	struct tp_track_table *t = &tp->t.track;
	if (t->dimension_arg_set_id[track] != TP_NULL_U32)
		return track;
	struct tp_args_builder *b = &im->args;
	uint32_t k;
	tp_args_begin(b);
	if (per_cpu) {
		k = tp_intern_cstr(tp, "cpu");
		tp_args_add_int(b, k, k, cpu);
	}
	k = tp_intern_cstr(tp, "session_id");
	tp_args_add_int(b, k, k, session);
	k = tp_intern_cstr(tp, "source");
	tp_args_add_string(b, k, k, source);
	k = tp_intern_cstr(tp, "counter_name");
	tp_args_add_string(b, k, k, name);
	t->dimension_arg_set_id[track] = tp_args_commit(tp, b);
	t->unit[track] = unit;
	tp_args_begin(b);
	k = tp_intern_cstr(tp, "is_timebase");
	tp_args_add_bool(b, k, k, is_timebase);
	if (varint_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_unit_multiplier, &v)) {
		k = tp_intern_cstr(tp, "unit_multiplier");
		tp_args_add_int(b, k, k, (int64_t)v);
	}
	if (msg_field(d->data, d->len, PB_F_StackSample_CounterDescriptor_description, &f) &&
	    f.len) {
		k = tp_intern_cstr(tp, "description");
		tp_args_add_string(b, k, k, tp_intern(tp, (const char *)f.data, f.len));
	}
	t->source_arg_set_id[track] = tp_args_commit(tp, b);
	return track;
}

/* The repeated CounterDescriptors id of p[0, n) as tracks into out. */
static size_t follower_tracks(struct proto_importer *im, uint32_t session, uint32_t source,
                              const uint8_t *p, size_t n, uint32_t id, uint32_t cpu, uint32_t *out)
{
	size_t k = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f) && k < STACK_SAMPLE_MAX_FOLLOWERS)
		if (f.id == id && f.wire == PB_WIRE_LEN)
			out[k++] = counter_track(im, session, source, &f, false, cpu);
	return k;
}

/* The counter rows of the sample's weights, timebase first (Perfetto's
 * ParseCounterValues); returns how many, in out. */
static size_t counter_values(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                             uint32_t session, uint32_t source, uint32_t cpu, const uint8_t *p,
                             size_t n, uint32_t *out)
{
	struct tp *tp = im->tp;
	const struct proto_gen *g = ev->gen;
	const uint8_t *d = g && g->has_stack_defaults ? g->stack_defaults : NULL;
	size_t dn = g && g->has_stack_defaults ? g->stack_defaults_len : 0;
	bool has_defaults = g && g->has_stack_defaults;
	size_t k = 0;
	struct pb_field desc;
	uint32_t timebase = TP_NULL_U32;
	if (inline_or_interned(ev, p, n, PB_F_StackSample_primary_descriptor,
	                       PB_F_StackSample_primary_descriptor_iid,
	                       INTERN_STACK_SAMPLE_COUNTER_DESCRIPTORS, &desc) ||
	    (!pb_find_field(p, n, PB_F_StackSample_primary_descriptor_iid, &desc) && has_defaults &&
	     msg_field(d, dn, PB_F_StackSampleDefaults_primary_descriptor, &desc)))
		timebase = counter_track(im, session, source, &desc, true, cpu);
	uint64_t w;
	if (timebase != TP_NULL_U32 && varint_field(p, n, PB_F_StackSample_primary_weight, &w))
		out[k++] = tp_counter_add(tp, timebase, ts, (double)w, TP_NULL_U32);

	uint32_t followers[STACK_SAMPLE_MAX_FOLLOWERS];
	size_t nf = follower_tracks(im, session, source, p, n,
	                            PB_F_StackSample_follower_descriptors, cpu, followers);
	if (nf == 0) {
		struct pb_reader r;
		struct pb_field f = {0};
		pb_reader_init(&r, p, n);
		while (pb_next(&r, &f)) {
			if (f.id != PB_F_StackSample_follower_descriptor_iids)
				continue;
			struct pb_varints it;
			uint64_t iid;
			for (pb_varints_init(&it, &f);
			     nf < STACK_SAMPLE_MAX_FOLLOWERS && pb_varints_next(&it, &iid);) {
				const struct proto_interned *e = proto_gen_lookup(
				    g, INTERN_STACK_SAMPLE_COUNTER_DESCRIPTORS, iid);
				struct pb_field fd = {.data = e ? e->data : NULL,
				                      .len = e ? e->len : 0,
				                      .wire = PB_WIRE_LEN};
				followers[nf++] =
				    e ? counter_track(im, session, source, &fd, false, cpu)
				      : TP_NULL_U32;
			}
		}
	}
	if (nf == 0 && has_defaults)
		nf = follower_tracks(im, session, source, d, dn,
		                     PB_F_StackSampleDefaults_follower_descriptors, cpu, followers);
	size_t i = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f) && i < nf) {
		if (f.id != PB_F_StackSample_follower_weights)
			continue;
		struct pb_varints it;
		uint64_t v;
		for (pb_varints_init(&it, &f); i < nf && pb_varints_next(&it, &v); i++)
			if (followers[i] != TP_NULL_U32)
				out[k++] =
				    tp_counter_add(tp, followers[i], ts, (double)v, TP_NULL_U32);
	}
	return k;
}

void tp_proto_stack_sample_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                 const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_stack_sample *ss = state(im);
	const struct proto_gen *g = ev->gen;
	struct pb_field f;
	uint32_t source = 0;
	if (g && g->has_stack_defaults &&
	    msg_field(g->stack_defaults, g->stack_defaults_len, PB_F_StackSampleDefaults_source,
	              &f))
		source = tp_intern(tp, (const char *)f.data, f.len);

	uint32_t upid = TP_NULL_U32, task = TP_NULL_U32;
	if (inline_or_interned(ev, p, n, PB_F_StackSample_task_context,
	                       PB_F_StackSample_task_context_iid, INTERN_STACK_SAMPLE_TASK_CONTEXTS,
	                       &f))
		task = task_context(im, ev, &f, &upid);

	uint32_t cpu = TP_NULL_U32, exec = TP_NULL_U32;
	if (inline_or_interned(ev, p, n, PB_F_StackSample_execution_context,
	                       PB_F_StackSample_execution_context_iid,
	                       INTERN_STACK_SAMPLE_EXECUTION_CONTEXTS, &f)) {
		uint64_t v;
		uint32_t ucpu = TP_NULL_U32, mode = 0;
		if (varint_field(f.data, f.len, PB_F_StackSample_ExecutionContext_cpu, &v)) {
			if (v < TP_MAX_CPUS) {
				cpu = (uint32_t)v;
				ucpu = tp_cpu_for(tp, cpu);
			} else {
				tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
			}
		}
		if (varint_field(f.data, f.len, PB_F_StackSample_ExecutionContext_mode, &v) &&
		    mode_name(v))
			mode = tp_intern_cstr(tp, mode_name(v));
		exec = tp_profiler_execution_context(tp, ucpu, mode);
	}

	uint64_t session;
	if (!hmap_get(&ss->sessions, ev->seq_id, &session)) {
		session = tp_profiler_session_new(tp, source, 0);
		hmap_put(&ss->sessions, ev->seq_id, session);
	}
	uint32_t counters[1 + STACK_SAMPLE_MAX_FOLLOWERS];
	size_t nc = counter_values(im, ts, ev, (uint32_t)session, source, cpu, p, n, counters);

	uint32_t callsite = TP_NULL_U32;
	uint64_t iid;
	if (varint_field(p, n, PB_F_StackSample_callstack_iid, &iid))
		callsite = tp_proto_callstack_row(im, g, iid);
	else if (msg_field(p, n, PB_F_StackSample_callstack, &f))
		callsite = tp_proto_inline_callstack(im, PROTO_INLINE_STACK_SAMPLE, f.data, f.len);

	struct tp_profiler_sample s = {
	    .ts = ts,
	    .source = source,
	    .task_context = task,
	    .execution_context = exec,
	    .callsite = callsite,
	    .session = (uint32_t)session,
	    .counter_set = tp_profiler_counter_set(tp, counters, nc),
	};
	tp_profiler_sample_add(tp, &s);
}
