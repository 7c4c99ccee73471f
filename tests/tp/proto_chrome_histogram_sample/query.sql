-- TrackEvent chrome_histogram_sample: its fields as args, the interned
-- name when only name_iid is given; name and name_iid together, or an
-- unknown iid, are parser errors (the other fields are kept).
SELECT s.name AS slice, a.key, a.display_value, a.value_type
FROM slice AS s JOIN args AS a USING (arg_set_id) ORDER BY s.ts, a.id;
SELECT name, value FROM stats WHERE name = 'track_event_parser_errors';
