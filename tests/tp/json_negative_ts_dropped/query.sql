-- Perfetto's sorter drops events with a negative timestamp (counted); a
-- metadata event without ts is at 0.
select name, ts from slice;
select name, value from stats where name = 'trace_sorter_negative_timestamp_dropped';
select name from thread where tid = 1;
