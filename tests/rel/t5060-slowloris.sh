# Idle and slow clients (issue 21 #12, traced's half): a connection that
# leaves a frame half-sent, or never binds a service, is dropped after the
# frame timeout (10 s) instead of being kept with its buffer forever; one
# uid cannot hold more than 256 such connections; everyone else is served
# meanwhile.
. tests/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
P=@tb-rel60-p-$$ C=@tb-rel60-c-$$
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C
(ulimit -n 4096 && TRACED_NOTIFY_FD=3 exec "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log") &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
served() { timeout 3 "$TRACEBOX" perfetto --query >/dev/null 2>&1; }
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/$svc/status; }

: >"$TMP/loris.out"
PYTHONPATH=$TB_TEST_ROOT/tests/rel $PY - "$C" "$P" >"$TMP/loris.out" 2>&1 <<'PY' &
import select, struct, sys, time, tbipc
socks = []
# 240 connections, each a frame announced at ~128 KiB and left 100 KB short
for i in range(240):
    s = tbipc.connect(sys.argv[1 + i % 2])
    s.sendall(struct.pack("<I", 131000) + b"\x08" * 30000)
    socks.append(s)
# and 10 that never send anything
idle = [tbipc.connect(sys.argv[1]) for _ in range(10)]
print("attacking", flush=True)
start = time.time()
pending = set(socks + idle)
while pending and time.time() - start < 16:
    r, _, _ = select.select(list(pending), [], [], 0.5)
    for s in r:
        try:
            if s.recv(1) == b"":
                pending.discard(s)
        except OSError:
            pending.discard(s)
print("closed %d of %d after %.0f s" % (250 - len(pending), 250, time.time() - start), flush=True)
PY
loris=$!
at_exit "kill $loris 2>/dev/null"
for _ in $(seq 200); do grep -q attacking "$TMP/loris.out" && break; sleep 0.05; done
sleep 1
served && pass slowloris-others-served || fail slowloris-others-served "--query timed out"
r=$(rss_kb)
[ "${r:-0}" -lt 65536 ] && pass slowloris-rss-bounded || fail slowloris-rss-bounded "$r kB"
wait $loris
out=$(tail -1 "$TMP/loris.out")
case $out in
"closed 250 of 250 after "*) pass slowloris-dropped ;;
*) fail slowloris-dropped "$out" ;;
esac
grep -q "half-sent frame\|did not bind" "$TMP/traced.log" && pass slowloris-logged ||
	fail slowloris-logged "$(tail -3 "$TMP/traced.log")"
served && pass slowloris-service-alive || fail slowloris-service-alive "--query failed"
