# Decompression bombs against the trace processor (issue 21 #11), each run
# under an address-space limit (prlimit --as): a small gzip holding one
# giant JSON string, and a small zip of members that inflate a thousand
# fold. The first is skipped event by event (bounded memory per event, a
# stats entry, the rest of the trace loads); the second is refused with one
# clear line, early, without inflating it all.
. tests/lib.sh

command -v prlimit >/dev/null 2>&1 || { skip all "prlimit not installed"; exit 0; }
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)

# (a) gzip: {"traceEvents":[{... "args":{"s":"aaaa…(1.5 GiB)…"}}, {an instant}]}
# as concatenated gzip members (one 1 MiB member repeated), about 2 MB.
$PY - "$TMP/string.json.gz" <<'PY'
import gzip, sys
one = gzip.compress(b"a" * (1 << 20), 9)
with open(sys.argv[1], "wb") as f:
    f.write(gzip.compress(b'{"traceEvents":[{"name":"big","ph":"i","ts":1,"pid":1,"tid":1,"s":"t","args":{"s":"'))
    for _ in range(1536):
        f.write(one)
    f.write(gzip.compress(b'"}},{"name":"after","ph":"i","ts":2,"pid":1,"tid":1,"s":"t"}]}'))
PY
q="select (select group_concat(name) from slice) || ' ' || (select value from stats where name = 'json_event_too_large')"
start=$(date +%s)
out=$(prlimit --as=1073741824 "$TRACEBOX" trace_processor_shell query "$TMP/string.json.gz" "$q" 2>"$TMP/a.err")
rc=$?
expect_eq gzip-json-string-loads 0 "$rc"
expect_eq gzip-json-string-skipped '"after 1"' "$(echo "$out" | tail -1)"
echo "json string bomb: $(($(date +%s) - start)) s, exit $rc: $(tail -1 "$TMP/a.err")" >&2

# (b) zip: three members of 512 MiB of 'a' each (deflate, valid CRCs), ~1.5 MB.
$PY - "$TMP/bomb.zip" <<'PY'
import struct, sys, zlib
MB = 1 << 20
block = b"a" * MB
c = zlib.compressobj(9, zlib.DEFLATED, -15)
first = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
again = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
tail = c.flush()
n = 512
body = first + again * (n - 1) + tail
crc = 0
for _ in range(n):
    crc = zlib.crc32(block, crc)
size = n * MB
out, cd = b"", b""
for i in range(3):
    name = b"trace%d.json" % i
    off = len(out)
    out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0, crc, len(body), size, len(name), 0) + name + body
    cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 8, 0, 0, crc, len(body), size,
                      len(name), 0, 0, 0, 0, 0, off) + name
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 3, 3, len(cd), len(out), 0)
open(sys.argv[1], "wb").write(out + cd + end)
PY
start=$(date +%s)
prlimit --as=1073741824 "$TRACEBOX" trace_processor_shell query "$TMP/bomb.zip" "select 1" \
	>"$TMP/b.out" 2>"$TMP/b.err"
rc=$?
expect_eq zip-bomb-refused 1 "$rc"
grep -q "decompression bomb" "$TMP/b.err" && pass zip-bomb-message || fail zip-bomb-message "$(cat "$TMP/b.err")"
[ "$(wc -l <"$TMP/b.err")" -le 2 ] && pass zip-bomb-one-line || fail zip-bomb-one-line "$(cat "$TMP/b.err")"
echo "zip bomb: $(($(date +%s) - start)) s, exit $rc: $(tail -1 "$TMP/b.err")" >&2

# (c) zip holding a stored gzip member that inflates 1000 fold (the gzip'd
# member path decodes separately from the zip's own deflate).
$PY - "$TMP/gzbomb.zip" <<'PY'
import gzip, struct, sys, zlib
one = gzip.compress(b"a" * (1 << 20), 9)
body = b"".join([gzip.compress(b'{"traceEvents":[{"name":"')] + [one] * 512)
crc = zlib.crc32(body)
name = b"trace.json.gz"
out = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0, crc, len(body), len(body), len(name), 0) + name + body
cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0, crc, len(body), len(body),
                 len(name), 0, 0, 0, 0, 0, 0) + name
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(cd), len(out), 0)
open(sys.argv[1], "wb").write(out + cd + end)
PY
prlimit --as=1073741824 "$TRACEBOX" trace_processor_shell query "$TMP/gzbomb.zip" "select 1" \
	>"$TMP/c.out" 2>"$TMP/c.err"
rc=$?
expect_eq zip-gzip-member-bomb-refused 1 "$rc"
grep -q "trace.json.gz' inflates more than 200 times" "$TMP/c.err" && pass zip-gzip-member-bomb-message ||
	fail zip-gzip-member-bomb-message "$(cat "$TMP/c.err")"
