-- prelude.views: run when the database opens. Perfetto's prelude objects
-- that are plain SQL over our tables: the trace bounds, metadata lookups,
-- and the public views of the tables in prelude.tables.
INCLUDE PERFETTO MODULE prelude.tables;

-- The first and last timestamp of the trace's events.
CREATE PERFETTO VIEW trace_bounds(start_ts TIMESTAMP, end_ts TIMESTAMP) AS
SELECT trace_start() AS start_ts, trace_end() AS end_ts;

-- The value of metadata key `name`: its integer, else its string (the
-- first such row: the trace's own, in a trace of one machine).
CREATE PERFETTO FUNCTION extract_metadata(name STRING) RETURNS ANY AS
SELECT coalesce(m.int_value, m.str_value) FROM metadata AS m
WHERE m.name = $name ORDER BY m.id LIMIT 1;

-- The same, for one trace of a merged set (a NULL trace id is trace 0).
CREATE PERFETTO FUNCTION extract_metadata_for_trace(trace_id LONG, name STRING) RETURNS ANY AS
SELECT coalesce(m.int_value, m.str_value) FROM metadata AS m
WHERE m.name = $name AND coalesce(m.trace_id, 0) = $trace_id ORDER BY m.id LIMIT 1;

-- The same, for one machine (a NULL machine id is the host, 0).
CREATE PERFETTO FUNCTION extract_metadata_for_machine(machine_id LONG, name STRING) RETURNS ANY AS
SELECT coalesce(m.int_value, m.str_value) FROM metadata AS m
WHERE m.name = $name AND coalesce(m.machine_id, 0) = $machine_id ORDER BY m.id LIMIT 1;

CREATE PERFETTO VIEW clock_snapshot AS
SELECT id, ts, clock_id, clock_name, clock_value, snapshot_id, machine_id
FROM __intrinsic_clock_snapshot;

CREATE PERFETTO VIEW gpu AS
SELECT id, id AS ugpu, gpu, name, vendor, model, architecture, uuid, pci_bdf, machine_id,
  arg_set_id
FROM __intrinsic_gpu;

CREATE PERFETTO VIEW package_list AS
SELECT id, package_name, uid, debuggable, profileable_from_shell, version_code
FROM __intrinsic_package_list;

CREATE PERFETTO VIEW heap_profile_allocation AS
SELECT id, ts, upid, heap_name, callsite_id, count, size
FROM __intrinsic_heap_profile_allocation;

CREATE PERFETTO VIEW heap_graph AS
SELECT id, ts, upid, dump_reason, heap_size FROM __intrinsic_heap_graph;

CREATE PERFETTO VIEW heap_graph_object AS
SELECT id, upid, graph_sample_ts, self_size, native_size, reference_set_id, reachable,
  heap_type, type_id, root_type, root_distance, object_data_id
FROM __intrinsic_heap_graph_object;

CREATE PERFETTO VIEW profiler_smaps AS
SELECT id, upid, ts, path,
  -- the path without the " (deleted)" suffix and trailing white space
  rtrim(iif(path GLOB '* (deleted)', substr(path, 1, length(path) - 10), path))
    AS path_trimmed,
  aggregate_count, is_deleted, size_kb, private_dirty_kb, swap_kb, file_name,
  start_address, module_timestamp, module_debugid, module_debug_path, protection_flags,
  private_clean_resident_kb, shared_dirty_resident_kb, shared_clean_resident_kb, locked_kb,
  proportional_resident_kb, rss_kb, anonymous_kb, pss_dirty_kb, swap_pss_kb
FROM __intrinsic_profiler_smaps;

-- Memory mappings of a process at a snapshot, in Perfetto's naming.
CREATE PERFETTO VIEW process_memory_mappings AS
SELECT id, upid, ts, path, aggregate_count, is_deleted, size_kb, rss_kb, anonymous_kb,
  swap_kb, shared_clean_resident_kb AS shared_clean_kb,
  shared_dirty_resident_kb AS shared_dirty_kb,
  private_clean_resident_kb AS private_clean_kb, private_dirty_kb, locked_kb,
  proportional_resident_kb AS pss_kb, pss_dirty_kb, swap_pss_kb
FROM __intrinsic_profiler_smaps;

CREATE PERFETTO VIEW memory_snapshot AS
SELECT id, timestamp, track_id, detail_level FROM __intrinsic_memory_snapshot;

CREATE PERFETTO VIEW memory_snapshot_node AS
SELECT id, process_snapshot_id, parent_node_id, path, size, effective_size, arg_set_id
FROM __intrinsic_memory_snapshot_node;

CREATE PERFETTO VIEW process_memory_snapshot AS
SELECT id, snapshot_id, upid FROM __intrinsic_process_memory_snapshot;

CREATE PERFETTO VIEW gpu_counter_group AS
SELECT id, group_id, track_id, name, description FROM __intrinsic_gpu_counter_group;

-- Counter tracks of a gpu: those with a gpu dimension.
CREATE PERFETTO VIEW gpu_counter_track AS
SELECT t.id, t.name, t.type, t.parent_id, t.source_arg_set_id, t.machine_id, t.unit,
  t.description, g.id AS ugpu, extract_arg(t.dimension_arg_set_id, 'gpu') AS gpu_id
FROM counter_track AS t
LEFT JOIN gpu AS g
  ON g.gpu = extract_arg(t.dimension_arg_set_id, 'gpu')
  AND coalesce(g.machine_id, 0) = coalesce(t.machine_id, 0)
WHERE extract_arg(t.dimension_arg_set_id, 'gpu') IS NOT NULL;

-- One native heap profile dump: its window [ts, ts_end) per process and heap.
CREATE PERFETTO VIEW heap_profile AS
SELECT id, ts, ts_end, ts_end - ts AS dur, upid, heap_name FROM __intrinsic_heap_profile;
