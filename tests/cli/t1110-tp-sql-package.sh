# trace_processor_shell --add-sql-package PATH[@PKG] / --override-sql-package:
# a directory of .sql files made here becomes a package whose modules
# `INCLUDE PERFETTO MODULE pkg.a.b` runs (a/b.sql), once, with Perfetto's
# names, messages and exit codes.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
tps() { "$bin" trace_processor_shell "$@"; }
# stderr without the progress line and the warning about v1.0/skipped.sql
errs() { grep -v '^Trace loaded\|^trace_processor_shell: Skipping module' "$TMP/err"; }

cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[
 {"ph":"X","name":"outer","cat":"c","ts":1,"dur":10,"pid":1,"tid":2},
 {"ph":"X","name":"inner","cat":"c","ts":2,"dur":3,"pid":1,"tid":2}
]}
JSON

mkdir -p "$TMP/mylib/slices" "$TMP/mylib/v1.0"
cat >"$TMP/mylib/base.sql" <<'SQL'
-- Runs once however often it is included: a second run would fail here.
CREATE PERFETTO TABLE mylib_runs(n INT) AS SELECT 1 AS n;
SQL
cat >"$TMP/mylib/slices/long.sql" <<'SQL'
INCLUDE PERFETTO MODULE mylib.base;
CREATE PERFETTO VIEW long_slices AS
SELECT name, cast_int!(dur / 1000) AS dur_us FROM slice WHERE dur >= 5000;
SQL
cat >"$TMP/mylib/broken.sql" <<'SQL'
SELECT 1;
SELECT * FROM no_such_table;
SQL
echo 'SELECT 1;' >"$TMP/mylib/v1.0/skipped.sql"
echo 'not sql' >"$TMP/mylib/README.txt"

# The package is named after the directory.
expect_exit add-exit 0 tps query --add-sql-package "$TMP/mylib/" "$TMP/t.json" \
	"INCLUDE PERFETTO MODULE mylib.slices.long; INCLUDE PERFETTO MODULE mylib.base;
	 INCLUDE PERFETTO MODULE mylib.slices.long; SELECT name, dur_us FROM long_slices;
	 SELECT count(*) AS runs FROM mylib_runs"
expect_eq add-rows '"name","dur_us"
"outer",10

"runs"
1' "$(cat "$TMP/out")"
# v1.0/skipped.sql has a dot in its path: skipped with a warning.
grep -q 'Skipping module v1.0/skipped as it contains a dot in its path.' "$TMP/err" &&
	pass add-skips-dotted || fail add-skips-dotted "$(cat "$TMP/err")"

# @PKG renames it, dots included; the wildcard includes every module under
# a prefix.
mkdir -p "$TMP/stats/count"
echo 'CREATE VIEW n_slices AS SELECT count(*) AS n FROM slice;' >"$TMP/stats/count/slices.sql"
echo 'CREATE VIEW n_names AS SELECT count(DISTINCT name) AS n FROM slice;' >"$TMP/stats/count/names.sql"
expect_exit at-pkg 0 tps query --add-sql-package "$TMP/stats@my.stats" "$TMP/t.json" \
	"INCLUDE PERFETTO MODULE my.stats.count.*; SELECT (SELECT n FROM n_slices) AS s, n FROM n_names"
expect_eq at-pkg-rows '"s","n"
2,2' "$(cat "$TMP/out")"

# An error inside a module names the module, line and statement.
expect_exit module-error 1 tps query --add-sql-package "$TMP/mylib" "$TMP/t.json" \
	"INCLUDE PERFETTO MODULE mylib.broken"
expect_eq module-error-text 'Traceback (most recent call last):
  Module include "mylib.broken" line 2 col 1
    SELECT * FROM no_such_table;
    ^
no such table: no_such_table' "$(errs | sed -n '1,5p')"
expect_exit unknown-module 1 tps query --add-sql-package "$TMP/mylib" "$TMP/t.json" \
	"INCLUDE PERFETTO MODULE mylib.nope"
grep -q "INCLUDE: unknown module 'mylib.nope'" "$TMP/err" && pass unknown-module-text ||
	fail unknown-module-text "$(cat "$TMP/err")"

# Names taken: ours (slices) need --override-sql-package, as a second
# package of the same name does; overriding replaces the first.
expect_exit taken 1 tps query --add-sql-package "$TMP/mylib@slices" "$TMP/t.json" "SELECT 1"
expect_eq taken-text "trace_processor_shell: Couldn't add SQL package: Package 'slices' is already registered. Choose a different name." \
	"$(errs | head -1)"
expect_exit override 0 tps query --override-sql-package "$TMP/mylib@slices" "$TMP/t.json" \
	"INCLUDE PERFETTO MODULE slices.base; SELECT n FROM mylib_runs"
expect_eq override-rows '"n"
1' "$(cat "$TMP/out")"
expect_exit twice 1 tps query --add-sql-package "$TMP/mylib" --add-sql-package "$TMP/mylib" \
	"$TMP/t.json" "SELECT 1"
expect_exit clash 1 tps query --add-sql-package "$TMP/mylib@linux.mine" "$TMP/t.json" "SELECT 1"
expect_eq clash-text "trace_processor_shell: Couldn't add SQL package: Package 'linux.mine' clashes with existing package 'linux'. Package names cannot be prefixes of each other." \
	"$(errs)"

# Bad paths: one line, exit 1.
expect_exit no-dir 1 tps query --add-sql-package "$TMP/nope" "$TMP/t.json" "SELECT 1"
expect_eq no-dir-text "trace_processor_shell: Couldn't add SQL package: Directory $TMP/nope does not exist." \
	"$(cat "$TMP/err")"
expect_exit not-a-dir 1 tps query --add-sql-package "$TMP/t.json@x" "$TMP/t.json" "SELECT 1"
