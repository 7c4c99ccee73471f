-- linux.threads: kernel threads, i.e. kthreadd (pid 2) and its children.
CREATE PERFETTO TABLE linux_kernel_threads(
  upid LONG, utid LONG, pid LONG, tid LONG, process_name STRING, thread_name STRING,
  machine_id LONG) AS
WITH kthreadd AS (SELECT upid FROM process WHERE pid = 2),
  kernel_process AS (
    SELECT p.upid, p.pid, p.name, p.machine_id FROM process AS p
    WHERE p.upid IN (SELECT upid FROM kthreadd)
      OR p.parent_upid IN (SELECT upid FROM kthreadd))
SELECT k.upid, t.utid, k.pid, t.tid, k.name AS process_name, t.name AS thread_name,
  k.machine_id
FROM kernel_process AS k JOIN thread AS t ON t.upid = k.upid;
