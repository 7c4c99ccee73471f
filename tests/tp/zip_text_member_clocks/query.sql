-- A systrace and a perf script member of a zip are MONOTONIC: the clock
-- snapshots of the protobuf member beside it (BOOTTIME = MONOTONIC + 1 s
-- until the second snapshot, + 1.5 s from it) convert their timestamps.
SELECT name, ts, dur FROM slice ORDER BY ts;
SELECT ts FROM perf_sample;
SELECT name, trace_type, processing_order FROM trace_file ORDER BY id;
