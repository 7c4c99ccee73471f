# A hostile local user (uid 65534, through setpriv) against root's captures:
# the private autostart sockets refuse every uid but the one that started
# the capture; a system traced's sockets get the group and mode of
# --set-socket-permissions; lockdown_mode keeps other uids' producers out;
# a uid has at most 5 sessions; a consumer of another uid cannot make the
# service create files (output_path). Perfetto's rules and messages
# (src/traced/service, src/tracing/service/tracing_service_impl.cc).
. tests/lib.sh

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip all "needs root and setpriv (to act as a second uid)"
	exit 0
fi
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
# as_nobody CMD...: run CMD as uid/gid 65534 with no supplementary groups.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# ipc_py [as_nobody]: the Python on stdin with tests/rel on its path.
ipc_py() { PYTHONPATH=$TB_TEST_ROOT/tests/rel "$@" $PY -; }
chmod 711 "$TMP"
wait_gone() {
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

# ---- (a) the private sockets of an autostart capture ----------------------
cat >"$TMP/a.pbtx" <<'CFG'
duration_ms: 4000
buffers { size_kb: 1024 }
data_sources { config { name: "linux.process_stats" } }
CFG
"$TRACEBOX" --txt -c "$TMP/a.pbtx" -o "$TMP/a.pftrace" 2>"$TMP/a.err" &
cap=$!
at_exit "kill -9 $cap 2>/dev/null"
for _ in $(seq 100); do
	grep -q "@traced-c-$cap\$" /proc/net/unix && grep -q "@traced-p-$cap\$" /proc/net/unix && break
	sleep 0.05
done

# bind_as SOCKET SERVICE [as_nobody]: "bound", "refused" (a failure reply)
# or "closed" (the service hung up).
bind_as() {
	sock=$1 svc=$2
	shift 2
	ipc_py "$@" <<PY
import tbipc
try:
    c = tbipc.Conn("$sock")
except OSError as e:
    print("connect-failed"); raise SystemExit
r = c.bind("$svc")
print({True: "bound", False: "refused", None: "closed"}[r])
PY
}
expect_eq private-consumer-other-uid closed "$(bind_as "@traced-c-$cap" ConsumerPort as_nobody)"
expect_eq private-producer-other-uid closed "$(bind_as "@traced-p-$cap" ProducerPort as_nobody)"
expect_eq private-consumer-same-uid bound "$(bind_as "@traced-c-$cap" ConsumerPort)"
rc=0
wait $cap || rc=$?
expect_eq private-capture-ok 0 "$rc"
n=$(tp_query "$TMP/a.pftrace" "select count(*) from process")
[ "${n:-0}" -gt 0 ] && pass private-capture-loads || fail private-capture-loads "$n" "$(cat "$TMP/a.err")"

# ---- (b) a system traced: --set-socket-permissions ------------------------
mkdir -m 711 "$TMP/s"
P=$TMP/s/producer.sock C=$TMP/s/consumer.sock
expect_exit socket-permissions-malformed 1 env PERFETTO_PRODUCER_SOCK_NAME=$P \
	PERFETTO_CONSUMER_SOCK_NAME=$C timeout 5 "$TRACEBOX" traced --set-socket-permissions nogroup:0660
grep -q 'set-socket-permissions' "$TMP/err" && pass socket-permissions-malformed-message ||
	fail socket-permissions-malformed-message "$(cat "$TMP/err")"
expect_exit socket-permissions-bad-mode 1 env PERFETTO_PRODUCER_SOCK_NAME=$P \
	PERFETTO_CONSUMER_SOCK_NAME=$C timeout 5 "$TRACEBOX" traced --set-socket-permissions \
	nogroup:660:root:0600
grep -q 'must be a 4-digit octal number' "$TMP/err" && pass socket-permissions-bad-mode-message ||
	fail socket-permissions-bad-mode-message "$(cat "$TMP/err")"
expect_exit socket-permissions-bad-group 1 env PERFETTO_PRODUCER_SOCK_NAME=$P \
	PERFETTO_CONSUMER_SOCK_NAME=$C timeout 5 "$TRACEBOX" traced --set-socket-permissions \
	no-such-group-tb:0660:root:0600
grep -q 'Failed to get group information of no-such-group-tb' "$TMP/err" &&
	pass socket-permissions-bad-group-message || fail socket-permissions-bad-group-message "$(cat "$TMP/err")"

PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C TRACED_NOTIFY_FD=3 \
	"$TRACEBOX" traced --set-socket-permissions nogroup:0660:root:0600 \
	3>"$TMP/ready" 2>"$TMP/traced.log" &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
expect_eq socket-permissions-producer "nogroup 660" "$(stat -c '%G %a' "$P" 2>&1)"
expect_eq socket-permissions-consumer "root 600" "$(stat -c '%G %a' "$C" 2>&1)"
expect_eq socket-permissions-other-uid-consumer connect-failed "$(bind_as "$C" ConsumerPort as_nobody)"
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C

# ---- (c) lockdown_mode ------------------------------------------------------
# record CFG_EXTRA: a 1.5 s capture of tb.test while test_producer runs as
# uid 65534 (in nogroup: it may use the producer socket); prints the
# number of slices recorded.
record_nobody() {
	cat >"$TMP/c.pbtx" <<CFG
duration_ms: 1500
buffers { size_kb: 4096 }
data_sources { config { name: "tb.test" } }
$1
CFG
	rm -f "$TMP/c.pftrace"
	as_nobody env PERFETTO_PRODUCER_SOCK_NAME=$P timeout 10 "$TB_OUT/tools/test_producer" \
		--slices 200 --pause-ms 50 >/dev/null 2>&1 &
	tp=$!
	sleep 0.3
	"$TRACEBOX" perfetto --txt -c "$TMP/c.pbtx" -o "$TMP/c.pftrace" 2>"$TMP/c.err"
	kill $tp 2>/dev/null
	wait $tp 2>/dev/null
	tp_query "$TMP/c.pftrace" "select count(*) from slice"
}
n=$(record_nobody "")
[ "${n:-0}" -gt 0 ] && pass lockdown-unset-other-uid-records || fail lockdown-unset-other-uid-records "$n"
n=$(record_nobody "lockdown_mode: LOCKDOWN_SET")
expect_eq lockdown-set-other-uid-kept-out 0 "$n"
n=$(record_nobody "lockdown_mode: LOCKDOWN_CLEAR")
[ "${n:-0}" -gt 0 ] && pass lockdown-clear-other-uid-records || fail lockdown-clear-other-uid-records "$n"

# ---- (d) sessions per uid ---------------------------------------------------
out=$(ipc_py <<PY
import tbipc
# EnableTracingRequest{trace_config{buffers{size_kb: 64}}}
req = tbipc.fb(1, tbipc.fb(1, tbipc.fv(1, 64)))
conns = []
for i in range(6):
    c = tbipc.Conn("$C")
    c.bind("ConsumerPort")
    c.invoke("EnableTracing", req)
    conns.append(c)
# the sixth is answered at once (disabled, with an error)
c = conns[5]
r = c.reply()
err = ""
for k, v in tbipc.fields(r[3]):
    if k == 3:
        err = v.decode()
print(err)
# the first five are still running: QueryServiceState counts them
ok, parts = conns[0].call("QueryServiceState")
st = dict(tbipc.fields(parts[0]))[1]
print(sum(1 for k, v in tbipc.fields(st) if k == 6))
PY
)
expect_eq sessions-per-uid-error "Too many concurrent tracing sesions (5) for uid 0 limit is 5" \
	"$(echo "$out" | sed -n 1p)"
expect_eq sessions-per-uid-running 5 "$(echo "$out" | sed -n 2p)"

kill $svc
wait_gone $svc || fail traced-exit "still running"

# ---- (e) output_path asked by another uid ------------------------------------
PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C TRACED_NOTIFY_FD=3 \
	"$TRACEBOX" traced --set-socket-permissions nogroup:0660:nogroup:0660 \
	3>"$TMP/ready2" 2>"$TMP/traced2.log" &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready2" ] && break; sleep 0.05; done
mkdir -m 777 "$TMP/drop"
out=$(ipc_py as_nobody <<PY
import tbipc
cfg = (tbipc.fb(1, tbipc.fv(1, 64)) + tbipc.fv(3, 100) + tbipc.fv(8, 1) +
       tbipc.fb(29, "$TMP/drop/owned-by-root"))
c = tbipc.Conn("$C")
c.bind("ConsumerPort")
c.invoke("EnableTracing", tbipc.fb(1, cfg))
r = c.reply()
print(dict(tbipc.fields(r[3])).get(3, b"").decode())
PY
)
case $out in
*output_path*) pass output-path-other-uid-refused ;;
*) fail output-path-other-uid-refused "$out" ;;
esac
[ -e "$TMP/drop/owned-by-root" ] && fail output-path-no-file "$(ls -l "$TMP/drop")" ||
	pass output-path-no-file
kill $svc
wait_gone $svc || fail traced-exit "still running"
