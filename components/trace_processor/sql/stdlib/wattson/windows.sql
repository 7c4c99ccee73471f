-- wattson.windows: the windows Wattson estimates power over.
INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.startup.startups;
INCLUDE PERFETTO MODULE wattson.utils;

CREATE PERFETTO VIEW wattson_window_markers(ts LONG, dur LONG, period_id LONG) AS
SELECT ts, dur, 1 AS period_id FROM _wattson_markers_window;

CREATE PERFETTO VIEW wattson_window_trace(ts LONG, dur LONG, period_id LONG) AS
SELECT trace_start() AS ts, trace_dur() AS dur, 1 AS period_id;

CREATE PERFETTO VIEW wattson_window_app_startup(ts LONG, dur LONG, period_id LONG) AS
SELECT ts, dur, startup_id AS period_id FROM android_startups;

CREATE PERFETTO VIEW wattson_window_atrace_apps(ts LONG, dur LONG, period_id LONG) AS
SELECT ts, dur, cuj_id AS period_id FROM android_jank_cuj;
