-- A tid seen alternately in two processes is one thread in each (Perfetto
-- looks the tid up among its threads of that pid), not a new thread each time.
select t.tid, p.pid, group_concat(s.name, '') as names
from slice s join thread_track tt on s.track_id = tt.id
join thread t using (utid) join process p using (upid)
group by t.utid order by t.utid;
select count(*) as threads from thread where tid = 1;
