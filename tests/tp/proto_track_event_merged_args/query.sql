-- Merged begin/end args, legacy async tracks and their args, the Default
-- Track's args.
SELECT s.ts, s.dur, s.name, t.name AS track, a.key, a.display_value
FROM slice AS s JOIN track AS t ON t.id = s.track_id
LEFT JOIN args AS a ON a.arg_set_id = s.arg_set_id ORDER BY s.ts, a.key;
SELECT t.type, t.name, t.track_group_id, a.key, a.display_value FROM track AS t
JOIN args AS a ON a.arg_set_id IN (t.dimension_arg_set_id, t.source_arg_set_id)
WHERE t.type GLOB '*merged*' OR t.type GLOB 'legacy_async*' ORDER BY t.id, a.key;
