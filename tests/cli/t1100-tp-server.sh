# trace_processor_shell server http / -D (the Perfetto UI's RPC accelerator)
# and server stdio / --stdiod, on loopback: HTTP endpoints with curl, the
# WebSocket RPC with a python3 client written here (stdlib only, the
# TraceProcessorRpc encoding done by hand), /status through protoc --decode
# with our own trace_processor.proto.
. tests/lib.sh

for tool in python3 curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip all "$tool is not installed"
		exit 0
	fi
done

tps() { "$TRACEBOX" trace_processor_shell "$@"; }

cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[
 {"ph":"X","name":"outer","cat":"c","ts":1,"dur":10,"pid":1,"tid":2},
 {"ph":"X","name":"inner","cat":"c","ts":2,"dur":3,"pid":1,"tid":2}
]}
JSON

# start_server NAME ARGS...: run the server in the background (listening
# on $PORT, which the caller picked and put in ARGS), its stderr in
# $TMP/NAME.err, and wait until it answers.
start_server() {
	name=$1
	shift
	"$TRACEBOX" trace_processor_shell "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	SRV=$!
	at_exit "kill $SRV 2>/dev/null"
	i=0
	while [ $i -lt 100 ]; do
		curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/status" && return 0
		kill -0 $SRV 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	fail "$name-start" "server did not come up" "$(cat "$TMP/$name.err")"
	return 1
}

# stop_server NAME [SIGNAL]: SIGTERM (or SIGNAL), and the exit status must
# be 0 within 5 s.
stop_server() {
	sig=${2:-TERM}
	case=$1-sig$(printf '%s' "$sig" | tr 'A-Z' 'a-z')
	kill -"$sig" $SRV
	i=0
	while kill -0 $SRV 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 $SRV 2>/dev/null; then
		kill -KILL $SRV
		fail "$case" "still running 5 s after SIG$sig"
	else
		wait $SRV && rc=0 || rc=$?
		expect_eq "$case" 0 "$rc"
	fi
}

decode_status() {
	protoc --decode=perfetto.protos.StatusResult -I components/protos \
		perfetto/trace_processor/trace_processor.proto
}

# ---- the client ----------------------------------------------------------------
cat >"$TMP/client.py" <<'PY'
import base64, hashlib, http.client, os, socket, struct, sys

port = int(sys.argv[1])
trace = open(sys.argv[2], "rb").read()
mode = sys.argv[3]

def report(ok, name, detail=""):
    print(("ok " if ok else "fail ") + name + ("" if ok else ": " + str(detail)), flush=True)

def check(name, expected, actual):
    report(expected == actual, name, "expected %r, got %r" % (expected, actual))

# -- protobuf by hand --
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80]); v >>= 7
    return out + bytes([v])

def field_varint(f, v): return varint(f << 3) + varint(v)
def field_bytes(f, b): return varint(f << 3 | 2) + varint(len(b)) + b

def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i

def fields(b):
    """[(field, wire, value)] of one message."""
    i, out = 0, []
    while i < len(b):
        tag, i = read_varint(b, i)
        f, w = tag >> 3, tag & 7
        if w == 0: v, i = read_varint(b, i)
        elif w == 1: v = b[i:i + 8]; i += 8
        elif w == 5: v = b[i:i + 4]; i += 4
        elif w == 2:
            n, i = read_varint(b, i); v = b[i:i + n]; i += n
        else: raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out

def one(msg, f, default=None):
    vals = [v for (g, _, v) in fields(msg) if g == f]
    return vals[-1] if vals else default

def s64(v): return v - (1 << 64) if v >= 1 << 63 else v

def request(seq, method, args=b""):
    m = field_varint(1, seq) + field_varint(2, method) + args
    return field_bytes(1, m)

def query_args(sql): return field_bytes(103, field_bytes(1, sql.encode()))

def split_stream(buf):
    """Whole TraceProcessorRpc messages at the start of buf, and the rest."""
    msgs, i = [], 0
    while i < len(buf):
        try:
            tag, j = read_varint(buf, i); n, j = read_varint(buf, j)
        except IndexError:
            break
        if j + n > len(buf): break
        assert tag == 0x0A, tag
        msgs.append(buf[j:j + n]); i = j + n
    return msgs, buf[i:]

def decode_query(results):
    """(columns, rows, error, batches, last_flags) of QueryResult messages."""
    cols, rows, err, batches, lasts = [], [], None, 0, []
    for qr in results:
        for f, w, v in fields(qr):
            if f == 1: cols.append(v.decode())
            elif f == 2: err = v.decode()
            elif f == 3:
                batches += 1
                types, ints, dbls, blobs, strs, last = b"", [], [], [], [], False
                for g, _, x in fields(v):
                    if g == 1: types = x
                    elif g == 2:
                        i = 0
                        while i < len(x):
                            n, i = read_varint(x, i); ints.append(s64(n))
                    elif g == 3: dbls = list(struct.unpack("<%dd" % (len(x) // 8), x))
                    elif g == 4: blobs.append(x)
                    elif g == 5: strs = x.split(b"\0")[:-1]
                    elif g == 6: last = bool(x)
                lasts.append(last)
                cells = []
                for t in types:
                    if t == 1: cells.append(None)
                    elif t == 2: cells.append(ints.pop(0))
                    elif t == 3: cells.append(dbls.pop(0))
                    elif t == 4: cells.append(strs.pop(0).decode())
                    elif t == 5: cells.append(blobs.pop(0))
                    else: raise ValueError("cell type %d" % t)
                for k in range(0, len(cells), len(cols) or 1):
                    rows.append(cells[k:k + len(cols)])
    return cols, rows, err, batches, lasts

# -- websocket --
class WS:
    def __init__(self, origin="https://ui.perfetto.dev", extra=b""):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        hdr = ("GET /websocket HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               % (port, key))
        if origin: hdr += "Origin: %s\r\n" % origin
        self.s.sendall(hdr.encode() + b"\r\n")
        resp = b""
        while b"\r\n\r\n" not in resp:
            d = self.s.recv(4096)
            if not d: break
            resp += d
        head, _, self.buf = resp.partition(b"\r\n\r\n")
        self.status = head.split(b"\r\n")[0].decode()
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        self.accept_ok = (b"Sec-WebSocket-Accept: " + want) in head
        self.stream = b""
        self.closed = False
        self.pongs = []

    def frame(self, op, payload, fin=True):
        mask = os.urandom(4)
        n = len(payload)
        h = bytes([(0x80 if fin else 0) | op])
        if n < 126: h += bytes([0x80 | n])
        elif n <= 0xFFFF: h += bytes([0x80 | 126]) + struct.pack(">H", n)
        else: h += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(h + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, data): self.frame(2, data)

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d: raise EOFError
            self.buf += d

    def read_frame(self):
        self._need(2)
        op, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
        assert not self.buf[1] & 0x80, "server frames are not masked"
        off = 2
        if n == 126: self._need(4); n = struct.unpack(">H", self.buf[2:4])[0]; off = 4
        elif n == 127: self._need(10); n = struct.unpack(">Q", self.buf[2:10])[0]; off = 10
        self._need(off + n)
        p = self.buf[off:off + n]; self.buf = self.buf[off + n:]
        return op, p

    def responses(self, count):
        """The next count TraceProcessorRpc messages (fewer if the server closes)."""
        out = []
        while len(out) < count:
            msgs, self.stream = split_stream(self.stream)
            out += msgs
            if len(out) >= count: break
            try:
                op, p = self.read_frame()
            except (EOFError, ConnectionResetError):
                self.closed = True; break
            if op == 2: self.stream += p
            elif op == 10: self.pongs.append(p)
            elif op == 8: self.closed = True; break
        return out

    def query(self, seq, sql):
        """Send QUERY_STREAMING; collect responses until is_last_batch."""
        self.send(request(seq, 3, query_args(sql)))
        results, seqs = [], []
        while True:
            r = self.responses(1)
            if not r: break
            seqs.append(one(r[0], 1)); qr = one(r[0], 203)
            results.append(qr)
            if any(one(b, 6) for (f, _, b) in fields(qr) if f == 3): break
        return decode_query(results) + (seqs,)

def ws_main():
    ws = WS()
    check("ws-handshake", "HTTP/1.1 101 Switching Protocols", ws.status)
    report(ws.accept_ok, "ws-accept-key", "bad Sec-WebSocket-Accept")
    # Status before any trace: no name, API version 14.
    ws.send(request(1, 10))
    st = one(ws.responses(1)[0], 210)
    check("ws-status-empty", ("", 14), (one(st, 1, b"").decode(), one(st, 3)))
    # The trace in three APPEND_TRACE_DATA requests (two in one frame), then FINALIZE.
    a, b = len(trace) // 3, 2 * len(trace) // 3
    ws.send(request(2, 1, field_bytes(101, trace[:a])) + request(3, 1, field_bytes(101, trace[a:b])))
    ws.send(request(4, 1, field_bytes(101, trace[b:])))
    ws.send(request(5, 2))
    r = ws.responses(4)
    check("ws-append", [(1, 201, None)] * 3,
          [(one(m, 3), [f for (f, _, _) in fields(m)][-1], one(one(m, 201), 2)) for m in r[:3]])
    check("ws-finalize", (2, b""), (one(r[3], 3), one(r[3], 212)))
    check("ws-response-seq", [1, 2, 3, 4], [one(m, 1) for m in r])
    ws.send(request(6, 10))
    st = one(ws.responses(1)[0], 210)
    check("ws-status-loaded", "Unnamed trace (0 MB)", one(st, 1).decode())
    # Rows with strings, ints and NULL.
    cols, rows, err, n, lasts, _ = ws.query(7, "select name, ts, dur, depth, parent_id from slice order by ts")
    check("ws-query-columns", ["name", "ts", "dur", "depth", "parent_id"], cols)
    check("ws-query-rows", [["outer", 1000, 10000, 0, None], ["inner", 2000, 3000, 1, 0]], rows)
    check("ws-query-one-batch", (None, 1, [True]), (err, n, lasts))
    # Doubles, negative ints, blobs, NULL and UTF-8.
    cols, rows, err, n, lasts, _ = ws.query(8, "select 1.5 as d, -2 as i, x'00ff' as b, null as n, "
                                              "'h\u00e9llo' as s, 1e300 as big, -0.25 as neg")
    check("ws-query-types", [[1.5, -2, b"\x00\xff", None, "h\u00e9llo", 1e300, -0.25]], rows)
    # A result over one batch: 30000 rows x 2 cells > 50000 cells a batch.
    cols, rows, err, n, lasts, seqs = ws.query(
        9, "with recursive r(i) as (select 0 union all select i + 1 from r where i < 29999) "
           "select i, i * 0.5 as h from r")
    check("ws-query-large-rows", [[i, i * 0.5] for i in range(30000)], rows)
    report(n >= 2 and lasts == [False] * (n - 1) + [True], "ws-query-large-batches",
           "batches %d, last flags %r" % (n, lasts))
    check("ws-query-large-seq", list(range(seqs[0], seqs[0] + n)), seqs)
    # Several statements: the last one's rows; counts as Perfetto's.
    ws.send(request(10, 3, query_args("create table tb_t as select 7 as a; select a, a * 2 as b from tb_t")))
    qr = one(ws.responses(1)[0], 203)
    check("ws-multi-statement", ([[7, 14]], 2, 1),
          (decode_query([qr])[1], one(qr, 4), one(qr, 5)))
    # RESTORE_INITIAL_TABLES drops what the client created.
    ws.send(request(11, 7))
    ws.responses(1)
    _, _, err, _, _, _ = ws.query(12, "select * from tb_t")
    report(err is not None and "no such table" in err, "ws-restore-initial-tables", err)
    # An SQL error, with the batch still closed.
    _, rows, err, n, lasts, _ = ws.query(13, "select * from no_such_table")
    report(err is not None and "no such table: no_such_table" in err and lasts == [True],
           "ws-query-error", (err, lasts))
    # Metrics: a clear error in the result. An unknown method: invalid_request.
    ws.send(request(14, 5, field_bytes(105, field_bytes(1, b"android_cpu"))))
    mr = one(ws.responses(1)[0], 205)
    report(b"no metrics engine" in one(mr, 2, b""), "ws-compute-metric-error", mr)
    ws.send(request(15, 99))
    check("ws-invalid-request", 99, one(ws.responses(1)[0], 4))
    # One request split over a binary frame and a continuation, a ping between.
    req = request(16, 3, query_args("select 42 as x"))
    ws.frame(2, req[:5], fin=False); ws.frame(9, b"hi"); ws.frame(0, req[5:], fin=True)
    r = ws.responses(1)
    check("ws-fragmented", [[42]], decode_query([one(r[0], 203)])[1])
    check("ws-ping-pong", [b"hi"], ws.pongs)
    # REGISTER_SQL_PACKAGE (as the UI and the Python API send it): the
    # module's SQL runs on its first INCLUDE; a second package of the same
    # name without allow_override is refused with Perfetto's message.
    def pkg_args(name, mods, override=False):
        a = field_bytes(1, name.encode())
        for n, sql in mods:
            a += field_bytes(2, field_bytes(1, n.encode()) + field_bytes(2, sql.encode()))
        if override: a += field_varint(3, 1)
        return field_bytes(108, a)
    mods = [("mypkg.slices.longest",
             "CREATE VIEW longest AS SELECT name, dur FROM slice ORDER BY dur DESC LIMIT 1;")]
    ws.send(request(17, 13, pkg_args("mypkg", mods)))
    r = ws.responses(1)[0]
    check("ws-register-sql-package", (13, b""), (one(r, 3), one(one(r, 211, b"?"), 1, b"")))
    _, rows, err, _, _, _ = ws.query(18, "INCLUDE PERFETTO MODULE mypkg.slices.longest; "
                                         "INCLUDE PERFETTO MODULE mypkg.*; SELECT name, dur FROM longest")
    check("ws-include-user-module", (None, [["outer", 10000]]), (err, rows))
    ws.send(request(19, 13, pkg_args("mypkg", mods)))
    r = ws.responses(1)[0]
    check("ws-register-sql-package-exists",
          "Package 'mypkg' is already registered. Choose a different name.\n"
          "If you want to replace the existing package using trace processor shell, you need "
          "to pass the --dev flag and use --override-sql-package to pass the module path.",
          one(one(r, 211), 1, b"").decode())
    # A gap in the request numbers is fatal.
    ws.send(request(23, 10))
    r = ws.responses(2)
    fe = one(r[0], 5, b"").decode() if r else ""
    check("ws-seq-gap", "RPC request out of order. Expected 20, got 23 (ERR:rpc_seq)", fe)
    report(len(r) == 1 and ws.closed, "ws-seq-gap-closes", (len(r), ws.closed))
    # A broken frame (a varint field where a message must be) is fatal too.
    ws = WS()
    ws.send(b"\x08\x01")
    r = ws.responses(2)
    check("ws-framing-error", "RPC framing error", one(r[0], 5, b"").decode() if r else "")
    report(ws.closed, "ws-framing-error-closes")
    # Origins: a stranger, none at all, and one added on the command line.
    check("ws-bad-origin", "HTTP/1.1 403 Forbidden", WS("http://evil.example").status)
    check("ws-no-origin", "HTTP/1.1 403 Forbidden", WS(None).status)

def http_main():
    def post(path, body, origin=None):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        h = {"Origin": origin} if origin else {}
        c.request("POST", path, body, h)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    # /parse + /notify_eof load a trace; /query streams chunked QueryResults.
    st, _, body = post("/parse", trace)
    check("http-parse", (200, b""), (st, body))
    st, _, _ = post("/notify_eof", b"")
    check("http-notify-eof", 200, st)
    st, hdr, body = post("/query", field_bytes(1, b"select name, dur from slice order by ts"))
    check("http-query-chunked", (200, "chunked"), (st, hdr.get("Transfer-Encoding")))
    check("http-query-rows", [["outer", 10000], ["inner", 3000]], decode_query([body])[1])
    # /rpc: one POST, a chunked stream of TraceProcessorRpc back.
    st, hdr, body = post("/rpc", request(0, 3, query_args("select 3 as three")) + request(1, 10),
                         "http://localhost:10000")
    msgs, rest = split_stream(body)
    check("http-rpc", (200, [[3]], 14, b""),
          (st, decode_query([one(msgs[0], 203)])[1], one(one(msgs[1], 210), 3), rest))
    check("http-rpc-cors", "http://localhost:10000", hdr.get("Access-Control-Allow-Origin"))
    st, _, _ = post("/query", b"", "http://evil.example")
    check("http-bad-origin", 403, st)
    # The additional origin of the command line.
    check("ws-additional-origin", "HTTP/1.1 101 Switching Protocols", WS("http://my.example:8080").status)

def stdio_main():
    out = sys.stdin.buffer.read()
    msgs, rest = split_stream(out)
    check("stdio-responses", 3, len(msgs))
    check("stdio-status", b"", rest)
    check("stdio-query", [["outer"], ["inner"]], decode_query([one(msgs[2], 203)])[1])
    check("stdio-seq", [0, 1, 2], [one(m, 1) for m in msgs])

def stdio_input():
    sys.stdout.buffer.write(request(1, 1, field_bytes(101, trace)) + request(2, 2) +
                            request(3, 3, query_args("select name from slice order by ts")))

{"ws": ws_main, "http": http_main, "stdio": stdio_main, "stdio-input": stdio_input}[mode]()
PY

# report_client NAME: PASS/FAIL lines from the client's "ok X" / "fail X: why".
report_client() {
	if [ ! -s "$TMP/$1.client" ]; then
		fail "$1-client" "the client reported nothing" "$(cat "$TMP/$1.client.err")"
		return
	fi
	while IFS= read -r line; do
		case $line in
		ok\ *) pass "${line#ok }" ;;
		fail\ *) rest=${line#fail }; fail "${rest%%:*}" "${rest#*: }" ;;
		esac
	done <"$TMP/$1.client"
	[ -s "$TMP/$1.client.err" ] && fail "$1-client-stderr" "$(cat "$TMP/$1.client.err")"
	return 0
}

# ---- server http with no trace: the UI loads one through the RPC ------------------
PORT=$(free_port)
if start_server http server http --port "$PORT" --additional-cors-origins 'http://my.example:8080, http://x.example'; then
	timeout 120 python3 "$TMP/client.py" "$PORT" "$TMP/t.json" ws >"$TMP/ws.client" 2>"$TMP/ws.client.err"
	report_client ws
	timeout 60 python3 "$TMP/client.py" "$PORT" "$TMP/t.json" http >"$TMP/http.client" 2>"$TMP/http.client.err"
	report_client http

	# Plain HTTP with curl: the help page, /status through protoc, CORS, 404.
	curl -s --max-time 10 -D "$TMP/h" -o "$TMP/b" "http://127.0.0.1:$PORT/"
	expect_eq help-page "HTTP/1.1 200 OK" "$(head -1 "$TMP/h" | tr -d '\r')"
	grep -q 'ui.perfetto.dev' "$TMP/b" && pass help-page-text || fail help-page-text "$(cat "$TMP/b")"
	if command -v protoc >/dev/null 2>&1; then
		curl -s --max-time 10 "http://127.0.0.1:$PORT/status" | decode_status >"$TMP/status.txt" 2>&1
		expect_eq status-protoc 'loaded_trace_name: "Unnamed trace (0 MB)"
human_readable_version: "tracebox '"$(tps --version | sed -n 's/^tracebox //p')"'"
api_version: 14' "$(cat "$TMP/status.txt")"
	else
		skip status-protoc "protoc is not installed"
	fi
	curl -s --max-time 10 -D "$TMP/h" -o /dev/null -H 'Origin: https://ui.perfetto.dev' "http://127.0.0.1:$PORT/status"
	expect_eq cors-allow-origin "Access-Control-Allow-Origin: https://ui.perfetto.dev" \
		"$(grep -i '^Access-Control-Allow-Origin' "$TMP/h" | tr -d '\r')"
	curl -s --max-time 10 -D "$TMP/h" -o /dev/null -X OPTIONS -H 'Origin: https://ui.perfetto.dev' \
		"http://127.0.0.1:$PORT/rpc"
	expect_eq cors-preflight "HTTP/1.1 204 No Content|Access-Control-Allow-Methods: POST, GET, OPTIONS" \
		"$(head -1 "$TMP/h" | tr -d '\r')|$(grep '^Access-Control-Allow-Methods' "$TMP/h" | tr -d '\r')"
	expect_eq not-found 404 "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope")"
	expect_eq too-large 413 "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' \
		-H 'Content-Length: 999999999999' -X POST "http://127.0.0.1:$PORT/parse")"
	# A body sent after "100 Continue" (curl would wait 30 s without it).
	expect_eq expect-100-continue 200 "$(curl -s --max-time 10 --expect100-timeout 30 -o /dev/null \
		-w '%{http_code}' -H 'Expect: 100-continue' --data-binary @"$TMP/t.json" \
		"http://127.0.0.1:$PORT/parse")"
	curl -s --max-time 10 -o /dev/null -X POST "http://127.0.0.1:$PORT/notify_eof"
	# Keep-alive: two requests on one connection.
	n=$(curl -s --max-time 10 -v "http://127.0.0.1:$PORT/status" "http://127.0.0.1:$PORT/status" 2>&1 -o /dev/null |
		grep -c 'Re-using existing connection\|Reusing existing')
	expect_eq keep-alive 1 "$n"

	# The port is taken: one line, exit 1.
	expect_exit port-in-use 1 tps server http --port "$PORT"
	# (musl says "Address in use", glibc "Address already in use")
	line=$(grep -v '^\[' "$TMP/err")
	case $line in
	"trace_processor_shell: cannot listen on 127.0.0.1:$PORT: Address"*"in use") pass port-in-use-line ;;
	*) fail port-in-use-line "$line" ;;
	esac
	stop_server http
fi

# ---- classic -D with a trace loaded before serving --------------------------------
PORT=$(free_port)
if start_server classic -D --http-port "$PORT" --http-ip-address 127.0.0.1 "$TMP/t.json"; then
	if command -v protoc >/dev/null 2>&1; then
		expect_eq classic-status "loaded_trace_name: \"$TMP/t.json (0 MB)\"" \
			"$(curl -s --max-time 10 "http://127.0.0.1:$PORT/status" | decode_status | head -1)"
	fi
	stop_server classic INT
fi

# ---- server stdio / --stdiod ------------------------------------------------------
python3 "$TMP/client.py" 0 "$TMP/t.json" stdio-input >"$TMP/stdio.in"
for form in "server stdio" "--stdiod"; do
	# shellcheck disable=SC2086
	timeout 60 "$TRACEBOX" trace_processor_shell $form <"$TMP/stdio.in" >"$TMP/stdio.out" 2>"$TMP/stdio.err"
	expect_eq "stdio-exit${form#server stdio}" 0 "$?"
done
python3 "$TMP/client.py" 0 "$TMP/t.json" stdio <"$TMP/stdio.out" >"$TMP/stdio.client" 2>"$TMP/stdio.client.err"
report_client stdio
printf '\010\001' | timeout 10 "$TRACEBOX" trace_processor_shell server stdio >"$TMP/stdio.out" 2>"$TMP/stdio.err"
expect_eq stdio-framing-error-exit 1 "$?"
grep -q 'RPC framing error' "$TMP/stdio.out" && pass stdio-framing-error || fail stdio-framing-error
expect_exit server-bad-mode 1 tps server bogus
