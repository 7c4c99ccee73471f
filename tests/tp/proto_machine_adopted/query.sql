-- A trace whose packets all come from one other machine: the host adopts it.
SELECT id, raw_id, label_index FROM machine;
SELECT ucpu, cpu, machine_id FROM cpu;
SELECT pid, name, machine_id FROM process ORDER BY upid;
SELECT t.cpu, t.machine_id, c.value FROM counter AS c JOIN cpu_counter_track AS t
ON c.track_id = t.id;
