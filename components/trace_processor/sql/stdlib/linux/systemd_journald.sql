-- linux.systemd_journald: journal entries with their journal fields.
CREATE PERFETTO VIEW linux_systemd_journald_logs(
  id LONG, ts LONG, utid LONG, prio LONG, tag STRING, msg STRING, uid LONG, comm STRING,
  systemd_unit STRING, hostname STRING, transport STRING) AS
SELECT l.id, l.ts, l.utid, l.prio, l.tag, l.msg,
  CAST(extract_arg(l.arg_set_id, 'uid') AS INTEGER) AS uid,
  extract_arg(l.arg_set_id, 'comm') AS comm,
  extract_arg(l.arg_set_id, 'systemd_unit') AS systemd_unit,
  extract_arg(l.arg_set_id, 'hostname') AS hostname,
  extract_arg(l.arg_set_id, 'transport') AS transport
FROM logs AS l
WHERE l.log_source = 'systemd_journald';
