-- viz.summary.slices: per slice track, what the UI needs to lay it out.

-- One row per track with slices: their count, shortest and longest
-- duration and deepest depth.
CREATE PERFETTO TABLE _slice_track_summary(
  id LONG, cnt LONG, min_dur LONG, max_dur LONG, max_depth LONG) AS
SELECT s.track_id AS id, count(*) AS cnt, min(s.dur) AS min_dur, max(s.dur) AS max_dur,
  max(s.depth) AS max_depth
FROM slice AS s
GROUP BY s.track_id;
