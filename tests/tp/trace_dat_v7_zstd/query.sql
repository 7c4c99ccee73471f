select ts, dur, cpu, (select tid from thread t where t.utid = s.utid) as tid, end_state, priority from sched s order by ts, cpu;
select state, count(*), sum(dur) from thread_state group by state order by state;
select name, count(*), min(ts), max(ts), sum(cpu) from ftrace_event group by name order by name;
select e.ts, e.name, e.common_flags, a.key, a.int_value, a.string_value from ftrace_event e join args a using (arg_set_id) where e.name in ('sched_waking', 'softirq_raise', 'workqueue_execute_start') order by e.id, a.key limit 24;
select tid, name, start_ts, end_ts, upid is not null as has_process from thread where tid > 0 order by tid limit 20;
select s.ts, s.dur, s.name, s.category from slice s order by s.ts limit 10;
select t.name, c.ts, c.value, t.cpu from counter c join cpu_counter_track t on t.id = c.track_id order by c.ts limit 10;
select name, value from stats where name like 'trace_dat%' or name = 'mismatched_sched_switch_tids' order by name;
select str_value from metadata where name = 'trace_type';
