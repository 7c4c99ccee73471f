# trace_processor_shell's command line as Perfetto v58.2 has it: every flag
# in the help texts, the global flags with their effect, the commands
# tracebox does not implement failing in one line (never "unrecognized
# option"), export sqlite / -e opened by sqlite3, convert (json, systrace,
# ctrace, text) with the traces they make loading back, util, bundle, the
# metatrace, --perf-file, and `server unix` with `query --remote`.
. tests/lib.sh

tps() { "$TRACEBOX" trace_processor_shell "$@"; }
G=$TB_SHARED/reference/golden/traces
SCHED=$G/sched_compact.pftrace
if [ ! -f "$SCHED" ]; then
	skip all "no $SCHED"
	exit 0
fi

# ---- help: every v58.2 flag is spelled there ------------------------------------
tps --help >"$TMP/help" 2>&1
missing=
for f in help version full-sort no-ftrace-raw analyze-trace-proto-content crop-track-events \
	allow-sql-file-access dev dev-flag extra-checks add-sql-package override-sql-package \
	override-stdlib register-files-dir metric-extension remote metatrace \
	metatrace-buffer-capacity metatrace-categories; do
	grep -q -- "--$f\b" "$TMP/help" || missing="$missing $f"
done
for c in query interactive convert summarize bundle util server export metrics; do
	grep -q "^  $c " "$TMP/help" || missing="$missing command:$c"
done
expect_eq help-global-flags "" "$missing"
# Each command's own flags in `help COMMAND` (and `COMMAND --help`).
check_cmd_flags() {
	cmd=$1
	shift
	tps help "$cmd" >"$TMP/h.$cmd" 2>&1
	m=
	for f in "$@"; do grep -q -- "--$f\b" "$TMP/h.$cmd" || m="$m $f"; done
	expect_eq "help-$cmd-flags" "" "$m"
}
check_cmd_flags query query-file structured-query-id summary-spec interactive wide perf-file
check_cmd_flags interactive wide
check_cmd_flags server port ip-address additional-cors-origins name path idle-timeout \
	idle-start daemonize
check_cmd_flags export output
check_cmd_flags convert truncate full-sort pid timestamps alloc perf java-heap no-annotations \
	output-dir verbose skip-unknown
check_cmd_flags bundle symbol-paths no-auto-symbol-paths proguard-map no-auto-proguard-maps verbose
check_cmd_flags metrics run pre output post-query perf-file interactive
check_cmd_flags summarize metrics-v2 metadata-query format post-query perf-file interactive
check_cmd_flags util verbose output manifest no-validate strict
expect_exit query-help 0 tps query --help
grep -q '^Usage: trace_processor_shell query' "$TMP/out" && pass query-help-text || fail query-help-text
tps --help-classic >"$TMP/classic" 2>&1
m=
for f in httpd http-port http-ip-address http-additional-cors-origins stdiod interactive query-file \
	query-string summary summary-metrics-v2 summary-metadata-query summary-spec summary-format \
	export perf-file wide run-metrics pre-metrics metrics-output metric-extension \
	structured-query-spec structured-query-id; do
	grep -q -- "--$f\b" "$TMP/classic" || m="$m $f"
done
expect_eq help-classic-flags "" "$m"
expect_exit no-args 0 tps
expect_exit help-unknown 1 tps help bogus
grep -q "Unknown command 'bogus'." "$TMP/err" && pass help-unknown-message || fail help-unknown-message

# ---- global flags take effect -------------------------------------------------------
q='select (select count(*) from ftrace_event) as raw, (select count(*) from sched) as sched'
expect_exit raw-default 0 tps query "$SCHED" "$q"
expect_eq raw-default-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_exit no-ftrace-raw 0 tps query --no-ftrace-raw "$SCHED" "$q"
expect_eq no-ftrace-raw-rows '"raw","sched"
0,362' "$(cat "$TMP/out")"
expect_exit classic-no-ftrace-raw 0 tps --no-ftrace-raw -Q "$q" "$SCHED"
expect_eq classic-no-ftrace-raw-rows '"raw","sched"
0,362' "$(cat "$TMP/out")"
mkdir -p "$TMP/files/sub" "$TMP/std/slices"
echo x >"$TMP/files/sub/a.bin"
expect_exit every-global-flag 0 tps query --full-sort --analyze-trace-proto-content \
	--crop-track-events --allow-sql-file-access --dev --dev-flag a=b --extra-checks \
	--register-files-dir "$TMP/files" --metatrace-buffer-capacity 10 \
	--metatrace-categories api,query_toplevel -m "$TMP/mt.pftrace" "$SCHED" "$q"
expect_eq every-global-flag-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_exit register-files-dir-missing 1 tps query --register-files-dir "$TMP/nope" "$SCHED" "$q"
grep -q "cannot read '$TMP/nope'" "$TMP/err" && pass register-files-dir-message || fail register-files-dir-message
# --override-stdlib (with --dev): our slices.with_context replaced.
echo 'CREATE OR REPLACE PERFETTO VIEW thread_slice AS SELECT 42 AS answer;' >"$TMP/std/slices/with_context.sql"
expect_exit override-stdlib-needs-dev 1 tps query --override-stdlib "$TMP/std" "$SCHED" "select 1"
grep -q 'Overriding stdlib requires --dev flag' "$TMP/err" && pass override-stdlib-needs-dev-message ||
	fail override-stdlib-needs-dev-message "$(cat "$TMP/err")"
expect_exit override-stdlib 0 tps query --dev --override-stdlib "$TMP/std" "$SCHED" \
	"INCLUDE PERFETTO MODULE slices.with_context; select answer from thread_slice"
expect_eq override-stdlib-rows '"answer"
42' "$(cat "$TMP/out")"
# The metatrace: a Perfetto trace of what the shell did, that loads.
expect_exit metatrace-loads 0 tps query "$TMP/mt.pftrace" \
	"select t.name as track, s.name, extract_arg(s.arg_set_id, 'debug.sql') as q from slice s join track t on s.track_id = t.id order by s.ts"
expect_eq metatrace-rows "\"track\",\"name\",\"q\"
\"API_TIMELINE\",\"LOAD_TRACE\",\"[NULL]\"
\"QUERY_TIMELINE\",\"QUERY_EXECUTE\",\"$q\"" "$(cat "$TMP/out")"
expect_exit metatrace-bad-category 1 tps query --metatrace-categories bogus -m "$TMP/x" "$SCHED" "select 1"
grep -q 'Unknown metatrace category bogus' "$TMP/err" && pass metatrace-bad-category-message ||
	fail metatrace-bad-category-message
# --perf-file: load and query nanoseconds.
expect_exit perf-file 0 tps -q /dev/stdin -p "$TMP/perf" "$SCHED" <<EOF
select 1;
EOF
grep -Eq '^[0-9]+,[0-9]+$' "$TMP/perf" && pass perf-file-format || fail perf-file-format "$(cat "$TMP/perf")"

# ---- what tracebox does not implement: one line, exit 1 -------------------------------
not_impl() {
	name=$1 pattern=$2
	shift 2
	expect_exit "$name" 1 "$@"
	lines=$(grep -vc '^Trace loaded' "$TMP/err")
	if [ "$lines" = 1 ] && grep -q "$pattern" "$TMP/err" && ! grep -qi unrecognized "$TMP/err"; then
		pass "$name-message"
	else
		fail "$name-message" "$(cat "$TMP/err")"
	fi
}
not_impl metrics 'not implemented in tracebox' tps metrics --run android_cpu "$SCHED"
not_impl classic-run-metrics 'not implemented in tracebox' tps --run-metrics android_cpu "$SCHED"
not_impl summarize 'not implemented in tracebox' tps summarize --metrics-v2 all "$SCHED"
not_impl classic-summary 'not implemented in tracebox' tps --summary "$SCHED"
not_impl export-arrow 'not implemented in tracebox' tps export arrow_tar -o "$TMP/x" "$SCHED"
not_impl export-perfetto 'not implemented in tracebox' tps export perfetto -o "$TMP/x" "$SCHED"
not_impl convert-firefox 'not implemented in tracebox' tps convert firefox "$SCHED" "$TMP/x"
not_impl util-deobfuscate 'not implemented in tracebox' tps util deobfuscate "$SCHED" "$TMP/x"
not_impl metric-extension 'not implemented in tracebox' tps query --metric-extension a@b "$SCHED" "select 1"
not_impl structured-query 'summarizer' tps query --structured-query-id q --summary-spec s "$SCHED"

# ---- export sqlite ---------------------------------------------------------------------
if ! command -v sqlite3 >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	apt-get install -y -q sqlite3 >/dev/null 2>&1 || true
fi
expect_exit export-e 0 tps -e "$TMP/e.db" "$SCHED"
expect_exit export-sqlite 0 tps export sqlite -o "$TMP/x.db" "$SCHED"
if command -v sqlite3 >/dev/null 2>&1; then
	expect_eq export-sqlite3-counts "362|587|729" \
		"$(sqlite3 "$TMP/e.db" 'select (select count(*) from sched), (select count(*) from ftrace_event), (select count(*) from thread_state)')"
	# Perfetto's table and column names (views became tables).
	expect_eq export-thread-columns "id|utid|tid|name|start_ts|end_ts|upid|is_main_thread|is_idle|machine_id|arg_set_id" \
		"$(sqlite3 "$TMP/e.db" "select group_concat(name, '|') from pragma_table_info('thread')")"
	expect_eq export-same-rows "$(tps query "$SCHED" 'select utid, tid, name from thread order by utid' 2>/dev/null | tail -n +2 | tr -d '"' | tr , '|' | sed 's/\[NULL\]//g')" \
		"$(sqlite3 "$TMP/e.db" 'select utid, tid, name from thread order by utid')"
	cmp -s "$TMP/e.db" "$TMP/x.db" && pass export-e-same-as-subcommand || fail export-e-same-as-subcommand
else
	skip export-sqlite3 "the sqlite3 CLI is not installed"
fi
mkdir "$TMP/ro" && chmod 500 "$TMP/ro"
if [ "$(id -u)" != 0 ]; then
	expect_exit export-unwritable 1 tps -e "$TMP/ro/out.db" "$SCHED"
	grep -q "export: cannot create" "$TMP/err" && pass export-unwritable-message || fail export-unwritable-message "$(cat "$TMP/err")"
fi
expect_exit export-missing-dir 1 tps -e "$TMP/nodir/out.db" "$SCHED"
grep -q "export: cannot create .*$TMP/nodir/out.db" "$TMP/err" && pass export-missing-dir-message ||
	fail export-missing-dir-message "$(cat "$TMP/err")"
expect_exit export-with-q 1 tps -e "$TMP/y.db" -q /dev/null "$SCHED"
grep -q 'Cannot combine -e (export) with -q (query)' "$TMP/err" && pass export-with-q-message || fail export-with-q-message
[ -z "$(find "$TMP" -maxdepth 1 -name '*.db.*')" ] && pass export-no-temp-files || fail export-no-temp-files "$(ls "$TMP")"

# ---- convert ---------------------------------------------------------------------------
expect_exit convert-systrace 0 tps convert systrace "$SCHED" "$TMP/s.txt"
expect_eq convert-systrace-line "        tracebox-30878 (-----) [001] .... 2052.166118: sched_switch: prev_comm=tracebox prev_pid=30878 prev_prio=120 prev_state=S ==> next_comm=tracebox next_pid=30881 next_prio=120" \
	"$(sed -n 12p "$TMP/s.txt")"
expect_eq convert-systrace-lines 598 "$(wc -l <"$TMP/s.txt" | tr -d ' ')"
expect_exit systrace-loads 0 tps query "$TMP/s.txt" "$q"
expect_eq systrace-round-trip '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_exit traceconv-systrace 0 "$TRACEBOX" traceconv systrace "$SCHED" "$TMP/s2.txt"
cmp -s "$TMP/s.txt" "$TMP/s2.txt" && pass traceconv-systrace-same || fail traceconv-systrace-same
expect_exit convert-ctrace 0 tps convert ctrace "$SCHED" "$TMP/s.ctrace"
python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); assert d.startswith(b"TRACE:\n"); sys.stdout.buffer.write(zlib.decompress(d[7:]))' \
	"$TMP/s.ctrace" >"$TMP/s3.txt"
cmp -s "$TMP/s.txt" "$TMP/s3.txt" && pass convert-ctrace-inflates || fail convert-ctrace-inflates
expect_exit convert-json 0 tps convert json "$SCHED" "$TMP/s.json"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted(d), d["systemTraceEvents"].count("sched_switch:"))' \
	"$TMP/s.json" >"$TMP/keys" 2>&1
nsw=$(tps query "$SCHED" "select count(*) from ftrace_event where name = 'sched_switch'" 2>/dev/null | tail -1)
expect_eq convert-json-valid "['androidProcessDump', 'controllerTraceDataKey', 'metadata', 'systemTraceEvents', 'traceEvents'] $nsw" \
	"$(cat "$TMP/keys")"
expect_exit json-loads 0 tps query "$TMP/s.json" "select count(*) as n from sched"
expect_eq json-round-trip-sched '"n"
362' "$(cat "$TMP/out")"
cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[
 {"ph":"X","name":"outer","cat":"c","ts":1,"dur":10,"pid":1,"tid":2,"args":{"n":3}},
 {"ph":"X","name":"inner","cat":"c","ts":2,"dur":3,"pid":1,"tid":2},
 {"ph":"b","name":"async","cat":"c","ts":3,"pid":1,"tid":2,"id":"0x7"},
 {"ph":"e","name":"async","cat":"c","ts":9,"pid":1,"tid":2,"id":"0x7"},
 {"ph":"i","name":"mark","cat":"c","ts":4,"pid":1,"tid":2,"s":"p"},
 {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}}
]}
JSON
sq='select s.ts, s.dur, s.name, s.depth from slice s order by ts, name'
tps query "$TMP/t.json" "$sq" >"$TMP/a.csv" 2>/dev/null
expect_exit convert-json-chrome 0 tps convert json "$TMP/t.json" "$TMP/t2.json"
tps query "$TMP/t2.json" "$sq" >"$TMP/b.csv" 2>/dev/null
if cmp -s "$TMP/a.csv" "$TMP/b.csv" && [ -s "$TMP/a.csv" ]; then pass json-round-trip-slices; else
	fail json-round-trip-slices "$(diff "$TMP/a.csv" "$TMP/b.csv")"; fi
expect_eq json-thread-name '"name"
"worker"' "$(tps query "$TMP/t2.json" 'select name from thread where tid = 2' 2>/dev/null)"
# A JSON trace's args are "args.n"; exported under "args" they come back
# one level deeper, as with Perfetto's export.
expect_eq json-args '"n"
3' "$(tps query "$TMP/t2.json" "select extract_arg(arg_set_id, 'args.args.n') as n from slice where name = 'outer'" 2>/dev/null)"
expect_exit convert-text 0 tps convert text "$SCHED" "$TMP/s.textproto"
expect_eq convert-text-packets 80 "$(grep -c '^packet {' "$TMP/s.textproto")"
# Fields our protos do not name are "NUMBER: value"; --skip-unknown leaves
# them out, and the rest parses back.
expect_exit convert-text-skip 0 tps convert text --skip-unknown "$SCHED" "$TMP/s.textproto"
expect_exit text-to-binary 0 tps util text_to_binary "$TMP/s.textproto" "$TMP/s.bin"
expect_exit text-round-trip 0 tps query "$TMP/s.bin" "$q"
expect_eq text-round-trip-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_exit convert-unknown 1 tps convert bogus "$SCHED"
grep -q "convert: unknown format 'bogus'." "$TMP/err" && pass convert-unknown-message || fail convert-unknown-message
expect_exit convert-truncate-bad 1 tps convert json --truncate middle "$SCHED"
expect_exit convert-pid-not-profile 1 tps convert json --pid 3 "$SCHED"
grep -q -- "--pid and --timestamps are supported only for the 'profile' format." "$TMP/err" &&
	pass convert-pid-not-profile-message || fail convert-pid-not-profile-message

# ---- util merge, decompress_packets ----------------------------------------------------
expect_exit util-merge 0 tps util merge -o "$TMP/m.tar" "$SCHED" "$TMP/t.json"
expect_eq util-merge-output "Wrote $TMP/m.tar (2 traces).
Validation: all traces line up on the shared timeline." "$(cat "$TMP/out")"
expect_eq util-merge-members "sched_compact.pftrace t.json" "$(tar tf "$TMP/m.tar" | tr '\n' ' ' | sed 's/ $//')"
expect_exit util-merge-loads 0 tps query "$TMP/m.tar" "select (select count(*) from sched) as s, (select count(*) from slice where name = 'outer') as o"
expect_eq util-merge-rows '"s","o"
362,1' "$(cat "$TMP/out")"
expect_exit util-merge-dup 1 tps util merge -o "$TMP/m2.tar" "$SCHED" "$SCHED"
python3 - "$SCHED" "$TMP/c.pftrace" <<'PY'
import sys, zlib
def v(n):
    b = b""
    while n >= 0x80: b += bytes([n & 0x7F | 0x80]); n >>= 7
    return b + bytes([n])
raw = open(sys.argv[1], "rb").read()
# Every packet of the trace, deflated into one compressed_packets (50) packet.
z = zlib.compress(raw)
open(sys.argv[2], "wb").write(b"\x0a" + v(len(z) + 2 + len(v(len(z)))) + b"\x92\x03" + v(len(z)) + z)
PY
expect_exit compressed-loads 0 tps query "$TMP/c.pftrace" "$q"
expect_eq compressed-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_exit decompress-packets 0 tps util decompress_packets "$TMP/c.pftrace" "$TMP/d.pftrace"
expect_exit decompressed-loads 0 tps query "$TMP/d.pftrace" "$q"
expect_eq decompressed-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
expect_eq decompressed-no-compressed-packets 0 "$(tps convert text "$TMP/d.pftrace" | grep -c compressed_packets)"

# ---- bundle ------------------------------------------------------------------------------
if command -v gcc >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
	mkdir -p "$TMP/app"
	printf 'int work(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ x; return s; }\nint main(int c, char **v) { (void)v; return work(c); }\n' >"$TMP/app/prog.c"
	gcc -O1 -fno-inline -Wl,--build-id -o "$TMP/app/prog" "$TMP/app/prog.c"
	id=$(readelf -n "$TMP/app/prog" | awk '/Build ID/ { print $3 }')
	work=$(nm "$TMP/app/prog" | awk '$3 == "work" { print $1 }')
	python3 - "$TMP/app/prog" "$id" "$work" "$TMP/p.pftrace" <<'PY'
import sys
path, bid, work, out = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3], 16), sys.argv[4]
def v(n):
    b = b''
    while True:
        c = n & 0x7f; n >>= 7
        if n: b += bytes([c | 0x80])
        else: return b + bytes([c])
def f(i, x):
    if isinstance(x, int): return v(i << 3) + v(x)
    if isinstance(x, str): x = x.encode()
    return v(i << 3 | 2) + v(len(x)) + x
comps = path.strip('/').split('/')
interned = f(16, f(1, 1) + f(2, bid))
for i, c in enumerate(comps):
    interned += f(17, f(1, i + 1) + f(2, c))
interned += f(19, f(1, 1) + f(2, 1) + f(3, 0) + f(4, 0x555500001000) + f(5, 0x555500100000) +
              f(6, 0) + b''.join(f(7, i + 1) for i in range(len(comps))) + f(8, 0x1000))
interned += f(6, f(1, 1) + f(3, 1) + f(4, work + 4)) + f(7, f(1, 1) + f(2, 1))
trace = f(1, f(10, 7) + f(8, 100) + f(13, 1) + f(12, interned))
trace += f(1, f(10, 7) + f(8, 200) + f(13, 2) + f(66, f(2, 40) + f(3, 40) + f(4, 1)))
open(out, 'wb').write(trace)
PY
	expect_exit bundle 0 tps bundle "$TMP/p.pftrace" "$TMP/p.tar"
	expect_eq bundle-output "Wrote $TMP/p.tar." "$(cat "$TMP/out")"
	expect_eq bundle-members "trace.perfetto symbols.pb" "$(tar tf "$TMP/p.tar" | tr '\n' ' ' | sed 's/ $//')"
	expect_eq bundle-symbolized '"name"
"work"' "$(tps query "$TMP/p.tar" 'select s.name from stack_profile_frame f join stack_profile_symbol s using (symbol_set_id)' 2>/dev/null)"
else
	skip bundle "gcc and nm are needed to build the test program"
fi
expect_exit bundle-stdin 1 tps bundle - "$TMP/x.tar"
grep -q 'bundle does not support stdin input' "$TMP/err" && pass bundle-stdin-message || fail bundle-stdin-message
expect_exit bundle-missing 1 tps bundle "$TMP/nope" "$TMP/x.tar"
grep -q "bundle: input file '$TMP/nope' does not exist" "$TMP/err" && pass bundle-missing-message || fail bundle-missing-message

# ---- server unix and query --remote -------------------------------------------------------
XDG_RUNTIME_DIR=$TMP/run
export XDG_RUNTIME_DIR
mkdir -p "$XDG_RUNTIME_DIR"
"$TRACEBOX" trace_processor_shell server unix --name tbtest --idle-timeout 60 "$SCHED" >"$TMP/u.out" 2>"$TMP/u.err" &
USRV=$!
at_exit "kill $USRV 2>/dev/null"
i=0
while [ $i -lt 100 ] && [ ! -S "$XDG_RUNTIME_DIR/perfetto/tbtest.sock" ]; do sleep 0.1; i=$((i + 1)); done
upid=$USRV
expect_eq unix-startup-line "perfetto-session pid=$upid session=tbtest socket-path=$XDG_RUNTIME_DIR/perfetto/tbtest.sock idle-timeout=60000ms" \
	"$(head -1 "$TMP/u.out")"
expect_eq unix-socket-mode "srw-------" "$(ls -l "$XDG_RUNTIME_DIR/perfetto/tbtest.sock" | cut -c1-10)"
expect_exit remote-query 0 tps query --remote tbtest "$q; select 5 as five"
expect_eq remote-query-rows '"raw","sched"
587,362

"five"
5' "$(cat "$TMP/out")"
expect_exit remote-by-path 0 tps query --remote "$XDG_RUNTIME_DIR/perfetto/tbtest.sock" "select count(*) as n from thread"
expect_eq remote-by-path-rows '"n"
28' "$(cat "$TMP/out")"
expect_exit remote-sql-error 1 tps query --remote tbtest "select * from nope"
grep -q 'no such table: nope' "$TMP/err" && pass remote-sql-error-message || fail remote-sql-error-message
# A statement sent on its own still reports the line and column in the
# whole text, as the same text run here does.
printf 'select 1 as a;\nselect 2 as b;\n  select bad from thread;\n' >"$TMP/remote-err.sql"
expect_exit remote-sql-error-file 1 tps query --remote tbtest -f "$TMP/remote-err.sql"
grep -v '^Trace loaded' "$TMP/err" >"$TMP/remote.err"
expect_exit local-sql-error-file 1 tps query -f "$TMP/remote-err.sql" "$SCHED"
expect_eq remote-sql-error-traceback "$(grep -v '^Trace loaded' "$TMP/err")" "$(cat "$TMP/remote.err")"
grep -q '^  File "stdin" line 3 col 10$' "$TMP/remote.err" && pass remote-sql-error-line ||
	fail remote-sql-error-line "$(cat "$TMP/remote.err")"
expect_exit remote-flag-conflict 1 tps query --remote tbtest --full-sort "select 1"
grep -q -- '--full-sort cannot be combined with --remote' "$TMP/err" && pass remote-flag-conflict-message ||
	fail remote-flag-conflict-message
expect_exit unix-live-session 1 tps server unix --name tbtest
grep -q 'A live session already holds' "$TMP/err" && pass unix-live-session-message || fail unix-live-session-message
expect_exit server-kill 0 tps server kill tbtest
expect_eq server-kill-output "Stopped session 'tbtest' (pid $upid)" "$(cat "$TMP/out")"
i=0
while [ $i -lt 50 ] && kill -0 $USRV 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -0 $USRV 2>/dev/null && fail unix-stopped || pass unix-stopped
[ ! -e "$XDG_RUNTIME_DIR/perfetto/tbtest.sock" ] && [ ! -e "$XDG_RUNTIME_DIR/perfetto/tbtest.sock.pid" ] &&
	pass unix-files-removed || fail unix-files-removed "$(ls -la "$XDG_RUNTIME_DIR/perfetto")"
expect_exit server-kill-none 1 tps server kill tbtest
grep -q "No live session at 'tbtest'" "$TMP/err" && pass server-kill-none-message || fail server-kill-none-message
# --path, --daemonize, and the idle timeout stop it by itself.
tps server unix --path "$TMP/s.sock" --daemonize --idle-timeout 1s --idle-start last-query "$SCHED" \
	>"$TMP/d.out" 2>"$TMP/d.err"
expect_eq daemonize-exit 0 "$?"
dpid=$(sed -n 's/^perfetto-session pid=\([0-9]*\) .*/\1/p' "$TMP/d.out")
expect_exit remote-daemon 0 tps query --remote "$TMP/s.sock" "select count(*) as n from sched"
expect_eq remote-daemon-rows '"n"
362' "$(cat "$TMP/out")"
i=0
while [ $i -lt 60 ] && [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
[ -n "$dpid" ] && ! kill -0 "$dpid" 2>/dev/null && [ ! -e "$TMP/s.sock" ] && pass idle-timeout-stops ||
	fail idle-timeout-stops "pid $dpid: $(cat "$TMP/d.out")"
# --remote against a server http (host:port).
PORT=$(free_port)
"$TRACEBOX" trace_processor_shell server http --port "$PORT" "$SCHED" >/dev/null 2>&1 &
HSRV=$!
at_exit "kill $HSRV 2>/dev/null"
i=0
while [ $i -lt 100 ] && ! tps query --remote "127.0.0.1:$PORT" "select 1" >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
expect_exit remote-http 0 tps query --remote "127.0.0.1:$PORT" "$q"
expect_eq remote-http-rows '"raw","sched"
587,362' "$(cat "$TMP/out")"
kill $HSRV 2>/dev/null
wait $HSRV 2>/dev/null
exit 0
