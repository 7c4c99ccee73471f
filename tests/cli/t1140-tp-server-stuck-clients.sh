# `server http` cannot be locked out or frozen by clients (issue 21 #12):
# idle connections, slowloris requests and clients that never read their
# (large) results leave it serving everyone else. Each check is a client
# that must get its answer within a few seconds (a liveness bound, not a
# measurement); the server must stay within a memory bound.
. tests/lib.sh

for tool in python3 curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip all "$tool is not installed"
		exit 0
	fi
done

cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]}
JSON

PORT=$(free_port)
"$TRACEBOX" trace_processor_shell server http --port "$PORT" "$TMP/t.json" >"$TMP/srv.out" 2>"$TMP/srv.err" &
SRV=$!
at_exit "kill $SRV 2>/dev/null"
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/status"; do
	sleep 0.1
	i=$((i + 1))
done

cat >"$TMP/attack.py" <<'PY'
import http.client, os, socket, struct, sys, threading, time
port = int(sys.argv[1]); pid = int(sys.argv[2])

def report(ok, name, detail=""):
    print(("ok " if ok else "fail ") + name + ("" if ok else ": " + str(detail)), flush=True)

def varint(v):
    out = b""
    while v >= 0x80: out += bytes([v & 0x7F | 0x80]); v >>= 7
    return out + bytes([v])

def query_body(sql):
    q = sql.encode()
    return b"\x0a" + varint(len(q)) + q

def rss_kb():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"): return int(line.split()[1])
    return 0

def served(name, deadline=5.0):
    """A well-behaved client: /status and a small /query, each answered in time."""
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=deadline)
        c.request("GET", "/status"); st = c.getresponse(); st.read()
        c.request("POST", "/query", query_body("select 42 as x")); r = c.getresponse(); body = r.read()
        c.close()
        ok = st.status == 200 and r.status == 200 and b"x" in body and time.monotonic() - t0 < deadline
        report(ok, name, "status %d/%d after %.1f s" % (st.status, r.status, time.monotonic() - t0))
    except Exception as e:
        report(False, name, "%r after %.1f s" % (e, time.monotonic() - t0))

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s

big = "with recursive n(i) as (select 0 union all select i + 1 from n where i < 1000000) " \
      "select i, 'padding padding padding padding padding' as s from n"

# 1. 100 connections that send nothing.
idle = [connect() for _ in range(100)]
time.sleep(0.3)
served("served-despite-idle-connections")
# 2. 100 slowloris connections: half a request, a byte now and then.
slow = []
for _ in range(100):
    s = connect(); s.sendall(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Le"); slow.append(s)
served("served-despite-slowloris")
for s in slow:
    try: s.sendall(b"n")
    except OSError: pass
served("served-despite-slowloris-trickle")
# 3. Connections that completed a request and now sit idle (keep-alive).
kept, failed = [], 0
for _ in range(80):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/status"); c.getresponse().read(); kept.append(c)
    except Exception:
        failed += 1
report(failed == 0, "keepalive-clients-served", "%d of 80 failed" % failed)
served("served-despite-idle-keepalive")
# 4. Three clients that ask for a big result and never read it.
stuck = []
for _ in range(3):
    s = connect()
    b = query_body(big)
    s.sendall(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(b) + b)
    stuck.append(s)
time.sleep(0.5)
served("served-despite-stuck-readers")
served("served-despite-stuck-readers-again")
# 5. The same over the RPC stream (/rpc), never read.
for _ in range(2):
    s = connect()
    q = query_body(big)
    m = b"\x08\x00\x10\x03" + b"\xba\x06" + varint(len(q)) + q   # seq 0, QUERY_STREAMING, query_args
    body = b"\x0a" + varint(len(m)) + m
    s.sendall(b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    stuck.append(s)
time.sleep(0.5)
served("served-despite-stuck-rpc-readers")
rss = rss_kb()
report(rss < 200 * 1024, "memory-bounded", "%d kB" % rss)
# A stuck reader that starts reading again gets its whole result.
s = stuck[0]; s.settimeout(30)
data = b""
try:
    while True:
        d = s.recv(1 << 20)
        if not d: break
        data += d
        if data.endswith(b"\r\n0\r\n\r\n"): break
except Exception as e:
    pass
report(data.endswith(b"\r\n0\r\n\r\n") and len(data) > 20 * 1000 * 1000, "late-reader-complete",
       "%d bytes" % len(data))
for x in idle + slow + stuck: x.close()
for c in kept: c.close()
served("served-after")
PY
timeout 120 python3 "$TMP/attack.py" "$PORT" "$SRV" >"$TMP/client" 2>"$TMP/client.err"
[ -s "$TMP/client" ] || fail client "the client reported nothing" "$(tail -5 "$TMP/client.err")"
while IFS= read -r line; do
	case $line in
	ok\ *) pass "${line#ok }" ;;
	fail\ *) rest=${line#fail }; fail "${rest%%:*}" "${rest#*: }" ;;
	esac
done <"$TMP/client"
kill -0 $SRV 2>/dev/null && pass server-alive || fail server-alive "$(tail -5 "$TMP/srv.err")"
kill $SRV 2>/dev/null
wait $SRV 2>/dev/null
exit 0
