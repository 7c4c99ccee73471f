# Triggers: trigger_config START_TRACING / STOP_TRACING sessions on traced,
# activated by the trigger_perfetto applet or by `perfetto` with
# activate_triggers in its config (ProducerPort ActivateTriggers). Runs
# against a traced started on its own private sockets.
. tests/lib.sh

export PERFETTO_PRODUCER_SOCK_NAME=@tb-t2170-p-$$ PERFETTO_CONSUMER_SOCK_NAME=@tb-t2170-c-$$
export TRACEBOX_LOG=error
mkfifo "$TMP/ready"
TRACED_NOTIFY_FD=3 "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log" &
tpid=$!
at_exit "kill $tpid 2>/dev/null"
expect_eq traced-ready 1 "$(head -c 1 "$TMP/ready")"

# config MODE TIMEOUT_MS NAME STOP_DELAY_MS [REGEX]: a trace config gated by
# one trigger.
config() {
	cat <<CFG
buffers { size_kb: 1024 }
data_sources { config { name: "linux.process_stats" } }
trigger_config {
  trigger_mode: $1
  trigger_timeout_ms: $2
  triggers { name: "$3" stop_delay_ms: $4 ${5:+producer_name_regex: \"$5\"} }
}
CFG
}
# record NAME CONFIG: perfetto in the background on CONFIG, output NAME.pftrace.
record() {
	echo "$2" >"$TMP/$1.pbtx"
	timeout 20 "$TRACEBOX" perfetto --txt -c "$TMP/$1.pbtx" -o "$TMP/$1.pftrace" \
		2>"$TMP/$1.err" &
	rpid=$!
	sleep 0.5 # EnableTracing reaches traced
}
# finish: wait for the background perfetto; its exit status in $rc.
finish() {
	rc=0
	wait $rpid || rc=$?
}
now() { date +%s%N; }

# (a) STOP_TRACING: trigger_perfetto ends the session stop_delay_ms later,
# long before trigger_timeout_ms; the trace holds the Trigger packet.
t0=$(now)
record stop "$(config STOP_TRACING 15000 stop-now 100)"
expect_exit trigger-applet 0 "$TRACEBOX" trigger_perfetto stop-now
finish
ms=$((($(now) - t0) / 1000000))
expect_eq stop-exit 0 "$rc"
[ "$ms" -lt 10000 ] && pass stop-before-timeout || fail stop-before-timeout "$ms ms"
[ -n "$(tp_meta_int "$TMP/stop.pftrace" tracing_disabled_ns)" ] && pass stop-trace-complete ||
	fail stop-trace-complete "$(cat "$TMP/stop.err")"
grep -a -q 'perfetto_cmd_producer' "$TMP/stop.pftrace" && grep -a -q 'stop-now' "$TMP/stop.pftrace" &&
	pass stop-trigger-packet || fail stop-trigger-packet

# (b) the same through `perfetto` with activate_triggers in its config.
record stop2 "$(config STOP_TRACING 15000 stop-too 100)"
echo 'activate_triggers: "stop-too"' >"$TMP/activate.pbtx"
expect_exit activate-triggers-config 0 "$TRACEBOX" perfetto --txt -c "$TMP/activate.pbtx"
finish
expect_eq activate-stop-exit 0 "$rc"
grep -a -q 'stop-too' "$TMP/stop2.pftrace" && pass activate-trigger-packet ||
	fail activate-trigger-packet "$(cat "$TMP/stop2.err")"

# (c) STOP_TRACING with no trigger: the session ends at trigger_timeout_ms
# and the trace is empty, as Perfetto's.
record none "$(config STOP_TRACING 300 never 0)"
finish
expect_eq no-trigger-exit 0 "$rc"
expect_eq no-trigger-empty 0 "$(stat -c %s "$TMP/none.pftrace" 2>/dev/null || echo missing)"

# (d) START_TRACING: nothing runs until the trigger; then stop_delay_ms of
# trace.
record start "$(config START_TRACING 15000 go 300)"
expect_exit start-trigger 0 "$TRACEBOX" trigger_perfetto go
finish
expect_eq start-exit 0 "$rc"
started=$(tp_meta_int "$TMP/start.pftrace" tracing_started_ns)
disabled=$(tp_meta_int "$TMP/start.pftrace" tracing_disabled_ns)
[ -n "$started" ] && [ -n "$disabled" ] && [ $((disabled - started)) -ge 300000000 ] &&
	pass start-runs-stop-delay || fail start-runs-stop-delay "$started $disabled"

# (e) producer_name_regex: a trigger from another producer does not count.
record regex "$(config STOP_TRACING 400 only-probes 0 'traced_probes.*')"
expect_exit regex-trigger-sent 0 "$TRACEBOX" trigger_perfetto only-probes
finish
expect_eq regex-ignored-empty 0 "$(stat -c %s "$TMP/regex.pftrace" 2>/dev/null || echo missing)"

# (f) Perfetto's config checks.
printf '%s\nduration_ms: 1000\n' "$(config STOP_TRACING 1000 x 0)" >"$TMP/bad.pbtx"
expect_exit duration-with-trigger 1 "$TRACEBOX" perfetto --txt -c "$TMP/bad.pbtx" -o "$TMP/bad.pftrace"
grep -q 'duration_ms was set' "$TMP/err" && pass duration-with-trigger-message ||
	fail duration-with-trigger-message "$(cat "$TMP/err")"
config START_TRACING 0 x 0 >"$TMP/bad2.pbtx"
expect_exit zero-timeout 1 "$TRACEBOX" perfetto --txt -c "$TMP/bad2.pbtx" -o "$TMP/bad2.pftrace"
grep -q 'trigger_timeout_ms' "$TMP/err" && pass zero-timeout-message ||
	fail zero-timeout-message "$(cat "$TMP/err")"
expect_exit trigger-needs-name 1 "$TRACEBOX" trigger_perfetto
kill -0 $tpid 2>/dev/null && pass traced-survives || fail traced-survives
