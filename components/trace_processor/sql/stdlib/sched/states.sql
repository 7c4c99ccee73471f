-- sched.states: thread states in words.

-- The long name of a thread state letter ('S' -> 'Sleeping'); other text
-- is returned as it is.
CREATE PERFETTO FUNCTION sched_state_to_human_readable_string(short_name STRING)
RETURNS STRING AS
SELECT CASE $short_name
  WHEN 'Running' THEN 'Running' WHEN 'R' THEN 'Runnable' WHEN 'R+' THEN 'Runnable (Preempted)'
  WHEN 'S' THEN 'Sleeping' WHEN 'D' THEN 'Uninterruptible Sleep' WHEN 'T' THEN 'Stopped'
  WHEN 't' THEN 'Traced' WHEN 'X' THEN 'Exit (Dead)' WHEN 'Z' THEN 'Exit (Zombie)'
  WHEN 'x' THEN 'Task Dead' WHEN 'I' THEN 'Idle' WHEN 'K' THEN 'Wakekill'
  WHEN 'W' THEN 'Waking' WHEN 'P' THEN 'Parked' WHEN 'N' THEN 'No Load'
  WHEN 'Stand By' THEN 'Stand By' WHEN 'Initialized' THEN 'Initialized'
  WHEN 'Waiting' THEN 'Waiting' WHEN 'Transition' THEN 'Transition'
  WHEN 'Deferred Ready' THEN 'Deferred Ready'
  ELSE $short_name END;

-- The same, with ' (IO)' or ' (non-IO)' after it when io_wait is known.
CREATE PERFETTO FUNCTION sched_state_io_to_human_readable_string(
  sched_state STRING, io_wait BOOL) RETURNS STRING AS
SELECT printf('%s%s', sched_state_to_human_readable_string($sched_state),
  CASE $io_wait WHEN 1 THEN ' (IO)' WHEN 0 THEN ' (non-IO)' ELSE '' END);
