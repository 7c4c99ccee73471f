-- Frames, symbols and counter tracks of StackSample and perf samples.
SELECT f.name, m.name AS mapping, f.rel_pc, f.type, s.source_file, s.line_number
FROM stack_profile_frame AS f JOIN stack_profile_mapping AS m ON m.id = f.mapping
LEFT JOIN stack_profile_symbol AS s ON s.symbol_set_id = f.symbol_set_id ORDER BY f.id;
SELECT ts, source, callsite_id IS NOT NULL AS has_callsite, session_id FROM __intrinsic_profiler_sample
ORDER BY ts;
SELECT name, value FROM stats WHERE name GLOB 'stackprofile_*' AND value > 0;
SELECT t.name, t.type, t.unit, extract_arg(t.source_arg_set_id, 'is_timebase') AS timebase,
  extract_arg(t.source_arg_set_id, 'unit_multiplier') AS mult,
  extract_arg(t.source_arg_set_id, 'description') AS descr, c.ts, c.value
FROM counter AS c JOIN counter_track AS t ON t.id = c.track_id ORDER BY c.id;
SELECT id, source, timebase_unit FROM stack_sample_session;
SELECT name, cpu, perf_session_id, is_timebase FROM perf_counter_track ORDER BY id;
SELECT ts, cpu, cpu_mode, callsite_id FROM perf_sample;
INCLUDE PERFETTO MODULE linux.perf.counters;
SELECT linux_perf_counter_for_sample(2, 'instructions') AS instr,
  linux_perf_counter_for_sample(2, 'cycles') AS none, linux_perf_counter_for_sample(NULL, 'x') AS n;
