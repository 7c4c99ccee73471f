-- android.suspend: when the device was suspended, and durations without
-- the suspended time.

-- The trace cut into suspended and awake intervals per machine. Suspended
-- intervals are the slices of the 'Suspend/Resume Minimal' track or,
-- without one on a machine, the finished syscore_resume(0) /
-- timekeeping_freeze(0) slices of 'Suspend/Resume Latency'; a slice that
-- overlaps the next one is dropped; the gaps between are awake.
CREATE PERFETTO TABLE android_suspend_state(
  ts LONG, dur LONG, power_state STRING, machine_id LONG) AS
WITH minimal AS (
  SELECT s.ts, s.dur, coalesce(t.machine_id, 0) AS machine_id FROM slice AS s
  JOIN track AS t ON t.id = s.track_id WHERE t.name = 'Suspend/Resume Minimal'),
latency AS (
  SELECT s.ts, s.dur, coalesce(t.machine_id, 0) AS machine_id FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  WHERE t.name = 'Suspend/Resume Latency'
    AND s.name IN ('syscore_resume(0)', 'timekeeping_freeze(0)') AND s.dur != -1
    AND coalesce(t.machine_id, 0) NOT IN (SELECT machine_id FROM minimal)),
raw AS (SELECT * FROM minimal UNION ALL SELECT * FROM latency),
suspended AS (
  SELECT ts, dur, machine_id FROM (
    SELECT ts, dur, machine_id,
      coalesce(lead(ts) OVER (PARTITION BY machine_id ORDER BY ts), trace_end()) - ts - dur
        AS gap
    FROM raw) WHERE gap >= 0),
machines AS (SELECT 0 AS machine_id UNION SELECT machine_id FROM suspended),
edges AS (
  SELECT m.machine_id, s.ts, s.dur FROM machines AS m
  LEFT JOIN suspended AS s ON s.machine_id = m.machine_id),
awake AS (
  SELECT machine_id, prev_end AS ts, coalesce(ts, trace_end()) - prev_end AS dur FROM (
    SELECT machine_id, ts,
      coalesce(lag(ts + dur) OVER (PARTITION BY machine_id ORDER BY ts), trace_start())
        AS prev_end
    FROM edges WHERE ts IS NOT NULL
    UNION ALL
    SELECT machine_id, NULL,
      coalesce((SELECT max(s.ts + s.dur) FROM suspended AS s WHERE s.machine_id = e.machine_id),
               trace_start())
    FROM machines AS e)
  WHERE coalesce(ts, trace_end()) > prev_end)
SELECT ts, dur, power_state, machine_id FROM (
  SELECT ts, dur, 'suspended' AS power_state, machine_id FROM suspended
  UNION ALL
  SELECT ts, dur, 'awake', machine_id FROM awake)
ORDER BY ts;

-- dur of the interval starting at ts, less the time suspended within it.
CREATE PERFETTO FUNCTION _extract_duration_without_suspend(ts LONG, dur LONG) RETURNS LONG AS
SELECT $dur - coalesce((
  SELECT sum(min(s.ts + s.dur, $ts + $dur) - max(s.ts, $ts)) FROM android_suspend_state AS s
  WHERE s.power_state = 'suspended' AND s.ts < $ts + $dur AND s.ts + s.dur > $ts), 0);
