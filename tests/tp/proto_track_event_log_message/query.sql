-- TrackEvent log_message on a Chrome sandboxed thread: android_logs row,
-- args, synthetic tid (pid << 32 | tid); an unknown body iid is an error.
SELECT l.ts, t.tid, l.prio, l.tag, l.msg FROM android_logs AS l JOIN thread AS t USING (utid);
SELECT s.name, a.key, a.display_value FROM slice AS s JOIN args AS a USING (arg_set_id) ORDER BY a.id;
SELECT name, value FROM stats WHERE name = 'track_event_parser_errors';
