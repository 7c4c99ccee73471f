# FtraceConfig.symbolize_ksyms on the real kernel. With sched_blocked_reason
# (an Android kernel event) recorded while a workload blocks in D state
# (fsync): traced_probes loads /proc/kallsyms (FtraceStats
# .kernel_symbols_parsed in the trace) and thread_state.blocked_function
# holds kernel function names that /proc/kallsyms lists. Without that event
# nothing needs symbols, and none are loaded (kernel_symbols_parsed absent:
# reading kallsyms costs ~50 ms of CPU at the start of every light-config
# capture, which asks for symbolize_ksyms). Needs root and tracefs;
# serialised with the other live ftrace tests by /tmp/tb-ftrace-live.lock.
. tests/lib.sh

live_tracefs ksyms || exit 0

blocked=no
[ -d "$TRACEFS/events/sched/sched_blocked_reason" ] && blocked=yes
cat >"$TMP/k.pbtx" <<CFG
duration_ms: 60000
buffers { size_kb: 16384 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.ftrace" ftrace_config {
	ftrace_events: "sched/sched_switch"
	$([ $blocked = yes ] && echo 'ftrace_events: "sched/sched_blocked_reason"')
	symbolize_ksyms: true } } }
CFG

exec 9>/tmp/tb-ftrace-live.lock
flock 9
expect_exit record 0 "$TRACEBOX" --txt -c "$TMP/k.pbtx" -o "$TMP/k.pftrace" -- \
	sh -c "for i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of='$TMP/f' bs=64k count=16 conv=fsync 2>/dev/null; done"
flock -u 9

# FtraceStats (TracePacket 34) kernel_symbols_parsed (3), from the file.
if command -v python3 >/dev/null 2>&1; then
	parsed=$(pb_py "$TMP/k.pftrace" <<'PY'
best = 0
for _, pkt in fields(open(sys.argv[1], "rb").read()):
    for f, v in fields(pkt):
        if f == 34:
            for g, x in fields(v):
                if g == 3:
                    best = max(best, x)
print(best)
PY
)
	text=$(grep -c ' [tTwW] ' /proc/kallsyms)
	# The same text symbols as /proc/kallsyms lists (modules may come and go).
	if [ $blocked = no ]; then
		expect_eq kernel-symbols-not-loaded 0 "$parsed"
	elif [ "${parsed:-0}" -gt 1000 ] && [ "$parsed" -ge $((text - 100)) ] &&
		[ "$parsed" -le $((text + 100)) ]; then
		pass kernel-symbols-parsed
	else
		fail kernel-symbols-parsed "kernel_symbols_parsed=$parsed, /proc/kallsyms text symbols=$text"
	fi
else
	skip kernel-symbols "python3 is not installed"
fi

if [ $blocked = no ]; then
	skip blocked-function "this kernel has no sched/sched_blocked_reason event (Android kernels have it)"
	exit 0
fi
tp_query "$TMP/k.pftrace" "select distinct blocked_function from thread_state
	where blocked_function is not null" | tr -d '"' >"$TMP/fns"
if [ ! -s "$TMP/fns" ]; then
	fail blocked-function "no thread_state row has a blocked_function"
else
	bad=
	while read -r fn; do
		awk -v f="$fn" '$3 == f { found = 1 } END { exit !found }' /proc/kallsyms || bad="$bad $fn"
	done <"$TMP/fns"
	expect_eq blocked-function "" "$bad"
fi
