# Two overlapping autostart captures of sched/sched_switch (issue 21 #9):
# each keeps its events for its whole duration (the first to stop must not
# disable the other's), and when both are done tracefs is exactly as before
# (no instance left behind). The first capture uses the top-level tracefs,
# the second a private instance (instances/tracebox-<pid>). Needs root and
# tracefs; serialised with the other live ftrace tests.
. tests/lib.sh

live_tracefs concurrent || exit 0
size_kb() { sed -n 's/.*expanded: \([0-9]*\).*/\1/p; /expanded/!p' "$TRACEFS/buffer_size_kb"; }
# state: the top level's settings; with "all", also the tracebox instances.
state() {
	printf 'enable=%s on=%s clock=%s size=%s' \
		"$(cat "$TRACEFS/events/sched/sched_switch/enable")" "$(cat "$TRACEFS/tracing_on")" \
		"$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")" "$(size_kb)"
	[ "${1:-}" = all ] && printf ' instances=%s' \
		"$(ls "$TRACEFS/instances" 2>/dev/null | grep -c '^tracebox-')"
	echo
}
# span TRACE: seconds between the first and the last sched_switch.
span() {
	tp_query "$1" "select cast((max(ts) - min(ts)) / 1e9 as int) from sched" | tr -d '"'
}

exec 9>/tmp/tb-ftrace-live.lock
flock 9
before=$(state all)
# The first stops while the second still runs, then the second stops.
"$TRACEBOX" -t 3s -o "$TMP/a.pftrace" sched/sched_switch 2>"$TMP/a.err" &
a=$!
sleep 1
"$TRACEBOX" -t 6s -o "$TMP/b.pftrace" sched/sched_switch 2>"$TMP/b.err" &
b=$!
wait $a
ra=$?
during=$(state)
wait $b
rb=$?
after=$(state all)
flock -u 9

expect_eq both-exit-0 "0 0" "$ra $rb"
sa=$(span "$TMP/a.pftrace")
sb=$(span "$TMP/b.pftrace")
echo "first capture: ${sa:-?} s of sched_switch of 3 s; second: ${sb:-?} s of 6 s" >&2
[ "${sa:-0}" -ge 2 ] && pass first-has-its-events || fail first-has-its-events "${sa:-0} s of 3 s"
[ "${sb:-0}" -ge 5 ] && pass second-keeps-its-events || fail second-keeps-its-events "${sb:-0} s of 6 s"
expect_eq tracefs-restored-after-first "$(echo "$before" | sed 's/ instances=.*//')" "$during"
expect_eq tracefs-restored "$before" "$after"
