-- viz.summary.track_event: the TrackEvent tracks grouped and ordered as
-- the UI shows them.
INCLUDE PERFETTO MODULE viz.track_event_callstacks;

-- Every TrackEvent track with the ordering its parent asks for
-- (source arg child_ordering), its rank among siblings and description.
CREATE PERFETTO TABLE _track_event_tracks_unordered(
  id LONG, name STRING, parent_id LONG, parent_ordering STRING, rank LONG,
  description STRING) AS
WITH te AS (
  SELECT t.id, t.name, t.parent_id,
    extract_arg(t.source_arg_set_id, 'child_ordering') AS ordering,
    extract_arg(t.source_arg_set_id, 'sibling_order_rank') AS rank,
    extract_arg(t.source_arg_set_id, 'description') AS description
  FROM track AS t WHERE t.type GLOB '*_track_event')
SELECT c.id, c.name, c.parent_id, p.ordering AS parent_ordering,
  coalesce(c.rank, 0) AS rank, c.description
FROM te AS c LEFT JOIN te AS p ON p.id = c.parent_id;

-- The first event's ts on each of those tracks (counters, slices, states).
CREATE PERFETTO TABLE _min_ts_per_track(id LONG, min_ts LONG) AS
SELECT c.track_id AS id, min(c.ts) AS min_ts FROM counter AS c
WHERE c.track_id IN (SELECT id FROM _track_event_tracks_unordered) GROUP BY c.track_id
UNION ALL
SELECT s.track_id, min(s.ts) FROM slice AS s
WHERE s.track_id IN (SELECT id FROM _track_event_tracks_unordered) GROUP BY s.track_id
UNION ALL
SELECT s.track_id, min(s.ts) FROM state AS s
WHERE s.track_id IN (SELECT id FROM _track_event_tracks_unordered) GROUP BY s.track_id;

-- TrackEvent tracks that are parents of others.
CREATE PERFETTO TABLE _track_event_has_children(id LONG) AS
SELECT DISTINCT t.parent_id AS id FROM track AS t
WHERE t.type GLOB '*_track_event' AND t.parent_id IS NOT NULL;

-- One row per track group (a track alone is its own group), in display
-- order: by parent, then the order the parent asks for (by name when it
-- asks for none or 'lexicographic', by rank for 'explicit', by first
-- event for 'chronological').
CREATE PERFETTO TABLE _track_event_tracks_ordered_groups(
  upid LONG, utid LONG, parent_id LONG, is_counter BOOL, is_state BOOL, name STRING,
  description STRING, unit STRING, builtin_counter_type STRING, y_axis_share_key STRING,
  has_data BOOL, has_children BOOL, has_callstacks BOOL, min_track_id LONG,
  track_ids STRING, order_id LONG) AS
WITH ordered AS (
  SELECT u.id, row_number() OVER (PARTITION BY u.parent_id ORDER BY u.name) AS order_id
  FROM _track_event_tracks_unordered AS u
  WHERE u.parent_ordering IS NULL OR u.parent_ordering = 'lexicographic'
  UNION ALL
  SELECT u.id, row_number() OVER (PARTITION BY u.parent_id ORDER BY u.rank)
  FROM _track_event_tracks_unordered AS u WHERE u.parent_ordering = 'explicit'
  UNION ALL
  SELECT u.id, row_number() OVER (PARTITION BY u.parent_id ORDER BY m.min_ts)
  FROM _track_event_tracks_unordered AS u LEFT JOIN _min_ts_per_track AS m ON m.id = u.id
  WHERE u.parent_ordering = 'chronological')
SELECT extract_arg(t.dimension_arg_set_id, 'upid') AS upid,
  extract_arg(t.dimension_arg_set_id, 'utid') AS utid,
  t.parent_id,
  t.type GLOB '*counter*' AS is_counter,
  t.type GLOB '*state*' AS is_state,
  t.name,
  min(extract_arg(t.source_arg_set_id, 'description')) AS description,
  min(ct.unit) AS unit,
  min(extract_arg(t.source_arg_set_id, 'builtin_counter_type')) AS builtin_counter_type,
  min(extract_arg(t.source_arg_set_id, 'y_axis_share_key')) AS y_axis_share_key,
  max(m.id IS NOT NULL) AS has_data,
  max(h.id IS NOT NULL) AS has_children,
  max(cs.track_id IS NOT NULL) AS has_callstacks,
  min(o.id) AS min_track_id,
  group_concat(o.id) AS track_ids,
  min(o.order_id) AS order_id
FROM ordered AS o
JOIN track AS t ON t.id = o.id
LEFT JOIN counter_track AS ct ON ct.id = o.id
LEFT JOIN _track_event_has_children AS h ON h.id = o.id
LEFT JOIN _min_ts_per_track AS m ON m.id = o.id
LEFT JOIN _track_event_tracks_with_callstacks AS cs ON cs.track_id = o.id
GROUP BY t.track_group_id, coalesce(t.track_group_id, t.id)
ORDER BY t.parent_id, o.order_id;
