-- Every path with its parent, annotation and samples.
SELECT p.id, p.parent_id, p.field_type, p.field_name,
  EXTRACT_ARG(p.arg_set_id, 'event.category') AS category,
  EXTRACT_ARG(p.arg_set_id, 'event.name') AS name,
  EXTRACT_ARG(p.arg_set_id, 'skipped_packet') AS skipped,
  c.path, c.total_size, c.size, c.count
FROM experimental_proto_path AS p
JOIN experimental_proto_content AS c ON c.path_id = p.id ORDER BY p.id;
-- The annotations as args (a missing name is a NULL string).
SELECT a.key, a.value_type, a.string_value FROM experimental_proto_path AS p
JOIN args AS a USING (arg_set_id) ORDER BY p.id, a.key;
-- Each annotation's bytes add up to its packets' lengths.
SELECT r.id, SUM(c.size) AS bytes FROM experimental_proto_path AS r
JOIN experimental_proto_content AS c ON c.path GLOB 'TracePacket*'
WHERE r.parent_id IS NULL AND c.path_id IN (
  WITH RECURSIVE t(id) AS (SELECT r.id UNION ALL
    SELECT p.id FROM experimental_proto_path AS p JOIN t ON p.parent_id = t.id)
  SELECT id FROM t)
GROUP BY r.id ORDER BY r.id;
