select tid, name from thread where tid > 0 order by tid;
select ts, dur, cpu, end_state from sched order by ts;
select ts, name, cpu, (select tid from thread t where t.utid = e.utid) as tid from ftrace_event e order by ts;
