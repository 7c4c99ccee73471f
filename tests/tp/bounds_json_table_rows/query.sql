-- The trace bounds are those of the rows of the event tables, as Perfetto's
-- (its storage plugin's GetTimestampBounds): slices count with their end
-- (ts + dur, an open slice's -1 as 0), metadata events (M) make no row and
-- do not count, even with a ts.
SELECT start_ts, end_ts, trace_dur() AS dur FROM trace_bounds;
