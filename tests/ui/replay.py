"""Replay the Perfetto UI's query sequence for one trace against
`trace_processor_shell server http`, in one WebSocket session, and compare
each answer with Perfetto v58.2's (../shared/reference/ui_queries/).

    replay.py TRACEBOX SEQUENCE.json KNOWN_DIFFERENCES EXACT_ROWS [--report]
              [--trace=PATH --name=NAME]

Prints `PASS ui/<name>/<check>` / `FAIL ...` lines (details on stderr), or
with --report one line per query that differs.

--same (with --trace): that trace has the sequence's contents in another
wrapping (gzip'd), so every check applies as for the sequence's own, but
to the queries whose answer holds the trace_uuid (a hash of the file's
first bytes): their columns only.
--trace=PATH replays the sequence against another trace (a merged archive
holding the sequence's own trace, say), under NAME: then only what does not
depend on the trace's contents is checked: every query Perfetto answers is
answered, with Perfetto's columns, and each failure is logged.

The server runs with --no-ftrace-raw, as Perfetto's shell ran when it
answered (as its Python API starts it): those answers have no ftrace_event
rows on traces where Perfetto v58.2 with raw ingestion on always makes some
(sched_switch, compact or text, and every typed event of sched.pftrace). Python stdlib only: the
TraceProcessorRpc messages are encoded by hand.
"""
import base64, hashlib, json, os, socket, struct, subprocess, sys, time

# ---- protobuf by hand ---------------------------------------------------------

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

TPM_QUERY_STREAMING = 3

def request(seq, method, args=b""):
    return field_bytes(1, field_varint(1, seq) + field_varint(2, method) + args)

def split_stream(buf):
    msgs, i = [], 0
    while i < len(buf):
        try:
            tag, j = read_varint(buf, i); n, j = read_varint(buf, j)
        except IndexError:
            break
        if j + n > len(buf): break
        msgs.append(buf[j:j + n]); i = j + n
    return msgs, buf[i:]

def decode_query(results):
    """(columns, rows, error, last) of a query's QueryResult messages."""
    cols, rows, err, last = [], [], None, False
    for qr in results:
        for f, w, v in fields(qr):
            if f == 1: cols.append(v.decode())
            elif f == 2: err = v.decode()
            elif f == 3:
                types, ints, dbls, blobs, strs = b"", [], [], [], []
                for g, _, x in fields(v):
                    if g == 1: types = x
                    elif g == 2:
                        i = 0
                        while i < len(x):
                            n, i = read_varint(x, i); ints.append(s64(n))
                    elif g == 3: dbls = list(struct.unpack("<%dd" % (len(x) // 8), x))
                    elif g == 4: blobs.append(x)
                    elif g == 5: strs = x.split(b"\0")[:-1]
                    elif g == 6: last = last or bool(x)
                ints.reverse(); dbls.reverse(); blobs.reverse(); strs.reverse()
                cells = []
                for t in types:
                    if t == 1: cells.append(None)
                    elif t == 2: cells.append(ints.pop())
                    elif t == 3: cells.append(dbls.pop())
                    elif t == 4: cells.append(strs.pop().decode())
                    elif t == 5: cells.append(base64.b64encode(blobs.pop()).decode())
                    else: raise ValueError("cell type %d" % t)
                w_ = len(cols) or 1
                for k in range(0, len(cells), w_):
                    rows.append(cells[k:k + w_])
    return cols, rows, err, last

# ---- websocket ----------------------------------------------------------------

class WS:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=120)
        key = base64.b64encode(os.urandom(16)).decode()
        hdr = ("GET /websocket HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Origin: https://ui.perfetto.dev\r\n\r\n" % (port, key))
        self.s.sendall(hdr.encode())
        resp = b""
        while b"\r\n\r\n" not in resp:
            d = self.s.recv(4096)
            if not d: raise EOFError("handshake")
            resp += d
        head, _, self.buf = resp.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise EOFError(head.split(b"\r\n")[0].decode())
        self.stream = b""
        self.seq = 0

    def send(self, payload):
        mask = os.urandom(4)
        n = len(payload)
        h = bytes([0x82])
        if n < 126: h += bytes([0x80 | n])
        elif n <= 0xFFFF: h += bytes([0x80 | 126]) + struct.pack(">H", n)
        else: h += bytes([0x80 | 127]) + struct.pack(">Q", n)
        m = (mask * (n // 4 + 1))[:n]
        body = (int.from_bytes(payload, "little") ^ int.from_bytes(m, "little")).to_bytes(n, "little")
        self.s.sendall(h + mask + body)

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d: raise EOFError("connection closed")
            self.buf += d

    def read_frame(self):
        self._need(2)
        op, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
        off = 2
        if n == 126: self._need(4); n = struct.unpack(">H", self.buf[2:4])[0]; off = 4
        elif n == 127: self._need(10); n = struct.unpack(">Q", self.buf[2:10])[0]; off = 10
        self._need(off + n)
        p = self.buf[off:off + n]; self.buf = self.buf[off + n:]
        return op, p

    def query(self, sql):
        self.seq += 1
        self.send(request(self.seq, TPM_QUERY_STREAMING, field_bytes(103, field_bytes(1, sql.encode()))))
        results = []
        while True:
            msg = self.next_message()
            fatal = one(msg, 5)
            if fatal is not None:
                raise EOFError("fatal error: " + fatal.decode())
            qr = one(msg, 203)
            if qr is None: continue
            results.append(qr)
            if any(one(b, 6) for (f, _, b) in fields(qr) if f == 3): break
            if any(f == 2 for (f, _, _) in fields(qr)): break
        cols, rows, err, _ = decode_query(results)
        return cols, rows, err

    def next_message(self):
        while True:
            try:
                tag, j = read_varint(self.stream, 0); n, j = read_varint(self.stream, j)
                if j + n <= len(self.stream):
                    m = self.stream[j:j + n]; self.stream = self.stream[j + n:]
                    return m
            except IndexError:
                pass
            op, p = self.read_frame()
            if op == 2 or op == 0: self.stream += p
            elif op == 8: raise EOFError("server closed the websocket")

# ---- the replay ---------------------------------------------------------------

def rows_sha1(rows):
    return hashlib.sha1(json.dumps(rows, sort_keys=True).encode()).hexdigest()

def start_server(tracebox, trace, log):
    for _ in range(20):
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        p = subprocess.Popen([tracebox, "trace_processor_shell", "--no-ftrace-raw", "server", "http", "--port",
                              str(port), trace], stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return p, port
            except OSError:
                time.sleep(0.05)
        p.kill(); p.wait()
    raise RuntimeError("the server did not come up")

def load_list(path, name):
    """{index: reason} of the lines `name index reason` of a list file."""
    out = {}
    if not os.path.exists(path): return out
    for line in open(path):
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if not line: continue
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] == name:
            out[int(parts[1])] = parts[2] if len(parts) > 2 else ""
    return out

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    report = "--report" in sys.argv
    tracebox, seq_path, known_path, exact_path = args[:4]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    name = os.path.basename(seq_path)[:-5]
    seq = json.load(open(seq_path))
    trace = os.path.join(os.path.dirname(seq_path), seq["trace"])
    known = load_list(known_path, name)
    exact = load_list(exact_path, name)
    other = "trace" in opts
    if other:
        trace, name = opts["trace"], opts.get("name", name + "-other")
    # --same: the other trace holds the same contents (the sequence's own
    # trace gzip'd, say): every check applies, under the sequence's lists.
    # Only the trace_uuid (Perfetto hashes the file's first bytes, gzip
    # header and all) differs then: queries whose answer holds it are
    # checked for columns alone.
    same = "--same" in sys.argv
    file_bound = set()
    if same:
        other = False
        uuids = [json.dumps(q["first_rows"]) for q in seq["queries"]
                 if "trace_uuid" in q["sql"] and q.get("first_rows")]
        uuid = uuids[0][4:-4] if uuids else None
        file_bound = {i for i, q in enumerate(seq["queries"])
                      if uuid and uuid in json.dumps(q.get("first_rows", []))}
    import tempfile
    log = tempfile.NamedTemporaryFile("w+", prefix="tb-ui-", suffix=".log")
    srv, port = start_server(tracebox, trace, log)
    res = []
    try:
        ws = WS(port)
        for i, q in enumerate(seq["queries"]):
            cols, rows, err = ws.query(q["sql"])
            res.append((cols, rows, err))
    finally:
        srv.terminate(); srv.wait()
    fails = {"answers": [], "columns": [], "rows": [], "known-list": [], "failed-query-log": []}
    if other:
        del fails["rows"], fails["known-list"]
    # server http logs one line per failed query: the error, then the SQL's
    # first line.
    log.seek(0)
    logged = [l for l in log.read().splitlines() if "query failed: " in l]
    if os.environ.get("TB_UI_SERVER_LOG"):
        open(os.environ["TB_UI_SERVER_LOG"], "w").write("\n".join(logged) + "\n")
    failed = [(i, err, q) for i, (q, (_, _, err)) in enumerate(zip(seq["queries"], res)) if err]
    if len(logged) != len(failed):
        fails["failed-query-log"].append("%d failed queries, %d 'query failed' lines" % (
            len(failed), len(logged)))
    for (i, err, q), line in zip(failed, logged):
        want = "query failed: %s; sql: %s" % (err.replace("\n", " ")[:600],
                                              q["sql"].strip().split("\n")[0][:200])
        if want not in line:
            fails["failed-query-log"].append("q%d: line %r lacks %r" % (i, line, want))
    for i, (q, (cols, rows, err)) in enumerate(zip(seq["queries"], res)):
        want_err = q.get("error")
        first = q["sql"].strip().split("\n")[0][:100]
        if want_err is not None:
            if err is None:
                fails["answers"].append("q%d: Perfetto fails (%s), we answer: %s" % (i, want_err, first))
            continue
        if err is not None:
            if report: print("q%d ERROR %s | %s" % (i, err, first))
            if other or i not in known:
                fails["answers"].append("q%d: %s: %s" % (i, err, first))
            continue
        if other or i in file_bound:
            if cols != q["columns"]:
                fails["columns"].append("q%d: columns %r, Perfetto %r: %s" % (i, cols, q["columns"], first))
            continue
        if cols != q["columns"]:
            if report: print("q%d COLS %r want %r | %s" % (i, cols, q["columns"], first))
            if i not in known:
                fails["columns"].append("q%d: columns %r, Perfetto %r: %s" % (i, cols, q["columns"], first))
            continue
        same = len(rows) == q["rows"] and rows_sha1(rows) == q["rows_sha1"]
        if not same:
            if report:
                fr = q["first_rows"]
                k = next((j for j in range(min(len(fr), len(rows))) if fr[j] != rows[j]),
                         min(len(fr), len(rows)))
                print("q%d ROWS %d want %d | %s\n   first difference at row %d (of %d known)"
                      "\n   got  %s\n   want %s" % (
                    i, len(rows), q["rows"], first, k, len(fr),
                    json.dumps(rows[k:k + 2])[:300], json.dumps(fr[k:k + 2])[:300]))
            if i not in known:
                fails["rows"].append("q%d: %d rows (Perfetto %d), first %s, Perfetto's %s: %s" % (
                    i, len(rows), q["rows"], json.dumps(rows[:2])[:200],
                    json.dumps(q["first_rows"][:2])[:200], first))
        elif i in known:
            fails["known-list"].append("q%d now matches Perfetto: remove it from %s" % (i, known_path))
    for i in (exact if not other else []):
        if i in known:
            fails["known-list"].append("q%d must match (%s) and cannot be a known difference" % (i, exact[i]))
    if report:
        return 0
    for check, msgs in fails.items():
        if msgs:
            print("FAIL ui/%s/%s" % (name, check), flush=True)
            for m in msgs:
                print("  ui/%s: %s" % (name, m), file=sys.stderr)
        else:
            print("PASS ui/%s/%s" % (name, check), flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
