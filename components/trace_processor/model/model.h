/*
 * The trackers (model/): what importers call to turn events into rows:
 * processes and threads, tracks, slices, machines and cpus, counters,
 * flows, states, metadata, stack profiles, profiler samples, and trace
 * time across the files of an archive. Parse time, on the parsing thread.
 */
#ifndef TB_TP_MODEL_H
#define TB_TP_MODEL_H

#include "../tp_int.h"

/* ---- processes and threads (process_tracker.c) -------------------------- */

/* The upid of the live process `pid`, created when first seen. upid 0 is the
 * swapper placeholder (pid 0). */
uint32_t tp_process_for_pid(struct tp *tp, int64_t pid);
/* The same without creating a main thread for a new process. */
uint32_t tp_process_for_pid_bare(struct tp *tp, int64_t pid);
/* The utid of the live thread `tid` in process `pid` (pid < 0: unknown),
 * created when first seen; a tid seen first without a process is attached
 * to it once pid is known. utid 0 is the swapper placeholder (tid 0). */
uint32_t tp_thread_for_tid(struct tp *tp, int64_t tid, int64_t pid);
/* Names. name_id is a pool id; 0 leaves the current name.
 * tp_thread_set_name is an authoritative name (a track descriptor's, a JSON
 * thread_name); tp_thread_set_name_prio replaces the name only if prio is
 * at least that of the current one (Perfetto's ThreadNamePriority: a
 * ProcessTree name outranks the ftrace comm). A new utid starts at
 * TP_NAME_OTHER. */
enum tp_name_prio {
	TP_NAME_OTHER,
	TP_NAME_FTRACE,
	TP_NAME_PROCESS_TREE,
	TP_NAME_DESCRIPTOR,
	TP_NAME_CONSTANT, /* the swapper's "swapper" */
};
void tp_process_set_name(struct tp *tp, uint32_t upid, uint32_t name_id);
void tp_thread_set_name(struct tp *tp, uint32_t utid, uint32_t name_id);
/* System traces (proto, systrace): tid 0 is the idle task, named
 * "swapper" whatever its comm says, as Perfetto does. */
void tp_thread_name_idle(struct tp *tp);
void tp_thread_set_name_prio(struct tp *tp, uint32_t utid, uint32_t name_id,
                             enum tp_name_prio prio);
/* A thread renamed (task_rename): its name at prio, and its process's name
 * too when it is the main thread. */
void tp_thread_rename(struct tp *tp, uint32_t utid, uint32_t name_id, enum tp_name_prio prio);
/* fork(): a new process `pid` (whatever had that pid before is gone) with a
 * new main thread, both starting at ts, named comm at prio. Returns upid. */
uint32_t tp_process_start_new(struct tp *tp, int64_t ts, int64_t pid, uint32_t comm,
                              enum tp_name_prio prio);
/* clone(CLONE_THREAD): a new thread `tid` starting at ts, in the process of
 * thread `creator` when that is known. Returns utid. */
uint32_t tp_thread_start_new(struct tp *tp, int64_t ts, int64_t tid, uint32_t creator);
/* The live thread `tid`, if any (nothing is created). */
bool tp_thread_find(struct tp *tp, int64_t tid, uint32_t *utid);
/* A new thread `tid` starting at ts (TP_NULL_I64: unknown), of no process
 * yet, replacing any live one. Returns utid. */
uint32_t tp_thread_start(struct tp *tp, int64_t ts, int64_t tid);
/* sched_process_free: the live thread `tid` (if any) ends at ts; the main
 * thread's end ends its process too. */
void tp_thread_free(struct tp *tp, int64_t ts, int64_t tid);
/* A process or thread ended / a pid or tid was reused: the next lookup
 * creates a new upid/utid. */
void tp_process_end(struct tp *tp, uint32_t upid, int64_t ts);
/* Whether pid 0 and tid 0 are the idle process and swapper rows (upid and
 * utid 0, as tp_new makes them; Perfetto maps them so for Linux system
 * traces only) or get rows of their own like any pid (JSON traces). */
void tp_pid_zero_idle(struct tp *tp, bool idle);
void tp_thread_end(struct tp *tp, uint32_t utid, int64_t ts);

/* ---- tracks (track_tracker.c) --------------------------------------------- */

/* The thread's slice track (type "thread_execution", utid dimension). */
uint32_t tp_track_for_thread(struct tp *tp, uint32_t utid);
/* A track identified by its type, dimensions and name: the same arguments
 * give the same track. utid/upid/cpu < 0 = absent dimension. extra_dim is
 * an opaque extra key (e.g. an async cookie, a lane index), 0 if none.
 * event_type is "slice" or "counter". name may be 0 (NULL name). */
struct tp_track_key {
	const char *type;
	const char *event_type;
	int64_t utid, upid, cpu;
	uint64_t extra_dim;
	uint32_t name;
};
uint32_t tp_track_get(struct tp *tp, const struct tp_track_key *key);
/* A new track that is never shared (TrackDescriptor uuids and the like). */
uint32_t tp_track_new(struct tp *tp, const struct tp_track_key *key);

/* ---- slices (slices.c) ---------------------------------------------------- */

/* Open a slice on track at ts. It nests under the innermost open slice of
 * the track. cat/name are pool ids; arg_set_id may be TP_NULL_U32. Returns
 * the slice id. */
uint32_t tp_slice_begin(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                        uint32_t arg_set_id);
/* Close the innermost open slice on track (if cat/name are non-zero, the
 * innermost one matching them, as Perfetto's JSON E does). Args are merged
 * into the slice's set. Returns the slice id, or TP_NULL_U32 (and counts a
 * stat) when nothing was open. */
uint32_t tp_slice_end(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                      uint32_t arg_set_id);
/* tp_slice_begin whose args (builder b, emptied; NULL: none) stay with the
 * open slice and are committed when it leaves its track's stack, as
 * Perfetto's SliceTracker: the end's args (tp_slice_end_args) join them
 * (tp_args_merge_into: arrays continue, equal keys take the end's value
 * but keep_key's), so a begin/end pair has one arg set. */
uint32_t tp_slice_begin_args(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                             struct tp_args_builder *b);
uint32_t tp_slice_end_args(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                           struct tp_args_builder *b, uint32_t keep_key);
/* Give slice, just added on track (the top of its stack), the args of
 * builder b (emptied; NULL or empty: none), committed when it leaves the
 * stack as tp_slice_begin_args does: arg sets are numbered in the order
 * slices leave their stacks, as Perfetto's are. */
void tp_slice_defer_args(struct tp *tp, uint32_t track, uint32_t slice, struct tp_args_builder *b);
/* The top of track's slice stack as it stands (complete slices that have
 * ended stay there until the next slice event on the track pops them, as
 * Perfetto's GetTopmostSliceOnTrack), or TP_NULL_U32. */
uint32_t tp_slice_top(struct tp *tp, uint32_t track);
/* A slice with a known duration (dur 0 = instant). Slices that ended at or
 * before ts are popped first; a slice partially overlapping the innermost
 * open one is dropped with slice_drop_overlapping_complete_event and
 * TP_NULL_U32 is returned. */
uint32_t tp_slice_complete(struct tp *tp, uint32_t track, int64_t ts, int64_t dur, uint32_t cat,
                           uint32_t name, uint32_t arg_set_id);
/* A slice that would break nesting: the running one it overlaps. */
struct tp_slice_conflict {
	uint32_t slice; /* TP_NULL_U32: no conflict */
	int64_t end;    /* its end */
};
/* tp_slice_complete, except that a slice partially overlapping a running
 * one is not logged: c->slice says which (the JSON importer spills it onto
 * thread_overlapping_slice lanes). */
uint32_t tp_slice_complete_or_conflict(struct tp *tp, uint32_t track, int64_t ts, int64_t dur,
                                       uint32_t cat, uint32_t name, uint32_t arg_set_id,
                                       struct tp_slice_conflict *c);
/* The event behind an import log: its name and phase letter. */
struct tp_slice_event {
	uint32_t name;
	char phase;
};
/* Count stat for a complete slice at ts that partially overlaps slice
 * conflict (ending at conflict_end), with an import log whose args are
 * Perfetto's: event_name and event_phase (when ev is given), overlap_start,
 * overlap_end, conflicting_slice_name/ts/dur. */
void tp_slice_log_overlap(struct tp *tp, enum tp_stat stat, int64_t ts, int64_t conflict_end,
                          uint32_t conflict, const struct tp_slice_event *ev);
/* The innermost open slice on track at ts (after popping ended complete
 * slices), or TP_NULL_U32. */
uint32_t tp_slice_innermost(struct tp *tp, uint32_t track, int64_t ts);
/* Add args to an existing slice (merging with its set). */
void tp_slice_add_args(struct tp *tp, uint32_t slice, uint32_t arg_set_id);

/* ---- machines and cpus (model/machine.c) ------------------------------------- */

/* The machine row of raw machine id raw (TracePacket.machine_id; 0 is the
 * host, row 0), created with its own swapper process and thread (pid/tid 0,
 * named "swapper") when first asked for. */
uint32_t tp_machine_for_raw(struct tp *tp, int64_t raw);
/* Make machine (a row) the current one: what is made from now on is its,
 * pids and tids are looked up among its own. Cheap when it already is. */
void tp_machine_use_slow(struct tp *tp, uint32_t machine);
static inline void tp_machine_use(struct tp *tp, uint32_t machine)
{
	if (__builtin_expect(machine != tp->machine, 0))
		tp_machine_use_slow(tp, machine);
}
/* The cpu table row (ucpu) of cpu (< TP_MAX_CPUS) on the current machine:
 * machine * TP_MAX_CPUS + cpu; its row is made valid (cpu set) on first
 * use. */
uint32_t tp_cpu_for(struct tp *tp, uint32_t cpu);
/* Free the machines' lookups (tp_free). */
void tp_machines_release(struct tp *tp);

/* ---- counters, flows, metadata ---------------------------------------------- */

uint32_t tp_counter_add(struct tp *tp, uint32_t track, int64_t ts, double value,
                        uint32_t arg_set_id);
/* A flow from slice_out to slice_in. */
uint32_t tp_flow_add(struct tp *tp, uint32_t slice_out, uint32_t slice_in);
/* Flow ids (v2 / proto flow_ids): begin or step from `slice` for id; the
 * next tp_flow_step/end with the same id links to it. terminate closes it. */
void tp_flow_step(struct tp *tp, uint64_t id, uint32_t slice, bool terminate);
/* Perfetto's FlowTracker Begin / Step / End on flow id: begin opens id at
 * slice (an open id is flow_duplicate_id); continue links the open one to
 * slice and moves it there (flow_step_without_start when not open); end
 * links it to slice, and closes it when `close` (flow_end_without_start when
 * not open). The link goes from the earlier slice to the later. */
void tp_flow_begin(struct tp *tp, uint64_t id, uint32_t slice);
void tp_flow_continue(struct tp *tp, uint64_t id, uint32_t slice);
void tp_flow_end(struct tp *tp, uint64_t id, uint32_t slice, bool close);
/* Flow v1 ('s'/'t'/'f' phases): the flow id of (source id, category,
 * name), in a namespace of its own. */
uint64_t tp_flow_v1_id(struct tp *tp, uint64_t source, uint32_t cat, uint32_t name);
/* An 'f' not bound to its enclosing slice: the flow ends in the next slice
 * that begins on track (tp_flow_bind_pending, called by the slice model). */
void tp_flow_end_pending(struct tp *tp, uint32_t track, uint64_t id);
void tp_flow_bind_pending(struct tp *tp, uint32_t track, uint32_t slice);

/* The state of `track` from ts on is `value` (pool id; 0: none, which only
 * ends the current one), as Perfetto's StateTracker: a different value
 * closes the open state (its dur) and opens a new row; the same value keeps
 * it, merging arg_set_id into its args. Returns the row, or TP_NULL_U32. */
uint32_t tp_state_update(struct tp *tp, uint32_t track, int64_t ts, uint32_t value,
                         uint32_t category, uint32_t arg_set_id);

void tp_metadata_set_int(struct tp *tp, const char *name, int64_t v);
void tp_metadata_set_str(struct tp *tp, const char *name, uint32_t str_id);
/* A row of a multi-valued key (key_type "multi"), e.g. one per flush. */
void tp_metadata_append_int(struct tp *tp, const char *name, int64_t v);
void tp_metadata_append_str(struct tp *tp, const char *name, uint32_t str_id);
bool tp_metadata_has(struct tp *tp, const char *name);
/* trace_uuid from its two halves, printed as Perfetto does. */
void tp_metadata_set_uuid(struct tp *tp, uint64_t msb, uint64_t lsb);

/* At the end of the trace: a track without dimension args gets Perfetto's
 * from its dimension columns (utid, else upid; and cpu), so that
 * extract_arg(dimension_arg_set_id, 'utid') & co. work on every track. */
void tp_tracks_finish(struct tp *tp);
/* Set the trace bounds from the rows of the event tables, Perfetto's
 * rule (model/bounds.c); at the end of the file, once every row is final. */
void tp_bounds_finish(struct tp *tp);
/* The track tracker's and the flow and state trackers' private state
 * (model/track_tracker.c, model/events.c): made by tp_new, freed by
 * tp_free. */
void tp_tracks_init(struct tp *tp);
void tp_tracks_release(struct tp *tp);
void tp_events_init(struct tp *tp);
void tp_events_release(struct tp *tp);

/* ---- stack profiles (model/stack_profile.c) -------------------------------- */

/* Interning of mappings, frames and callsites into the stack_profile_*
 * tables, owned by one importer (embedded; _init/_release). Ids are rows. */
struct tp_stack_profile {
	struct hmap mappings;  /* hash(name, build_id) -> mapping row */
	struct hmap frames;    /* hash(mapping, rel_pc, name) -> frame row */
	struct hmap callsites; /* hash(parent, frame, depth) -> callsite row */
};
void tp_stack_profile_init(struct tp_stack_profile *sp);
void tp_stack_profile_release(struct tp_stack_profile *sp);
/* The mapping named name (pool id) with build_id (pool id, 0 = none). */
uint32_t tp_stack_profile_mapping(struct tp *tp, struct tp_stack_profile *sp, uint32_t name,
                                  uint32_t build_id);
/* The frame at rel_pc in mapping, named name (pool id, 0 = unknown). */
uint32_t tp_stack_profile_frame(struct tp *tp, struct tp_stack_profile *sp, uint32_t mapping,
                                int64_t rel_pc, uint32_t name);
/* The callsite of frame under parent (TP_NULL_U32 for a root, depth 0). */
uint32_t tp_stack_profile_callsite(struct tp *tp, struct tp_stack_profile *sp, uint32_t parent,
                                   uint32_t frame);
/* Apply one ModuleSymbols message (symbolize/import.c): stack_profile_symbol
 * rows and the symbol_set_id of matching frames; anomalies go to stats. */
void tp_module_symbols_import(struct tp *tp, const uint8_t *p, size_t n);
/* The end of the whole trace: import the ModuleSymbols kept waiting for
 * their mappings (the ones still without are counted as invalid). */
void tp_module_symbols_finish(struct tp *tp);

/* ---- profiler samples (model/profiler.c) ------------------------------------- */

/* A new profiler_session of source (pool id) with cmdline (pool id, 0
 * none); returns its id. */
uint32_t tp_profiler_session_new(struct tp *tp, uint32_t source, uint32_t cmdline);
/* The task context (upid, utid, async_context_id; TP_NULL_U32 each for
 * unknown) and the execution context (ucpu, cpu_mode pool id: TP_NULL_U32 /
 * 0 for unknown), interned: equal values give the same row. */
uint32_t tp_profiler_task_context(struct tp *tp, uint32_t upid, uint32_t utid, uint32_t async);
uint32_t tp_profiler_execution_context(struct tp *tp, uint32_t ucpu, uint32_t cpu_mode);
/* A counter set of the counter rows ids[0, n); its id, TP_NULL_U32 when
 * n == 0. */
uint32_t tp_profiler_counter_set(struct tp *tp, const uint32_t *ids, size_t n);
/* One sample (parse time, in ts order). TP_NULL_U32 / 0 for what is
 * unknown. Returns the profiler_sample id. */
struct tp_profiler_sample {
	int64_t ts;
	uint32_t source;            /* pool id */
	uint32_t task_context;      /* tp_profiler_task_context() */
	uint32_t execution_context; /* tp_profiler_execution_context() */
	uint32_t callsite;          /* leaf stack_profile_callsite */
	uint32_t unwind_error;      /* pool id */
	uint32_t session;           /* tp_profiler_session_new() */
	uint32_t counter_set;       /* tp_profiler_counter_set() */
};
uint32_t tp_profiler_sample_add(struct tp *tp, const struct tp_profiler_sample *s);
/* Row `row` of profiler_sample with its contexts resolved, as the
 * perf_sample view shows it (TP_NULL_U32 / 0 for NULL; cpu_mode 0 when
 * unknown, which the view shows as "unknown"). */
struct tp_profiler_sample_row {
	int64_t ts, period;
	uint32_t source, utid, upid, ucpu, cpu, cpu_mode, callsite, unwind_error, session;
	uint32_t counter_set, event_name, comm;
};
struct tp_profiler_sample_row tp_profiler_sample_row(const struct tp *tp, uint32_t row);
void tp_profiler_free(struct tp *tp);

/* ---- clocks across the files of an archive (tp.c) ------------------------------- */

/* Perfetto's builtin clock id the formats without clock snapshots are in
 * (struct tp_clock_sync converts them). */
#define TP_CLOCK_MONOTONIC 3u

/* ts on clock as trace time: converted through tp->clock_sync when it has
 * a path, else unchanged (Perfetto's identity edge for an unlinked clock).
 * Parse or tokenize time, any importer. */
int64_t tp_trace_time_slow(struct tp *tp, uint32_t clock, int64_t ts);
static inline int64_t tp_trace_time(struct tp *tp, uint32_t clock, int64_t ts)
{
	if (__builtin_expect(!tp->clock_sync.convert || tp->ts_raw, 1))
		return ts + tp->ts_shift;
	return tp_trace_time_slow(tp, clock, ts) + tp->ts_shift;
}

#endif /* TB_TP_MODEL_H */
