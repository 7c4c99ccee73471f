-- Source locations as Perfetto's args: interned ones (source_location_iid,
-- task_execution.posted_from_iid) with all three keys, '/' separators and
-- a uint line; the inline one and the iid itself reflected by field name;
-- unknown iids are parser errors.
SELECT s.name AS slice, a.key, a.display_value, a.value_type
FROM slice AS s JOIN args AS a USING (arg_set_id) ORDER BY s.ts, a.id;
SELECT name, value FROM stats WHERE name = 'track_event_parser_errors';
