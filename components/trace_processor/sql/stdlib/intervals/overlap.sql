-- intervals.overlap: how many intervals overlap, over time.

-- For a table of intervals (ts_column, dur_column; dur -1 = never ends):
-- one row per timestamp where intervals start or end, with the number of
-- intervals open from then on (ts, value).
CREATE PERFETTO MACRO intervals_overlap_count(
  segments TableOrSubquery, ts_column ColumnName, dur_column ColumnName)
RETURNS TableOrSubquery AS
(SELECT ts, sum(delta) OVER (ORDER BY ts) AS value
 FROM (SELECT ts, sum(delta) AS delta
       FROM (SELECT $ts_column AS ts, 1 AS delta FROM $segments
             UNION ALL
             SELECT $ts_column + $dur_column, -1 FROM $segments WHERE $dur_column != -1)
       GROUP BY ts)
 ORDER BY ts);
