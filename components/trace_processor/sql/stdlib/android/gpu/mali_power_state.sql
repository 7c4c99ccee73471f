-- android.gpu.mali_power_state: the Mali gpu's power state as intervals.
INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE android_mali_gpu_power_state(ts LONG, dur LONG, power_state LONG) AS
SELECT i.ts, i.dur, cast_int!(i.value) AS power_state
FROM counter_leading_intervals!((
  SELECT c.* FROM counter AS c JOIN counter_track AS t ON t.id = c.track_id
  WHERE t.name = 'mali_gpu_power_state')) AS i;
