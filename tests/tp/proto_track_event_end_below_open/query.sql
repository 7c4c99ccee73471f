-- An end matching (by category) a slice below an open one: the open slice
-- is cut at that end once a later event arrives, as in Perfetto.
SELECT ts, dur, depth, category, name FROM slice ORDER BY id;
SELECT name, value FROM stats WHERE name = 'misplaced_end_event';
