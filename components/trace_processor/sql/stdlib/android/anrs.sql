-- android.anrs: the ANRs system_server reported, with their subject,
-- type and timeouts. system_server marks an ANR with a process counter
-- track named "ErrorId:<process> <pid>#<error id>" and its subject with
-- "Subject(for ErrorId <error id>): <subject>"; the ANR timer that fired
-- leaves a slice "expired(<timer id>,<pid>,<uid>,<type>,<timeout ms>)".

-- The ANR type named by a subject line (or, failing that, by the process).
CREATE PERFETTO FUNCTION _extract_anr_type(subject STRING, process_name STRING)
RETURNS STRING AS
SELECT CASE
  WHEN $subject IS NULL THEN NULL
  WHEN $subject GLOB 'Broadcast of*' THEN 'BROADCAST_OF_INTENT'
  WHEN $subject GLOB 'Input dispatching timed out*does not have a focused window*'
    OR $subject GLOB 'Input dispatching timed out*Waiting because no window has focus but there is a focused application*'
    THEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW'
  WHEN $subject GLOB 'Input dispatching timed out*' THEN 'INPUT_DISPATCHING_TIMEOUT'
  WHEN $subject GLOB 'Context.startForegroundService() did not then call Service.startForeground()*'
    THEN 'START_FOREGROUND_SERVICE'
  WHEN $subject GLOB 'executing service*' THEN 'EXECUTING_SERVICE'
  WHEN $subject GLOB 'ContentProvider not responding*' THEN 'CONTENT_PROVIDER_NOT_RESPONDING'
  WHEN $subject GLOB 'App requested: Buffer processing hung up due to stuck fence. Indicates GPU hang'
    THEN 'GPU_HANG'
  WHEN $subject GLOB 'No response to onStartJob*' THEN 'JOB_SERVICE_START'
  WHEN $subject GLOB 'No response to onStopJob*' THEN 'JOB_SERVICE_STOP'
  WHEN $subject GLOB 'Timed out while trying to bind*' THEN 'JOB_SERVICE_BIND'
  WHEN $subject GLOB 'Process ProcessRecord{*} failed to complete startup' THEN 'BIND_APPLICATION'
  WHEN $subject GLOB 'A foreground service of FOREGROUND_SERVICE_TYPE_SHORT_SERVICE did not stop within a timeout*'
    THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
  WHEN $subject GLOB 'A foreground service of type*' THEN 'FOREGROUND_SERVICE_TIMEOUT'
  WHEN $subject GLOB 'App requested: *' THEN 'APP_TRIGGERED'
  WHEN $subject GLOB 'required notification not provided*' THEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED'
  WHEN $process_name = 'system_server' THEN 'SYSTEM_SERVER_WATCHDOG_TIMEOUT'
  ELSE 'UNKNOWN_ANR_TYPE' END;

-- The intent flags (flg=0x...) of a broadcast subject.
CREATE PERFETTO FUNCTION _get_broadcast_flag(subject STRING) RETURNS LONG AS
SELECT iif($subject IS NULL OR NOT $subject GLOB 'Broadcast of Intent *flg=*', NULL,
  unhex(str_split(substr($subject, instr($subject, ' flg=') + 5), ' ', 0)));

-- The platform's default timeout (ms) of an ANR type; a broadcast is
-- foreground (10 s) when its FLAG_RECEIVER_FOREGROUND bit is set or unknown.
CREATE PERFETTO FUNCTION _default_anr_dur(anr_type STRING, subject STRING) RETURNS LONG AS
SELECT CASE $anr_type
  WHEN 'BROADCAST_OF_INTENT' THEN
    iif(coalesce(_get_broadcast_flag($subject) & 268435456, 1) = 0, 60000, 10000)
  WHEN 'INPUT_DISPATCHING_TIMEOUT' THEN 5000
  WHEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW' THEN 5000
  WHEN 'START_FOREGROUND_SERVICE' THEN 30000
  WHEN 'EXECUTING_SERVICE' THEN 20000
  WHEN 'JOB_SERVICE_START' THEN 8000
  WHEN 'JOB_SERVICE_STOP' THEN 8000
  WHEN 'JOB_SERVICE_BIND' THEN 8000
  WHEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED' THEN 8000
  WHEN 'BIND_APPLICATION' THEN 15000
  WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT' THEN 180000
  WHEN 'FOREGROUND_SERVICE_TIMEOUT' THEN 30000
  ELSE NULL END;

-- "... Blocked in ... for <n>s ...": n seconds in ms.
CREATE PERFETTO FUNCTION _extract_anr_duration_from_subject(subject STRING) RETURNS LONG AS
SELECT iif($subject GLOB '*Blocked in* for *s*',
  CAST(regexp_extract($subject, ' for ([0-9]+)s') * 1000 AS INTEGER), NULL);

-- The platform's timer type names in our ANR type names.
CREATE PERFETTO FUNCTION _platform_to_standard_anr_type(platform STRING) RETURNS STRING AS
SELECT CASE $platform
  WHEN 'BROADCAST_TIMEOUT' THEN 'BROADCAST_OF_INTENT'
  WHEN 'SERVICE_TIMEOUT' THEN 'EXECUTING_SERVICE'
  WHEN 'SHORT_FGS_TIMEOUT' THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
  WHEN 'SERVICE_FOREGROUND_TIMEOUT' THEN 'FOREGROUND_SERVICE_TIMEOUT'
  WHEN 'JobScheduler' THEN NULL
  ELSE $platform END;

-- The intent of a broadcast ANR: its act=, else the text after
-- "Broadcast of " up to "/u".
CREATE PERFETTO FUNCTION _get_intent(anr_type STRING, subject STRING) RETURNS STRING AS
SELECT CASE
  WHEN $anr_type = 'BROADCAST_OF_INTENT' AND $subject GLOB 'Broadcast of Intent *act=*'
    THEN str_split(substr($subject, instr($subject, 'act=') + 4), ' ', 0)
  WHEN $anr_type = 'BROADCAST_OF_INTENT' AND $subject GLOB 'Broadcast of */u*'
    THEN str_split(substr($subject, instr($subject, 'Broadcast of ') + 13), '/u', 0)
  ELSE NULL END;

-- The component an ANR names, by type: a broadcast's cmp=; the word after
-- the first word in parentheses of an input timeout; the word after the
-- user (" u<n> ") of a foreground service start; the service of
-- "executing service <name>,"; the ComponentInfo{...} of a foreground
-- service timeout; the request of an app-triggered ANR.
CREATE PERFETTO FUNCTION _get_component(anr_type STRING, subject STRING) RETURNS STRING AS
SELECT CASE $anr_type
  WHEN 'BROADCAST_OF_INTENT' THEN str_split(substr($subject, instr($subject, ' cmp=') + 5), ' ', 0)
  WHEN 'INPUT_DISPATCHING_TIMEOUT' THEN str_split(substr($subject, instr($subject, '(') + 1), ' ', 1)
  WHEN 'START_FOREGROUND_SERVICE' THEN str_split(
    substr($subject, instr($subject, ' u') + 1
                     + instr(substr($subject, instr($subject, ' u') + 1), ' ')), ' ', 0)
  WHEN 'EXECUTING_SERVICE' THEN
    str_split(substr($subject, instr($subject, 'executing service ') + 18), ',', 0)
  WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT' THEN
    str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
  WHEN 'FOREGROUND_SERVICE_TIMEOUT' THEN
    str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
  WHEN 'APP_TRIGGERED' THEN substr($subject, instr($subject, 'App requested: ') + 15)
  ELSE NULL END;

CREATE PERFETTO TABLE android_anrs(
  process_name STRING, pid LONG, upid LONG, error_id STRING, ts LONG, anr_type STRING,
  subject STRING, intent STRING, component STRING, timer_delay LONG, anr_dur_ms LONG,
  default_anr_dur_ms LONG) AS
WITH marks AS (
  SELECT substr(str_split(t.name, '#', 0), 9) AS who, str_split(t.name, '#', 1) AS error_id,
    c.ts
  FROM process_counter_track AS t
  JOIN process AS p ON p.upid = t.upid
  JOIN counter AS c ON c.track_id = t.id
  WHERE t.name GLOB 'ErrorId:*' AND p.name = 'system_server'),
anr AS (
  SELECT str_split(who, ' ', 0) AS process_name, cast_int!(str_split(who, ' ', 1)) AS pid,
    error_id, ts FROM marks),
subjects AS (
  SELECT substr(str_split(t.name, ')', 0), 21) AS error_id,
    substr(t.name, length(str_split(t.name, ')', 0)) + 3) AS subject
  FROM process_counter_track AS t JOIN process AS p ON p.upid = t.upid
  WHERE t.name GLOB 'Subject(for ErrorId *' AND p.name = 'system_server'),
timers AS (
  SELECT ts AS timer_ts, cast_int!(str_split(params, ',', 0)) AS timer_id,
    cast_int!(str_split(params, ',', 1)) AS pid, cast_int!(str_split(params, ',', 2)) AS uid,
    str_split(params, ',', 3) AS anr_type, cast_int!(str_split(params, ',', 4)) AS anr_dur_ms
  FROM (SELECT ts, trim(substr(name, 9), ')') AS params FROM slice
        WHERE name GLOB 'expired(*,*,*,*,*)')),
-- For each ANR the latest timer of its pid that fired at or before it.
best_timer AS (
  SELECT * FROM (
    SELECT a.error_id, t.timer_ts, t.anr_type, t.anr_dur_ms,
      row_number() OVER (PARTITION BY a.error_id
                         ORDER BY t.timer_ts IS NULL, a.ts - t.timer_ts) AS rn
    FROM anr AS a LEFT JOIN timers AS t ON t.pid = a.pid
    WHERE t.pid IS NULL OR a.ts >= t.timer_ts)
  WHERE rn = 1),
joined AS (
  SELECT a.process_name, a.pid, p.upid, a.error_id, a.ts, s.subject,
    a.ts - b.timer_ts AS timer_delay,
    coalesce(_platform_to_standard_anr_type(b.anr_type),
             _extract_anr_type(s.subject, a.process_name)) AS anr_type,
    coalesce(b.anr_dur_ms, _extract_anr_duration_from_subject(s.subject)) AS anr_dur_ms
  FROM anr AS a
  LEFT JOIN subjects AS s ON s.error_id = a.error_id
  LEFT JOIN best_timer AS b ON b.error_id = a.error_id
  LEFT JOIN process AS p ON p.pid = a.pid)
SELECT process_name, pid, upid, error_id, ts, anr_type, subject,
  _get_intent(anr_type, subject) AS intent, _get_component(anr_type, subject) AS component,
  timer_delay, anr_dur_ms, _default_anr_dur(anr_type, subject) AS default_anr_dur_ms
FROM joined;
