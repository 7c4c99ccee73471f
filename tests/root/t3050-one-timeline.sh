# The three-recording workflow of the README ("One timeline from perf,
# trace-cmd and tracebox"), run for real: one workload (tests/tools/
# test_producer, which writes TrackEvent slices into a tracebox capture)
# recorded at once by
#   - tracebox: a gated capture of the producer's data source (app slices,
#     with the service's clock snapshots),
#   - perf: `perf record -e cpu-clock -k mono` around the producer,
#   - ftrace: a private tracefs instance on the mono clock with the sched
#     events, saved with `trace-cmd extract` (trace.dat),
# merged with `traceconv merge` into one archive. In the merged trace the
# workload's perf samples, its sched slices and its app slices overlap in
# time (within 1 ms), trace_file lists the three members, and nothing is
# dropped: every member's counts equal the same file loaded alone.
# Needs root, tracefs, perf_event_open, perf and trace-cmd (SKIP elsewhere).
. tests/lib.sh

live_tracefs one-timeline || exit 0
perf_event_skip one-timeline && exit 0
for tool in perf trace-cmd; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip one-timeline "$tool is not installed"
		exit 0
	fi
done
PRODUCER=$TB_OUT/tools/test_producer
if [ ! -x "$PRODUCER" ]; then
	skip one-timeline "no $PRODUCER (./build.sh build-tests builds it)"
	exit 0
fi
export TRACEBOX_LOG=error
# q TRACE SQL: the answer's rows without the header, quotes removed.
q() { "$TRACEBOX" trace_processor_shell query "$1" "$2" 2>>"$TMP/qerr" | sed '1d; s/"//g'; }

inst=$TRACEFS/instances/tb3050_$$
exec 9>/tmp/tb-ftrace-live.lock
flock 9
if ! mkdir "$inst" 2>/dev/null; then
	flock -u 9
	skip one-timeline "cannot create a tracefs instance"
	exit 0
fi
at_exit "[ ! -d '$inst' ] || { echo 0 >'$inst/tracing_on'; rmdir '$inst'; } 2>/dev/null"
echo mono >"$inst/trace_clock"
echo 8192 >"$inst/buffer_size_kb"
for e in sched_switch sched_waking sched_process_exit; do
	echo 1 >"$inst/events/sched/$e/enable"
done

cat >"$TMP/app.pbtx" <<'CFG'
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "tb.test" } }
CFG
echo 1 >"$inst/tracing_on"
timeout 60 "$TRACEBOX" --txt -c "$TMP/app.pbtx" -o "$TMP/app.pftrace" -- \
	perf record -q -e cpu-clock -k mono -o "$TMP/perf.data" -- \
	"$PRODUCER" --slices 400000 --batch 1000 >"$TMP/out" 2>"$TMP/err"
rc=$?
echo 0 >"$inst/tracing_on"
trace-cmd extract -B "${inst##*/}" -o "$TMP/trace.dat" >"$TMP/extract.log" 2>&1
flock -u 9
expect_eq capture-exit 0 "$rc"
expect_eq producer-wrote "written=400000 dropped=0" "$(grep '^written=' "$TMP/out")"
for f in app.pftrace perf.data trace.dat; do
	if [ ! -s "$TMP/$f" ]; then
		fail recorded "$f is missing or empty" "$(cat "$TMP/err" "$TMP/extract.log")"
		exit 0
	fi
done
pass recorded

expect_exit merge 0 "$TRACEBOX" traceconv merge -o "$TMP/one.tar" \
	"$TMP/app.pftrace" "$TMP/perf.data" "$TMP/trace.dat"
[ -s "$TMP/one.tar" ] || exit 0

# The workload's main thread: the test_producer thread with the most samples.
pid=$(q "$TMP/perf.data" "select t.tid from perf_sample s join thread t using (utid)
	where t.name like 'test_produc%' group by t.tid order by count(*) desc limit 1")
case $pid in
'' | *[!0-9]*)
	fail workload-found "no samples of test_producer in perf.data: '$pid'" "$(cat "$TMP/qerr")"
	exit 0
	;;
esac
pass workload-found

expect_eq members "app.pftrace,proto perf.data,perf trace.dat,trace_dat" \
	"$(q "$TMP/one.tar" "select name, trace_type from trace_file
		where name in ('app.pftrace', 'perf.data', 'trace.dat') order by name" | tr '\n' ' ' | sed 's/ $//')"

# Counts of each member alone and in the merged trace.
perf_q="select count(*) from perf_sample"
sched_q="select count(*) from sched"
slice_q="select count(*) from slice where name like 'slice%'"
alone="$(q "$TMP/perf.data" "$perf_q") $(q "$TMP/trace.dat" "$sched_q") $(q "$TMP/app.pftrace" "$slice_q")"
merged="$(q "$TMP/one.tar" "$perf_q") $(q "$TMP/one.tar" "$sched_q") $(q "$TMP/one.tar" "$slice_q")"
expect_eq nothing-dropped "$alone" "$merged"
echo "  perf samples, sched slices, app slices: $merged" >&2
case $alone in
0\ * | *\ 0\ * | *\ 0) fail members-not-empty "perf samples, sched slices, app slices: $alone" ;;
*) pass members-not-empty ;;
esac
expect_eq no-unrelated-clocks 0 "$(q "$TMP/one.tar" "select ifnull(sum(value), 0) from stats
	where name like 'clock_sync%' and severity != 'info'")"

# The time range of each kind of event of the workload, on the merged
# timeline: they overlap, or are at most 1 ms apart.
ranges=$(q "$TMP/one.tar" "
	select 'perf', min(s.ts), max(s.ts) from perf_sample s join thread t using (utid)
		where t.tid = $pid
	union all
	select 'sched', min(s.ts), max(s.ts + s.dur) from sched s join thread t using (utid)
		where t.tid = $pid
	union all
	select 'app', min(s.ts), max(s.ts + s.dur) from slice s where s.name like 'slice%'")
gap=$(printf '%s\n' "$ranges" | awk -F, '
	{ if (NR == 1 || $2 > lo) lo = $2; if (NR == 1 || $3 < hi) hi = $3 }
	END { print (NR == 3 && lo != "" && hi != "") ? lo - hi : "none" }')
case $gap in
none) fail overlap "missing ranges: $ranges" ;;
*)
	printf '  %s\n' $ranges "gap: $gap ns" >&2
	if [ "$gap" -le 1000000 ]; then
		pass overlap
	else
		fail overlap "the ranges are $gap ns apart" "$ranges"
	fi
	;;
esac
