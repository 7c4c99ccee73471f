-- --no-ftrace-raw: a text trace makes no ftrace_event rows either (as
-- Perfetto's), the scheduling it describes is still imported, and the trace
-- bounds start at the first sched_switch, not at an earlier event that
-- would only have had a raw row (the bprint).
SELECT (SELECT count(*) FROM ftrace_event) AS raw_rows, (SELECT count(*) FROM sched) AS sched_rows,
  (SELECT count(*) FROM thread_state) AS states, (SELECT start_ts FROM trace_bounds) AS start_ts;
