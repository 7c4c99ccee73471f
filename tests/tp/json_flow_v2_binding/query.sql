-- Flow v2 as Perfetto binds it: bind_id (a number, or a hex string) with
-- flow_out begins, flow_in and flow_out continues, flow_in ends, on the
-- slice on top of the event's track after B/X/b/n (not instants); an X
-- whose slice is dropped still binds the top of its track.
select so.name as out_name, si.name as in_name
from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id
order by f.id;
select name, value from stats where name like 'flow%' and value > 0 order by name;
