-- Arg sets are numbered as Perfetto numbers them: a set's id is the id of
-- its first args row; a thread track's dimension args (utid) are added when
-- the track is first used; a slice's args are added when the slice leaves
-- its track's stack (B, ended inside A, before A; I when Z2 comes).
SELECT name, arg_set_id, (SELECT group_concat(key || '=' || display_value) FROM args a
  WHERE a.arg_set_id = s.arg_set_id) AS args,
  (SELECT dimension_arg_set_id FROM track t WHERE t.id = s.track_id) AS track_dims
FROM slice s ORDER BY ts;
