-- Perf samples bound the trace (Perfetto counts its profiler_sample rows);
-- a service event (tracing_disabled) later makes no row and does not.
SELECT start_ts, end_ts, (SELECT count(*) FROM perf_sample) AS samples FROM trace_bounds;
