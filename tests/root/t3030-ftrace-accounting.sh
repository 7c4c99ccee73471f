#!/bin/sh
# t3030-ftrace-accounting: no event is lost between the kernel and the trace.
# A 1 s capture of sched_switch and sched_waking, not compact, during a
# context-switch storm: every event the kernel's per_cpu stats say it
# handed out while the session ran (the trace's ftrace_cpu_read_events_delta,
# "read events" at the end minus at the start) must be in the trace, and
# traced_probes must not have logged an accounting difference. Sorted in
# full (--full-sort) so that the count is the recording's, not the sorter's.
# Needs root and tracefs; serialised with other live ftrace tests by
# /tmp/tb-ftrace-live.lock, and skipped when another session has events
# enabled in the top-level buffer (it would read some of them, or we some
# of its).
. tests/lib.sh

live_tracefs kernel-accounting || exit 0

exec 9>/tmp/tb-ftrace-live.lock
flock 9
if [ -n "$(cat "$TRACEFS/set_event")" ]; then
	skip kernel-accounting "another session has events enabled: $(head -1 "$TRACEFS/set_event")"
	exit 0
fi

cat >"$TMP/cfg.pbtx" <<'EOF'
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "linux.ftrace" ftrace_config { ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking" compact_sched { enabled: false } } } }
duration_ms: 1000
EOF

# The storm: perf's pipe ping-pong when perf is here, else a pipe written a
# byte at a time. Either way it outlives the capture and is stopped after.
# It runs in a process group of its own (setsid), killed as a whole: perf
# bench forks, and a child left behind would hold this script's fds (and
# the callers' lock files) forever.
if command -v perf >/dev/null 2>&1 && perf bench sched pipe -l 1 >/dev/null 2>&1; then
	setsid perf bench sched pipe -l 100000000 >/dev/null 2>&1 9>&- &
else
	setsid sh -c 'dd if=/dev/zero bs=1 count=100000000 2>/dev/null | cat >/dev/null' 9>&- &
fi
storm=$!
at_exit "kill -- -$storm 2>/dev/null"

"$TRACEBOX" -c "$TMP/cfg.pbtx" --txt -o "$TMP/t.pftrace" >"$TMP/log" 2>&1
rc=$?
kill -- "-$storm" 2>/dev/null
flock -u 9
if [ "$rc" != 0 ]; then
	fail kernel-accounting "tracebox exited $rc" "$(cat "$TMP/log")"
	exit 0
fi

got=$("$TRACEBOX" trace_processor_shell --full-sort -Q "
	select (select count(*) from ftrace_event) || ' ' ||
	       (select sum(value) from stats where name = 'ftrace_cpu_read_events_delta') as n" \
	"$TMP/t.pftrace" 2>/dev/null | tail -n +2 | tr -d '"')
events=${got%% *}
kernel=${got#* }
if [ -z "$events" ] || [ "$events" -lt 1000 ]; then
	fail kernel-accounting "too few events for a storm: '$got'" "$(cat "$TMP/log")"
else
	expect_eq kernel-accounting "$kernel" "$events"
fi
if grep -q "the kernel handed out" "$TMP/log"; then
	fail no-accounting-warning "$(grep "the kernel handed out" "$TMP/log")"
else
	pass no-accounting-warning
fi
