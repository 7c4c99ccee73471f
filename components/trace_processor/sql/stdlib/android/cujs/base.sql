-- android.cujs.base: the jank CUJs (critical user journeys) of system UI and
-- Google apps: async process slices named "J<NAME>", with the markers
-- "<slice>#FT#begin/end/cancel/layerId#..", "..#UIThread" inside them.
-- Partial: the per-frame tables of the module (_android_jank_cuj_do_frames
-- & co.) are not provided.

-- A CUJ slice: named J<...> in a system UI or Google app process.
CREATE PERFETTO MACRO _is_jank_slice(slice TableOrSubquery, process TableOrSubquery)
RETURNS Expr AS
$slice.name GLOB 'J<*>'
AND ($process.name GLOB 'com.google.android*' OR $process.name GLOB 'com.android.*');

-- "J<NAME>" -> "NAME".
CREATE PERFETTO FUNCTION _extract_cuj_name_from_slice(cuj_slice_name STRING) RETURNS STRING AS
SELECT substr($cuj_slice_name, 3, length($cuj_slice_name) - 3);

CREATE PERFETTO TABLE _jank_cujs_slices AS
SELECT row_number() OVER (ORDER BY s.ts, s.id) AS cuj_id, p.upid, p.name AS process_name,
  s.id AS slice_id, s.name AS cuj_slice_name, s.ts, s.dur, s.ts + s.dur AS ts_end
FROM slice AS s
JOIN process_track AS pt ON pt.id = s.track_id
JOIN process AS p ON p.upid = pt.upid
WHERE _is_jank_slice!(s, p) AND s.dur > 0;

-- The markers inside each CUJ, classified.
CREATE PERFETTO TABLE _cuj_state_markers AS
SELECT c.cuj_id, c.upid,
  CASE WHEN m.name GLOB '*FT#begin*' THEN 'begin'
       WHEN m.name GLOB '*FT#deferMonitoring*' THEN 'deferMonitoring'
       WHEN m.name GLOB '*FT#end*' THEN 'end'
       WHEN m.name GLOB '*FT#cancel*' THEN 'cancel'
       WHEN m.name GLOB '*FT#layerId*' THEN 'layerId'
       WHEN m.name GLOB '*#UIThread' THEN 'UIThread'
       ELSE 'other' END AS marker_type,
  m.name AS marker_name, tt.utid
FROM _jank_cujs_slices AS c
JOIN slice AS m ON m.ts >= c.ts AND m.ts < c.ts_end
LEFT JOIN track AS mt ON mt.id = m.track_id
LEFT JOIN thread_track AS tt ON tt.id = m.track_id
WHERE m.name GLOB c.cuj_slice_name || '#FT#*'
  OR (mt.name = c.cuj_slice_name AND m.name GLOB 'FT#*')
  OR m.name = c.cuj_slice_name || '#UIThread';

-- Per CUJ: its layer, first and last vsync, and UI thread from the markers.
CREATE PERFETTO TABLE _cuj_instant_events AS
SELECT c.cuj_id, c.upid,
  max(iif(m.marker_name GLOB '*layerId#*',
          CAST(str_split(m.marker_name, 'layerId#', 1) AS INTEGER), NULL)) AS layer_id,
  max(iif(m.marker_name GLOB '*beginVsync#*',
          CAST(str_split(m.marker_name, 'beginVsync#', 1) AS INTEGER), NULL)) AS begin_vsync,
  max(iif(m.marker_name GLOB '*endVsync#*',
          CAST(str_split(m.marker_name, 'endVsync#', 1) AS INTEGER), NULL)) AS end_vsync,
  max(iif(m.marker_type = 'UIThread', m.utid, NULL)) AS ui_thread
FROM _jank_cujs_slices AS c LEFT JOIN _cuj_state_markers AS m ON m.cuj_id = c.cuj_id
GROUP BY c.cuj_id;

-- The CUJs that were not canceled (or, without a state, last over 4 ms).
CREATE PERFETTO TABLE android_jank_cuj(
  cuj_id LONG, upid LONG, process_name STRING, slice_id LONG, cuj_slice_name STRING,
  ts LONG, dur LONG, ts_end LONG, cuj_name STRING, state STRING, ui_thread LONG,
  layer_id LONG, begin_vsync LONG, end_vsync LONG) AS
SELECT * FROM (
  SELECT c.cuj_id, c.upid, c.process_name, c.slice_id, c.cuj_slice_name, c.ts, c.dur,
    c.ts_end, _extract_cuj_name_from_slice(c.cuj_slice_name) AS cuj_name,
    CASE WHEN EXISTS (SELECT 1 FROM _cuj_state_markers AS m
                      WHERE m.cuj_id = c.cuj_id AND m.marker_type = 'cancel') THEN 'canceled'
         WHEN EXISTS (SELECT 1 FROM _cuj_state_markers AS m
                      WHERE m.cuj_id = c.cuj_id AND m.marker_type = 'end') THEN 'completed'
         ELSE NULL END AS state,
    e.ui_thread, e.layer_id, e.begin_vsync, e.end_vsync
  FROM _jank_cujs_slices AS c JOIN _cuj_instant_events AS e ON e.cuj_id = c.cuj_id)
WHERE state != 'canceled' OR (state IS NULL AND dur > 4e6)
ORDER BY ts;
