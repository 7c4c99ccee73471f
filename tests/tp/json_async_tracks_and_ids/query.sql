-- Async tracks as Perfetto's TrackCompressor picks them: one set per first
-- name of a cookie; a cookie whose slices ended (by b/e count) frees its
-- track for the next cookie, even with a slice left open by a mismatched
-- end (then the next one nests under it). The integer id 1 and the string
-- "1" are different cookies; a fractional id is no id. Only a string id
-- names a counter.
select name, ts, dur, depth, track_id - (select min(track_id) from slice) as track
from slice order by ts;
select name from counter_track order by name;
select value from stats where name = 'json_parser_failure';
