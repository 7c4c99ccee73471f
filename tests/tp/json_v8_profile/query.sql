-- Legacy V8 CPU profiles ('P' events, read in file order as Perfetto does):
-- "Profile" starts a session (id, pid) at startTime; a chunk's nodes become
-- callsites and its samples land at startTime + the deltas so far on the
-- chunk's thread. A chunk before its session, or with samples and
-- timeDeltas of different lengths, is a tokenizer failure; a sample of an
-- unknown node is an invalid sample. Only samples create threads.
select s.ts, f.name, c.depth, t.tid
from cpu_profile_stack_sample s join stack_profile_callsite c on s.callsite_id = c.id
join stack_profile_frame f on c.frame_id = f.id join thread t using (utid)
order by s.ts;
select tid from thread where tid != 0 order by tid;
select name, value from stats where value > 0 and name in ('json_tokenizer_failure',
  'legacy_v8_cpu_profile_invalid_callsite', 'legacy_v8_cpu_profile_invalid_sample') order by name;
