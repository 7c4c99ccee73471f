-- android.memory.heap_profile.intervals: each native heap dump drawn over
-- its profiling window, with its byte totals.
CREATE PERFETTO TABLE _android_heap_profile_intervals AS
WITH per_callsite AS (
  SELECT upid, heap_name, ts, callsite_id, min(id) AS min_id, sum(count) AS net_count,
    sum(size) AS net_size, sum(max(size, 0)) AS alloc_size
  FROM heap_profile_allocation GROUP BY upid, heap_name, ts, callsite_id),
dumps AS (
  SELECT min(c.min_id) AS id, c.upid, c.heap_name, c.ts AS ts_end, h.ts AS start_ts,
    sum(iif(c.net_count > 0, c.net_size, 0)) AS retained, sum(c.alloc_size) AS allocated,
    sum(c.net_size) AS delta
  FROM per_callsite AS c JOIN heap_profile AS h ON h.upid = c.upid AND h.ts_end = c.ts
  GROUP BY c.upid, c.heap_name, c.ts),
windows AS (
  -- A dump without a window of its own starts just after the previous one
  -- (or at the trace's start).
  SELECT id, upid, heap_name, ts_end, retained, allocated, delta,
    iif(start_ts < ts_end, start_ts,
        min(lag(ts_end, 1, trace_start()) OVER (PARTITION BY upid, heap_name ORDER BY ts_end) + 1,
            ts_end)) AS ts
  FROM dumps)
SELECT id, upid, heap_name, ts, ts_end - ts AS dur, retained, allocated, delta FROM windows;
