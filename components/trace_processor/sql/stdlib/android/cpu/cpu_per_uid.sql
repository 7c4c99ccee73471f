-- android.cpu.cpu_per_uid: cpu time per uid and cpu cluster.
INCLUDE PERFETTO MODULE counters.intervals;

-- One row per uid/cluster track, with the app's package when the uid is an
-- app's (>= 10000, per user).
CREATE PERFETTO TABLE android_cpu_per_uid_track(
  id LONG, uid LONG, cluster LONG, total_cpu_millis LONG, package_name STRING) AS
SELECT k.id, k.uid, k.cluster, k.total_cpu_millis,
  (SELECT p.package_name FROM package_list AS p
   WHERE p.uid = k.uid % 100000 AND p.uid >= 10000 LIMIT 1) AS package_name
FROM __intrinsic_android_cpu_per_uid_track AS k;

-- The cpu ms used in each interval between samples, and the share of a cpu.
CREATE PERFETTO VIEW android_cpu_per_uid_counter(
  id LONG, ts LONG, dur LONG, track_id LONG, diff_ms LONG, cpu_ratio DOUBLE) AS
SELECT i.id, i.ts, i.dur, i.track_id, i.next_value - i.value AS diff_ms,
  (i.next_value - i.value) * 1e6 / i.dur AS cpu_ratio
FROM counter_leading_intervals!((
  SELECT c.id, c.ts, c.track_id, c.value FROM counter AS c
  WHERE c.track_id IN (SELECT id FROM android_cpu_per_uid_track))) AS i
WHERE i.next_value IS NOT NULL;
