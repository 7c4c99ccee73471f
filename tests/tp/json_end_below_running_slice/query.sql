-- catapult's x_event_trace.json: an E (sorted before the B at its ts)
-- closes a slice below a running X; the next B then pops the top of the
-- stack (the X), as Perfetto's SliceTracker does, and nests under the
-- closed slice, which cuts it at its end once time passes it.
select name, ts, dur, depth from slice where track_id in
  (select id from thread_track where utid = (select utid from thread where tid = 1))
order by ts, depth;
