-- An empty input is an empty trace, as in Perfetto: queries still run.
SELECT (SELECT count(*) FROM slice) AS slices, trace_start() AS start, trace_end() AS end_ts,
  (SELECT str_value FROM metadata WHERE name = 'trace_type') AS trace_type,
  (SELECT int_value FROM metadata WHERE name = 'trace_size_bytes') AS size;
