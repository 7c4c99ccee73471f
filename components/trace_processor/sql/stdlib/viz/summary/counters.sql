-- viz.summary.counters: the counter tracks that have at least one value.
CREATE PERFETTO TABLE _counter_track_summary(id LONG) AS
SELECT DISTINCT c.track_id AS id FROM counter AS c;
