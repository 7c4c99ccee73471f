-- viz.summary.threads: per thread, whether it has anything to draw.
INCLUDE PERFETTO MODULE viz.summary.slices;

-- Scheduling per thread (the idle threads left out, still-running slices
-- too): longest and total running time, number of sched slices.
CREATE PERFETTO TABLE _sched_summary(
  utid LONG, max_running_dur LONG, sum_running_dur LONG, running_count LONG) AS
SELECT s.utid, max(s.dur) AS max_running_dur, sum(s.dur) AS sum_running_dur,
  count(*) AS running_count
FROM sched AS s
WHERE s.dur != -1 AND s.utid NOT IN (SELECT t.utid FROM thread AS t WHERE t.is_idle)
GROUP BY s.utid;

-- Slices on each thread's tracks.
CREATE PERFETTO TABLE _thread_track_summary(utid LONG, slice_count LONG) AS
SELECT tt.utid, sum(st.cnt) AS slice_count
FROM thread_track AS tt JOIN _slice_track_summary AS st ON st.id = tt.id
GROUP BY tt.utid;

-- Stack samples per thread.
CREATE PERFETTO TABLE _stack_sample_summary(utid LONG, sample_count LONG) AS
SELECT c.utid, count(*) AS sample_count
FROM stack_sample AS s JOIN stack_sample_task_context AS c ON c.id = s.task_context_id
WHERE c.utid IS NOT NULL
GROUP BY c.utid;

-- Every thread with scheduling, slices, samples or a counter track, with
-- the figures above (0 where it has none).
CREATE PERFETTO TABLE _thread_available_info_summary(
  utid LONG, max_running_dur LONG, sum_running_dur LONG, running_count LONG,
  slice_count LONG, stack_sample_count LONG) AS
SELECT t.utid,
  coalesce(ss.max_running_dur, 0) AS max_running_dur,
  coalesce(ss.sum_running_dur, 0) AS sum_running_dur,
  coalesce(ss.running_count, 0) AS running_count,
  coalesce(ts.slice_count, 0) AS slice_count,
  coalesce(sm.sample_count, 0) AS stack_sample_count
FROM thread AS t
LEFT JOIN _sched_summary AS ss ON ss.utid = t.utid
LEFT JOIN _thread_track_summary AS ts ON ts.utid = t.utid
LEFT JOIN _stack_sample_summary AS sm ON sm.utid = t.utid
WHERE ss.utid IS NOT NULL OR ts.utid IS NOT NULL OR sm.utid IS NOT NULL
  OR t.utid IN (SELECT c.utid FROM thread_counter_track AS c);
