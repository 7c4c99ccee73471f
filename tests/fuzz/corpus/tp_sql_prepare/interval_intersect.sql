INCLUDE PERFETTO MODULE intervals.intersect;
SELECT * FROM _interval_intersect!(((SELECT 1 AS id, 0 AS ts, 5 AS dur), (SELECT 2 AS id, 1 AS ts, 0 AS dur)), ());
SELECT * FROM _interval_intersect_with_col_names!(slice, id, ts, dur, slice, id, ts, dur, (track_id));
SELECT * FROM _interval_intersect_single!(0, 10, (SELECT 1 AS id, 2 AS ts, 3 AS dur));
SELECT __intrinsic_stringify!(a 'b' c), _interval_intersect!((x), );
CREATE PERFETTO INDEX i ON nope(a); DROP PERFETTO INDEX i ON nope; DROP PERFETTO MACRO nope;
CREATE VIRTUAL TABLE mm USING __intrinsic_slice_mipmap((SELECT id, ts, dur, depth FROM slice));
SELECT * FROM mm WHERE in_window_start = 0 AND in_window_end = 100 AND in_window_step = 0;
SELECT * FROM experimental_slice_layout('0,1,x,99999999999');
