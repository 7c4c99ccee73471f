-- viz.summary.trace: facts about the traced machines.

-- 1 when the machine's metadata says it runs Linux, else 0 (our metadata
-- rows of the host machine have machine_id NULL: that is machine 0).
CREATE PERFETTO FUNCTION _is_linux_machine(machine_id LONG) RETURNS LONG AS
SELECT count(*) = 1 FROM metadata AS m
WHERE m.name = 'system_name' AND m.str_value = 'Linux'
  AND coalesce(m.machine_id, 0) = coalesce($machine_id, 0);
