-- android.power_rails: energy counters of the power rails.
INCLUDE PERFETTO MODULE counters.intervals;

-- Each rail's cumulative energy (uWs) as intervals, with the average power
-- (uW... scaled by 1e6 per ns) over each interval.
CREATE PERFETTO TABLE android_power_rails_counters(
  id LONG, ts LONG, dur LONG, power_rail_name STRING, raw_power_rail_name STRING,
  energy_since_boot DOUBLE, energy_since_boot_at_end DOUBLE, average_power DOUBLE,
  energy_delta DOUBLE, track_id LONG, value DOUBLE) AS
SELECT i.id, i.ts, i.dur, t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  i.value AS energy_since_boot, i.next_value AS energy_since_boot_at_end,
  1e6 * ((i.next_value - i.value) / i.dur) AS average_power, i.delta_value AS energy_delta,
  i.track_id, i.value
FROM counter_leading_intervals!((
  SELECT c.* FROM counter AS c JOIN counter_track AS k ON k.id = c.track_id
  WHERE k.type = 'power_rails')) AS i
JOIN counter_track AS t ON t.id = i.track_id;

-- One row per rail track: its names, subsystem and machine.
CREATE PERFETTO TABLE android_power_rails_metadata(
  power_rail_name STRING, raw_power_rail_name STRING, friendly_name STRING, track_id LONG,
  subsystem_name STRING, machine_id LONG) AS
SELECT t.name AS power_rail_name,
  extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
  iif(t.name GLOB 'power.rails.*', substr(t.name, 13), NULL) AS friendly_name,
  t.id AS track_id, extract_arg(t.source_arg_set_id, 'subsystem_name') AS subsystem_name,
  t.machine_id
FROM counter_track AS t WHERE t.type = 'power_rails';
