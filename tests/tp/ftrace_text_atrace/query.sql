select s.ts, s.dur, s.depth, s.name, t.type, t.name as track_name from slice s join track t on s.track_id = t.id order by s.ts;
select c.ts, c.value, t.name, t.type from counter c join counter_track t on c.track_id = t.id order by c.ts;
select tid, pid, thread.name as thread_name from thread left join process using (upid) where tid > 0 order by tid;
select name, value from stats where name in ('systrace_parse_failure', 'ftrace_text_payload_unparsed') order by name;
select str_value from metadata where name = 'trace_type';
