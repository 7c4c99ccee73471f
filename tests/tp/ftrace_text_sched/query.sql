select ts, dur, cpu, (select tid from thread t where t.utid = s.utid) as tid, end_state, priority from sched s order by ts;
select ts, dur, (select tid from thread t where t.utid = s.utid) as tid, state, cpu, (select tid from thread t where t.utid = s.waker_utid) as waker_tid, io_wait, blocked_function from thread_state s order by tid, ts;
select tid, pid, thread.name as thread_name from thread left join process using (upid) where tid > 0 order by tid;
select ts, name, cpu, (select tid from thread t where t.utid = e.utid) as tid from ftrace_event e order by ts;
select key, int_value, string_value from args where arg_set_id = (select arg_set_id from ftrace_event where name = 'sched_waking') order by key;
