# Ftrace import against Perfetto v58.2's own answers: for the golden sched
# traces (compact_sched and typed sched_switch / sched_waking) and the
# generic-events trace, each query below must print what trace_processor
# printed (../shared/reference/golden/traces/<T>.answers.csv, long format:
# query_id,row,column,value; README §2). stats_nonzero is not here: the
# trace_stats packet is not imported yet. trace_bounds on the compact_sched
# traces checks Perfetto's rule that bounds come from imported rows: the
# wakings and the first switch of a cpu before its running task is known
# (dropped) do not move trace_start().
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
SQL

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
		if cmp -s "$TMP/want" "$TMP/got"; then
			pass "${t}_$id"
		else
			fail "${t}_$id" "$(diff "$TMP/want" "$TMP/got" | head -10)"
		fi
	done <"$TMP/queries"
done
