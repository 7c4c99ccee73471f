-- android.gpu.frequency: the gpufreq counter of each gpu as intervals.
INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO TABLE android_gpu_frequency(
  ts LONG, dur LONG, gpu_id LONG, gpu_freq LONG, prev_gpu_freq LONG, next_gpu_freq LONG) AS
SELECT i.ts, i.dur, t.gpu_id, cast_int!(i.value) AS gpu_freq,
  cast_int!(i.value - i.delta_value) AS prev_gpu_freq,
  cast_int!(i.next_value) AS next_gpu_freq
FROM counter_leading_intervals!((
  SELECT c.* FROM counter AS c JOIN gpu_counter_track AS g ON g.id = c.track_id
  WHERE g.name = 'gpufreq' AND g.gpu_id IS NOT NULL)) AS i
JOIN gpu_counter_track AS t ON t.id = i.track_id;
