-- wattson.gpu.freq_idle: gpu frequency and power state over the trace.
INCLUDE PERFETTO MODULE android.gpu.frequency;
INCLUDE PERFETTO MODULE android.gpu.mali_power_state;
INCLUDE PERFETTO MODULE intervals.intersect;
INCLUDE PERFETTO MODULE wattson.device_infos;
INCLUDE PERFETTO MODULE wattson.utils;

-- PowerVR power state slices: OFF 0, PG 1, ON 2 (other -1); an open slice
-- lasts to the end of the trace.
CREATE PERFETTO TABLE _pvr_gpu_power_state(ts LONG, dur LONG, power_state LONG) AS
SELECT s.ts, iif(s.dur = -1, trace_end() - s.ts, s.dur) AS dur,
  CASE s.name WHEN 'OFF' THEN 0 WHEN 'PG' THEN 1 WHEN 'ON' THEN 2 ELSE -1 END AS power_state
FROM slice AS s JOIN track AS t ON t.id = s.track_id
WHERE t.name = 'powervr_gpu_power_state';

CREATE PERFETTO VIEW _gpu_power_state AS
SELECT ts, dur, power_state FROM android_mali_gpu_power_state
UNION ALL
SELECT ts, dur, power_state FROM _pvr_gpu_power_state;

-- The gpu frequency from the start of the trace (0 before the first sample).
CREATE PERFETTO TABLE _gapless_gpu_freq AS
SELECT trace_start() AS ts, min(ts) - trace_start() AS dur, NULL AS gpu_freq
FROM android_gpu_frequency
UNION ALL
SELECT ts, dur, gpu_freq FROM android_gpu_frequency;

-- The power state from the start of the trace.
CREATE PERFETTO TABLE _gapless_gpu_power_state AS
SELECT trace_start() AS ts, min(ts) - trace_start() AS dur, NULL AS power_state
FROM _gpu_power_state
UNION ALL
SELECT ts, dur, power_state FROM _gpu_power_state;

-- Frequency and power state together, over their common intervals.
CREATE PERFETTO TABLE _gpu_freq_idle AS
SELECT ii.ts, ii.dur, f.gpu_freq AS freq, p.power_state AS idle
FROM _interval_intersect!((
    (SELECT row_number() OVER () AS id, ts, dur FROM _gapless_gpu_freq WHERE dur > 0),
    (SELECT row_number() OVER () AS id, ts, dur FROM _gapless_gpu_power_state WHERE dur > 0)),
  ()) AS ii
JOIN (SELECT row_number() OVER () AS id, gpu_freq FROM _gapless_gpu_freq WHERE dur > 0) AS f
  ON f.id = ii.id_0
JOIN (SELECT row_number() OVER () AS id, power_state FROM _gapless_gpu_power_state
      WHERE dur > 0) AS p
  ON p.id = ii.id_1;
