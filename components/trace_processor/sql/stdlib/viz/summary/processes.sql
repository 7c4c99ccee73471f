-- viz.summary.processes: per process, whether it has anything to draw.
INCLUDE PERFETTO MODULE viz.summary.slices;
INCLUDE PERFETTO MODULE viz.summary.threads;

-- Slices on each process's own tracks.
CREATE PERFETTO TABLE _process_track_summary(upid LONG, slice_count LONG) AS
SELECT pt.upid, sum(st.cnt) AS slice_count
FROM process_track AS pt JOIN _slice_track_summary AS st ON st.id = pt.id
GROUP BY pt.upid;

-- Heap profile allocations per process.
CREATE PERFETTO TABLE _heap_profile_allocation_summary(upid LONG, allocation_count LONG) AS
SELECT a.upid, count(*) AS allocation_count FROM heap_profile_allocation AS a GROUP BY a.upid;

-- Java heap graph objects per process.
CREATE PERFETTO TABLE _heap_profile_graph_summary(upid LONG, graph_object_count LONG) AS
SELECT o.upid, count(*) AS graph_object_count FROM heap_graph_object AS o GROUP BY o.upid;

-- The thread figures of viz.summary.threads added up per process.
CREATE PERFETTO TABLE _thread_process_grouped_summary(
  upid LONG, max_running_dur LONG, sum_running_dur LONG, running_count LONG,
  slice_count LONG, stack_sample_count LONG) AS
SELECT t.upid, max(i.max_running_dur) AS max_running_dur,
  sum(i.sum_running_dur) AS sum_running_dur, sum(i.running_count) AS running_count,
  sum(i.slice_count) AS slice_count, sum(i.stack_sample_count) AS stack_sample_count
FROM _thread_available_info_summary AS i JOIN thread AS t ON t.utid = i.utid
WHERE t.upid IS NOT NULL
GROUP BY t.upid;

-- Every process with something of its threads, its own slices, heap
-- data, counter or state tracks, or smaps (0 where it has none).
CREATE PERFETTO TABLE _process_available_info_summary(
  upid LONG, max_running_dur LONG, sum_running_dur LONG, running_count LONG,
  thread_slice_count LONG, stack_sample_count LONG, process_slice_count LONG,
  allocation_count LONG, graph_object_count LONG) AS
SELECT p.upid,
  coalesce(g.max_running_dur, 0) AS max_running_dur,
  coalesce(g.sum_running_dur, 0) AS sum_running_dur,
  coalesce(g.running_count, 0) AS running_count,
  coalesce(g.slice_count, 0) AS thread_slice_count,
  coalesce(g.stack_sample_count, 0) AS stack_sample_count,
  coalesce(ps.slice_count, 0) AS process_slice_count,
  coalesce(ha.allocation_count, 0) AS allocation_count,
  coalesce(hg.graph_object_count, 0) AS graph_object_count
FROM process AS p
LEFT JOIN _thread_process_grouped_summary AS g ON g.upid = p.upid
LEFT JOIN _process_track_summary AS ps ON ps.upid = p.upid
LEFT JOIN _heap_profile_allocation_summary AS ha ON ha.upid = p.upid
LEFT JOIN _heap_profile_graph_summary AS hg ON hg.upid = p.upid
WHERE g.upid IS NOT NULL OR ps.upid IS NOT NULL OR ha.upid IS NOT NULL
  OR hg.upid IS NOT NULL
  OR p.upid IN (SELECT c.upid FROM process_counter_track AS c)
  OR p.upid IN (SELECT s.upid FROM process_state_track AS s)
  OR p.upid IN (SELECT m.upid FROM profiler_smaps AS m);
