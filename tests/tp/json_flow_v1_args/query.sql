-- A v1 flow's row carries args name and cat (Perfetto's FlowTracker adds
-- them), in the arg set numbering of the rest.
SELECT f.slice_out, f.slice_in, f.arg_set_id,
  (SELECT group_concat(key || '=' || display_value) FROM args a WHERE a.arg_set_id = f.arg_set_id) AS args
FROM flow f;
