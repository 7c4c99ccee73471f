# trace_processor_shell as users drive it: query modes, Perfetto's CSV
# format, trace from stdin and gzip, errors with exit status 1.
. tests/lib.sh

tps() { "$TRACEBOX" trace_processor_shell "$@"; }

cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[
 {"ph":"X","name":"outer","cat":"c","ts":1,"dur":10,"pid":1,"tid":2,"args":{"n":3,"s":"x"}},
 {"ph":"X","name":"inner","cat":"c","ts":2,"dur":3,"pid":1,"tid":2},
 {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}}
]}
JSON

q='select name, ts, dur, depth, parent_id from slice order by ts'
expected='"name","ts","dur","depth","parent_id"
"outer",1000,10000,0,"[NULL]"
"inner",2000,3000,1,0'

expect_exit query-positional 0 tps query "$TMP/t.json" "$q"
expect_eq query-csv "$expected" "$(cat "$TMP/out")"
grep -q '^Trace loaded: ' "$TMP/err" && pass trace-loaded-line || fail trace-loaded-line "$(cat "$TMP/err")"

printf '%s;\n' "$q" >"$TMP/q.sql"
expect_exit query-file 0 tps query -f "$TMP/q.sql" "$TMP/t.json"
expect_eq query-file-csv "$expected" "$(cat "$TMP/out")"
expect_exit classic-q 0 tps -q "$TMP/q.sql" "$TMP/t.json"
expect_eq classic-q-csv "$expected" "$(cat "$TMP/out")"
expect_exit classic-Q 0 tps -Q "$q" "$TMP/t.json"
expect_eq classic-Q-csv "$expected" "$(cat "$TMP/out")"
expect_exit query-stdin-sql 0 sh -c "printf '%s' '$q' | '$TRACEBOX' trace_processor_shell query '$TMP/t.json'"
expect_eq query-stdin-sql-csv "$expected" "$(cat "$TMP/out")"

# Trace from stdin, and gzip'd.
expect_exit trace-stdin 0 sh -c "'$TRACEBOX' trace_processor_shell query - '$q' < '$TMP/t.json'"
expect_eq trace-stdin-csv "$expected" "$(cat "$TMP/out")"
gzip -c "$TMP/t.json" >"$TMP/t.json.gz"
expect_exit trace-gzip 0 tps query "$TMP/t.json.gz" "$q"
expect_eq trace-gzip-csv "$expected" "$(cat "$TMP/out")"

# A file of several read pieces (1 MiB) and map windows (4 MiB): mapped by default, read() with
# Perfetto's TRACE_PROCESSOR_NO_MMAP=1; the same answer either way.
awk 'BEGIN { printf "["; for (i = 0; i < 90000; i++)
	printf "{\"ph\":\"X\",\"name\":\"s%d\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":%d},\n", i % 7, i * 2, i % 3 + 1
	print "]" }' >"$TMP/big.json"
qb='select count(*), sum(dur), count(distinct name), max(ts) from slice'
eb='"count(*)","sum(dur)","count(distinct name)","max(ts)"
90000,90000000,7,179998000'
expect_exit trace-mapped 0 tps query "$TMP/big.json" "$qb"
expect_eq trace-mapped-csv "$eb" "$(cat "$TMP/out")"
expect_exit trace-no-mmap 0 env TRACE_PROCESSOR_NO_MMAP=1 "$TRACEBOX" trace_processor_shell query "$TMP/big.json" "$qb"
expect_eq trace-no-mmap-csv "$eb" "$(cat "$TMP/out")"

# Value formats: doubles %f, strings quoted, NULL, several result sets.
expect_exit formats 0 tps query "$TMP/t.json" \
	"select 1.5 as d, 'a' as s, null as n, 7 as i; select 2 as two"
expect_eq formats-csv '"d","s","n","i"
1.500000,"a","[NULL]",7

"two"
2' "$(cat "$TMP/out")"

# Joins users paste: slice -> thread_track -> thread, args.
expect_exit join 0 tps query "$TMP/t.json" \
	"select s.name, t.name as thread, t.tid from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid) order by s.ts"
expect_eq join-csv '"name","thread","tid"
"outer","worker",2
"inner","worker",2' "$(cat "$TMP/out")"
expect_exit args 0 tps query "$TMP/t.json" \
	"select key, int_value, string_value from args join slice using(arg_set_id) where slice.name = 'outer' order by key"
expect_eq args-csv '"key","int_value","string_value"
"args.n",3,"[NULL]"
"args.s","[NULL]","x"' "$(cat "$TMP/out")"

# Errors: one clear line, exit 1.
expect_exit missing-trace 1 tps query "$TMP/nope.json" "select 1"
grep -q "cannot open '$TMP/nope.json'" "$TMP/err" && pass missing-trace-message ||
	fail missing-trace-message "$(cat "$TMP/err")"
printf 'this is not a trace\n' >"$TMP/bad.txt"
expect_exit unknown-format 1 tps query "$TMP/bad.txt" "select 1"
grep -q 'unknown trace format' "$TMP/err" && pass unknown-format-message ||
	fail unknown-format-message "$(cat "$TMP/err")"
expect_exit sql-error 1 tps query "$TMP/t.json" "select no_such_column from slice"
grep -q 'no such column: no_such_column' "$TMP/err" && pass sql-error-message ||
	fail sql-error-message "$(cat "$TMP/err")"

# Interactive shell on piped input, byte for byte as Perfetto v58.2's
# (its timings aside): a line is a query, with or without `;`, of which
# the last statement's rows show; columns of 20 and a space, numbers to
# the right, text cut at the width; the header only with a first row; an
# error on stderr as a traceback, and the shell goes on; an empty line says
# how to quit; .width from then on; .q ends it (the line after never runs).
printf '%s\n' 'select bad' "select 1 as a; select 2 as n, 2.5 as d, null as z, 'abcdefghijklmnopqrstuvwxyz' as s" \
	'' 'select name from slice where dur < 0' '.width 8' 'select count(*) as n, 123456789012 as big' \
	'select 3 as three;' '.q' 'select 4' >"$TMP/in.txt"
tps "$TMP/t.json" <"$TMP/in.txt" >"$TMP/out" 2>"$TMP/err"
expect_eq interactive-exit 0 "$?"
sed 's/executed in [0-9]*\.[0-9][0-9][0-9] ms$/executed in T ms/' "$TMP/out" >"$TMP/out.t"
printf '%s\n' '' 'Query executed in T ms' '' \
	'n                    d                    z                    s                    ' \
	'-------------------- -------------------- -------------------- -------------------- ' \
	'                   2             2.500000 [NULL]               abcdefghijklmnopqrst ' \
	'' 'Query executed in T ms' '' \
	'If you want to quit either type .q or press CTRL-D (EOF)' \
	'' 'Query executed in T ms' '' \
	'n        big      ' '-------- -------- ' '       1 123456789012 ' \
	'' 'Query executed in T ms' '' \
	'three    ' '-------- ' '       3 ' \
	'' 'Query executed in T ms' '' >"$TMP/want"
cmp -s "$TMP/want" "$TMP/out.t" && pass interactive-output ||
	fail interactive-output "$(diff "$TMP/want" "$TMP/out.t" | head -20)"
expect_eq interactive-error "Traceback (most recent call last):
  File \"stdin\" line 1 col 8
    select bad
           ^
no such column: bad" "$(grep -v '^Trace loaded' "$TMP/err")"

# Dot-commands: .read runs a file's statements as -q does (CSV), .reset
# drops what was created since the load, .dump writes the database,
# .width takes a number only, an unknown command shows the list.
printf '%s\n' 'create table mine as select 7 as v' ".read $TMP/q.sql" '.reset' 'select * from mine' \
	".dump $TMP/i.db" '.width x' '.nope' >"$TMP/in2.txt"
tps "$TMP/t.json" <"$TMP/in2.txt" >"$TMP/out" 2>"$TMP/err"
expect_eq interactive-read "$expected" "$(sed -n '4,6p' "$TMP/out")"
grep -q '^no such table: mine$' "$TMP/err" && pass interactive-reset ||
	fail interactive-reset "$(cat "$TMP/err")"
[ "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
	"select count(*) from slice").fetchone()[0])' "$TMP/i.db" 2>&1)" = 2 ] &&
	pass interactive-dump || fail interactive-dump "$(cat "$TMP/err")"
grep -q '^Invalid column width specified$' "$TMP/err" && grep -q '^Available commands:$' "$TMP/err" &&
	pass interactive-bad-commands || fail interactive-bad-commands "$(cat "$TMP/err")"

# A line's statements run in order, each before the next is prepared (the
# table exists for the insert, the row for the select); a line of only ';'
# is "No valid SQL to run", as in Perfetto. -q then -i: .reset goes back to
# the schema the load made, dropping what -q created too.
printf 'create table early(x);\n' >"$TMP/early.sql"
printf '%s\n' 'create table tt(x); insert into tt values(41); select x + 1 as y from tt' ';' \
	'.reset' 'select count(*) as n from early' >"$TMP/in3.txt"
tps -q "$TMP/early.sql" -i "$TMP/t.json" <"$TMP/in3.txt" >"$TMP/out" 2>"$TMP/err"
grep -q '^                  42 $' "$TMP/out" && pass interactive-statements-in-order ||
	fail interactive-statements-in-order "$(cat "$TMP/out")" "$(cat "$TMP/err")"
grep -q '^No valid SQL to run$' "$TMP/err" && grep -q '^no such table: early$' "$TMP/err" &&
	pass interactive-empty-and-reset || fail interactive-empty-and-reset "$(cat "$TMP/err")"

expect_exit alias-trace_processor 0 "$TRACEBOX" trace_processor --version
grep -q 'Trace Processor RPC API version: 14' "$TMP/out" && pass version-api ||
	fail version-api "$(cat "$TMP/out")"
