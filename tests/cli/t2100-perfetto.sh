# The perfetto client and tracebox autostart mode: record with a private
# traced, text and binary configs, graceful SIGINT, --no-clobber, config
# errors, -o -, --background, `tracebox perfetto` (and --query) against a
# separately started traced on sockets named by the environment,
# write_into_file with a size cap, and --notify-fd.
. tests/lib.sh

query() { tp_query "$@"; }
meta_int() { tp_meta_int "$@"; }
# leftovers MARK: pids of processes whose environment carries T2100_MARK=MARK.
leftovers() { marked_pids "T2100_MARK=$1"; }
# wait_gone PID: wait up to 10 s for PID to exit.
wait_gone() {
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}
at_exit 'for p in $(leftovers $$-a) $(leftovers $$-c) $(leftovers $$-d); do kill -9 $p; done'

# (a) autostart, light config without events: no ftrace needed.
expect_exit autostart-exit-0 0 env T2100_MARK=$$-a "$TRACEBOX" -t 1s -o "$TMP/a.pftrace"
size=$(stat -c %s "$TMP/a.pftrace" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && pass autostart-wrote-trace || fail autostart-wrote-trace "$(cat "$TMP/err")"
expect_eq autostart-metadata-size "$size" "$(meta_int "$TMP/a.pftrace" trace_size_bytes)"
expect_eq autostart-system-info Linux \
	"$(query "$TMP/a.pftrace" "select str_value from metadata where name = 'system_name'" | tr -d '"')"
started=$(meta_int "$TMP/a.pftrace" tracing_started_ns)
disabled=$(meta_int "$TMP/a.pftrace" tracing_disabled_ns)
[ -n "$started" ] && [ -n "$disabled" ] && [ "$disabled" -ge "$started" ] &&
	pass autostart-service-events || fail autostart-service-events "$started $disabled"
expect_eq autostart-no-children-left "" "$(leftovers $$-a)"
ls -a "$TMP" | grep -q '^\.a\.pftrace\.' && fail autostart-no-temp-file || pass autostart-no-temp-file

# (b) a text config with --txt.
cat >"$TMP/b.pbtx" <<'CFG'
# a comment
duration_ms: 300
buffers { size_kb: 1024 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.process_stats" target_buffer: 0 } }
CFG
expect_exit txt-config 0 "$TRACEBOX" --txt -c "$TMP/b.pbtx" -o "$TMP/b.pftrace"
[ -n "$(meta_int "$TMP/b.pftrace" tracing_disabled_ns)" ] && pass txt-config-trace ||
	fail txt-config-trace "$(cat "$TMP/err")"
expect_exit txt-config-stdin 0 sh -c "'$TRACEBOX' --txt -c - -o '$TMP/b2.pftrace' <'$TMP/b.pbtx'"
expect_exit txt-config-bad-field 1 "$TRACEBOX" --txt -c "$TMP/b.pbtx" -c "$TMP/b.pbtx" \
	-o "$TMP/unused" --no-such-flag

# (c) SIGINT during a long capture: graceful stop, complete trace, exit 0.
T2100_MARK=$$-c "$TRACEBOX" -t 60s -o "$TMP/c.pftrace" 2>"$TMP/c.err" &
pid=$!
sleep 1
kill -INT $pid
if wait_gone $pid; then
	rc=0
	wait $pid || rc=$?
	expect_eq sigint-exit-0 0 "$rc"
	[ -n "$(meta_int "$TMP/c.pftrace" tracing_disabled_ns)" ] && pass sigint-complete-trace ||
		fail sigint-complete-trace "$(cat "$TMP/c.err")"
else
	kill -9 $pid
	fail sigint-exit-0 "still running 10 s after SIGINT"
fi
expect_eq sigint-no-children-left "" "$(leftovers $$-c)"

# (d) --no-clobber refuses an existing file and leaves it alone.
echo keep >"$TMP/d.pftrace"
expect_exit no-clobber-refuses 1 "$TRACEBOX" -t 100ms --no-clobber -o "$TMP/d.pftrace"
grep -q 'no-clobber' "$TMP/err" && pass no-clobber-message || fail no-clobber-message "$(cat "$TMP/err")"
expect_eq no-clobber-kept keep "$(cat "$TMP/d.pftrace")"
expect_exit no-clobber-new-file 0 "$TRACEBOX" -t 100ms --no-clobber -o "$TMP/d2.pftrace"

# Perfetto's built-in -c :test config (its ftrace events find no producer here).
expect_exit test-config 0 "$TRACEBOX" -c :test -o "$TMP/test.pftrace"

# (e) a binary config: buffers { size_kb: 1024 } duration_ms: 300
printf '\012\003\010\200\010\030\254\002' >"$TMP/e.pb"
expect_exit binary-config 0 "$TRACEBOX" -c "$TMP/e.pb" -o "$TMP/e.pftrace"
[ -n "$(meta_int "$TMP/e.pftrace" tracing_started_ns)" ] && pass binary-config-trace ||
	fail binary-config-trace "$(cat "$TMP/err")"

# (f) a text config without --txt fails with the hint.
expect_exit text-without-txt 1 "$TRACEBOX" -c "$TMP/b.pbtx" -o "$TMP/f.pftrace"
grep -q 'Try adding --txt to the cmdline.' "$TMP/err" && pass text-without-txt-hint ||
	fail text-without-txt-hint "$(cat "$TMP/err")"
[ -e "$TMP/f.pftrace" ] && fail text-without-txt-no-output || pass text-without-txt-no-output

# (g) light config flags cannot be combined with -c.
expect_exit light-with-config 1 "$TRACEBOX" -t 1s -c "$TMP/e.pb" -o "$TMP/g.pftrace"
grep -q 'Cannot specify both -c/--config' "$TMP/err" && pass light-with-config-message ||
	fail light-with-config-message "$(cat "$TMP/err")"
expect_exit bad-time 1 "$TRACEBOX" -t 10x -o "$TMP/g.pftrace"
grep -q -- '--time argument is invalid' "$TMP/err" && pass bad-time-message ||
	fail bad-time-message "$(cat "$TMP/err")"
expect_exit no-out 1 "$TRACEBOX" -t 1s

# -o - writes the trace to stdout.
"$TRACEBOX" -t 100ms -o - >"$TMP/stdout.pftrace" 2>"$TMP/err" && rc=0 || rc=$?
expect_eq stdout-exit-0 0 "$rc"
[ -n "$(meta_int "$TMP/stdout.pftrace" tracing_started_ns)" ] && pass stdout-trace ||
	fail stdout-trace "$(cat "$TMP/err")"

# --background: prints the pid, keeps recording, SIGTERM stops it gracefully.
bgpid=$(T2100_MARK=$$-d "$TRACEBOX" -d -t 60s -o "$TMP/bg.pftrace" 2>"$TMP/bg.err")
case $bgpid in
'' | *[!0-9]*) fail background-pid "got '$bgpid': $(cat "$TMP/bg.err")" ;;
*)
	pass background-pid
	sleep 0.5
	kill -TERM "$bgpid"
	if wait_gone "$bgpid"; then
		[ -n "$(meta_int "$TMP/bg.pftrace" tracing_disabled_ns)" ] && pass background-trace ||
			fail background-trace "$(cat "$TMP/bg.err")"
	else
		kill -9 "$bgpid"
		fail background-trace "still running after SIGTERM"
	fi
	;;
esac
for _ in $(seq 50); do [ -z "$(leftovers $$-d)" ] && break; sleep 0.1; done
expect_eq background-no-children-left "" "$(leftovers $$-d)"

# (h) `tracebox perfetto` against a traced started on its own, on sockets
# named by the environment; traced reports readiness through TRACED_NOTIFY_FD.
export PERFETTO_PRODUCER_SOCK_NAME=@tb-t2100-p-$$ PERFETTO_CONSUMER_SOCK_NAME=@tb-t2100-c-$$
expect_exit not-running 1 "$TRACEBOX" perfetto -t 1s -o "$TMP/h.pftrace"
grep -q 'traced is not running' "$TMP/err" && pass not-running-message ||
	fail not-running-message "$(cat "$TMP/err")"
mkfifo "$TMP/ready"
TRACED_NOTIFY_FD=3 "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log" &
tpid=$!
at_exit "kill $tpid 2>/dev/null"
expect_eq traced-notify-fd 1 "$(head -c 1 "$TMP/ready")"
expect_exit perfetto-applet 0 "$TRACEBOX" perfetto -t 300ms -o "$TMP/h.pftrace"
[ -n "$(meta_int "$TMP/h.pftrace" tracing_disabled_ns)" ] && pass perfetto-applet-trace ||
	fail perfetto-applet-trace "$(cat "$TMP/err")"
ln -s "$TRACEBOX" "$TMP/perfetto"
expect_exit perfetto-argv0 0 "$TMP/perfetto" --txt -c "$TMP/b.pbtx" -o "$TMP/h2.pftrace"
# --query prints the service state (no session running now).
expect_exit query 0 "$TRACEBOX" perfetto --query
grep -q '^TRACING SESSIONS:' "$TMP/out" && grep -q '^Service: tracebox' "$TMP/out" &&
	pass query-output || fail query-output "$(cat "$TMP/out" "$TMP/err")"
expect_exit query-raw 0 "$TRACEBOX" perfetto --query-raw
kill -0 $tpid 2>/dev/null && pass traced-still-running || fail traced-still-running
kill -TERM $tpid
wait_gone $tpid || kill -9 $tpid

# (i) write_into_file: -s makes traced write the trace into the fd perfetto
# passes with EnableTracing; the file never exceeds the cap and still loads.
unset PERFETTO_PRODUCER_SOCK_NAME PERFETTO_CONSUMER_SOCK_NAME
cat >"$TMP/i.pbtx" <<'CFG'
duration_ms: 2000
write_into_file: true
file_write_period_ms: 100
max_file_size_bytes: 1024
buffers { size_kb: 1024 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.process_stats" target_buffer: 0 } }
data_sources { config { name: "linux.system_info" target_buffer: 0 } }
CFG
expect_exit wif-size-cap 0 "$TRACEBOX" --txt -c "$TMP/i.pbtx" -o "$TMP/i.pftrace"
isize=$(stat -c %s "$TMP/i.pftrace" 2>/dev/null || echo 0)
[ "$isize" -gt 0 ] && [ "$isize" -le 1024 ] && pass wif-size-cap-respected ||
	fail wif-size-cap-respected "size $isize: $(cat "$TMP/err")"
[ -n "$(meta_int "$TMP/i.pftrace" trace_size_bytes)" ] && pass wif-size-cap-loads ||
	fail wif-size-cap-loads
expect_exit wif-light-size 0 "$TRACEBOX" -t 1s -s 1k -o "$TMP/i2.pftrace"
isize=$(stat -c %s "$TMP/i2.pftrace" 2>/dev/null || echo 0)
[ "$isize" -gt 0 ] && [ "$isize" -le 1024 ] && pass wif-light-size-respected ||
	fail wif-light-size-respected "size $isize: $(cat "$TMP/err")"
[ -n "$(meta_int "$TMP/i2.pftrace" trace_size_bytes)" ] && pass wif-light-size-loads ||
	fail wif-light-size-loads
ls -a "$TMP" | grep -q '^\.i2\.pftrace\.' && fail wif-no-temp-file || pass wif-no-temp-file
# without a cap the whole trace is streamed in
expect_exit wif-uncapped 0 "$TRACEBOX" -t 300ms -s 64m -o "$TMP/i3.pftrace"
[ -n "$(meta_int "$TMP/i3.pftrace" tracing_disabled_ns)" ] && pass wif-uncapped-trace ||
	fail wif-uncapped-trace "$(cat "$TMP/err")"

# (j) --notify-fd: status 0 once every data source started (ObserveEvents).
T2100_MARK=$$-a "$TRACEBOX" -t 500ms --notify-fd 3 -o "$TMP/j.pftrace" 3>"$TMP/j.notify" 2>"$TMP/j.err"
expect_eq notify-fd-status 00 "$(od -An -tx1 "$TMP/j.notify" | tr -d ' \n')"
