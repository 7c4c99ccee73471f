# traced_probes through tracebox autostart: linux.process_stats,
# linux.sys_stats and linux.system_info recorded for 1 s; the process tree is
# imported by the trace processor (this shell appears with its cmdline), the
# SysStats, ProcessStats and CpuInfo packets are in the file, and no service
# child outlives the capture.
. tests/lib.sh

TP="$TRACEBOX trace_processor_shell"
query() { $TP query "$1" "$2" 2>/dev/null | tail -n +2; }
leftovers() {
	grep -l -a "T2200_MARK=$1" /proc/[0-9]*/environ 2>/dev/null |
		sed 's|/proc/\([0-9]*\)/environ|\1|' | grep -v "^$$\$" || true
}
at_exit 'for p in $(leftovers $$); do kill -9 $p; done'

check applet-version "$TRACEBOX" traced_probes --version
expect_exit applet-bad-flag 1 "$TRACEBOX" traced_probes --no-such-flag
"$TRACEBOX" --help | grep -q '^  traced_probes ' && pass applet-listed || fail applet-listed

cat >"$TMP/p.pbtx" <<'CFG'
duration_ms: 1000
buffers { size_kb: 8192 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.process_stats" process_stats_config {
	scan_all_processes_on_start: true proc_stats_poll_ms: 500 } } }
data_sources { config { name: "linux.sys_stats" sys_stats_config {
	meminfo_period_ms: 100 vmstat_period_ms: 100 stat_period_ms: 100 } } }
data_sources { config { name: "linux.system_info" } }
CFG
expect_exit record 0 env T2200_MARK=$$ "$TRACEBOX" --txt -c "$TMP/p.pbtx" -o "$TMP/p.pftrace"
expect_eq no-children-left "" "$(leftovers $$)"

# This shell, as the process tree saw it: argv[0] is the name, the args
# joined by spaces the cmdline.
argv0=$(tr '\0' '\n' </proc/$$/cmdline | head -n 1)
cmdline=$(tr '\0' ' ' </proc/$$/cmdline | sed 's/ $//')
expect_eq process-tree-self "\"$argv0\",\"$cmdline\"" \
	"$(query "$TMP/p.pftrace" "select name, cmdline from process where pid = $$")"
expect_eq process-tree-main-thread 1 \
	"$(query "$TMP/p.pftrace" "select count(*) from thread where tid = $$")"
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	expect_eq process-tree-kthreadd '"kthreadd"' \
		"$(query "$TMP/p.pftrace" "select name from process where pid = 2")"
else
	skip process-tree-kthreadd "no kthreadd at pid 2 in this pid namespace"
fi

# The packets themselves, walked with a minimal protobuf reader: counts of
# TracePacket payloads and of SysStats sub-fields.
if command -v python3 >/dev/null 2>&1; then
	pb_py "$TMP/p.pftrace" >"$TMP/counts" <<'PY'
names = {2: "process_tree", 7: "sys_stats", 9: "process_stats", 67: "cpu_info"}
sub = {1: "meminfo", 2: "vmstat", 3: "cpu_stat", 4: "num_forks"}
count = {}
for fid, pkt in fields(open(sys.argv[1], "rb").read()):
    for f, v in fields(pkt):
        if f in names:
            count[names[f]] = count.get(names[f], 0) + 1
            if f == 7:
                for g, _ in fields(v):
                    if g in sub:
                        count[sub[g]] = count.get(sub[g], 0) + 1
for k in sorted(count):
    print(k, count[k])
PY
	n() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/counts"; }
	expect_eq packets-process-tree 1 "$(n process_tree)"
	expect_eq packets-cpu-info 1 "$(n cpu_info)"
	[ "$(n process_stats)" -ge 2 ] 2>/dev/null && pass packets-process-stats ||
		fail packets-process-stats "$(cat "$TMP/counts")"
	# 1 s at 100 ms: about 10 ticks; allow for a slow machine.
	ss=$(n sys_stats)
	[ "${ss:-0}" -ge 5 ] && pass packets-sys-stats || fail packets-sys-stats "$(cat "$TMP/counts")"
	for k in meminfo vmstat cpu_stat num_forks; do
		[ "$(n $k)" -ge "${ss:-1}" ] 2>/dev/null && pass "sys-stats-$k" ||
			fail "sys-stats-$k" "$(cat "$TMP/counts")"
	done
else
	skip packets "python3 is not installed"
fi

# traced_probes asks the service for Perfetto's 2 MiB SMB of 32 KiB pages:
# one drain of a context-switch storm writes ~250 KiB of bundles before its
# commit goes out, and in the 256 KiB default they were dropped.
printf 'duration_ms: 100\nbuffers { size_kb: 1024 }\ndata_sources { config { name: "linux.system_info" } }\n' >"$TMP/s.pbtx"
TRACEBOX_LOG=debug T2200_MARK=$$ "$TRACEBOX" --txt -c "$TMP/s.pbtx" -o "$TMP/s.pftrace" \
	>/dev/null 2>"$TMP/s.log"
if grep -q "producer 'perfetto.traced_probes': SMB 2048 KiB, pages of 32 KiB" "$TMP/s.log"; then
	pass smb-size
else
	fail smb-size "$(grep -i smb "$TMP/s.log")"
fi
