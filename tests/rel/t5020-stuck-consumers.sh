# Stuck consumers (issue 21 #5): a write_into_file session whose output is
# a pipe nobody reads must not freeze traced (other clients are served
# meanwhile); once its reader has taken nothing for the stall limit (10 s)
# that session alone is stopped with a clear error. A consumer that never
# reads its socket is dropped by the IPC's stall limit, not waited for.
. tests/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
P=@tb-rel20-p-$$ C=@tb-rel20-c-$$
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C
TRACED_NOTIFY_FD=3 "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log" &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
# served: the service answers --query within 3 s.
served() { timeout 3 "$TRACEBOX" perfetto --query >/dev/null 2>&1; }
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/$svc/status; }

# ---- (a) write_into_file into a pipe nobody reads -------------------------
mkfifo "$TMP/fifo"
sleep 60 <>"$TMP/fifo" &
holder=$!
at_exit "kill $holder 2>/dev/null"
cat >"$TMP/a.pbtx" <<'CFG'
buffers { size_kb: 16384 }
data_sources { config { name: "tb.test" } }
write_into_file: true
file_write_period_ms: 100
duration_ms: 30000
CFG
"$TB_OUT/tools/test_producer" --slices 400000 --batch 2000 --pause-ms 5 >/dev/null 2>&1 &
prod=$!
at_exit "kill $prod 2>/dev/null"
start=$(date +%s)
"$TRACEBOX" perfetto --txt -c "$TMP/a.pbtx" -o - >"$TMP/fifo" 2>"$TMP/a.err" &
cons=$!
at_exit "kill -9 $cons 2>/dev/null"
sleep 2
served && pass pipe-stalled-others-served || fail pipe-stalled-others-served "--query timed out"
for _ in $(seq 250); do kill -0 $cons 2>/dev/null || break; sleep 0.1; done
if kill -0 $cons 2>/dev/null; then
	fail pipe-stalled-session-stopped "still running $(($(date +%s) - start)) s after the start"
else
	rc=0
	wait $cons || rc=$?
	[ "$rc" != 0 ] && pass pipe-stalled-exit-nonzero || fail pipe-stalled-exit-nonzero "exit 0"
	grep -q "has not taken any data for 10 s" "$TMP/a.err" && pass pipe-stalled-message ||
		fail pipe-stalled-message "$(cat "$TMP/a.err")"
fi
served && pass pipe-stalled-service-alive || fail pipe-stalled-service-alive "--query failed"
kill $prod $holder 2>/dev/null

# ---- (a2) a pipe whose reader is slow, not stuck: everything arrives ------
cat >"$TMP/a2.pbtx" <<'CFG'
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "tb.test" } }
write_into_file: true
file_write_period_ms: 100
duration_ms: 3000
CFG
"$TB_OUT/tools/test_producer" --slices 50000 --batch 1000 --pause-ms 10 >"$TMP/a2.prod" 2>&1 &
prod=$!
"$TRACEBOX" perfetto --txt -c "$TMP/a2.pbtx" -o - 2>"$TMP/a2.err" |
	{ sleep 2; cat; } >"$TMP/a2.pftrace"
wait $prod
expect_eq slow-pipe-all-slices 50000 "$(tp_query "$TMP/a2.pftrace" "select count(*) from slice")"

# ---- (b) a consumer that never reads its socket ----------------------------
"$TB_OUT/tools/test_producer" --slices 300000 --batch 2000 >/dev/null 2>&1 &
prod=$!
PYTHONPATH=$TB_TEST_ROOT/tests/rel $PY - "$C" >"$TMP/b.out" 2>&1 <<'PY' &
import socket, sys, time, tbipc
# EnableTracing{trace_config{buffers{size_kb: 65536} data_sources{config{name: "tb.test"}}}}
cfg = tbipc.fb(1, tbipc.fv(1, 65536)) + tbipc.fb(2, tbipc.fb(1, tbipc.fb(1, "tb.test")))
c = tbipc.Conn(sys.argv[1])
c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
c.bind("ConsumerPort")
c.invoke("EnableTracing", tbipc.fb(1, cfg))
time.sleep(3)
c.invoke("DisableTracing")
time.sleep(0.5)
c.invoke("ReadBuffers")
time.sleep(14)  # never reads: traced must give up on us, not wait
c.s.settimeout(2)
try:
    while c.s.recv(1 << 20):
        pass
    print("dropped")
except OSError:
    print("connected")
PY
reader=$!
at_exit "kill $reader 2>/dev/null"
sleep 5
served && pass never-reading-others-served || fail never-reading-others-served "--query timed out"
r=$(rss_kb)
[ "${r:-0}" -lt 262144 ] && pass never-reading-rss-bounded || fail never-reading-rss-bounded "$r kB"
wait $reader
expect_eq never-reading-dropped dropped "$(cat "$TMP/b.out")"
served && pass never-reading-service-alive || fail never-reading-service-alive "--query failed"
kill $reader $prod 2>/dev/null
