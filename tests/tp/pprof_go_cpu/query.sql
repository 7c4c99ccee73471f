-- A CPU profile Go 1.19's runtime/pprof wrote (two hot functions, hotA
-- three times the work of hotB). The flat split equals
-- `go tool pprof -top -sample_index=samples` on the same file:
-- main.hotA 14, runtime.asyncPreempt 6, main.hotB 3.
SELECT id, scope, name, sample_type_type, sample_type_unit FROM __intrinsic_aggregate_profile;
SELECT p.sample_type_type, f.name, CAST(SUM(s.value) AS INT) AS flat
FROM __intrinsic_aggregate_sample s
JOIN __intrinsic_aggregate_profile p ON p.id = s.aggregate_profile_id
JOIN stack_profile_callsite c ON c.id = s.callsite_id
JOIN stack_profile_frame f ON f.id = c.frame_id
GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2;
SELECT f.name, y.name AS symbol, replace(y.source_file, rtrim(y.source_file, replace(y.source_file, '/', '')), '') AS file, y.line_number, y.inlined
FROM stack_profile_frame f JOIN stack_profile_symbol y ON y.symbol_set_id = f.symbol_set_id
ORDER BY f.id, y.id;
SELECT id, build_id, exact_offset, start, end, name GLOB '*/exe/main' AS is_main FROM stack_profile_mapping;
SELECT trace_type FROM trace_file;
