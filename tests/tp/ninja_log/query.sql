-- A .ninja_log ninja 1.11 wrote for a build of five steps, one with two
-- outputs (x y), run with -j2: each step a slice on one of two worker
-- lanes (threads 1 and 2 of process 1 "Build").
SELECT s.ts, s.dur, s.name, s.category, s.depth, t.tid, t.name AS thread, p.pid, p.name AS process
FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid)
JOIN process p USING (upid) ORDER BY s.ts, t.tid;
SELECT trace_type FROM trace_file;
