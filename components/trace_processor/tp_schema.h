/*
 * The schema of the trace's tables: each table's columns as an X-macro list
 * X(T, name, TYPE, FLAGS), and TP_TABLES, every table with its SQL name.
 * Pure lists: tp_tables.h expands them into structs, appends, accessors
 * and column descriptors; the types and flags are declared there.
 */
#ifndef TB_TP_SCHEMA_H
#define TB_TP_SCHEMA_H

/* slice: every slice, thread or async or global. Rows are in ts order. */
#define TP_SLICE_COLUMNS(X, T)                                 \
	X(T, ts, TP_I64, TP_COL_SORTED)                        \
	X(T, dur, TP_I64, 0)                                   \
	X(T, track_id, TP_U32, 0)                              \
	X(T, category, TP_STR, 0)                              \
	X(T, name, TP_STR, 0)                                  \
	X(T, depth, TP_U32, 0)                                 \
	X(T, parent_id, TP_U32N, 0)                            \
	X(T, arg_set_id, TP_U32N, 0)                           \
	X(T, thread_ts, TP_I64N, TP_COL_SPARSE)                \
	X(T, thread_dur, TP_I64N, TP_COL_SPARSE)               \
	X(T, thread_instruction_count, TP_I64N, TP_COL_SPARSE) \
	X(T, thread_instruction_delta, TP_I64N, TP_COL_SPARSE)

/* track: every track. thread_track, process_track, counter_track & co. are
 * views over it selecting on the dimension columns and event_type. */
#define TP_TRACK_COLUMNS(X, T)                               \
	X(T, name, TP_STR, 0)                                \
	X(T, type, TP_STR, 0)                                \
	X(T, parent_id, TP_I64N, 0)                          \
	X(T, dimension_arg_set_id, TP_U32N, 0)               \
	X(T, source_arg_set_id, TP_U32N, 0)                  \
	X(T, machine_id, TP_I64N, 0)                         \
	X(T, track_group_id, TP_I64N, 0)                     \
	X(T, event_type, TP_STR, 0) /* "slice", "counter" */ \
	X(T, utid, TP_I64N, 0)                               \
	X(T, upid, TP_I64N, 0)                               \
	X(T, cpu, TP_I64N, 0)                                \
	X(T, unit, TP_STR, 0)                                \
	X(T, description, TP_STR, 0)                         \
	X(T, uuid, TP_I64N, TP_COL_HIDDEN) /* TrackDescriptor uuid, if any */

#define TP_THREAD_COLUMNS(X, T)          \
	X(T, tid, TP_I64, 0)             \
	X(T, name, TP_STR, 0)            \
	X(T, start_ts, TP_I64N, 0)       \
	X(T, end_ts, TP_I64N, 0)         \
	X(T, upid, TP_I64N, 0)           \
	X(T, is_main_thread, TP_I64N, 0) \
	X(T, is_idle, TP_I64, 0)         \
	X(T, machine_id, TP_I64N, 0)     \
	X(T, arg_set_id, TP_U32N, 0)

#define TP_PROCESS_COLUMNS(X, T)          \
	X(T, pid, TP_I64, 0)              \
	X(T, name, TP_STR, 0)             \
	X(T, start_ts, TP_I64N, 0)        \
	X(T, end_ts, TP_I64N, 0)          \
	X(T, parent_upid, TP_I64N, 0)     \
	X(T, uid, TP_I64N, 0)             \
	X(T, android_appid, TP_I64N, 0)   \
	X(T, android_user_id, TP_I64N, 0) \
	X(T, cmdline, TP_STR, 0)          \
	X(T, arg_set_id, TP_U32N, 0)      \
	X(T, machine_id, TP_I64N, 0)

#define TP_COUNTER_COLUMNS(X, T)        \
	X(T, ts, TP_I64, TP_COL_SORTED) \
	X(T, track_id, TP_U32, 0)       \
	X(T, value, TP_DBL, 0)          \
	X(T, arg_set_id, TP_U32N, 0)

/* state: symbolic values over time on a state track (TrackEvent TYPE_STATE);
 * dur is -1 until the track's next state. */
#define TP_STATE_COLUMNS(X, T)          \
	X(T, ts, TP_I64, TP_COL_SORTED) \
	X(T, dur, TP_I64, 0)            \
	X(T, track_id, TP_U32, 0)       \
	X(T, category, TP_STR, 0)       \
	X(T, value, TP_STR, 0)          \
	X(T, arg_set_id, TP_U32N, 0)

#define TP_FLOW_COLUMNS(X, T)      \
	X(T, slice_out, TP_U32, 0) \
	X(T, slice_in, TP_U32, 0)  \
	X(T, trace_id, TP_I64N, 0) \
	X(T, arg_set_id, TP_U32N, 0)

/* args: rows of one arg set are contiguous, sets in increasing id order.
 * One 8-byte value per row, read according to its TP_ARG_* type: the
 * integer (int, uint, bool, pointer), the double's bits (real) or the string
 * id (string, json); flat_key is only stored where it differs from key.
 * Perfetto's columns are computed from these (tp_args_computed_*, args.c);
 * C code reads them with tp_args_row(). */
#define TP_ARGS_COLUMNS(X, T)                                                    \
	X(T, arg_set_id, TP_U32, TP_COL_SORTED)                                  \
	X(T, key, TP_STR, 0)                                                     \
	X(T, flat_key_diff, TP_STR, TP_COL_SPARSE | TP_COL_HIDDEN) /* 0 = key */ \
	X(T, value, TP_I64, TP_COL_HIDDEN)                                       \
	X(T, type, TP_U8, TP_COL_HIDDEN) /* enum tp_arg_type */
#define TP_ARGS_COMPUTED(X, T)                      \
	X(T, flat_key, TP_STR, TP_COL_COMPUTED)     \
	X(T, int_value, TP_I64N, TP_COL_COMPUTED)   \
	X(T, string_value, TP_STR, TP_COL_COMPUTED) \
	X(T, real_value, TP_DBLN, TP_COL_COMPUTED)  \
	X(T, value_type, TP_STR, TP_COL_COMPUTED)

/* sched: one row per sched_switch (ftrace), the slice of the thread switched
 * in on that cpu; dur -1 and end_state NULL while still running. cpu is
 * the cpu table's (cpu.cpu of ucpu), computed, as in the two tables
 * below: a row stores only ucpu. dur is stored in 32 bits (dur_lo, see
 * TP_DUR_WIDE): write it with tp_sched_set_dur(), read it with
 * tp_sched_dur(); priority in 8 (priority_lo, see TP_PRIO_WIDE):
 * tp_sched_set_priority(), tp_sched_priority(). */
#define TP_SCHED_COLUMNS(X, T)                  \
	X(T, ts, TP_I64, 0)                     \
	X(T, dur_lo, TP_U32, TP_COL_HIDDEN)     \
	X(T, utid, TP_U32, 0)                   \
	X(T, end_state, TP_STR, 0)              \
	X(T, priority_lo, TP_U8, TP_COL_HIDDEN) \
	X(T, ucpu, TP_U32, 0)
#define TP_SCHED_COMPUTED(X, T)                 \
	X(T, dur, TP_I64, TP_COL_COMPUTED)      \
	X(T, priority, TP_I64, TP_COL_COMPUTED) \
	X(T, cpu, TP_U32, TP_COL_COMPUTED)

/* thread_state: a thread's scheduling state over [ts, ts + dur) (dur -1:
 * still open at the end of the trace). cpu is set while Running, the
 * waker after a wakeup (both kept in ucpu_or_waker). The
 * blocked reason columns are sparse: only D states after a
 * sched_blocked_reason have them. dur is stored in 32 bits as in sched:
 * tp_thread_state_set_dur(), tp_thread_state_dur(). */
#define TP_THREAD_STATE_COLUMNS(X, T)                 \
	X(T, ts, TP_I64, 0)                           \
	X(T, dur_lo, TP_U32, TP_COL_HIDDEN)           \
	X(T, utid, TP_U32, 0)                         \
	X(T, state, TP_STR, 0)                        \
	X(T, io_wait, TP_I64N, TP_COL_SPARSE)         \
	X(T, blocked_function, TP_STR, TP_COL_SPARSE) \
	X(T, waker_id, TP_U32N, TP_COL_SPARSE)        \
	X(T, irq_context, TP_I64N, TP_COL_SPARSE)     \
	X(T, ucpu_or_waker, TP_U32N, TP_COL_HIDDEN)
#define TP_THREAD_STATE_COMPUTED(X, T)             \
	X(T, dur, TP_I64, TP_COL_COMPUTED)         \
	X(T, waker_utid, TP_U32N, TP_COL_COMPUTED) \
	X(T, ucpu, TP_U32N, TP_COL_COMPUTED)       \
	X(T, cpu, TP_U32N, TP_COL_COMPUTED)
/* A thread_state row has a cpu (Running) or a waker (R after a wakeup),
 * never both: one column holds either, the cpu tagged with this bit
 * (utids stay below it: tables hold fewer than 2^31 rows). Read them through
 * tp_thread_state_computed_*. */
#define TP_THREAD_STATE_UCPU 0x80000000u
/* dur of sched and thread_state in 32 bits (4 bytes a row fewer; a slice
 * of a thread on a cpu or a state rarely lasts 4.29 s): dur_lo holds dur
 * when 0 <= dur < TP_DUR_WIDE, TP_DUR_OPEN for -1 (still open), and
 * TP_DUR_WIDE when the value is in the table's side map tp->dur_wide
 * (row -> dur), for longer or other negative durations. */
#define TP_DUR_OPEN UINT32_MAX
#define TP_DUR_WIDE (UINT32_MAX - 1)
/* sched.priority in 8 bits: priority_lo is the priority when
 * 0 <= priority < TP_PRIO_WIDE (a kernel priority is 0-139), TP_PRIO_WIDE
 * when it is in the side map tp->sched_prio_wide (row -> priority). */
#define TP_PRIO_WIDE UINT8_MAX

/* ftrace_event (alias raw): every ftrace event, its fields as args. 16
 * bytes a row (model/ftrace.c): ts is stored as ts_off, the offset from
 * the ts of its block of TP_FTRACE_TS_BLOCK rows (UINT32_MAX: the ts is in
 * a side map), and (name, ucpu, common_flags), which take few distinct
 * values, as kind, an index into the trace's list of those triples. Write
 * rows with tp_ftrace_raw, read ts / name / ucpu / common_flags through
 * the tp_ftrace_event_computed_*() getters. */
#define TP_FTRACE_EVENT_COLUMNS(X, T)       \
	X(T, ts_off, TP_U32, TP_COL_HIDDEN) \
	X(T, kind, TP_U32, TP_COL_HIDDEN)   \
	X(T, utid, TP_U32, 0)               \
	X(T, arg_set_id, TP_U32N, 0)
#define TP_FTRACE_EVENT_COMPUTED(X, T)               \
	X(T, ts, TP_I64, TP_COL_COMPUTED)            \
	X(T, name, TP_STR, TP_COL_COMPUTED)          \
	X(T, common_flags, TP_U32N, TP_COL_COMPUTED) \
	X(T, ucpu, TP_U32, TP_COL_COMPUTED)          \
	X(T, cpu, TP_U32, TP_COL_COMPUTED)

/* cpu: the cpus of every machine, Perfetto's layout: the rows of machine
 * m are m * TP_MAX_CPUS .. (m + 1) * TP_MAX_CPUS - 1, so ucpu (the row id)
 * = m * TP_MAX_CPUS + cpu, and ucpu = cpu on the host. Rows exist up to
 * the highest ucpu used; cpu is NULL in those of cpus never seen (the
 * `cpu` view leaves them out). tp_cpu_for() is the only writer of cpu. */
#define TP_CPU_COLUMNS(X, T)         \
	X(T, cpu, TP_U32N, 0)        \
	X(T, cluster_id, TP_U32, 0)  \
	X(T, processor, TP_STR, 0)   \
	X(T, machine_id, TP_I64N, 0) \
	X(T, capacity, TP_I64N, 0)   \
	X(T, arg_set_id, TP_U32N, 0)

/* cpu_freq: the frequencies (kHz) each cpu can run at, from CpuInfo
 * (Perfetto's __intrinsic_cpu_freq, the cpu_available_frequencies view). */
#define TP_CPU_FREQ_COLUMNS(X, T) \
	X(T, ucpu, TP_U32, 0)     \
	X(T, freq, TP_I64, 0)

/* linux_interrupt_mapping: each machine's IRQ numbers and names
 * (InterruptInfo packets, /proc/interrupts), the first name of an irq_id. */
#define TP_INTERRUPT_MAPPING_COLUMNS(X, T) \
	X(T, irq_id, TP_I64, 0)            \
	X(T, name, TP_STR, 0)              \
	X(T, machine_id, TP_I64N, 0)

/* package_list: PackagesList packets (Perfetto's __intrinsic_package_list,
 * the first of each package name); android_user_list: AndroidUserList
 * packets (a user's last type). */
#define TP_PACKAGE_LIST_COLUMNS(X, T)           \
	X(T, package_name, TP_STR, 0)           \
	X(T, uid, TP_I64, 0)                    \
	X(T, debuggable, TP_I64, 0)             \
	X(T, profileable_from_shell, TP_I64, 0) \
	X(T, version_code, TP_I64, 0)
#define TP_ANDROID_USER_LIST_COLUMNS(X, T) \
	X(T, type, TP_STR, 0)              \
	X(T, android_user_id, TP_I64, 0)

/* experimental_proto_path / experimental_proto_content: what
 * --analyze-trace-proto-content measured (importers/proto/content.c): a
 * tree of field paths per annotation (the root's args: the TrackEvent's
 * event.category and event.name), and the bytes and count of each path. */
#define TP_PROTO_PATH_COLUMNS(X, T) \
	X(T, parent_id, TP_U32N, 0) \
	X(T, field_type, TP_STR, 0) \
	X(T, field_name, TP_STR, 0) \
	X(T, arg_set_id, TP_U32N, 0)
#define TP_PROTO_CONTENT_COLUMNS(X, T) \
	X(T, path, TP_STR, 0)          \
	X(T, path_id, TP_U32, 0)       \
	X(T, total_size, TP_I64, 0)    \
	X(T, size, TP_I64, 0)          \
	X(T, count, TP_I64, 0)

/* machine: the machines the trace's packets came from (Perfetto's
 * __intrinsic_machine): row 0 is the host (raw_id 0, or the raw id it
 * adopted), one row per other TracePacket.machine_id. SystemInfo fills the
 * rest. */
#define TP_MACHINE_COLUMNS(X, T)                     \
	X(T, raw_id, TP_I64, 0)                      \
	X(T, name, TP_STR, 0)                        \
	X(T, sysname, TP_STR, 0)                     \
	X(T, release, TP_STR, 0)                     \
	X(T, version, TP_STR, 0)                     \
	X(T, arch, TP_STR, 0)                        \
	X(T, num_cpus, TP_I64N, 0)                   \
	X(T, android_build_fingerprint, TP_STR, 0)   \
	X(T, android_device_manufacturer, TP_STR, 0) \
	X(T, android_sdk_version, TP_I64N, 0)        \
	X(T, system_ram_bytes, TP_I64N, 0)           \
	X(T, system_ram_gb, TP_I64N, 0)

#define TP_NO_COLUMNS(X, T)

/* trace_file: the trace (row 0) and, for a zip or tar, each member
 * (parent_id 0) in archive order; processing_order is the import order. */
#define TP_TRACE_FILE_COLUMNS(X, T)        \
	X(T, parent_id, TP_U32N, 0)        \
	X(T, name, TP_STR, 0)              \
	X(T, size, TP_I64, 0)              \
	X(T, trace_type, TP_STR, 0)        \
	X(T, processing_order, TP_I64N, 0) \
	X(T, is_container, TP_I64, 0)

#define TP_METADATA_COLUMNS(X, T)    \
	X(T, name, TP_STR, 0)        \
	X(T, key_type, TP_STR, 0)    \
	X(T, int_value, TP_I64N, 0)  \
	X(T, str_value, TP_STR, 0)   \
	X(T, machine_id, TP_I64N, 0) \
	X(T, trace_id, TP_I64N, 0)

/* logs: log messages with their thread (TrackEvent log_message; Perfetto's
 * __intrinsic_logs). log_source is "android_logcat" for those, as in
 * Perfetto, which shows them in android_logs. */
#define TP_LOGS_COLUMNS(X, T)       \
	X(T, ts, TP_I64, 0)         \
	X(T, utid, TP_U32N, 0)      \
	X(T, prio, TP_I64, 0)       \
	X(T, log_source, TP_STR, 0) \
	X(T, tag, TP_STR, 0)        \
	X(T, msg, TP_STR, 0)        \
	X(T, arg_set_id, TP_U32N, 0)

/* trace_import_logs: one row per import problem worth pointing at (a stat
 * that was counted, with its details as args; model/stats.c). stat_key is
 * the stats table's key of the stat. */
#define TP_TRACE_IMPORT_LOGS_COLUMNS(X, T) \
	X(T, trace_id, TP_I64, 0)          \
	X(T, ts, TP_I64N, 0)               \
	X(T, byte_offset, TP_I64N, 0)      \
	X(T, stat_key, TP_I64, 0)          \
	X(T, arg_set_id, TP_U32N, 0)

/* ---- stack profiles (model/stack_profile.c) ---- */

/* ---- profiler samples (model/profiler.c), Perfetto's generic sampler
 * tables: one profiler_sample row per sample of any profiler (traced_perf,
 * perf script text, Chrome's streaming profiler, StackSample packets),
 * attributed to an interned task context (process, thread, async context)
 * and execution context (cpu, mode), with the counter values recorded at
 * it (a counter set: counter rows grouped like an arg set). perf_sample,
 * cpu_profile_stack_sample, stack_sample* and perf_session are views. */

/* profiler_session: one per data source instance of a sampling profiler
 * (a traced_perf sequence, a perf script file, a StackSample stream). */
#define TP_PROFILER_SESSION_COLUMNS(X, T) \
	X(T, source, TP_STR, 0)           \
	X(T, timebase_unit, TP_STR, 0)    \
	X(T, cmdline, TP_STR, 0)

/* profiler_sample: ts-ordered. source is the profiler ("linux.perf",
 * "perf_text", "chrome", a StackSample stream's); counter_set_id the first
 * profiler_counter_set row of its counter values. event_name, comm and
 * period are what a perf script line adds (traceconv reads them). */
#define TP_PROFILER_SAMPLE_COLUMNS(X, T)                        \
	X(T, ts, TP_I64, TP_COL_SORTED)                         \
	X(T, source, TP_STR, 0)                                 \
	X(T, task_context_id, TP_U32N, 0)                       \
	X(T, execution_context_id, TP_U32N, 0)                  \
	X(T, callsite_id, TP_U32N, 0)                           \
	X(T, unwind_error, TP_STR, 0)                           \
	X(T, session_id, TP_U32N, 0)                            \
	X(T, counter_set_id, TP_U32N, 0)                        \
	X(T, event_name, TP_STR, TP_COL_SPARSE | TP_COL_HIDDEN) \
	X(T, comm, TP_STR, TP_COL_SPARSE | TP_COL_HIDDEN)       \
	X(T, period, TP_I64N, TP_COL_SPARSE | TP_COL_HIDDEN)

/* profiler_task_context: (upid, utid, async context), interned. */
#define TP_PROFILER_TASK_CONTEXT_COLUMNS(X, T) \
	X(T, upid, TP_U32N, 0)                 \
	X(T, utid, TP_U32N, 0)                 \
	X(T, async_context_id, TP_U32N, 0)

/* profiler_execution_context: (ucpu, cpu_mode), interned. */
#define TP_PROFILER_EXECUTION_CONTEXT_COLUMNS(X, T) \
	X(T, ucpu, TP_U32N, 0)                      \
	X(T, cpu_mode, TP_STR, 0)

/* profiler_async_context: a goroutine, fiber, coroutine ... */
#define TP_PROFILER_ASYNC_CONTEXT_COLUMNS(X, T) \
	X(T, name, TP_STR, 0)                   \
	X(T, kind, TP_STR, 0)                   \
	X(T, parent_id, TP_U32N, 0)

/* profiler_counter_set: rows of one set contiguous; the set id is the row
 * id of its first row. */
#define TP_PROFILER_COUNTER_SET_COLUMNS(X, T)       \
	X(T, counter_set_id, TP_U32, TP_COL_SORTED) \
	X(T, counter_id, TP_U32, 0)

/* chrome_stack_sample_extras: a streaming profile sample's process
 * priority, when not 0. */
#define TP_CHROME_STACK_SAMPLE_EXTRAS_COLUMNS(X, T) \
	X(T, profiler_sample_id, TP_U32, 0)         \
	X(T, process_priority, TP_I64, 0)

/* stack_profile_callsite: a frame under a parent callsite (NULL at the root,
 * the outermost frame, depth 0). Interned: (parent, frame) is unique. */
#define TP_STACK_PROFILE_CALLSITE_COLUMNS(X, T) \
	X(T, depth, TP_U32, 0)                  \
	X(T, parent_id, TP_I64N, 0)             \
	X(T, frame_id, TP_U32, 0)

/* stack_profile_frame: a function (name, may be NULL) at rel_pc in a
 * mapping. Interned by (mapping, rel_pc, name). */
#define TP_STACK_PROFILE_FRAME_COLUMNS(X, T) \
	X(T, name, TP_STR, 0)                \
	X(T, mapping, TP_U32, 0)             \
	X(T, rel_pc, TP_I64, 0)              \
	X(T, symbol_set_id, TP_U32N, 0)      \
	X(T, deobfuscated_name, TP_STR, 0)   \
	X(T, type, TP_STR, 0) /* Frame.kind / kind_str: "native", "jit" ... */

/* stack_profile_mapping: a mapped file (or pseudo-file such as
 * "[kernel.kallsyms]"). Interned by (name, build_id). */
#define TP_STACK_PROFILE_MAPPING_COLUMNS(X, T) \
	X(T, build_id, TP_STR, 0)              \
	X(T, exact_offset, TP_I64, 0)          \
	X(T, start_offset, TP_I64, 0)          \
	X(T, start, TP_I64, 0)                 \
	X(T, end, TP_I64, 0)                   \
	X(T, load_bias, TP_I64, 0)             \
	X(T, name, TP_STR, 0)

/* track_event_callstacks: the callstack of a TrackEvent on a slice:
 * callsite_id from its begin (or instant), end_callsite_id from its end;
 * weight = callstack_weight. */
#define TP_TRACK_EVENT_CALLSTACKS_COLUMNS(X, T) \
	X(T, slice_id, TP_U32, 0)               \
	X(T, track_id, TP_U32, 0)               \
	X(T, callsite_id, TP_U32N, 0)           \
	X(T, end_callsite_id, TP_U32N, 0)       \
	X(T, weight, TP_DBLN, 0)

/* stack_profile_symbol: symbolization results (rows of one set contiguous). */
#define TP_STACK_PROFILE_SYMBOL_COLUMNS(X, T) \
	X(T, symbol_set_id, TP_U32, 0)        \
	X(T, name, TP_STR, 0)                 \
	X(T, source_file, TP_STR, 0)          \
	X(T, line_number, TP_U32N, 0)         \
	X(T, inlined, TP_I64N, 0)

/* clock_snapshot: one row per clock of each ClockSnapshot packet that
 * holds the trace clock: ts is the trace clock's value in it, clock_value
 * the clock's own (ns), clock_name Perfetto's name of a builtin clock;
 * snapshot_id counts those snapshots from 0. */
#define TP_CLOCK_SNAPSHOT_COLUMNS(X, T) \
	X(T, ts, TP_I64, 0)             \
	X(T, clock_id, TP_I64, 0)       \
	X(T, clock_name, TP_STR, 0)     \
	X(T, clock_value, TP_I64, 0)    \
	X(T, snapshot_id, TP_I64, 0)    \
	X(T, machine_id, TP_I64N, 0)

/* aggregate_profile, aggregate_sample: imported profiles without time
 * (pprof, collapsed stacks: importers/profiles/), a profile per metric and
 * its values at callsites, as Perfetto's. */
#define TP_AGGREGATE_PROFILE_COLUMNS(X, T) \
	X(T, scope, TP_STR, 0)             \
	X(T, name, TP_STR, 0)              \
	X(T, sample_type_type, TP_STR, 0)  \
	X(T, sample_type_unit, TP_STR, 0)
#define TP_AGGREGATE_SAMPLE_COLUMNS(X, T)     \
	X(T, aggregate_profile_id, TP_U32, 0) \
	X(T, callsite_id, TP_U32, 0)          \
	X(T, value, TP_DBL, 0)

/* Every table: T(sql_name, struct_name, COLUMNS, COMPUTED_COLUMNS). */
#define TP_TABLES(T)                                                                               \
	T(__intrinsic_slice, slice, TP_SLICE_COLUMNS, TP_NO_COLUMNS)                               \
	T(__intrinsic_track, track, TP_TRACK_COLUMNS, TP_NO_COLUMNS)                               \
	T(__intrinsic_thread, thread, TP_THREAD_COLUMNS, TP_NO_COLUMNS)                            \
	T(__intrinsic_process, process, TP_PROCESS_COLUMNS, TP_NO_COLUMNS)                         \
	T(__intrinsic_counter, counter, TP_COUNTER_COLUMNS, TP_NO_COLUMNS)                         \
	T(__intrinsic_flow, flow, TP_FLOW_COLUMNS, TP_NO_COLUMNS)                                  \
	T(__intrinsic_state, state, TP_STATE_COLUMNS, TP_NO_COLUMNS)                               \
	T(__intrinsic_args, args, TP_ARGS_COLUMNS, TP_ARGS_COMPUTED)                               \
	T(__intrinsic_profiler_session, profiler_session, TP_PROFILER_SESSION_COLUMNS,             \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_profiler_sample, profiler_sample, TP_PROFILER_SAMPLE_COLUMNS, TP_NO_COLUMNS) \
	T(__intrinsic_profiler_task_context, profiler_task_context,                                \
	  TP_PROFILER_TASK_CONTEXT_COLUMNS, TP_NO_COLUMNS)                                         \
	T(__intrinsic_profiler_execution_context, profiler_execution_context,                      \
	  TP_PROFILER_EXECUTION_CONTEXT_COLUMNS, TP_NO_COLUMNS)                                    \
	T(__intrinsic_profiler_async_context, profiler_async_context,                              \
	  TP_PROFILER_ASYNC_CONTEXT_COLUMNS, TP_NO_COLUMNS)                                        \
	T(__intrinsic_profiler_counter_set, profiler_counter_set, TP_PROFILER_COUNTER_SET_COLUMNS, \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_chrome_stack_sample_extras, chrome_stack_sample_extras,                      \
	  TP_CHROME_STACK_SAMPLE_EXTRAS_COLUMNS, TP_NO_COLUMNS)                                    \
	T(__intrinsic_stack_profile_callsite, stack_profile_callsite,                              \
	  TP_STACK_PROFILE_CALLSITE_COLUMNS, TP_NO_COLUMNS)                                        \
	T(__intrinsic_stack_profile_frame, stack_profile_frame, TP_STACK_PROFILE_FRAME_COLUMNS,    \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_stack_profile_mapping, stack_profile_mapping,                                \
	  TP_STACK_PROFILE_MAPPING_COLUMNS, TP_NO_COLUMNS)                                         \
	T(__intrinsic_stack_profile_symbol, stack_profile_symbol, TP_STACK_PROFILE_SYMBOL_COLUMNS, \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_metadata, metadata, TP_METADATA_COLUMNS, TP_NO_COLUMNS)                      \
	T(__intrinsic_trace_file, trace_file, TP_TRACE_FILE_COLUMNS, TP_NO_COLUMNS)                \
	T(__intrinsic_sched, sched, TP_SCHED_COLUMNS, TP_SCHED_COMPUTED)                           \
	T(__intrinsic_thread_state, thread_state, TP_THREAD_STATE_COLUMNS,                         \
	  TP_THREAD_STATE_COMPUTED)                                                                \
	T(__intrinsic_ftrace_event, ftrace_event, TP_FTRACE_EVENT_COLUMNS,                         \
	  TP_FTRACE_EVENT_COMPUTED)                                                                \
	T(__intrinsic_cpu, cpu, TP_CPU_COLUMNS, TP_NO_COLUMNS)                                     \
	T(__intrinsic_machine, machine, TP_MACHINE_COLUMNS, TP_NO_COLUMNS)                         \
	T(__intrinsic_cpu_freq, cpu_freq, TP_CPU_FREQ_COLUMNS, TP_NO_COLUMNS)                      \
	T(__intrinsic_package_list, package_list, TP_PACKAGE_LIST_COLUMNS, TP_NO_COLUMNS)          \
	T(__intrinsic_android_user_list, android_user_list, TP_ANDROID_USER_LIST_COLUMNS,          \
	  TP_NO_COLUMNS)                                                                           \
	T(experimental_proto_path, proto_path, TP_PROTO_PATH_COLUMNS, TP_NO_COLUMNS)               \
	T(experimental_proto_content, proto_content, TP_PROTO_CONTENT_COLUMNS, TP_NO_COLUMNS)      \
	T(_linux_interrupt_mapping, interrupt_mapping, TP_INTERRUPT_MAPPING_COLUMNS,               \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_logs, logs, TP_LOGS_COLUMNS, TP_NO_COLUMNS)                                  \
	T(__intrinsic_track_event_callstacks, track_event_callstacks,                              \
	  TP_TRACK_EVENT_CALLSTACKS_COLUMNS, TP_NO_COLUMNS)                                        \
	T(__intrinsic_trace_import_logs, trace_import_logs, TP_TRACE_IMPORT_LOGS_COLUMNS,          \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_clock_snapshot, clock_snapshot, TP_CLOCK_SNAPSHOT_COLUMNS, TP_NO_COLUMNS)    \
	T(__intrinsic_aggregate_profile, aggregate_profile, TP_AGGREGATE_PROFILE_COLUMNS,          \
	  TP_NO_COLUMNS)                                                                           \
	T(__intrinsic_aggregate_sample, aggregate_sample, TP_AGGREGATE_SAMPLE_COLUMNS,             \
	  TP_NO_COLUMNS)

#endif /* TB_TP_SCHEMA_H */
