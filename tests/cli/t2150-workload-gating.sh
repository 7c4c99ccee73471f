# Workload gating: `tracebox [perfetto flags] -- CMD [ARGS...]` and
# `perfetto ... -- CMD` record around CMD, print one status line on stderr
# and exit with CMD's status; a failed capture does not fail the workload.
. tests/lib.sh

query() { tp_query "$@"; }
meta_int() { tp_meta_int "$@"; }
leftovers() { marked_pids "T2150_MARK=$1"; }
at_exit 'for p in $(leftovers $$); do kill -9 $p; done'
export TRACEBOX_LOG=warn
# status NAME: the status line of the last run ($TMP/err), or fail NAME.
status() {
	line=$(grep '^workload_status=' "$TMP/err")
	n=$(grep -c '^workload_status=' "$TMP/err")
	[ "$n" = 1 ] || fail "$1-one-status-line" "$n lines: $(cat "$TMP/err")"
	echo "$line"
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# (a) /bin/true: exit 0, a complete trace, bytes= is the file's size.
expect_exit true-exit-0 0 env T2150_MARK=$$ "$TRACEBOX" -o "$TMP/a.pftrace" -- /bin/true
line=$(status true)
size=$(stat -c %s "$TMP/a.pftrace" 2>/dev/null || echo 0)
expect_eq true-status-line \
	"workload_status=0 trace_status=0 health_status=0 report_status=125 sample_hz=0 trace=$TMP/a.pftrace report= bytes=$size packets_lost=0 samples=0 samples_skipped=0 samples_without_callsite=0 lost_records=0 capture_complete=1" "$line"
[ "$size" -gt 0 ] && pass true-trace-written || fail true-trace-written "$(cat "$TMP/err")"
expect_eq true-trace-loads "$size" "$(meta_int "$TMP/a.pftrace" trace_size_bytes)"
[ -n "$(meta_int "$TMP/a.pftrace" tracing_disabled_ns)" ] && pass true-trace-complete ||
	fail true-trace-complete
expect_eq true-trace-system-info Linux \
	"$(query "$TMP/a.pftrace" "select str_value from metadata where name = 'system_name'" | tr -d '"')"
expect_eq true-no-children-left "" "$(leftovers $$)"

# (b) exit statuses pass through; not found 127, not executable 126.
expect_exit false-exit-1 1 "$TRACEBOX" -o "$TMP/b.pftrace" -- /bin/false
expect_eq false-status "1 0" "$(field "$(status false)" workload_status) $(field "$(status false)" trace_status)"
expect_exit sh-exit-7 7 "$TRACEBOX" -o "$TMP/c.pftrace" -- sh -c 'exit 7'
expect_eq sh-status 7 "$(field "$(status sh)" workload_status)"
expect_exit missing-127 127 "$TRACEBOX" -o "$TMP/d.pftrace" -- tb-no-such-command-$$
grep -q "cannot run 'tb-no-such-command-$$'" "$TMP/err" && pass missing-message ||
	fail missing-message "$(cat "$TMP/err")"
expect_exit noexec-126 126 "$TRACEBOX" -o "$TMP/e.pftrace" -- /dev/null
expect_exit killed-137 137 "$TRACEBOX" -o "$TMP/f.pftrace" -- sh -c 'kill -KILL $$'
[ -n "$(meta_int "$TMP/f.pftrace" tracing_disabled_ns)" ] && pass killed-trace-complete ||
	fail killed-trace-complete "$(cat "$TMP/err")"

# (c) the workload's stdio is the caller's.
expect_exit stdio 0 "$TRACEBOX" -o "$TMP/g.pftrace" -- sh -c 'read x; echo "got $x"' <<IN
hello
IN
expect_eq stdio-passed "got hello" "$(cat "$TMP/out")"

# (d) SIGTERM to the recorder goes to the workload; the trace is finalized.
T2150_MARK=$$ "$TRACEBOX" -o "$TMP/h.pftrace" -- sleep 30 2>"$TMP/h.err" &
pid=$!
for _ in $(seq 100); do pgrep -P $pid -x sleep >/dev/null && break; sleep 0.05; done
kill -TERM $pid
rc=0
wait $pid || rc=$?
expect_eq sigterm-forwarded 143 "$rc"
grep -q '^workload_status=143 trace_status=0 ' "$TMP/h.err" && pass sigterm-status ||
	fail sigterm-status "$(cat "$TMP/h.err")"
[ -n "$(meta_int "$TMP/h.pftrace" tracing_disabled_ns)" ] && pass sigterm-trace-complete ||
	fail sigterm-trace-complete "$(cat "$TMP/h.err")"

# (e) -t shorter than the workload: the trace ends at -t, the workload runs on.
start=$(date +%s%N)
expect_exit duration-first 0 "$TRACEBOX" -t 200ms -o "$TMP/i.pftrace" -- sleep 1
elapsed=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed" -ge 1000 ] && pass duration-workload-ran-on || fail duration-workload-ran-on "$elapsed ms"
[ -n "$(meta_int "$TMP/i.pftrace" tracing_disabled_ns)" ] && pass duration-trace-complete ||
	fail duration-trace-complete "$(cat "$TMP/err")"
# ... but the trace does not cover the whole workload.
expect_eq duration-not-complete "0 0" \
	"$(field "$(status duration)" trace_status) $(field "$(status duration)" capture_complete)"

# (f) write_into_file (-s): bytes= is still the file's size.
expect_exit wif 0 "$TRACEBOX" -s 64m -o "$TMP/j.pftrace" -- /bin/true
size=$(stat -c %s "$TMP/j.pftrace" 2>/dev/null || echo 0)
expect_eq wif-bytes "$size" "$(field "$(status wif)" bytes)"
[ "$size" -gt 0 ] && pass wif-written || fail wif-written

# (g) a config file; the trace holds what its data source wrote before the
# workload ran (the process tree, which includes the recorder itself).
cat >"$TMP/k.pbtx" <<'CFG'
buffers { size_kb: 1024 }
data_sources { config { name: "linux.process_stats"
                        process_stats_config { scan_all_processes_on_start: true } } }
CFG
expect_exit txt-config 3 "$TRACEBOX" --txt -c "$TMP/k.pbtx" -o "$TMP/k.pftrace" -- sh -c 'exit 3'
expect_eq txt-config-status 0 "$(field "$(status txt)" trace_status)"
n=$(query "$TMP/k.pftrace" "select count(*) from process where pid > 0")
[ "${n:-0}" -gt 1 ] && pass txt-config-trace-has-packets || fail txt-config-trace-has-packets "processes: $n"

# (h) a capture that cannot start still runs the workload, with its status.
expect_exit no-service 5 env PERFETTO_CONSUMER_SOCK_NAME=@tb-t2150-none-$$ \
	"$TRACEBOX" perfetto -o "$TMP/l.pftrace" -- sh -c 'exit 5'
expect_eq no-service-status "workload_status=5 trace_status=1 health_status=125 report_status=125 sample_hz=0 trace=$TMP/l.pftrace report= bytes=0 packets_lost=0 samples=0 samples_skipped=0 samples_without_callsite=0 lost_records=0 capture_complete=0" \
	"$(status no-service)"
[ -e "$TMP/l.pftrace" ] && fail no-service-no-file || pass no-service-no-file

# (i) the path is escaped so the line stays key=value words.
expect_exit escaped 0 "$TRACEBOX" -o "$TMP/m n=%.pftrace" -- true
expect_eq escaped-path "$TMP/m%20n%3D%25.pftrace" "$(field "$(status escaped)" trace)"

# (i2) --report: a trace without perf samples has nothing to report; the
# status says so and the workload's status stays the exit status.
expect_exit report-none 4 "$TRACEBOX" -o "$TMP/r.pftrace" --report "$TMP/r.html" -- sh -c 'exit 4'
expect_eq report-none-status "0 1 $TMP/r.html" \
	"$(field "$(status report-none)" trace_status) $(field "$(status report-none)" report_status) $(field "$(status report-none)" report)"
grep -q "cannot write the report '$TMP/r.html'" "$TMP/err" && pass report-none-reason ||
	fail report-none-reason "$(cat "$TMP/err")"
[ -e "$TMP/r.html" ] && fail report-none-no-file || pass report-none-no-file

# (j) usage errors come first and run nothing.
expect_exit no-command 1 "$TRACEBOX" -o "$TMP/n.pftrace" --
expect_exit stdout-refused 1 "$TRACEBOX" -o - -- touch "$TMP/ran"
expect_exit background-refused 1 "$TRACEBOX" -d -o "$TMP/n.pftrace" -- touch "$TMP/ran"
expect_exit control-spec-refused 1 "$TRACEBOX" --control pipe:x -o "$TMP/n.pftrace" -- touch "$TMP/ran"
[ -e "$TMP/ran" ] && fail usage-runs-nothing || pass usage-runs-nothing
# "--" inside the workload belongs to it, and --system-sockets before it is ours.
expect_exit inner-dashes 0 "$TRACEBOX" -o "$TMP/o.pftrace" -- sh -c '[ "$1" = -- ]' sh --
# (k) started with SIGCHLD ignored (children auto-reaped): the workload's
# status is still its own, and the workload gets SIGCHLD back at its default.
if env --ignore-signal=CHLD true 2>/dev/null; then
	expect_exit sigchld-ignored 0 timeout 60 env --ignore-signal=CHLD "$TRACEBOX" -o "$TMP/p.pftrace" -- /bin/true
	expect_eq sigchld-ignored-status 0 "$(field "$(status sigchld-ignored)" workload_status)"
	expect_exit sigchld-ignored-exit-3 3 timeout 60 env --ignore-signal=CHLD "$TRACEBOX" -o "$TMP/q.pftrace" -- sh -c 'exit 3'
	ign=$(timeout 60 env --ignore-signal=CHLD "$TRACEBOX" -o "$TMP/r.pftrace" -- grep SigIgn /proc/self/status 2>/dev/null)
	mask=$(printf '%d' "0x$(echo "$ign" | awk '{print $2}')" 2>/dev/null || echo 0)
	expect_eq sigchld-default-in-workload 0 $((mask >> 16 & 1))
else
	skip sigchld-ignored "env has no --ignore-signal"
fi
# (l) the service answers only after the workload start cap (10 s) has run
# the workload and the workload has exited: the capture still stops when
# the service is there, and the status is the workload's.
mkfifo "$TMP/ready-l"
PERFETTO_PRODUCER_SOCK_NAME=@tb-t2150-p-$$ PERFETTO_CONSUMER_SOCK_NAME=@tb-t2150-c-$$ \
	TRACED_NOTIFY_FD=3 T2150_MARK=$$ "$TRACEBOX" traced 3>"$TMP/ready-l" 2>/dev/null &
tpid=$!
at_exit "kill -CONT $tpid 2>/dev/null; kill $tpid 2>/dev/null"
head -c 1 "$TMP/ready-l" >/dev/null
kill -STOP $tpid
printf 'buffers { size_kb: 1024 }\ndata_sources { config { name: "none" } }\n' >"$TMP/l.pbtx"
PERFETTO_CONSUMER_SOCK_NAME=@tb-t2150-c-$$ T2150_MARK=$$ timeout 40 "$TRACEBOX" perfetto --txt \
	-c "$TMP/l.pbtx" -o "$TMP/s.pftrace" -- /bin/true 2>"$TMP/err" &
ppid=$!
sleep 11
kill -CONT $tpid
wait $ppid
expect_eq late-service-exit 0 $?
expect_eq late-service-status "workload_status=0 trace_status=0" \
	"$(status late-service | cut -d' ' -f1-2)"
kill $tpid 2>/dev/null
wait $tpid 2>/dev/null
for _ in $(seq 50); do [ -z "$(leftovers $$)" ] && break; sleep 0.1; done
expect_eq no-children-left "" "$(leftovers $$)"
