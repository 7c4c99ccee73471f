# A traced_probes killed mid-capture leaves its tracefs changes behind (and
# their record); `traced_probes --cleanup-after-crash` then puts back every
# setting it had changed (sched_switch enable, tracing_on, trace_clock,
# buffer_size_kb), as they were before the capture. Needs root and tracefs;
# serialised with other live ftrace tests by /tmp/tb-ftrace-live.lock.
. tests/lib.sh

live_tracefs crash-cleanup || exit 0

size_kb() { sed -n 's/.*expanded: \([0-9]*\).*/\1/p; /expanded/!p' "$TRACEFS/buffer_size_kb"; }
state() {
	printf 'enable=%s on=%s clock=%s size=%s\n' \
		"$(cat "$TRACEFS/events/sched/sched_switch/enable")" "$(cat "$TRACEFS/tracing_on")" \
		"$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")" "$(size_kb)"
}

exec 9>/tmp/tb-ftrace-live.lock
flock 9
before=$(state)
# If the script stops before the cleanup below, still undo the dead
# session's changes from its record (not by writing `before` back: another
# tracefs user may have changed things meanwhile).
cleaned=0
at_exit '[ "$cleaned" = 1 ] || "$TRACEBOX" traced_probes --cleanup-after-crash >/dev/null 2>&1'

"$TRACEBOX" -t 30s -o "$TMP/f.pftrace" sched/sched_switch >"$TMP/log" 2>&1 &
tbpid=$!
i=0
while [ "$(cat "$TRACEFS/events/sched/sched_switch/enable")" != 1 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
probes=$(ps -o pid=,args= --ppid "$tbpid" | awk '/traced_probes/ { print $1 }')
if [ -z "$probes" ]; then
	kill "$tbpid" 2>/dev/null
	wait "$tbpid" 2>/dev/null
	fail capture-started "no traced_probes under tracebox $tbpid" "$(cat "$TMP/log")"
	exit 0
fi
kill -KILL "$probes"
sleep 0.2
crashed=$(state)
kill "$tbpid" 2>/dev/null
wait "$tbpid" 2>/dev/null
case $crashed in
enable=1*) pass crash-leaves-event-enabled ;;
*) fail crash-leaves-event-enabled "after the crash: $crashed" ;;
esac

expect_exit cleanup 0 "$TRACEBOX" traced_probes --cleanup-after-crash
cleaned=1
after=$(state)
flock -u 9
expect_eq tracefs-restored "$before" "$after"
