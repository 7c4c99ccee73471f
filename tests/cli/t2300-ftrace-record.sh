# linux.ftrace through tracebox autostart: `tracebox -t 1s -o F
# sched/sched_switch` records FtraceEventBundle packets with events (counted
# with a minimal protobuf walker; sched_switch goes to compact_sched, on by
# default as in Perfetto) that import into `sched`, the trace loads, and tracefs is left as it was (sched_switch
# enable, tracing_on, trace_clock, buffer_size_kb). Needs root and tracefs;
# serialised with other live ftrace tests by /tmp/tb-ftrace-live.lock.
. tests/lib.sh

live_tracefs record || exit 0
if ! command -v python3 >/dev/null 2>&1; then
	skip record "python3 missing"
	exit 0
fi

# The effective per-CPU size: "7 (expanded: 1408)" is 1408.
size_kb() { sed -n 's/.*expanded: \([0-9]*\).*/\1/p; /expanded/!p' "$TRACEFS/buffer_size_kb"; }
state() {
	printf 'enable=%s on=%s clock=%s\n' "$(cat "$TRACEFS/events/sched/sched_switch/enable")" \
		"$(cat "$TRACEFS/tracing_on")" \
		"$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")"
}

exec 9>/tmp/tb-ftrace-live.lock
flock 9
before=$(state) size_before=$(size_kb)
expect_exit record 0 "$TRACEBOX" -t 1s -o "$TMP/f.pftrace" sched/sched_switch
after=$(state) size_after=$(size_kb)
flock -u 9

expect_eq tracefs-restored "$before" "$after"
d=$((size_before - size_after))
[ "${d#-}" -le 16 ] && pass buffer-size-restored ||
	fail buffer-size-restored "before $size_before kB, after $size_after kB"

check trace-loads $TRACEBOX trace_processor_shell query "$TMP/f.pftrace" \
	'select count(*) from slice'

# Trace{packet=1} -> TracePacket{ftrace_events=1} -> FtraceEventBundle{event=2}.
pb_py "$TMP/f.pftrace" >"$TMP/counts" <<'PY'
data = open(sys.argv[1], 'rb').read()
bundles = events = stats = compact = 0
for fid, pkt in fields(data):
    if fid != 1 or pkt is None: continue
    for pf, pv in fields(pkt):
        if pf == 34: stats += 1
        if pf != 1 or pv is None: continue
        n = sum(1 for ef, _ in fields(pv) if ef == 2)
        # compact_sched=4 (on by default): one varint per switch in its
        # packed switch_timestamp=1.
        for ef, ev in fields(pv):
            if ef != 4 or ev is None: continue
            for cf, cv in fields(ev):
                if cf == 1 and cv is not None:
                    compact += 1
                    n += sum(1 for c in cv if c < 0x80)
        if n:
            bundles += 1; events += n
print(bundles, events, stats, compact)
PY
read -r bundles events stats compact <"$TMP/counts" || bundles=0 events=0 stats=0 compact=0
[ "${bundles:-0}" -gt 0 ] && [ "${events:-0}" -gt 0 ] && pass ftrace-bundles ||
	fail ftrace-bundles "bundles with events: ${bundles:-0}, events: ${events:-0}"
expect_eq ftrace-stats-start-and-end 2 "${stats:-0}"
[ "${compact:-0}" -gt 0 ] && pass compact-sched-by-default ||
	fail compact-sched-by-default "no compact_sched switch_timestamp arrays"
# The switches import as scheduling slices.
n=$($TRACEBOX trace_processor_shell query "$TMP/f.pftrace" 'select count(*) from sched' |
	tail -n 1 | tr -dc 0-9)
[ "${n:-0}" -gt 0 ] && pass sched-imported || fail sched-imported "sched rows: ${n:-0}"
