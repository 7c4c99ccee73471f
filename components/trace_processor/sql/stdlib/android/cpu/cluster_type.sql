-- android.cpu.cluster_type: little/medium/big per cpu, from the number of
-- clusters the cpus are in.
INCLUDE PERFETTO MODULE intervals.overlap;

-- (cluster_id, cluster_type, cluster_count): the type of cluster
-- cluster_id among cluster_count clusters.
CREATE PERFETTO TABLE _cores AS
SELECT column1 AS cluster_id, column2 AS cluster_type, column3 AS cluster_count
FROM (VALUES (0, 'little', 2), (1, 'big', 2),
             (0, 'little', 3), (1, 'medium', 3), (2, 'big', 3),
             (0, 'little', 4), (1, 'medium', 4), (2, 'medium', 4), (3, 'big', 4));

CREATE PERFETTO TABLE android_cpu_cluster_mapping(ucpu LONG, cpu LONG, cluster_type STRING) AS
SELECT c.ucpu, c.cpu, k.cluster_type
FROM cpu AS c
LEFT JOIN _cores AS k
  ON k.cluster_id = c.cluster_id
  AND k.cluster_count = (SELECT count(DISTINCT cluster_id) FROM cpu);

-- How many cpus of a cluster type run a (non-idle) task, over time.
CREATE PERFETTO FUNCTION _active_cpu_count_for_cluster_type(cluster_type STRING)
RETURNS TABLE(ts LONG, active_cpu_count LONG) AS
SELECT o.ts, o.value AS active_cpu_count
FROM intervals_overlap_count!((
  SELECT s.ts, s.dur FROM sched AS s
  WHERE s.ucpu IN (SELECT ucpu FROM android_cpu_cluster_mapping
                   WHERE cluster_type = $cluster_type)
    AND s.utid NOT IN (SELECT utid FROM thread WHERE is_idle)), ts, dur) AS o
ORDER BY o.ts;
