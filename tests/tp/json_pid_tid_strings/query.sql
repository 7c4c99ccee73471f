-- String pids and tids (PyTorch's "Spans", "Traces", and "") are names with
-- an id of their own, the empty one included (a named process and thread
-- called ""); a tid of 0 is the process's main thread; a number out of
-- [0, 2^32) is 0.
select s.name, p.name as process, t.name as thread, t.tid = p.pid as main
from slice s join thread_track tt on s.track_id = tt.id
join thread t using (utid) join process p using (upid)
order by s.ts;
select (select count(*) from thread where name is not null) as named_threads,
       (select count(*) from process where name is not null) as named_processes,
       (select count(*) from process where name = '') as empty_named;
