-- A heap profile Go 1.19's runtime/pprof wrote (MemProfileRate 1, eight
-- 1 MiB and eight 4 KiB allocations): four values per sample, one
-- aggregate profile each. The flat values are `go tool pprof -top
-- -sample_index=alloc_objects` (main.allocBig 12, main.allocSmall 9: the
-- appends' growth counts too) and `-sample_index=inuse_space -unit=B`
-- (8388992 B and 32768 B) on the same file.
SELECT id, name, sample_type_type, sample_type_unit FROM __intrinsic_aggregate_profile;
SELECT p.sample_type_type, f.name, CAST(SUM(s.value) AS INT) AS flat
FROM __intrinsic_aggregate_sample s
JOIN __intrinsic_aggregate_profile p ON p.id = s.aggregate_profile_id
JOIN stack_profile_callsite c ON c.id = s.callsite_id
JOIN stack_profile_frame f ON f.id = c.frame_id
WHERE f.name GLOB 'main.*'
GROUP BY 1, 2 ORDER BY 1, 2;
