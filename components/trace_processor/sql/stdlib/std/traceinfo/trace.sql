-- std.traceinfo.trace: one row per trace (of a merged set) with its
-- identifying metadata. A NULL trace id (our single trace) is trace 0.
CREATE PERFETTO TABLE _metadata_by_trace(
  trace_id LONG, unique_session_name STRING, trace_uuid STRING, trace_type STRING,
  trace_size_bytes LONG, trace_trigger STRING, machines STRING) AS
WITH traces AS (SELECT DISTINCT coalesce(trace_id, 0) AS trace_id FROM metadata),
  machines AS (
    SELECT trace_id, group_concat(label, ', ') AS machines FROM (
      SELECT DISTINCT coalesce(m.trace_id, 0) AS trace_id,
        coalesce(extract_metadata_for_machine(coalesce(m.machine_id, 0), 'system_name'),
                 'Machine ' || coalesce(m.machine_id, 0)) AS label
      FROM metadata AS m)
    GROUP BY trace_id)
SELECT t.trace_id,
  extract_metadata_for_trace(t.trace_id, 'unique_session_name') AS unique_session_name,
  extract_metadata_for_trace(t.trace_id, 'trace_uuid') AS trace_uuid,
  extract_metadata_for_trace(t.trace_id, 'trace_type') AS trace_type,
  extract_metadata_for_trace(t.trace_id, 'trace_size_bytes') AS trace_size_bytes,
  extract_metadata_for_trace(t.trace_id, 'trace_trigger') AS trace_trigger,
  coalesce(m.machines, '') AS machines
FROM traces AS t LEFT JOIN machines AS m USING (trace_id);
