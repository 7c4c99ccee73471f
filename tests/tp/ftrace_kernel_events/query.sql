SELECT 'slice' AS what, s.ts, s.dur, s.depth, s.name, t.type, t.name AS track,
  extract_arg(t.dimension_arg_set_id, 'block_device') AS dev,
  extract_arg(t.dimension_arg_set_id, 'context_id') AS ctx,
  extract_arg(s.arg_set_id, 'sector') AS sector
FROM slice s JOIN track t ON s.track_id = t.id
UNION ALL
SELECT 'counter', c.ts, NULL, NULL, c.value, t.type, t.name,
  extract_arg(t.dimension_arg_set_id, 'thermal_zone'), NULL,
  extract_arg(c.arg_set_id, 'thermal_zone_id')
FROM counter c JOIN track t ON c.track_id = t.id
UNION ALL
SELECT 'raw', min(ts), count(*), NULL, name, NULL, NULL, NULL, NULL, NULL
FROM ftrace_event GROUP BY name
UNION ALL
SELECT 'rawarg', ts, NULL, NULL, name, NULL, NULL, NULL, NULL, extract_arg(arg_set_id, 'func')
FROM ftrace_event WHERE name GLOB 'funcgraph_*'
UNION ALL
SELECT 'stat', NULL, value, NULL, name, NULL, NULL, NULL, NULL, NULL
FROM stats WHERE name = 'ftrace_thermal_exynos_acpm_unknown_tz_id'
UNION ALL
SELECT 'meta', int_value, NULL, NULL, name, NULL, NULL, NULL, NULL, NULL
FROM metadata WHERE name = 'ftrace_latest_data_start_ns'
ORDER BY 1, 2, 5;
