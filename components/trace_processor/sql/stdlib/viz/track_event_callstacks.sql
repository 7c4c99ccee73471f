-- viz.track_event_callstacks: the tracks whose TrackEvents carry callstacks.
CREATE PERFETTO TABLE _track_event_tracks_with_callstacks(track_id LONG) AS
SELECT DISTINCT c.track_id FROM __intrinsic_track_event_callstacks AS c;
