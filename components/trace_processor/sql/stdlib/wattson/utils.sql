-- wattson.utils: helpers of the Wattson power model.

-- The window between the first wattson_start and the last wattson_stop
-- marker slices.
CREATE PERFETTO TABLE _wattson_markers_window AS
SELECT start AS ts, stop - start AS dur, 'Markers window' AS name FROM (
  SELECT (SELECT min(ts) FROM slice WHERE name = 'wattson_start') AS start,
    (SELECT max(ts) FROM slice WHERE name = 'wattson_stop') AS stop)
WHERE start IS NOT NULL;

-- Rows of tab with a row number as id.
CREATE PERFETTO MACRO _ii_subquery(tab TableOrSubquery) RETURNS TableOrSubquery AS
(SELECT row_number() OVER () - 1 AS id, * FROM $tab);

-- The dependency vote of the DSU (all cpus).
CREATE PERFETTO MACRO _dsu_dep() RETURNS Expr AS 255;

-- Eight flags as the bits of one byte (b0 the lowest).
CREATE PERFETTO MACRO _bitmask8(b0 Expr, b1 Expr, b2 Expr, b3 Expr, b4 Expr, b5 Expr,
  b6 Expr, b7 Expr) RETURNS Expr AS
(($b0 != 0) | (($b1 != 0) << 1) | (($b2 != 0) << 2) | (($b3 != 0) << 3)
 | (($b4 != 0) << 4) | (($b5 != 0) << 5) | (($b6 != 0) << 6) | (($b7 != 0) << 7));

-- Bit `bit` of mask.
CREATE PERFETTO MACRO _extract_bit(mask Expr, bit Expr) RETURNS Expr AS
((($mask) >> ($bit)) & 1);
