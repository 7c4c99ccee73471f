select s.ts, s.dur, s.category, s.name, s.depth, t.tid from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid) order by s.ts;
select so.name as out_name, si.name as in_name from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id order by so.ts;
select s.name, a.key, a.display_value from slice s join args a using (arg_set_id) where s.name = 'binder reply' order by a.key;
