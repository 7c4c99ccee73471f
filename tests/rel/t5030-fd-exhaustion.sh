# Out of file descriptors (issue 21 #6): traced at its fd limit must not
# spin on accept() (EMFILE) nor flood its log; the connections it cannot
# take are closed at once (the reserve-fd trick) and the service comes back
# as soon as fds are free. One uid cannot hold more than 256 connections.
. tests/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
P=@tb-rel30-p-$$ C=@tb-rel30-c-$$
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C
(ulimit -n 48 && TRACED_NOTIFY_FD=3 exec "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log") &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
served() { timeout 3 "$TRACEBOX" perfetto --query >/dev/null 2>&1; }
cpu_ticks() { awk '{print $14 + $15}' /proc/$svc/stat; }

# 100 connections held open (more than traced has fds), for 3 s.
: >"$TMP/hog.out"
PYTHONPATH=$TB_TEST_ROOT/tests/rel $PY - "$C" >"$TMP/hog.out" 2>&1 <<'PY' &
import sys, time, tbipc
socks = [tbipc.connect(sys.argv[1]) for _ in range(100)]
print("connected", flush=True)
time.sleep(4)
PY
hog=$!
for _ in $(seq 100); do grep -q connected "$TMP/hog.out" && break; sleep 0.05; done
sleep 0.5
log0=$(stat -c %s "$TMP/traced.log")
t0=$(cpu_ticks)
sleep 3
t1=$(cpu_ticks)
log1=$(stat -c %s "$TMP/traced.log")
echo "traced at its fd limit: $((t1 - t0)) ticks of CPU in 3 s, log +$((log1 - log0)) bytes" >&2
[ $((t1 - t0)) -le 30 ] && pass emfile-no-busy-loop || fail emfile-no-busy-loop "$((t1 - t0)) ticks in 3 s"
[ $((log1 - log0)) -le 4096 ] && pass emfile-log-bounded || fail emfile-log-bounded "+$((log1 - log0)) bytes"
grep -q "cannot accept a connection" "$TMP/traced.log" && pass emfile-logged ||
	fail emfile-logged "$(tail -3 "$TMP/traced.log")"
wait $hog
served && pass emfile-recovers || fail emfile-recovers "--query failed after the fds came back"
kill $svc
wait $svc 2>/dev/null

# One uid, 300 connections: traced keeps 256, closes the rest, serves others.
(ulimit -n 4096 && TRACED_NOTIFY_FD=3 exec "$TRACEBOX" traced 3>"$TMP/ready2" 2>"$TMP/traced2.log") &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready2" ] && break; sleep 0.05; done
out=$(PYTHONPATH=$TB_TEST_ROOT/tests/rel $PY - "$C" 2>&1 <<'PY'
import select, sys, time, tbipc
socks = [tbipc.connect(sys.argv[1]) for _ in range(300)]
time.sleep(1)
closed = 0
for s in socks:
    r, _, _ = select.select([s], [], [], 0)
    if r and s.recv(1) == b"":
        closed += 1
print(closed)
PY
)
expect_eq per-uid-cap-closed 44 "$out"
grep -q "uid 0 already has 256 connections" "$TMP/traced2.log" && pass per-uid-cap-logged ||
	fail per-uid-cap-logged "$(tail -3 "$TMP/traced2.log")"
served && pass per-uid-cap-served || fail per-uid-cap-served "--query failed"
