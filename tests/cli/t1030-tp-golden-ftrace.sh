# Ftrace import against Perfetto v58.2's own answers: for the golden sched
# traces (compact_sched and typed sched_switch / sched_waking) and the
# generic-events trace, each query below must print what trace_processor
# printed (../shared/reference/golden/traces/<T>.answers.csv, long format:
# query_id,row,column,value; README §2). stats_nonzero (the trace_stats and
# ftrace_stats packets: traced_*, traced_buf_* per buffer, ftrace_cpu_* per
# cpu) is checked without clock_sync_cache_miss, a count of misses of
# Perfetto's clock conversion cache, which we do not have. trace_bounds on the
# compact_sched traces checks Perfetto's rule that bounds come from imported
# rows: the wakings and the first switch of a cpu before its running task is
# known (dropped) do not move trace_start().
. tests/lib.sh

dir=$TB_SHARED/reference/golden/traces
if [ ! -f "$dir/sched.answers.csv" ]; then
	skip golden "../shared/reference/golden/traces not found"
	exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip golden "python3 missing"
	exit 0
fi
bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox

cat >"$TMP/queries" <<'SQL'
counts	select (select count(*) from sched) as sched, (select count(*) from thread_state) as thread_state, (select count(*) from ftrace_event) as ftrace_event, (select count(*) from counter) as counter, (select count(*) from process) as process, (select count(*) from thread) as thread
tb_spin_threads	select t.tid, t.name, count(s.id) as sched_slices, coalesce(sum(s.dur), 0) as sched_dur_ns from thread t left join sched s using(utid) where t.name glob 'tb-spin*' group by t.utid order by t.name, t.tid
counter_track_names	select distinct name from counter_track order by name
ftrace_event_names	select name, count(*) as cnt from ftrace_event group by name order by name
processes	select upid, pid, name, cmdline from process order by upid
trace_bounds	select trace_start() as start_ts, trace_end() as end_ts
stats_nonzero	select name, idx, severity, source, value from stats where value != 0 and name not like '%duration_ns' order by name, idx
SQL

# The answers without the rows of stat $2, renumbered.
drop_stat() { # FILE STAT
	python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
gone = {r[1] for r in rows if r[2] == "name" and r[3] == sys.argv[2]}
w = csv.writer(sys.stdout, lineterminator="\n")
n, last = -1, None
for r in rows:
    if r[1] in gone:
        continue
    if r[1] != last:
        n, last = n + 1, r[1]
    w.writerow([r[0], n, r[2], r[3]])
' "$1" "$2"
}

# long CSV: the shell's CSV output in the answers' long format.
long() { # QUERY_ID < shell output
	python3 -c '
import csv, sys
q = sys.argv[1]
rows = list(csv.reader(sys.stdin))
w = csv.writer(sys.stdout, lineterminator="\n")
if len(rows) <= 1:
    w.writerow([q, -1, "", "(no rows)"])
for i, r in enumerate(rows[1:]):
    for c, v in zip(rows[0], r):
        w.writerow([q, i, c, v])
' "$1"
}

tab=$(printf '\t')
for t in sched sched_compact sched_nocompact ftrace_generic; do
	while IFS=$tab read -r id sql; do
		grep "^$id," "$dir/$t.answers.csv" >"$TMP/want"
		if ! "$bin" trace_processor_shell query "$dir/$t.pftrace" "$sql" >"$TMP/got.csv" 2>"$TMP/err"; then
			fail "${t}_$id" "$(tail -3 "$TMP/err")"
			continue
		fi
		long "$id" <"$TMP/got.csv" >"$TMP/got"
		[ "$id" = stats_nonzero ] && drop_stat "$TMP/want" clock_sync_cache_miss >"$TMP/want2" && mv "$TMP/want2" "$TMP/want"
		if cmp -s "$TMP/want" "$TMP/got"; then
			pass "${t}_$id"
		else
			fail "${t}_$id" "$(diff "$TMP/want" "$TMP/got" | head -10)"
		fi
	done <"$TMP/queries"
done
