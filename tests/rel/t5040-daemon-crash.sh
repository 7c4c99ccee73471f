# kill -9 of each daemon in the middle of an autostart capture (issue 21
# #7): traced dying during a write_into_file capture leaves the trace
# written so far, cut at its last whole packet, in place, with one line
# saying what happened and a non-zero exit; traced_probes or traced_perf
# dying costs only their own data: the capture ends normally. Every output
# loads and has rows.
. tests/lib.sh

# child_pid PARENT APPLET: the pid of PARENT's child running `tracebox APPLET`.
child_pid() {
	for p in $(cat /proc/[0-9]*/task/[0-9]*/children 2>/dev/null | tr ' ' '\n' | sort -u); do
		[ "$(awk '{print $4}' /proc/$p/stat 2>/dev/null)" = "$1" ] || continue
		tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "tracebox $2\( \|\$\)" && echo $p && return
	done
}
# wait_child PARENT APPLET: child_pid, waiting up to 5 s for it to exist.
wait_child() {
	for _ in $(seq 100); do
		c=$(child_pid "$1" "$2")
		[ -n "$c" ] && echo "$c" && return
		sleep 0.05
	done
}
wait_gone() {
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

cat >"$TMP/wif.pbtx" <<'CFG'
duration_ms: 20000
write_into_file: true
file_write_period_ms: 200
flush_period_ms: 500
buffers { size_kb: 4096 }
data_sources { config { name: "linux.process_stats" process_stats_config {
	scan_all_processes_on_start: true proc_stats_poll_ms: 100 } } }
data_sources { config { name: "linux.sys_stats" sys_stats_config { meminfo_period_ms: 100 } } }
CFG

# ---- (a) traced, during write_into_file -------------------------------------
"$TRACEBOX" --txt -c "$TMP/wif.pbtx" -o "$TMP/a.pftrace" 2>"$TMP/a.err" &
cap=$!
at_exit "kill -9 $cap 2>/dev/null"
svc=$(wait_child $cap traced)
sleep 2
kill -9 $svc
if wait_gone $cap; then
	rc=0
	wait $cap || rc=$?
	[ "$rc" != 0 ] && pass traced-killed-exit-nonzero || fail traced-killed-exit-nonzero "exit 0"
else
	fail traced-killed-exit-nonzero "still running 10 s after traced died"
fi
grep -q "the tracing service went away" "$TMP/a.err" && pass traced-killed-message ||
	fail traced-killed-message "$(cat "$TMP/a.err")"
n=$(tp_query "$TMP/a.pftrace" "select count(*) from process")
[ "${n:-0}" -gt 0 ] && pass traced-killed-trace-kept || fail traced-killed-trace-kept "$n processes"
n=$(tp_query "$TMP/a.pftrace" "select count(*) from counter")
[ "${n:-0}" -gt 0 ] && pass traced-killed-counters-kept || fail traced-killed-counters-kept "$n counters"
ls -a "$TMP" | grep -q '^\.a\.pftrace\.' && fail traced-killed-no-temp-file || pass traced-killed-no-temp-file

# ---- (b) traced_probes, (c) traced_perf --------------------------------------
sed 's/duration_ms: 20000/duration_ms: 3000/' "$TMP/wif.pbtx" >"$TMP/short.pbtx"
for applet in traced_probes traced_perf; do
	"$TRACEBOX" --txt -c "$TMP/short.pbtx" -o "$TMP/$applet.pftrace" 2>"$TMP/$applet.err" &
	cap=$!
	at_exit "kill -9 $cap 2>/dev/null"
	victim=$(wait_child $cap $applet)
	sleep 1
	kill -9 $victim
	if wait_gone $cap; then
		rc=0
		wait $cap || rc=$?
		expect_eq $applet-killed-capture-ends 0 "$rc"
	else
		fail $applet-killed-capture-ends "still running"
	fi
	n=$(tp_query "$TMP/$applet.pftrace" "select count(*) from process")
	[ "${n:-0}" -gt 0 ] && pass $applet-killed-trace-loads || fail $applet-killed-trace-loads "$n"
done

# ---- (d) a full disk under write_into_file (issue 21, low) -------------------
mkdir "$TMP/small"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2>/dev/null; then
	at_exit "umount '$TMP/small' 2>/dev/null"
	expect_exit disk-full-exit-1 1 "$TRACEBOX" --txt -c "$TMP/wif.pbtx" -o "$TMP/small/t.pftrace"
	grep -q "No space left on device" "$TMP/err" && pass disk-full-message ||
		fail disk-full-message "$(cat "$TMP/err")"
	n=$(tp_query "$TMP/small/t.pftrace" "select count(*) from process")
	[ "${n:-0}" -gt 0 ] && pass disk-full-trace-kept || fail disk-full-trace-kept "$n"
else
	skip disk-full "cannot mount a small tmpfs here"
fi

# ---- (e) the autostart client itself (issue 21 #10) --------------------------
# SIGKILL of the recording process: its private traced, traced_probes and
# traced_perf must not outlive it.
T5040_MARK=$$-e "$TRACEBOX" --txt -c "$TMP/wif.pbtx" -o "$TMP/e.pftrace" 2>"$TMP/e.err" &
cap=$!
wait_child $cap traced_perf >/dev/null
sleep 0.5
kill -9 $cap
wait $cap 2>/dev/null
left=
for _ in $(seq 50); do
	left=$(marked_pids "T5040_MARK=$$-e")
	[ -z "$left" ] && break
	sleep 0.1
done
expect_eq client-killed-no-daemons-left "" "$left"
for p in $left; do kill -9 $p; done
