-- prelude.tables: run when the database opens. Storage for data our
-- importers do not produce yet, with Perfetto's table names and columns,
-- so that queries over them run and find no rows (the views in
-- prelude.views read them as Perfetto's do). Plain SQLite tables: an
-- importer that learns one of these formats fills the table here.

CREATE TABLE __intrinsic_gpu(
  id INTEGER PRIMARY KEY, gpu INT, machine_id INT, name TEXT, vendor TEXT, model TEXT,
  architecture TEXT, uuid TEXT, pci_bdf TEXT, arg_set_id INT);

CREATE TABLE __intrinsic_heap_profile_allocation(
  id INTEGER PRIMARY KEY, ts INT, upid INT, heap_name TEXT, callsite_id INT, count INT,
  size INT);

CREATE TABLE __intrinsic_heap_graph(
  id INTEGER PRIMARY KEY, ts INT, upid INT, dump_reason TEXT, heap_size INT);

CREATE TABLE __intrinsic_heap_graph_object(
  id INTEGER PRIMARY KEY, upid INT, graph_sample_ts INT, self_size INT, native_size INT,
  reference_set_id INT, reachable INT, heap_type TEXT, type_id INT, root_type TEXT,
  root_distance INT, object_data_id INT);

CREATE TABLE __intrinsic_heap_graph_java_oome_details(
  id INTEGER PRIMARY KEY, heap_graph_id INT, allocation_size_bytes INT,
  total_bytes_free INT, free_bytes_until_oom INT, error_msg TEXT);

CREATE TABLE __intrinsic_profiler_smaps(
  id INTEGER PRIMARY KEY, upid INT, ts INT, path TEXT, size_kb INT, private_dirty_kb INT,
  swap_kb INT, file_name TEXT, start_address INT, module_timestamp INT,
  module_debugid TEXT, module_debug_path TEXT, protection_flags INT,
  private_clean_resident_kb INT, shared_dirty_resident_kb INT,
  shared_clean_resident_kb INT, locked_kb INT, proportional_resident_kb INT, rss_kb INT,
  anonymous_kb INT, pss_dirty_kb INT, swap_pss_kb INT, aggregate_count INT,
  is_deleted INT);

CREATE TABLE __intrinsic_memory_snapshot(
  id INTEGER PRIMARY KEY, timestamp INT, track_id INT, detail_level TEXT);

CREATE TABLE __intrinsic_memory_snapshot_node(
  id INTEGER PRIMARY KEY, process_snapshot_id INT, parent_node_id INT, path TEXT, size INT,
  effective_size INT, arg_set_id INT);

CREATE TABLE __intrinsic_process_memory_snapshot(
  id INTEGER PRIMARY KEY, snapshot_id INT, upid INT);

CREATE TABLE __intrinsic_gpu_counter_group(
  id INTEGER PRIMARY KEY, group_id INT, track_id INT, name TEXT, description TEXT);

CREATE TABLE __intrinsic_video_frames(
  id INTEGER PRIMARY KEY, ts INT, display_id INT, display_name TEXT, codec_string TEXT,
  frame_number INT, codec TEXT, is_key_frame INT, pts_us INT, is_config INT);

CREATE TABLE __intrinsic_trace_diagnostics(
  id INTEGER PRIMARY KEY, key TEXT, title TEXT, description TEXT, remediation TEXT,
  confidence INT, trace_id INT);

CREATE TABLE __intrinsic_android_cpu_per_uid_track(
  id INTEGER PRIMARY KEY, uid INT, cluster INT, total_cpu_millis INT);

CREATE TABLE __intrinsic_heap_profile(
  id INTEGER PRIMARY KEY, ts INT, ts_end INT, upid INT, heap_name TEXT);
