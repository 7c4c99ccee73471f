-- The answers of Perfetto's parser/collapsed_stack diff tests (their input
-- is not public; this one has the same shape: 3 stacks, 225 in all, frames
-- main, foo, bar, baz, qux), plus the callsite tree and the mapping.
SELECT scope, name, sample_type_type, sample_type_unit
FROM __intrinsic_aggregate_profile ORDER BY scope, sample_type_type;
SELECT COUNT(*) AS sample_count FROM __intrinsic_aggregate_sample;
SELECT SUM(value) AS total_count FROM __intrinsic_aggregate_sample;
SELECT DISTINCT f.name FROM stack_profile_frame f ORDER BY f.name;
SELECT c.id, c.depth, c.parent_id, f.name, s.name AS symbol
FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
LEFT JOIN stack_profile_symbol s ON s.symbol_set_id = f.symbol_set_id ORDER BY c.id;
SELECT name, build_id, start, end FROM stack_profile_mapping;
SELECT trace_type FROM trace_file;
