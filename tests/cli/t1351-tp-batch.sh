# query --batch (issue 19): one query over many traces with N worker
# processes, one table with a leading trace column in input order, the
# traces that fail reported (stderr, --errors) and skipped. Exact answers
# on the golden traces (Perfetto v58.2's counts from their answers.csv) and
# on corpus traces; -j 1 and -j 2 byte for byte equal; the same rows as a
# loop of single-trace queries; a corrupt trace in a batch of 20; the list
# from stdin; TSV; an unwritable -o; a bad query; the memory cap.
. tests/lib.sh

G=$TB_SHARED/reference/golden/traces
C=$TB_SHARED/corpus/chrome_json
if [ ! -d "$G" ] || [ ! -d "$C" ]; then
	skip all "no golden traces or corpus in $TB_SHARED"
	exit 0
fi
TP="$TRACEBOX trace_processor_shell"

# -- golden traces: Perfetto's own counts ----------------------------------
cat >"$TMP/counts.sql" <<'EOF'
-- one row per trace
select (select count(*) from sched) as sched,
       (select count(*) from thread_state) as thread_state,
       (select count(*) from process) as process,
       (select count(*) from thread) as thread;
EOF
GOLDEN="$G/sched.pftrace $G/sched_compact.pftrace $G/sched_nocompact.pftrace $G/ftrace_generic.pftrace"
{
	echo '"trace","sched","thread_state","process","thread"'
	for t in $GOLDEN; do
		a=${t%.pftrace}.answers.csv
		v() { grep "^counts,0,$1," "$a" | cut -d, -f4; }
		echo "\"$t\",$(v sched),$(v thread_state),$(v process),$(v thread)"
	done
} >"$TMP/golden.expected"
# shellcheck disable=SC2086
expect_exit golden-exit 0 $TP query --batch -j 2 -f "$TMP/counts.sql" $GOLDEN
if cmp -s "$TMP/golden.expected" "$TMP/out"; then
	pass golden-answers
else
	fail golden-answers "$(diff "$TMP/golden.expected" "$TMP/out")"
fi

# -- corpus traces: exact rows, in the order given -----------------------------
echo 'select count(*) as n, sum(dur) as d from slice' >"$TMP/slices.sql"
S1=$C/catapult-project+catapult__simple_trace.json
S2=$C/catapult-project+catapult__flow.json
S3=$C/catapult-project+catapult__simple_trace_gz.gz
S4=$C/catapult-project+catapult__google_cloud_trace.json
S5=$C/GoogleChrome+lighthouse__lh-lcp-m78.json
S6=$C/catapult-project+catapult__simple_trace_zip.zip
cat >"$TMP/corpus.expected" <<EOF
"trace","n","d"
"$S1",18,106000
"$S2",1625,1394557997
"$S3",16,106000
"$S4",0,"[NULL]"
"$S5",350,2714086000
"$S6",16,106000
EOF
expect_exit corpus-exit 0 $TP query --batch -j 2 -f "$TMP/slices.sql" "$S1" "$S2" "$S3" "$S4" "$S5" "$S6"
if cmp -s "$TMP/corpus.expected" "$TMP/out"; then
	pass corpus-answers
else
	fail corpus-answers "$(diff "$TMP/corpus.expected" "$TMP/out")"
fi

# -- -j 1 and -j 2 equal, and equal to a loop of single-trace queries -------
ls "$C"/*.json | head -24 >"$TMP/list.txt"
for j in 1 2; do
	$TP query --batch -j $j -f "$TMP/slices.sql" --batch-list "$TMP/list.txt" \
		>"$TMP/j$j.csv" 2>"$TMP/j$j.err" && echo 0 >"$TMP/j$j.rc" || echo $? >"$TMP/j$j.rc"
done
if cmp -s "$TMP/j1.csv" "$TMP/j2.csv" && [ "$(cat "$TMP/j1.rc")" = 0 ] &&
	[ "$(cat "$TMP/j2.rc")" = 0 ] && [ "$(wc -l <"$TMP/j1.csv")" = 25 ]; then
	pass j1-equals-j2
else
	fail j1-equals-j2 "rc $(cat "$TMP/j1.rc") / $(cat "$TMP/j2.rc"), $(wc -l <"$TMP/j1.csv") lines" \
		"$(diff "$TMP/j1.csv" "$TMP/j2.csv" | head)" "$(head -5 "$TMP/j2.err")"
fi
{
	echo '"trace","n","d"'
	while read -r t; do
		$TP query -f "$TMP/slices.sql" "$t" 2>/dev/null | tail -n +2 | sed "s|^|\"$t\",|"
	done <"$TMP/list.txt"
} >"$TMP/loop.csv"
if cmp -s "$TMP/loop.csv" "$TMP/j2.csv"; then
	pass equals-single-trace-loop
else
	fail equals-single-trace-loop "$(diff "$TMP/loop.csv" "$TMP/j2.csv" | head)"
fi

# -- the list from stdin ---------------------------------------------------------
printf '# a comment\n%s\n\n%s\n' "$S1" "$S2" >"$TMP/stdin.list"
expect_exit list-stdin-exit 0 sh -c "$TP query --batch -f '$TMP/slices.sql' --batch-list - <'$TMP/stdin.list'"
expect_eq list-stdin "$(head -3 "$TMP/corpus.expected")" "$(cat "$TMP/out")"
# positionals first, then the list
expect_exit list-and-args-exit 0 sh -c "$TP query --batch -f '$TMP/slices.sql' '$S3' --batch-list - <'$TMP/stdin.list'"
expect_eq list-and-args "$(printf '%s\n%s\n%s\n%s' '"trace","n","d"' "\"$S3\",16,106000" \
	"\"$S1\",18,106000" "\"$S2\",1625,1394557997")" "$(cat "$TMP/out")"

# -- a corrupt trace in a batch of 20 ------------------------------------------
mkdir "$TMP/b20"
head -c 3000 /dev/zero | tr '\0' '\377' >"$TMP/b20/t07.pftrace"
i=0
for f in "$S1" "$S2" "$S3" "$S5" "$S6"; do
	for k in 1 2 3 4; do
		[ $i = 7 ] && i=$((i + 1))
		[ $i -ge 20 ] && break
		ln -s "$f" "$TMP/b20/t$(printf %02d $i).${f##*.}"
		i=$((i + 1))
	done
done
ls "$TMP"/b20/* >"$TMP/b20.list"
expect_exit corrupt-exit 2 $TP query --batch -j 2 -f "$TMP/slices.sql" -o "$TMP/b20.csv" \
	--errors "$TMP/b20.err.csv" --batch-list "$TMP/b20.list"
rows=$(tail -n +2 "$TMP/b20.csv" | wc -l)
bad=$(grep -c 't07.pftrace' "$TMP/b20.csv")
expect_eq corrupt-19-answer "19 0" "$rows $bad"
expect_eq corrupt-errors-file "$(printf '"trace","error"\n"%s","cannot load '"'"'%s'"'"': unknown trace format"' \
	"$TMP/b20/t07.pftrace" "$TMP/b20/t07.pftrace")" "$(cat "$TMP/b20.err.csv")"
if grep -q "t07.pftrace': cannot load .*unknown trace format" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ]; then
	pass corrupt-stderr
else
	fail corrupt-stderr "expected one line naming t07.pftrace" "$(cat "$TMP/err")"
fi
# the answers are those of the traces' own rows, in order
tail -n +2 "$TMP/b20.csv" | cut -d, -f1 | tr -d '"' >"$TMP/b20.order"
grep -v t07 "$TMP/b20.list" >"$TMP/b20.want"
if cmp -s "$TMP/b20.want" "$TMP/b20.order"; then
	pass corrupt-order
else
	fail corrupt-order "$(diff "$TMP/b20.want" "$TMP/b20.order")"
fi

# -- several statements: they all run, the last one's rows are the result ----------
printf 'INCLUDE PERFETTO MODULE slices.with_context;\nselect 42 as ignored;\ncreate perfetto table t as select count(*) as n from thread_slice;\n-- the answer\nselect n from t; -- trailing\n' >"$TMP/multi.sql"
expect_exit multi-statement-exit 0 $TP query --batch -f "$TMP/multi.sql" "$S1" "$S3"
expect_eq multi-statement "$(printf '"trace","n"\n"%s",16\n"%s",16' "$S1" "$S3")" "$(cat "$TMP/out")"
printf 'select 1 as a;\ncreate table zz(a);\n' >"$TMP/last.sql"
expect_exit last-statement-no-rows 1 $TP query --batch -f "$TMP/last.sql" "$S1"
expect_eq last-statement-no-rows-message \
	"trace_processor_shell: query: '$S1': query failed: the last statement returns no columns" "$(cat "$TMP/err")"

# -- TSV -------------------------------------------------------------------------
printf "select 'a\tb' as s, null as z, 1.5 as f\n" >"$TMP/tsv.sql"
expect_exit tsv-exit 0 $TP query --batch --format tsv -f "$TMP/tsv.sql" "$S1"
expect_eq tsv "$(printf 'trace\ts\tz\tf\n%s\ta\\tb\t\t1.500000' "$S1")" "$(cat "$TMP/out")"

# --errors stays CSV with --format tsv
expect_exit tsv-errors-exit 2 $TP query --batch --format tsv -f "$TMP/slices.sql" \
	--errors "$TMP/tsv.err.csv" "$S1" "$TMP/b20/t07.pftrace"
expect_eq tsv-errors "$(printf '"trace","error"\n"%s","cannot load '"'"'%s'"'"': unknown trace format"' \
	"$TMP/b20/t07.pftrace" "$TMP/b20/t07.pftrace")" "$(cat "$TMP/tsv.err.csv")"

# -- unwritable -o: one error, no file, no output ---------------------------------
expect_exit unwritable-exit 1 $TP query --batch -f "$TMP/slices.sql" -o "$TMP/no/such/dir/out.csv" "$S1"
expect_eq unwritable-message "trace_processor_shell: query: cannot create '$TMP/no/such/dir/out.csv': No such file or directory" \
	"$(cat "$TMP/err")"
if [ ! -e "$TMP/no" ] && [ ! -s "$TMP/out" ]; then
	pass unwritable-nothing-left
else
	fail unwritable-nothing-left "$(ls -R "$TMP/no" 2>&1)"
fi

# -- a bad query: every trace fails (exit 1), each reported -----------------------
echo 'select * from no_such_table' >"$TMP/bad.sql"
expect_exit bad-query-exit 1 $TP query --batch -j 2 -f "$TMP/bad.sql" -o "$TMP/bad.csv" \
	--errors "$TMP/bad.err.csv" "$S1" "$S2"
expect_eq bad-query-errors "$(printf '"trace","error"\n"%s","query failed: no such table: no_such_table"\n"%s","query failed: no such table: no_such_table"' "$S1" "$S2")" \
	"$(cat "$TMP/bad.err.csv")"
expect_eq bad-query-stderr 2 "$(grep -c 'no such table: no_such_table' "$TMP/err")"
if [ ! -e "$TMP/bad.csv" ]; then
	pass bad-query-no-output-file
else
	fail bad-query-no-output-file "$(cat "$TMP/bad.csv")"
fi

# -- usage errors -------------------------------------------------------------------
expect_exit no-sql-file 1 $TP query --batch "$S1"
expect_exit jobs-zero 1 $TP query --batch -j 0 -f "$TMP/slices.sql" "$S1"
expect_exit no-traces 1 $TP query --batch -f "$TMP/slices.sql"
expect_exit jobs-without-batch 1 $TP query -j 2 "$S1" 'select 1'

# -- the memory cap: a trace too big for it fails alone -----------------------------
# (the 33 MB trace peaks at 34 MB of RSS loaded alone; the small ones load in 8 MB)
"${PYTHON:-python3}" - "$TMP/big.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[\n')
    for i in range(400000):
        f.write('{"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":5,"name":"n%d","args":{"i":%d}},\n'
                % (i % 8, i * 10, i % 1000, i))
    f.write('{"ph":"i","pid":1,"tid":1,"ts":0,"name":"end"}]}\n')
PY
$TP query --batch -j 2 --max-memory 16 -f "$TMP/slices.sql" --errors "$TMP/mem.err.csv" \
	"$S1" "$TMP/big.json" "$S2" >"$TMP/out" 2>"$TMP/err" && rc=0 || rc=$?
if grep -q 'not enforced under AddressSanitizer' "$TMP/err"; then
	skip memory-cap "--max-memory is not enforced by this (ASan) build"
else
	expect_eq memory-cap-exit 2 "$rc"
	expect_eq memory-cap-others "$(sed -n '1,3p' "$TMP/corpus.expected")" "$(cat "$TMP/out")"
	if grep -q "big.json\",\".*out of memory.*--max-memory 16 MB" "$TMP/mem.err.csv"; then
		pass memory-cap-reported
	else
		fail memory-cap-reported "$(cat "$TMP/mem.err.csv")" "$(cat "$TMP/err")"
	fi
	expect_exit memory-cap-lifted 0 $TP query --batch -j 2 --max-memory 2048 -f "$TMP/slices.sql" "$TMP/big.json"
	expect_eq memory-cap-lifted-answer "\"$TMP/big.json\",400001,2000000000" "$(tail -1 "$TMP/out")"
fi

# -- SIGTERM: exit 143, no -o file, no temporary folder, no process left ----------
mkdir "$TMP/tmpd"
TMPDIR=$TMP/tmpd $TP query --batch -j 1 -f "$TMP/slices.sql" -o "$TMP/term.csv" \
	"$TMP/big.json" "$TMP/big.json" "$TMP/big.json" "$TMP/big.json" "$TMP/big.json" \
	>/dev/null 2>"$TMP/term.err" &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid && rc=0 || rc=$?
sleep 0.2
left=$(ps -eo args | grep -c "[-]o $TMP/term.csv")
expect_eq sigterm "143 interrupted none 0 0" \
	"$rc $(grep -c 'query: interrupted' "$TMP/term.err" | sed 's/1/interrupted/') $(ls "$TMP/tmpd" | wc -l | sed 's/^0$/none/') $(ls "$TMP" | grep -c term.csv) $left"
