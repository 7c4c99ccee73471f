-- StreamingProfilePacket: samples at the sequence's delta-coded time
-- (reference 1000 us, deltas 5, 10, then 1 for an unknown callstack), leaf
-- frames through the interned callstacks; the TrackEvent after it continues
-- from the last delta; a callstack without a delta is an error.
SELECT s.ts, t.tid, s.process_priority, f.name AS leaf, c.depth
FROM cpu_profile_stack_sample AS s JOIN thread AS t USING (utid)
JOIN stack_profile_callsite AS c ON c.id = s.callsite_id
JOIN stack_profile_frame AS f ON f.id = c.frame_id ORDER BY s.ts;
SELECT ts, name FROM slice;
SELECT l.ts, l.name, a.key, a.int_value FROM _trace_import_logs AS l LEFT JOIN args AS a USING (arg_set_id) ORDER BY l.id;
SELECT name, value FROM stats WHERE name IN ('stackprofile_parser_error', 'stackprofile_invalid_callstack_id');
