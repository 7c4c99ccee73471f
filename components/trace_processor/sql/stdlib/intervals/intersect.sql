-- intervals.intersect: the macros _interval_intersect!,
-- _interval_intersect_with_col_names! and _interval_intersect_single! are
-- generated in C (sql/include.c); including the module is what makes them
-- available in Perfetto, here they always are.
SELECT 1 WHERE 0;
