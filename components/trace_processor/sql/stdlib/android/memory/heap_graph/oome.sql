-- android.memory.heap_graph.oome: the OutOfMemoryError of a heap dump.
CREATE PERFETTO VIEW android_heap_graph_java_oome_details(
  id LONG, heap_graph_id LONG, allocation_size_bytes LONG, total_bytes_free LONG,
  free_bytes_until_oom LONG, error_msg STRING) AS
SELECT id, heap_graph_id, allocation_size_bytes, total_bytes_free, free_bytes_until_oom,
  error_msg
FROM __intrinsic_heap_graph_java_oome_details;
