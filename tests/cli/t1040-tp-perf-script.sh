#!/bin/sh
# perf script text import: every FlameGraph perf input in ../shared/corpus
# loads, and the folded stacks computed by SQL over perf_sample and
# stack_profile_callsite/frame/mapping match what FlameGraph's
# stackcollapse-perf.pl produced for it (expected/flamegraph_collapsed/),
# both with --all (comm prefix, _[k] kernel and _[j] JIT annotations) and
# with --tid (comm-pid/tid prefix). The SQL applies stackcollapse-perf.pl's
# naming rules: only the first event type, "[unknown]" symbols named after
# their DSO, arguments and quotes tidied away, Java's leading 'L' dropped,
# counts summing the printed period (1 if none). Two quirks of the script
# are mirrored: a last sample not followed by a blank line is not counted,
# and a sample of tid 0 without a printed pid is "comm-?/0" (we attach it
# to the swapper process, pid 0); a frame without a symbol is named " ",
# as the script's frame regex reads it.
. tests/lib.sh

corpus=$TB_SHARED/corpus
exp=$corpus/expected/flamegraph_collapsed
if [ ! -d "$corpus/perf_script" ] || [ ! -d "$exp" ]; then
	skip corpus "../shared/corpus/perf_script not found"
	exit 0
fi
bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox

# fold_sql MODE LAST: one row "stack count" per distinct stack; MODE is all
# or tid; LAST is 0 to leave out the last sample.
fold_sql() {
	last=$2
	if [ "$1" = all ]; then
		pname="s.comm"
		java="s.comm = 'java'"
		annot="|| CASE WHEN (f.mname GLOB '[[]*' OR f.mname GLOB '*vmlinux') \
AND f.mname NOT GLOB '*unknown*' THEN '_[k]' \
WHEN f.mname GLOB '*/tmp/perf-[0-9]*.map*' THEN '_[j]' ELSE '' END"
	else
		pname="s.comm || '-' || coalesce((SELECT p.pid FROM thread t JOIN process p \
USING (upid) WHERE t.utid = s.utid AND t.tid != 0), '?') || '/' || (SELECT tid FROM thread t WHERE t.utid = s.utid)"
		java="0"
		annot=""
	fi
	cat <<SQL
WITH RECURSIVE
s AS (SELECT id, utid, comm, callsite_id, coalesce(period, 1) AS period
  FROM __intrinsic_perf_sample
  WHERE event_name = (SELECT event_name FROM __intrinsic_perf_sample ORDER BY id LIMIT 1)
  AND ($last OR id != (SELECT max(id) FROM __intrinsic_perf_sample))),
fr AS (SELECT f.id, m.name AS mname,
  CASE WHEN f.name = '[unknown]' THEN
    CASE WHEN m.name != '[unknown]' THEN '[' || replace(m.name, rtrim(m.name, replace(m.name, '/', '')), '') || ']'
    ELSE '[unknown]' END
  ELSE coalesce(f.name, ' ') END AS u,
  substr(f.name, 1, 1) = '(' AS skip
  FROM stack_profile_frame f JOIN stack_profile_mapping m ON f.mapping = m.id),
tidy AS (SELECT id, mname, skip,
  replace(replace(CASE WHEN u GLOB '*.(*).*' THEN u ELSE
    replace(CASE WHEN instr(replace(u, '(anonymous namespace)', char(1)), '(') > 0
      THEN substr(replace(u, '(anonymous namespace)', char(1)), 1,
                  instr(replace(u, '(anonymous namespace)', char(1)), '(') - 1)
      ELSE replace(u, '(anonymous namespace)', char(1)) END, char(1), '(anonymous namespace)')
  END, '"', ''), '''', '') AS t FROM (SELECT id, mname, skip, replace(u, ';', ':') AS u FROM fr)),
walk(sid, java, cs, stack) AS (
  SELECT s.id, $java, s.callsite_id, '' FROM s
  UNION ALL
  SELECT w.sid, w.java, c.parent_id,
    CASE WHEN f.skip THEN w.stack ELSE
      (CASE WHEN w.java AND f.t GLOB '*/*' AND f.t GLOB 'L*' THEN substr(f.t, 2) ELSE f.t END)
      $annot || CASE WHEN w.stack = '' THEN '' ELSE ';' || w.stack END END
  FROM walk w JOIN stack_profile_callsite c ON c.id = w.cs JOIN tidy f ON f.id = c.frame_id)
SELECT folded || ' ' || n FROM (
  SELECT replace($pname, ' ', '_') || CASE WHEN w.stack = '' THEN '' ELSE ';' || w.stack END
    AS folded, sum(s.period) AS n
  FROM walk w JOIN s ON s.id = w.sid WHERE w.cs IS NULL GROUP BY folded)
SQL
}

total=0
matched=0
for f in "$corpus"/perf_script/brendangregg+FlameGraph__*; do
	base=$(basename "$f")
	base=${base%.gz}
	base=${base%.txt}
	if ! timeout 300 "$bin" trace_processor_shell query "$f" 'select count(*) from perf_sample' \
		>"$TMP/out" 2>"$TMP/err"; then
		fail "load_$base" "$(tail -3 "$TMP/err")"
		continue
	fi
	pass "load_$base"
	# stackcollapse-perf.pl counts a sample when a blank line ends it.
	last=1
	case $f in *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac | tail -n 1 | grep -q . && last=0
	fold_sql all $last >"$TMP/all.sql"
	fold_sql tid $last >"$TMP/tid.sql"
	for mode in all tid; do
		want=$exp/$base-collapsed-$mode.txt
		[ -f "$want" ] || continue
		total=$((total + 1))
		if ! timeout 300 "$bin" trace_processor_shell query "$f" "$(cat "$TMP/$mode.sql")" \
			>"$TMP/out" 2>"$TMP/err"; then
			fail "fold_${mode}_$base" "$(tail -3 "$TMP/err")"
			continue
		fi
		# One quoted CSV column after the header.
		sed '1d; s/^"//; s/"$//; s/""/"/g' "$TMP/out" | LC_ALL=C sort >"$TMP/got"
		LC_ALL=C sort "$want" >"$TMP/want"
		if cmp -s "$TMP/got" "$TMP/want"; then
			matched=$((matched + 1))
			pass "fold_${mode}_$base"
		else
			fail "fold_${mode}_$base" "$(diff "$TMP/want" "$TMP/got" | head -6)"
		fi
	done
done
echo "# folded stacks matching stackcollapse-perf.pl: $matched/$total" >&2
