select ts, dur, cpu, (select tid from thread t where t.utid = s.utid) as tid, end_state, priority from sched s order by ts;
select c.ts, c.value, t.name, t.type, t.cpu from counter c join cpu_counter_track t on c.track_id = t.id order by c.ts, t.name;
select tid, name, start_ts, end_ts from thread where tid > 0 order by utid;
select e.ts, e.name, a.key, a.int_value, a.string_value from ftrace_event e join args a using (arg_set_id) where e.name in ('bprint', 'sched_load_se', 'sched_wakeup') order by e.ts, a.key;
select cpu from cpu order by cpu;
select name, value from stats where name in ('systrace_parse_failure', 'ftrace_text_payload_unparsed') order by name;
