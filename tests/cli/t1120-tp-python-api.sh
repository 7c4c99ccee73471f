# Perfetto's Python API (perfetto.trace_processor, v58.2) against our shell,
# at the protocol level: a client of our own (Python stdlib only) that does
# exactly what that package does. It starts `trace_processor_shell -D
# --http-port PORT --no-ftrace-raw` (plus --dev, --allow-sql-file-access,
# --add-sql-package when asked) through a symlink named
# trace_processor_shell, in a new session, stdin from /dev/null; picks the
# port by binding port 0 (unique_port); polls GET /status once a second;
# sends the trace as POST /parse bodies of 1 MiB and GET /notify_eof; runs
# POST /query with a QueryArgs body on one keep-alive connection and parses
# the whole chunked body as one QueryResult (as the package's protobuf
# ParseFromString merges the chunks); raises on QueryResult.error; checks
# the batches as its QueryResultIterator does; kills the process group.
. tests/lib.sh

if ! command -v python3 >/dev/null 2>&1; then
	skip all "python3 is not installed"
	exit 0
fi

TRACE=$TB_SHARED/reference/golden/traces/sched_compact.pftrace
if [ ! -f "$TRACE" ]; then
	skip all "no $TRACE"
	exit 0
fi
ln -s "$(cd "$(dirname "$TRACEBOX")" && pwd)/$(basename "$TRACEBOX")" "$TMP/trace_processor_shell"
mkdir -p "$TMP/pkgs/mypkg/sub"
echo 'CREATE PERFETTO VIEW mypkg_busy AS SELECT utid, sum(dur) AS d FROM sched GROUP BY utid;' \
	>"$TMP/pkgs/mypkg/sub/busy.sql"

cat >"$TMP/api.py" <<'PY'
import os, signal, socket, struct, subprocess, sys, tempfile, time
import http.client
from urllib import request, error

BIN, TRACE, PKGDIR, MERGED = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
SLICES_ALONE = int(sys.argv[5])

def report(ok, name, detail=""):
    print(("ok " if ok else "fail ") + name + ("" if ok else ": " + str(detail)), flush=True)

def check(name, expected, actual):
    report(expected == actual, name, "expected %r, got %r" % (expected, actual))

# -- protobuf by hand (field numbers of trace_processor.proto) --
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80]); v >>= 7
    return out + bytes([v])

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

def s64(v): return v - (1 << 64) if v >= 1 << 63 else v

class Exc(Exception): pass

class Batch:
    def __init__(self, b):
        self.cells, self.varints, self.doubles, self.blobs, self.strings = [], [], [], [], b""
        self.is_last_batch = False
        for f, w, v in fields(b):
            if f == 1:
                if w == 2: self.cells += list(v)
                else: self.cells.append(v)
            elif f == 2:
                if w == 2:
                    i = 0
                    while i < len(v):
                        n, i = read_varint(v, i); self.varints.append(s64(n))
                else: self.varints.append(s64(v))
            elif f == 3: self.doubles += list(struct.unpack("<%dd" % (len(v) // 8), v))
            elif f == 4: self.blobs.append(v)
            elif f == 5: self.strings += v
            elif f == 6: self.is_last_batch = bool(v)

def query_result(body):
    """The whole body parsed as one QueryResult (protobuf merge semantics)."""
    cols, batches, err = [], [], ""
    for f, w, v in fields(body):
        if f == 1: cols.append(v.decode())
        elif f == 2: err = v.decode()
        elif f == 3: batches.append(Batch(v))
    return cols, batches, err

def rows(cols, batches):
    """QueryResultIterator's checks and cells, as rows."""
    if batches and not batches[-1].is_last_batch:
        raise Exc("Last batch did not have is_last_batch flag set")
    cells = []
    for b in batches:
        if cols and len(b.cells) % len(cols):
            raise Exc("cells not divisible by columns")
        vi = di = bi = 0
        strs = b.strings.decode("utf-8", "ignore").split("\0")[:-1]
        si = 0
        for t in b.cells:
            if t == 1: cells.append(None)
            elif t == 2: cells.append(b.varints[vi]); vi += 1
            elif t == 3: cells.append(b.doubles[di]); di += 1
            elif t == 4: cells.append(strs[si]); si += 1
            elif t == 5: cells.append(b.blobs[bi]); bi += 1
    n = len(cols) or 1
    return [cells[i:i + n] for i in range(0, len(cells), n)]

class TP:
    """perfetto.trace_processor.TraceProcessor, as far as the wire goes."""
    def __init__(self, trace=None, no_raw=True, dev=False, file_access=False, packages=(),
                 load_timeout=10):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)   # unique_port
        s.bind(("", 0)); s.listen(5); port = s.getsockname()[1]; s.close()
        self.url = "localhost:%d" % port
        args = ["-D", "--http-port", str(port)]
        if no_raw: args.append("--no-ftrace-raw")
        if dev: args.append("--dev")
        if file_access: args.append("--allow-sql-file-access")
        for p in packages: args += ["--add-sql-package", p]
        self.stdout, self.stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.p = subprocess.Popen([BIN] + args, stdin=subprocess.DEVNULL, stdout=self.stdout,
                                  stderr=self.stderr, start_new_session=True)
        ok = False
        for _ in range(load_timeout + 1):
            try:
                if self.p.poll() is None:
                    request.urlretrieve("http://%s/status" % self.url)
                    ok = True
                break
            except (error.URLError, ConnectionError):
                time.sleep(1)
        if not ok:
            self.close()
            self.stderr.seek(0)
            raise Exc("Trace processor failed to start.\nstderr: " + self.stderr.read().decode())
        self.conn = http.client.HTTPConnection(self.url)
        if trace:
            with open(trace, "rb") as f:
                while True:
                    chunk = f.read(1024 * 1024)
                    if not chunk: break
                    e = self.parse(chunk)
                    if e:
                        self.close()  # (the package leaves it running; the test must not)
                        raise Exc("Failed while parsing trace. Error message: " + e)
            self.notify_eof()

    def post(self, path, body):
        self.conn.request("POST", path, body=body)
        with self.conn.getresponse() as f:
            return f.status, f.getheader("Transfer-Encoding"), f.read()

    def get(self, path):
        self.conn.request("GET", path)
        with self.conn.getresponse() as f:
            return f.read()

    def parse(self, chunk):
        _, _, body = self.post("/parse", chunk)
        return "".join(v.decode() for f, w, v in fields(body) if f == 2)

    def notify_eof(self): return self.get("/notify_eof")

    def status(self):
        return {f: v for f, w, v in fields(self.get("/status"))}

    def query(self, sql):
        st, te, body = self.post("/query", b"\x0a" + varint(len(sql.encode())) + sql.encode())
        cols, batches, err = query_result(body)
        if err: raise Exc(err)
        return cols, rows(cols, batches), batches

    def restore_initial_tables(self): return self.get("/restore_initial_tables")

    def close(self):
        try: os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        self.p.wait()

tp = TP(TRACE)
st = tp.status()
check("status-api-version", 14, st.get(3))
check("status-trace-name", b"Unnamed trace (0 MB)", st.get(1))
check("no-ftrace-raw-rows", [[0]], tp.query("select count(*) as n from ftrace_event")[1])
check("sched-rows", [[362]], tp.query("select count(*) as n from sched")[1])
cols, r, _ = tp.query("select utid, tid, name from thread order by utid limit 4")
check("thread-columns", ["utid", "tid", "name"], cols)
check("thread-rows", [[0, 0, "swapper"], [1, 30878, "tracebox"], [2, 30881, "tracebox"], [3, 1, None]], r)
check("sched-first-rows", [[2052166118801, 312566, 1, 2], [2052166431367, 76575, 1, 1]],
      tp.query("select ts, dur, cpu, utid from sched order by ts limit 2")[1])
check("cell-types", [[1.5, -2, b"\x00\xff", None, "h\u00e9"]],
      tp.query("select 1.5 as d, -2 as i, x'00ff' as b, null as n, 'h\u00e9' as s")[1])
try:
    tp.query("select * from no_such_table")
    report(False, "sql-error", "no exception")
except Exc as e:
    check("sql-error", 'Traceback (most recent call last):\n  File "stdin" line 1 col 1\n'
          '    select * from no_such_table\n    ^\nno such table: no_such_table', str(e))
# Several batches in one body: rows intact, only the last one flagged.
cols, r, batches = tp.query("with recursive n(i) as (select 0 union all select i + 1 from n "
                            "where i < 59999) select i, i * 2 as j from n")
check("big-result", [[i, 2 * i] for i in range(60000)], r)
report(len(batches) > 1 and [b.is_last_batch for b in batches] == [False] * (len(batches) - 1) + [True],
       "big-result-batches", [b.is_last_batch for b in batches])
# Tables the client made go with /restore_initial_tables; the trace's stay.
tp.query("create table mine as select 1 as x")
check("created-table", [[1]], tp.query("select x from mine")[1])
tp.restore_initial_tables()
try:
    tp.query("select x from mine")
    report(False, "restore-initial-tables", "the table is still there")
except Exc as e:
    check("restore-initial-tables", "no such table: mine", str(e).split("\n")[-1])
check("restore-keeps-trace", [[362]], tp.query("select count(*) as n from sched")[1])
# export(): the package copies the /export body into its file whatever the
# status; ours is 501 with a line that says why, not an empty file.
st, _, body = tp.post("/export", b"\x08\x01")   # ExportArgs.format = PERFETTO
check("export-refused", (501, True), (st, b"cannot export Perfetto or Arrow archives" in body))

# A second instance at the same time (unique_port), with raw ftrace rows,
# --dev, --allow-sql-file-access and a package.
tp2 = TP(TRACE, no_raw=False, dev=True, file_access=True, packages=[PKGDIR + "@pkg"])
report(tp2.url != tp.url, "unique-ports", (tp.url, tp2.url))
check("raw-rows", [[587]], tp2.query("select count(*) as n from ftrace_event")[1])
check("package-module", [[1, 2992363]],
      tp2.query("include perfetto module pkg.sub.busy; "
                "select count(*) as n, max(d) as d from mypkg_busy where utid = 2")[1])
check("first-still-there", [[0]], tp.query("select count(*) as n from ftrace_event")[1])
tp.close(); tp2.close()
check("killed", (-9, -9), (tp.p.returncode, tp2.p.returncode))

# A merged archive (traceconv merge of this trace and a 1.9 MB Chrome JSON),
# sent as the package sends any trace: 1 MiB /parse bodies.
tpm = TP(MERGED)
check("merged-members", [["proto"], ["json"]],
      tpm.query("select trace_type from trace_file where parent_id is not null order by id")[1])
check("merged-sched-rows", [[362]], tpm.query("select count(*) as n from sched")[1])
check("merged-slices", [[SLICES_ALONE]], tpm.query("select count(*) as n from slice")[1])
tpm.close()

# A trace the shell cannot read: the package's exception text.
bad = tempfile.NamedTemporaryFile(delete=False); bad.write(b"this is not a trace\n" * 100); bad.close()
try:
    TP(bad.name).close()
    report(False, "parse-error", "no exception")
except Exc as e:
    report(str(e).startswith("Failed while parsing trace. Error message: ") and "unknown trace format" in str(e),
           "parse-error", str(e))
# A flag the shell refuses: it exits and the start fails, with its message.
try:
    TP(None, packages=["/nonexistent/dir"], load_timeout=3).close()
    report(False, "start-failure", "started")
except Exc as e:
    report("Couldn't add SQL package: Directory /nonexistent/dir does not exist." in str(e),
           "start-failure", str(e))
PY

JSON=$TB_SHARED/corpus/chrome_json/GoogleChrome+lighthouse__lh-load.json
"$TRACEBOX" traceconv merge -o "$TMP/merged.tar" "$TRACE" "$JSON" 2>"$TMP/merge.err" ||
	fail merge "$(cat "$TMP/merge.err")"
alone=$("$TRACEBOX" trace_processor_shell -Q 'select count(*) from slice' "$JSON" 2>/dev/null | sed -n 2p)
timeout 180 python3 "$TMP/api.py" "$TMP/trace_processor_shell" "$TRACE" "$TMP/pkgs/mypkg" \
	"$TMP/merged.tar" "${alone:-0}" >"$TMP/client" 2>"$TMP/client.err"
if [ ! -s "$TMP/client" ]; then
	fail client "the client reported nothing" "$(cat "$TMP/client.err")"
fi
while IFS= read -r line; do
	case $line in
	ok\ *) pass "${line#ok }" ;;
	fail\ *) rest=${line#fail }; fail "${rest%%:*}" "${rest#*: }" ;;
	esac
done <"$TMP/client"
[ -s "$TMP/client.err" ] && fail client-stderr "$(cat "$TMP/client.err")"
exit 0
