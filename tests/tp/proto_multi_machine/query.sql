-- The machine table, per-machine cpus, processes, threads, tracks and
-- SystemInfo metadata of a trace with packets of three machines.
SELECT id, raw_id, name, sysname, release, arch, num_cpus, android_sdk_version, label_index
FROM machine ORDER BY id;
SELECT ucpu, cpu, cluster_id, processor, machine_id, capacity FROM cpu ORDER BY ucpu;
SELECT freq, cpu.cpu, cpu.machine_id FROM cpu_available_frequencies JOIN cpu USING (ucpu)
ORDER BY freq;
SELECT upid, pid, name, machine_id FROM process ORDER BY upid;
SELECT utid, tid, upid, name, is_idle, machine_id FROM thread ORDER BY utid;
SELECT t.cpu, t.machine_id, c.ts, c.value FROM counter AS c
JOIN cpu_counter_track AS t ON c.track_id = t.id ORDER BY c.ts;
SELECT name, str_value, machine_id, trace_id FROM metadata
WHERE name IN ('system_name', 'system_release', 'trace_type') ORDER BY name, machine_id;
INCLUDE PERFETTO MODULE linux.irqs;
SELECT irq_id, name, machine_id FROM linux_interrupt_mapping ORDER BY id;
