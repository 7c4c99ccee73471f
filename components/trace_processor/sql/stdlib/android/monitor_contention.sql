-- android.monitor_contention: ART's "monitor contention with owner ..."
-- slices, parsed. The slice name reads
--   monitor contention with owner <thread> (<tid>) at <method>(<src>)
--   waiters=<n> blocking from <method>(<src>)
-- Partial: the binder reply of the blocking thread (binder_reply_*) and the
-- contention graph (android_monitor_contention_graph) are not computed.
INCLUDE PERFETTO MODULE android.suspend;

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_thread(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split($slice_name, 'with owner ', 1), ' (', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_tid(
  slice_name STRING) RETURNS LONG AS
SELECT cast_int!(str_split(str_split($slice_name, ' (', 1), ')', 0));

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_method(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split($slice_name, ') at ', 1), '(', 0) || '('
  || str_split(str_split($slice_name, ') at ', 1), '(', 1);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocking_method(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split(
  android_extract_android_monitor_contention_blocking_method($slice_name), ' ', 1), '(', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_method(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split($slice_name, 'blocking from ', 1), '(', 0) || '('
  || str_split(str_split($slice_name, 'blocking from ', 1), '(', 1);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_short_blocked_method(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split(
  android_extract_android_monitor_contention_blocked_method($slice_name), ' ', 1), '(', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_waiter_count(
  slice_name STRING) RETURNS LONG AS
SELECT cast_int!(str_split(str_split($slice_name, 'waiters=', 1), ' ', 0));

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocking_src(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split($slice_name, ')(', 1), ')', 0);

CREATE PERFETTO FUNCTION android_extract_android_monitor_contention_blocked_src(
  slice_name STRING) RETURNS STRING AS
SELECT str_split(str_split($slice_name, ')(', 2), ')', 0);

CREATE PERFETTO TABLE _valid_android_monitor_contention AS
SELECT s.id FROM slice AS s
WHERE s.name GLOB 'monitor contention with owner*' AND s.dur != -1
  AND s.name NOT GLOB '*An unknown monitor*';

CREATE PERFETTO TABLE android_monitor_contention(
  blocking_method STRING, blocked_method STRING, short_blocking_method STRING,
  short_blocked_method STRING, blocking_src STRING, blocked_src STRING, waiter_count LONG,
  blocked_utid LONG, blocked_thread_name STRING, blocking_utid LONG,
  blocking_thread_name STRING, blocking_tid LONG, upid LONG, process_name STRING, id LONG,
  ts LONG, dur LONG, monotonic_dur LONG, track_id LONG, is_blocked_thread_main LONG,
  blocked_thread_tid LONG, is_blocking_thread_main LONG, blocking_thread_tid LONG,
  binder_reply_id LONG, binder_reply_ts LONG, binder_reply_tid LONG, pid LONG,
  lock_name STRING) AS
SELECT
  android_extract_android_monitor_contention_blocking_method(s.name) AS blocking_method,
  android_extract_android_monitor_contention_blocked_method(s.name) AS blocked_method,
  android_extract_android_monitor_contention_short_blocking_method(s.name)
    AS short_blocking_method,
  android_extract_android_monitor_contention_short_blocked_method(s.name)
    AS short_blocked_method,
  android_extract_android_monitor_contention_blocking_src(s.name) AS blocking_src,
  android_extract_android_monitor_contention_blocked_src(s.name) AS blocked_src,
  android_extract_android_monitor_contention_waiter_count(s.name) AS waiter_count,
  bt.utid AS blocked_utid, bt.name AS blocked_thread_name,
  ot.utid AS blocking_utid,
  android_extract_android_monitor_contention_blocking_thread(s.name) AS blocking_thread_name,
  android_extract_android_monitor_contention_blocking_tid(s.name) AS blocking_tid,
  p.upid, p.name AS process_name, s.id, s.ts, s.dur,
  _extract_duration_without_suspend(s.ts, s.dur) AS monotonic_dur, s.track_id,
  bt.is_main_thread AS is_blocked_thread_main, bt.tid AS blocked_thread_tid,
  ot.is_main_thread AS is_blocking_thread_main, ot.tid AS blocking_thread_tid,
  NULL AS binder_reply_id, NULL AS binder_reply_ts, NULL AS binder_reply_tid, p.pid,
  str_split(str_split(s.name, 'monitor contention with owner ', 0), ' ', 0) AS lock_name
FROM slice AS s
JOIN _valid_android_monitor_contention AS v ON v.id = s.id
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS bt ON bt.utid = tt.utid
LEFT JOIN process AS p ON p.upid = bt.upid
LEFT JOIN thread AS ot
  ON ot.upid = bt.upid
  AND ot.tid = android_extract_android_monitor_contention_blocking_tid(s.name);

-- Each contention with the contention its blocking thread was itself
-- waiting in at that time (parent_id) and the one it caused (child_id).
CREATE PERFETTO TABLE android_monitor_contention_chain AS
WITH links AS (
  SELECT c.id AS child_id, p.id AS parent_id FROM android_monitor_contention AS c
  JOIN android_monitor_contention AS p
    ON p.blocked_utid = c.blocking_utid AND p.ts <= c.ts AND p.ts + p.dur >= c.ts)
SELECT (SELECT min(l.parent_id) FROM links AS l WHERE l.child_id = m.id) AS parent_id,
  m.blocking_method, m.blocked_method, m.short_blocking_method, m.short_blocked_method,
  m.blocking_src, m.blocked_src, m.waiter_count, m.blocked_utid, m.blocked_thread_name,
  m.blocking_utid, m.blocking_thread_name, m.blocking_tid, m.upid, m.process_name, m.id,
  m.ts, m.dur, m.monotonic_dur, m.track_id, m.is_blocked_thread_main, m.blocked_thread_tid,
  m.is_blocking_thread_main, m.blocking_thread_tid, m.binder_reply_id, m.binder_reply_ts,
  m.binder_reply_tid, m.pid,
  (SELECT min(l.child_id) FROM links AS l WHERE l.parent_id = m.id) AS child_id,
  m.lock_name
FROM android_monitor_contention AS m;

-- The blocking thread's states during each contention that heads a chain.
CREATE PERFETTO TABLE android_monitor_contention_chain_thread_state(
  id LONG, ts LONG, dur LONG, blocking_utid LONG, blocked_function STRING, state STRING) AS
SELECT c.id, max(t.ts, c.ts) AS ts,
  min(t.ts + t.dur, c.ts + c.dur) - max(t.ts, c.ts) AS dur, c.blocking_utid,
  t.blocked_function, t.state
FROM android_monitor_contention_chain AS c
JOIN thread_state AS t
  ON t.utid = c.blocking_utid AND t.dur >= 0 AND t.ts < c.ts + c.dur AND t.ts + t.dur > c.ts
WHERE c.parent_id IS NULL;

CREATE PERFETTO VIEW android_monitor_contention_chain_thread_state_by_txn(
  id LONG, thread_state STRING, thread_state_dur LONG, thread_state_count LONG) AS
SELECT id, state AS thread_state, sum(dur) AS thread_state_dur, count(*) AS thread_state_count
FROM android_monitor_contention_chain_thread_state GROUP BY id, state;

CREATE PERFETTO VIEW android_monitor_contention_chain_blocked_functions_by_txn(
  id LONG, blocked_function STRING, blocked_function_dur LONG,
  blocked_function_count LONG) AS
SELECT id, blocked_function, sum(dur) AS blocked_function_dur,
  count(*) AS blocked_function_count
FROM android_monitor_contention_chain_thread_state
WHERE blocked_function IS NOT NULL
GROUP BY id, blocked_function;
