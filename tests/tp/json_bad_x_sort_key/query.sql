-- Perfetto's equal-ts key for an X is INT64_MAX - dur, wrapping: an X with
-- a negative dur sorts before the B at its ts. Its slice is dropped, but its
-- flow binds the top of the stack then (P, not yet popped).
select so.name as out_name, si.name as in_name
from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id;
select name, value from stats where name = 'slice_negative_duration';
