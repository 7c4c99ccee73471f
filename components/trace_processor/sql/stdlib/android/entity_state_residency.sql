-- android.entity_state_residency: time spent in each power entity state.
-- The counters are cumulative ms since boot; a track's name is
-- "Entity residency: <entity> is <state>".
CREATE PERFETTO TABLE android_entity_state_residency(
  id LONG, ts LONG, dur LONG, entity_name STRING, state_name STRING, raw_name STRING,
  state_time_since_boot LONG, state_time_since_boot_at_end LONG, state_time_ratio DOUBLE,
  track_id LONG) AS
WITH tracks AS (
  SELECT t.id, t.name AS raw_name,
    t.name GLOB 'Entity residency: *' AND t.name GLOB '* is *' AS parsed,
    instr(t.name, ' is ') AS sep
  FROM counter_track AS t WHERE t.type = 'entity_state'),
named AS (
  SELECT id, raw_name,
    iif(parsed, replace(substr(raw_name, 0, sep), 'Entity residency: ', ''), NULL) AS entity_name,
    iif(parsed, substr(raw_name, sep + 4), NULL) AS state_name
  FROM tracks),
spans AS (
  SELECT c.id, c.ts, lead(c.ts) OVER w - c.ts AS dur, n.entity_name, n.state_name,
    n.raw_name, CAST(c.value * 1e6 AS INTEGER) AS state_time_since_boot,
    CAST(lead(c.value) OVER w * 1e6 AS INTEGER) AS state_time_since_boot_at_end,
    c.track_id
  FROM counter AS c JOIN named AS n ON n.id = c.track_id
  WINDOW w AS (PARTITION BY c.track_id ORDER BY c.ts))
SELECT id, ts, dur, entity_name, state_name, raw_name, state_time_since_boot,
  state_time_since_boot_at_end,
  (state_time_since_boot_at_end - state_time_since_boot) * 1.0 / dur AS state_time_ratio,
  track_id
FROM spans;
