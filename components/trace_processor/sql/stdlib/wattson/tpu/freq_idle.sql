-- wattson.tpu.freq_idle: TPU frequency and request counts over the trace.

-- The DVFS track's frequency slices (name: the frequency; cluster 0, 1 or
-- 2 = both), with a 0 frequency before the first and after the last. On a
-- trace without them the edges are one row with NULL dur each.
CREATE PERFETTO TABLE _tpu_freq AS
WITH f AS (
  SELECT s.ts, s.dur, CAST(s.name AS INTEGER) AS freq,
    CASE WHEN s.name GLOB '*Cluster Both*' THEN 2 WHEN s.name GLOB '*Cluster 0*' THEN 0
         WHEN s.name GLOB '*Cluster 1*' THEN 1 ELSE 2 END AS cluster
  FROM slice AS s JOIN track AS t ON t.id = s.track_id WHERE t.name = 'DVFS')
SELECT trace_start() AS ts, min(ts) - trace_start() AS dur, 0 AS freq, 0 AS cluster FROM f
UNION ALL
SELECT ts, dur, freq, cluster FROM f
UNION ALL
SELECT max(ts) + dur, trace_end() - max(ts) - dur, 0, 0 FROM f;

-- Outstanding TPU requests (0..16) over time, from the 'TPU Requests' slices.
CREATE PERFETTO TABLE _tpu_requests_count AS
WITH events AS (
  SELECT trace_start() AS ts, 0 AS delta
  UNION ALL
  SELECT s.ts, 1 FROM slice AS s JOIN track AS t ON t.id = s.track_id
  WHERE t.name = 'TPU Requests'
  UNION ALL
  SELECT s.ts + s.dur, -1 FROM slice AS s JOIN track AS t ON t.id = s.track_id
  WHERE t.name = 'TPU Requests'),
counts AS (SELECT ts, sum(delta) OVER (ORDER BY ts) AS n FROM events),
per_ts AS (SELECT ts, max(n) AS n FROM counts GROUP BY ts),
spans AS (
  SELECT ts, lead(ts, 1, trace_end()) OVER (ORDER BY ts) - ts AS dur,
    max(0, min(16, n)) AS requests
  FROM per_ts)
SELECT ts, dur, requests FROM spans WHERE dur > 0;
