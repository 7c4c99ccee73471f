-- viz.threads: threads with a flag for kernel threads (on Linux machines).
INCLUDE PERFETTO MODULE linux.threads;
INCLUDE PERFETTO MODULE viz.summary.trace;

CREATE PERFETTO TABLE _kernel_threads(utid LONG) AS
SELECT k.utid FROM linux_kernel_threads AS k WHERE _is_linux_machine(k.machine_id) = 1;

CREATE PERFETTO TABLE _threads_with_kernel_flag(
  id LONG, utid LONG, upid LONG, tid LONG, name STRING, is_main_thread BOOL,
  is_idle BOOL, machine_id LONG, is_kernel_thread BOOL) AS
SELECT t.id, t.utid, t.upid, t.tid, t.name, t.is_main_thread, t.is_idle, t.machine_id,
  t.utid IN (SELECT utid FROM _kernel_threads) AS is_kernel_thread
FROM thread AS t;
