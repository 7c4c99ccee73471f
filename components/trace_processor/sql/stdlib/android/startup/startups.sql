-- android.startup.startups: app startups and what ran during them.
-- Partial: startups are found from the "launching: <package>" slices
-- ActivityManager emits on every Android version; Perfetto's per-version
-- detection (launchingActivity#.. events on 33+, MetricsLogger on 29+)
-- and the startup type (cold/warm/hot) are not derived here (NULL).
INCLUDE PERFETTO MODULE android.process_metadata;

CREATE PERFETTO TABLE _android_startups_raw AS
SELECT row_number() OVER (ORDER BY s.ts, s.id) AS startup_id, s.ts, s.ts + s.dur AS ts_end,
  s.dur, substr(s.name, 12) AS package, NULL AS startup_type
FROM slice AS s
WHERE s.name GLOB 'launching: *' AND s.dur > 0;

CREATE PERFETTO VIEW android_startups(
  startup_id LONG, ts LONG, ts_end LONG, dur LONG, package STRING, startup_type STRING) AS
SELECT startup_id, ts, ts_end, dur, package, startup_type FROM _android_startups_raw;

-- The slices that show a process doing startup work.
CREATE PERFETTO TABLE _startup_indicator_slices AS
SELECT ts, name, track_id FROM slice
WHERE name IN ('bindApplication', 'activityStart', 'activityResume');

-- How many indicator slices `name` thread utid ran in [start_ts, end_ts).
CREATE PERFETTO FUNCTION _startup_indicator_slice_count(
  start_ts LONG, end_ts LONG, utid LONG, name STRING) RETURNS LONG AS
SELECT count(*) FROM thread_track AS t
JOIN _startup_indicator_slices AS s ON s.track_id = t.id
WHERE t.utid = $utid AND s.ts >= $start_ts AND s.ts < $end_ts AND s.name = $name;

-- The processes of each startup's package alive during it.
CREATE PERFETTO TABLE android_startup_processes(
  startup_id LONG, upid LONG, pid LONG, startup_type STRING) AS
SELECT s.startup_id, p.upid, p.pid, s.startup_type
FROM android_startups AS s
JOIN android_process_metadata AS m
  ON m.package_name = s.package OR m.process_name = s.package
  OR m.process_name GLOB s.package || ':*'
JOIN process AS p ON p.upid = m.upid
WHERE (p.start_ts IS NULL OR p.start_ts < s.ts_end)
  AND (p.end_ts IS NULL OR p.end_ts > s.ts);

CREATE PERFETTO VIEW android_startup_threads(
  startup_id LONG, ts LONG, dur LONG, upid LONG, pid LONG, utid LONG, tid LONG,
  thread_name STRING, is_main_thread BOOL) AS
SELECT s.startup_id, s.ts, s.dur, sp.upid, sp.pid, t.utid, t.tid, t.name AS thread_name,
  t.utid = (SELECT min(m.utid) FROM thread AS m WHERE m.upid = sp.upid AND m.tid = sp.pid)
    AS is_main_thread
FROM android_startups AS s
JOIN android_startup_processes AS sp ON sp.startup_id = s.startup_id
JOIN thread AS t ON t.upid = sp.upid;

CREATE PERFETTO VIEW android_thread_slices_for_all_startups(
  startup_ts LONG, startup_ts_end LONG, startup_id LONG, utid LONG, tid LONG,
  thread_name STRING, is_main_thread BOOL, arg_set_id LONG, slice_id LONG,
  slice_name STRING, slice_ts LONG, slice_dur LONG) AS
SELECT st.ts AS startup_ts, st.ts + st.dur AS startup_ts_end, st.startup_id, st.utid, st.tid,
  st.thread_name, st.is_main_thread, s.arg_set_id, s.id AS slice_id, s.name AS slice_name,
  s.ts AS slice_ts, s.dur AS slice_dur
FROM android_startup_threads AS st
JOIN thread_track AS tt ON tt.utid = st.utid
JOIN slice AS s ON s.track_id = tt.id
WHERE s.ts BETWEEN st.ts AND st.ts + st.dur;

CREATE PERFETTO FUNCTION android_slices_for_startup_and_slice_name(
  startup_id LONG, slice_name STRING)
RETURNS TABLE(slice_id LONG, slice_name STRING, slice_ts LONG, slice_dur LONG,
  thread_name STRING, tid LONG, arg_set_id LONG) AS
SELECT slice_id, slice_name, slice_ts, slice_dur, thread_name, tid, arg_set_id
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

CREATE PERFETTO VIEW android_class_loading_for_startup(
  slice_id LONG, startup_id LONG, slice_name STRING, slice_ts LONG, slice_dur LONG,
  thread_name STRING, tid LONG, arg_set_id LONG) AS
SELECT slice_id, startup_id, slice_name, slice_ts, slice_dur, thread_name, tid, arg_set_id
FROM android_thread_slices_for_all_startups
WHERE slice_name GLOB 'L*;' OR slice_name GLOB 'OpenDexFilesFromOat*';

-- The binder transactions of a startup's main thread longer than threshold.
CREATE PERFETTO FUNCTION android_binder_transaction_slices_for_startup(
  startup_id LONG, threshold DOUBLE)
RETURNS TABLE(id LONG, slice_dur LONG, thread_name STRING, process STRING, arg_set_id LONG,
  is_main_thread BOOL) AS
SELECT slice_id AS id, slice_dur, thread_name, NULL AS process, arg_set_id, is_main_thread
FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB 'binder transaction*'
  AND slice_dur > $threshold;

CREATE PERFETTO FUNCTION android_sum_dur_for_startup_and_slice(
  startup_id LONG, slice_name STRING) RETURNS LONG AS
SELECT sum(slice_dur) FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name;

CREATE PERFETTO FUNCTION android_sum_dur_on_main_thread_for_startup_and_slice(
  startup_id LONG, slice_name STRING) RETURNS LONG AS
SELECT sum(slice_dur) FROM android_thread_slices_for_all_startups
WHERE startup_id = $startup_id AND slice_name GLOB $slice_name AND is_main_thread;
