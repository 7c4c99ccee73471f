-- A profile node 20's --cpu-prof wrote (--cpu-prof-interval 500) for a
-- script that computes fib(24) and spins for 40 ms, six times: 101
-- samples (the file's "samples"), spin the hottest leaf.
SELECT COUNT(*) AS samples, MIN(ts), MAX(ts) FROM cpu_profile_stack_sample;
SELECT f.name, COUNT(*) AS n FROM cpu_profile_stack_sample s
JOIN stack_profile_callsite c ON c.id = s.callsite_id
JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5;
SELECT DISTINCT t.tid, p.pid, p.name FROM cpu_profile_stack_sample s JOIN thread t USING (utid)
JOIN process p USING (upid);
SELECT c.depth, f.name, y.source_file GLOB '*hot.js' AS in_script
FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id
JOIN stack_profile_symbol y ON y.symbol_set_id = f.symbol_set_id
WHERE f.name IN ('spin', 'fib') ORDER BY c.depth, f.name LIMIT 6;
SELECT trace_type FROM trace_file;
