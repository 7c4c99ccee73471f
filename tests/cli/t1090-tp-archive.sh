# zip and tar traces: each member is sniffed and imported (gzip'd members
# unwrapped), protobuf members first, then gzip'd, then the rest, by name
# (Perfetto's order); `trace_file` lists the archive and its members. Zips
# stored, deflated, and streamed with data descriptors; tar in ustar, GNU
# and PAX form. Corrupt or cut archives fail with one line.
. tests/lib.sh

if ! command -v python3 >/dev/null 2>&1; then
	skip archive "python3 missing (it builds the archives)"
	exit 0
fi
bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
q() { "$bin" trace_processor_shell query "$1" "$2" 2>"$TMP/err"; }

cat >"$TMP/p.txt" <<'TXT'
packet {
  trusted_packet_sequence_id: 1
  timestamp: 5000
  track_event { type: TYPE_INSTANT name: "proto_ev" track_uuid: 0 }
  incremental_state_cleared: true
}
TXT
if ! "$TRACEBOX" traceconv binary "$TMP/p.txt" "$TMP/p.pb" 2>"$TMP/err"; then
	fail encode "$(cat "$TMP/err")"
	exit 0
fi
printf '[{"ph":"X","name":"json_a","ts":1,"dur":2,"pid":1,"tid":1}]' >"$TMP/a.json"
printf '[{"ph":"X","name":"json_z","ts":3,"dur":1,"pid":1,"tid":1}]' >"$TMP/z.json"

python3 - "$TMP" <<'PY'
import gzip, io, sys, tarfile, zipfile
d = sys.argv[1]
a, z, p = (open(f"{d}/{n}", "rb").read() for n in ("a.json", "z.json", "p.pb"))
members = [("z.json", z), ("dir/a.json", a), ("p.pb", p), ("g.json.gz", gzip.compress(a, mtime=0)),
           (".hidden/x", b"junk"), ("__MACOSX/._z.json", b"junk"), ("empty", b"")]
for name, comp in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(f"{d}/{name}.zip", "w", comp) as f:
        f.writestr("dir/", b"")
        for n, data in members:
            f.writestr(n, data)
# A zip written to a pipe: sizes and CRCs in data descriptors after the data.
class Pipe(io.RawIOBase):
    def __init__(self): self.buf = bytearray()
    def writable(self): return True
    def write(self, b): self.buf += b; return len(b)
pipe = Pipe()
with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as f:
    for n, data in members:
        f.writestr(n, data)
open(f"{d}/streamed.zip", "wb").write(pipe.buf)
for name, fmt in (("ustar", tarfile.USTAR_FORMAT), ("gnu", tarfile.GNU_FORMAT), ("pax", tarfile.PAX_FORMAT)):
    with tarfile.open(f"{d}/{name}.tar", "w", format=fmt) as t:
        for n, data in members + [("d" * 130 + "/x.json", z)]:
            ti = tarfile.TarInfo(n); ti.size = len(data); ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))
data = open(f"{d}/stored.zip", "rb").read()
i = data.index(b'"json_z"')
open(f"{d}/badcrc.zip", "wb").write(data[:i] + b"X" + data[i + 1:])
open(f"{d}/cut.zip", "wb").write(data[:i])
# A GNU long name on a directory: the file after it keeps its own name.
with tarfile.open(f"{d}/longdir.tar", "w", format=tarfile.GNU_FORMAT) as t:
    ti = tarfile.TarInfo("e" * 120); ti.type = tarfile.DIRTYPE; ti.mtime = 0
    t.addfile(ti)
    ti = tarfile.TarInfo("z.json"); ti.size = len(z); ti.mtime = 0
    t.addfile(ti, io.BytesIO(z))
open(f"{d}/cut.tar", "wb").write(open(f"{d}/ustar.tar", "rb").read()[:1500])
PY

want_files='"name","trace_type","processing_order","is_container","parent_id"
"[NULL]","@KIND@",0,1,"[NULL]"
"p.pb","proto",1,0,0
"g.json.gz","gzip",2,1,0
@LONG@"dir/a.json","json",@N@,0,0
"z.json","json",@N1@,0,0'
want_slices='"name","ts","dur"
"json_a",1000,2000
"json_a",1000,2000
"json_z",3000,1000
"proto_ev",5000,0'
for a in stored.zip deflated.zip streamed.zip ustar.tar gnu.tar pax.tar; do
	kind=${a#*.}
	# A name of more than 100 bytes: ustar splits it into prefix and name,
	# GNU writes a long-name entry, PAX a path record that Perfetto (and we)
	# ignore for the ustar field's first 100 bytes. It sorts before "dir/".
	long=$(printf 'd%.0s' $(seq 130))/x.json
	[ "$a" = pax.tar ] && long=$(printf 'd%.0s' $(seq 100))
	case $a in
	*.tar) w=$(echo "$want_files" | sed -e "s|@LONG@|\"$long\",\"json\",3,0,0\n|" -e 's/@N@/4/' -e 's/@N1@/5/') ;;
	*) w=$(echo "$want_files" | sed -e 's/@LONG@//' -e 's/@N@/3/' -e 's/@N1@/4/') ;;
	esac
	w=$(echo "$w" | sed "s/@KIND@/$kind/")
	ws=$want_slices
	case $a in *.tar) ws='"name","ts","dur"
"json_a",1000,2000
"json_a",1000,2000
"json_z",3000,1000
"json_z",3000,1000
"proto_ev",5000,0' ;; esac
	expect_eq "${a}_files" "$w" "$(q "$TMP/$a" "select name, trace_type, processing_order, is_container, parent_id from trace_file order by processing_order")"
	expect_eq "${a}_slices" "$ws" "$(q "$TMP/$a" "select name, ts, dur from slice order by ts, name")"
done

expect_eq tar_long_dir_name '"name","trace_type"
"z.json","json"' "$(q "$TMP/longdir.tar" "select name, trace_type from trace_file where id > 0")"

expect_eq zip_type_metadata '"str_value"
"zip"' "$(q "$TMP/stored.zip" "select str_value from metadata where name = 'trace_type'")"
expect_eq zip_sizes "$(wc -c <"$TMP/stored.zip" | tr -d ' ')" "$(q "$TMP/stored.zip" "select size from trace_file where id = 0" | tail -1)"

# The zip the catapult project ships answers like its unzipped member.
cz=$TB_SHARED/corpus/chrome_json/catapult-project+catapult__simple_trace_zip.zip
if [ -f "$cz" ]; then
	python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("simple_trace.json"))' "$cz" >"$TMP/simple.json"
	sql="select name, ts, dur, depth from slice order by id"
	expect_eq catapult_zip "$(q "$TMP/simple.json" "$sql")" "$(q "$cz" "$sql")"
else
	skip catapult_zip "../shared/corpus not found"
fi

# Bad archives: one line, exit 1.
for c in badcrc.zip:"corrupt zip archive: CRC mismatch in 'z.json'" cut.zip:"truncated zip archive" \
	cut.tar:"truncated tar archive"; do
	f=${c%%:*} msg=${c#*:}
	if "$bin" trace_processor_shell query "$TMP/$f" "select 1" >/dev/null 2>"$TMP/err"; then
		fail "bad_$f" "loaded"
	elif grep -qF "$msg" "$TMP/err" && [ "$(wc -l <"$TMP/err")" -le 2 ]; then
		pass "bad_$f"
	else
		fail "bad_$f" "$(cat "$TMP/err")"
	fi
done
python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as f:
    f.writestr("notes.txt", "hello, not a trace\n")
' "$TMP/text.zip"
if "$bin" trace_processor_shell query "$TMP/text.zip" "select 1" >/dev/null 2>"$TMP/err"; then
	fail unknown_member "loaded"
else
	grep -qF "unknown trace format in archive member 'notes.txt'" "$TMP/err" && pass unknown_member ||
		fail unknown_member "$(cat "$TMP/err")"
fi
