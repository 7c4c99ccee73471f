-- android.kernel_wakelocks: how long each kernel wakelock was held, per
-- sample interval of its cumulative counter.
INCLUDE PERFETTO MODULE counters.intervals;
INCLUDE PERFETTO MODULE android.suspend;

CREATE PERFETTO TABLE _kernel_wakelock_track AS
SELECT t.id, t.name, extract_arg(t.dimension_arg_set_id, 'wakelock_type') AS type
FROM track AS t WHERE t.type = 'android_kernel_wakelock';

CREATE PERFETTO TABLE _android_kernel_wakelocks_base AS
SELECT i.ts, i.ts AS original_ts, i.dur, t.name, hash(t.name) AS name_int, t.type,
  i.next_value - i.value AS held_dur
FROM counter_leading_intervals!((
  SELECT c.id, c.ts, c.track_id, c.value FROM counter AS c
  WHERE c.track_id IN (SELECT id FROM _kernel_wakelock_track))) AS i
JOIN _kernel_wakelock_track AS t ON t.id = i.track_id;

-- Each interval with the part of it the device was awake; held_ratio is
-- the held time over the awake time, clamped to [0, 1].
CREATE PERFETTO TABLE android_kernel_wakelocks(
  ts LONG, dur LONG, awake_dur LONG, name STRING, type STRING, held_dur LONG,
  held_ratio DOUBLE) AS
WITH base AS (
  SELECT b.original_ts AS ts, b.name, b.type, b.held_dur, b.dur,
    b.dur - coalesce((
      SELECT sum(min(s.ts + s.dur, b.ts + b.dur) - max(s.ts, b.ts))
      FROM android_suspend_state AS s
      WHERE s.power_state = 'suspended' AND s.ts < b.ts + b.dur AND s.ts + s.dur > b.ts), 0)
      AS awake_dur
  FROM _android_kernel_wakelocks_base AS b)
SELECT ts, dur, awake_dur, name, type, cast_int!(held_dur) AS held_dur,
  max(min(held_dur / awake_dur, 1.0), 0.0) AS held_ratio
FROM base;
