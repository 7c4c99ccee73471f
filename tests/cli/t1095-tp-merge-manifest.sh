# Merged archives with a trace manifest: `traceconv merge` writes the
# manifest from per-file options (--machine, --sync-to, --clock, --offset,
# --sync-clock, --trace-time, --attribute) next to the traces; the trace
# processor loads the archive back with the members' trace_file rows, their
# machines, and timestamps aligned (REALTIME across machines, manual
# offsets, a clockless JSON pinned to a proto's clock). Bad manifests,
# a manifest naming a member the archive lacks, and unknown --sync-to
# inputs fail with one line and a non-zero exit.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
q() { "$bin" trace_processor_shell query "$1" "$2" 2>"$TMP/err"; }

# Two machines' protobuf traces: BOOTTIME, REALTIME and MONOTONIC tied by a
# snapshot, wall clocks 1 s apart, one slice each at BOOTTIME 1.1 s.
proto() { # NAME SEQ REALTIME_AT_BOOT_1S
	cat <<TXT
packet { clock_snapshot {
  clocks { clock_id: 6 timestamp: 1000000000 }
  clocks { clock_id: 1 timestamp: $3 }
  clocks { clock_id: 3 timestamp: 500000000 } } }
packet { trusted_packet_sequence_id: $2 track_descriptor { uuid: $2$2 } }
packet { trusted_packet_sequence_id: $2 timestamp: 1100000000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: $2$2 name: "$1_slice" } }
packet { trusted_packet_sequence_id: $2 timestamp: 1200000000
  track_event { type: TYPE_SLICE_END track_uuid: $2$2 } }
TXT
}
proto phone 1 1700000001000000000 >"$TMP/phone.txt"
proto server 2 1700000002000000000 >"$TMP/server.txt"
for t in phone server; do
	if ! "$TRACEBOX" traceconv binary "$TMP/$t.txt" "$TMP/$t.pb" 2>"$TMP/err"; then
		fail encode "$(cat "$TMP/err")"
		exit 0
	fi
done
printf '{"traceEvents": [{"pid": 10, "tid": 10, "ts": 2000, "dur": 500, "ph": "X", "name": "app_slice"}]}' >"$TMP/app.json"

# The merge: phone, server, and the app's JSON on the phone, 500 ns after
# the phone's BOOTTIME reads its timestamps.
if "$TRACEBOX" traceconv merge -o "$TMP/m.tar" --attribute run_id=42 --attribute bench=startup \
	--machine phone "$TMP/phone.pb" --machine server "$TMP/server.pb" \
	--machine phone --sync-to phone.pb --sync-clock BOOTTIME --offset 500 "$TMP/app.json" \
	2>"$TMP/err"; then
	pass merge_writes
else
	fail merge_writes "$(cat "$TMP/err")"
	exit 0
fi
expect_eq manifest_written '{"perfetto_manifest": {"version": 1, "files": [
  {"path": "phone.pb", "machine": {"name": "phone"}},
  {"path": "server.pb", "machine": {"name": "server"}},
  {"path": "app.json", "machine": {"name": "phone"}, "clocks": {"offset_ns": 500, "sync_to": {"file": "phone.pb", "clock": "BOOTTIME"}}}], "attributes": {"run_id": 42, "bench": "startup"}}}' \
	"$(tar xOf "$TMP/m.tar" perfetto_manifest.json)"

expect_eq trace_files '"name","trace_type","processing_order"
"[NULL]","tar",0
"perfetto_manifest.json","perfetto_manifest",1
"phone.pb","proto",2
"server.pb","proto",3
"app.json","json",4' \
	"$(q "$TMP/m.tar" "select name, trace_type, processing_order from trace_file order by processing_order")"

# The server's wall clock is 1 s ahead: its slice lands 1 s later; the JSON
# event (2 ms on its own timeline) 500 ns after the phone's 2 ms.
expect_eq aligned '"name","ts","machine"
"app_slice",2000500,"phone"
"phone_slice",1100000000,"phone"
"server_slice",2100000000,"server"' \
	"$(q "$TMP/m.tar" "select s.name, s.ts, m.name as machine from slice s join track t on s.track_id = t.id join machine m on t.machine_id = m.id order by s.ts")"

expect_eq machines '"name","remote","label_index"
"[NULL]",0,0
"phone",1,1
"server",1,2' \
	"$(q "$TMP/m.tar" "select name, raw_id != 0 as remote, label_index from machine order by id")"

expect_eq app_thread_machine '"tid","machine"
10,"phone"' \
	"$(q "$TMP/m.tar" "select t.tid, m.name as machine from thread t join machine m on t.machine_id = m.id where t.tid = 10")"

expect_eq attributes '"name","str_value","int_value"
"manifest_attribute.bench","startup","[NULL]"
"manifest_attribute.run_id","[NULL]",42' \
	"$(q "$TMP/m.tar" "select name, str_value, int_value from metadata where name glob 'manifest_attribute.*' order by name")"

# trace_time: the server's REALTIME is the timeline.
"$TRACEBOX" traceconv merge -o "$TMP/rt.tar" --trace-time REALTIME --trace-time-file server.pb \
	--machine phone "$TMP/phone.pb" --machine server "$TMP/server.pb" 2>"$TMP/err" ||
	fail merge_trace_time "$(cat "$TMP/err")"
expect_eq trace_time_realtime '"name","ts"
"phone_slice",1700000001100000000
"server_slice",1700000002100000000' \
	"$(q "$TMP/rt.tar" "select name, ts from slice order by ts")"
expect_eq trace_time_clock_id '"int_value"
1' "$(q "$TMP/rt.tar" "select int_value from metadata where name = 'trace_time_clock_id'")"

# A clockless JSON pinned to the proto's MONOTONIC (the README's example):
# its 2 ms are MONOTONIC 2 ms, BOOTTIME 502 ms. Unnamed inputs get an
# entry too, so that sync_to can name them.
"$TRACEBOX" traceconv merge -o "$TMP/mono.tar" "$TMP/phone.pb" --sync-to phone.pb \
	--sync-clock MONOTONIC "$TMP/app.json" 2>"$TMP/err" || fail merge_mono "$(cat "$TMP/err")"
expect_eq mono_manifest '{"perfetto_manifest": {"version": 1, "files": [
  {"path": "phone.pb"},
  {"path": "app.json", "clocks": {"offset_ns": 0, "sync_to": {"file": "phone.pb", "clock": "MONOTONIC"}}}]}}' \
	"$(tar xOf "$TMP/mono.tar" perfetto_manifest.json)"
expect_eq mono_pinned '"name","ts"
"app_slice",502000000
"phone_slice",1100000000' "$(q "$TMP/mono.tar" "select name, ts from slice order by ts")"

# systrace text is MONOTONIC: alone it follows the proto's snapshot (1.0 s
# is BOOTTIME 1.5 s). On another machine whose MONOTONIC the manifest
# relates to the proto's, 1000 ns later, and through the snapshot once.
printf '# tracer: nop\n#\n  app-100 (  100) [001] ...1  1.000000: tracing_mark_write: B|100|sys_slice\n  app-100 (  100) [001] ...1  1.500000: tracing_mark_write: E|100\n' >"$TMP/sys.systrace"
"$TRACEBOX" traceconv merge -o "$TMP/sys0.tar" "$TMP/phone.pb" "$TMP/sys.systrace" 2>"$TMP/err" ||
	fail merge_sys "$(cat "$TMP/err")"
"$TRACEBOX" traceconv merge -o "$TMP/sys1.tar" "$TMP/phone.pb" --machine laptop --sync-to phone.pb --clock MONOTONIC \
	--sync-clock MONOTONIC --offset 1000 "$TMP/sys.systrace" 2>"$TMP/err" ||
	fail merge_sys "$(cat "$TMP/err")"
expect_eq systrace_auto '"ts","dur"
1500000000,500000000' "$(q "$TMP/sys0.tar" "select ts, dur from slice where name = 'sys_slice'")"
expect_eq systrace_related '"ts","dur"
1500001000,500000000' "$(q "$TMP/sys1.tar" "select ts, dur from slice where name = 'sys_slice'")"

# A recorded trace twice, as two machines: each keeps its own cpus and all
# of its sched slices, at their own timestamps.
g=$TB_SHARED/reference/golden/traces/sched.pftrace
if [ -f "$g" ]; then
	cp "$g" "$TMP/a.pftrace" && cp "$g" "$TMP/b.pftrace"
	"$TRACEBOX" traceconv merge -o "$TMP/g.tar" --machine a "$TMP/a.pftrace" --machine b \
		"$TMP/b.pftrace" 2>"$TMP/err" || fail merge_golden "$(cat "$TMP/err")"
	one=$(q "$g" "select count(*) || ',' || min(ts) from sched" | tail -1 | tr -d '"')
	expect_eq golden_two_machines "\"a\",$one
\"b\",$one" "$(q "$TMP/g.tar" "select m.name, count(*), min(s.ts) from sched s join cpu c on s.ucpu = c.id join machine m on c.machine_id = m.id group by m.name order by 1" | tail -n +2)"
else
	skip golden_two_machines "../shared/reference/golden not found"
fi

# `util merge` takes a manifest file as it is; without any the files keep
# one machine.
printf '{"perfetto_manifest": {"version": 1, "files": [{"path": "server.pb", "machine": {"name": "srv"}}]}}' >"$TMP/mf.json"
"$TRACEBOX" trace_processor_shell util merge -o "$TMP/u.tar" --manifest "$TMP/mf.json" --no-validate \
	"$TMP/phone.pb" "$TMP/server.pb" >/dev/null 2>"$TMP/err" || fail util_merge "$(cat "$TMP/err")"
expect_eq util_merge_machines '"name","machine"
"phone_slice","[NULL]"
"server_slice","srv"' \
	"$(q "$TMP/u.tar" "select s.name, m.name as machine from slice s join track t on s.track_id = t.id join machine m on t.machine_id = m.id order by s.name")"

# Errors when loading: one line, exit 1.
bad_load() { # NAME MANIFEST_TEXT EXPECTED
	printf '%s' "$2" >"$TMP/bad.json"
	"$TRACEBOX" traceconv merge -o "$TMP/bad.tar" --manifest "$TMP/bad.json" "$TMP/phone.pb" \
		"$TMP/app.json" 2>"$TMP/err" || { fail "$1" "merge: $(cat "$TMP/err")"; return; }
	"$bin" trace_processor_shell query "$TMP/bad.tar" "select 1" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "$1" "exit $rc" "$(cat "$TMP/err")"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -qF -- "$3" "$TMP/err"; then
		fail "$1" "$(cat "$TMP/err")"
	else
		pass "$1"
	fi
}
bad_load bad_json '{"perfetto_manifest": {"version": 1, "files": [' \
	"perfetto_manifest: invalid JSON: unexpected end"
bad_load missing_member '{"perfetto_manifest": {"version": 1, "files": [{"path": "gone.pb", "machine": {"name": "x"}}, {"path": "app.json", "clocks": {"sync_to": {"file": "gone.pb"}}}]}}' \
	"perfetto_manifest: clocks: could not resolve file 'gone.pb'"
bad_load unknown_sync_to '{"perfetto_manifest": {"version": 1, "files": [{"path": "app.json", "clocks": {"sync_to": {"file": "ghost.pb", "clock": "BOOTTIME"}}}]}}' \
	"perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'"
bad_load bad_clock '{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "UPTIME"}}}' \
	"perfetto_manifest: unknown clock name: UPTIME"

# Errors when writing: nothing written, one line, exit 1.
bad_merge() { # NAME EXPECTED ARGS...
	name=$1 msg=$2
	shift 2
	rm -f "$TMP/w.tar"
	"$TRACEBOX" traceconv merge -o "$TMP/w.tar" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne 1 ] || [ -e "$TMP/w.tar" ]; then
		fail "$name" "exit $rc" "$(cat "$TMP/err")"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -qF -- "$msg" "$TMP/err"; then
		fail "$name" "$(cat "$TMP/err")"
	else
		pass "$name"
	fi
}
bad_merge merge_unknown_sync_to "--sync-to 'nothere.pb' is not an input" \
	--sync-to nothere.pb "$TMP/app.json" "$TMP/phone.pb"
bad_merge merge_unknown_clock "unknown clock 'BOOTIME'" \
	--sync-to phone.pb --clock BOOTIME "$TMP/server.pb" "$TMP/phone.pb"
bad_merge merge_dangling_option "per-file options must come before their TRACE" \
	"$TMP/phone.pb" --machine x
bad_merge merge_offset_without_sync "need --sync-to FILE" --offset 5 "$TMP/phone.pb"
bad_merge merge_manifest_and_options "exclude each other" --manifest "$TMP/mf.json" \
	--machine x "$TMP/phone.pb"

# ---- members whose packets are all inside compressed_packets ---------------
# deflate IN OUT [garbage]: every packet of IN, deflated into one
# compressed_packets (TracePacket 50) packet; with garbage, bytes that are
# not zlib instead.
deflate() {
	python3 - "$@" <<'PY'
import sys, zlib
def v(n):
    b = b""
    while n >= 0x80: b += bytes([n & 0x7F | 0x80]); n >>= 7
    return b + bytes([n])
z = b"not zlib at all" if len(sys.argv) > 3 else zlib.compress(open(sys.argv[1], "rb").read())
inner = b"\x92\x03" + v(len(z)) + z
open(sys.argv[2], "wb").write(b"\x0a" + v(len(inner)) + inner)
PY
}
if command -v python3 >/dev/null 2>&1; then
	mkdir -p "$TMP/z"
	deflate "$TMP/phone.pb" "$TMP/z/phone.pb"
	deflate "$TMP/server.pb" "$TMP/z/server.pb"
	# The compressed members' snapshots align them as the plain ones.
	"$TRACEBOX" traceconv merge -o "$TMP/z.tar" --machine phone "$TMP/z/phone.pb" --machine server \
		"$TMP/z/server.pb" 2>"$TMP/err" || fail merge_compressed "$(cat "$TMP/err")"
	expect_eq compressed_aligned '"name","ts"
"phone_slice",1100000000
"server_slice",2100000000' "$(q "$TMP/z.tar" "select name, ts from slice order by ts")"
	# A clock override on a trace with snapshots is refused, compressed or
	# not, by the trace processor and by util merge's validation.
	for d in "$TMP" "$TMP/z"; do
		tag=plain
		[ "$d" = "$TMP" ] || tag=compressed
		"$TRACEBOX" traceconv merge -o "$TMP/o.tar" "$TMP/phone.pb" --sync-to phone.pb \
			--offset 1000000000 "$d/server.pb" 2>"$TMP/err" || fail "offset_$tag" "$(cat "$TMP/err")"
		"$bin" trace_processor_shell query "$TMP/o.tar" "select 1" >/dev/null 2>"$TMP/err"
		expect_eq "offset_refused_$tag" "1 trace_processor_shell: cannot load '$TMP/o.tar': perfetto_manifest: clock overrides require the trace to use a single clock" \
			"$? $(cat "$TMP/err")"
		tar xOf "$TMP/o.tar" perfetto_manifest.json >"$TMP/o.json"
		"$TRACEBOX" trace_processor_shell util merge -o "$TMP/u2.tar" --manifest "$TMP/o.json" \
			"$TMP/phone.pb" "$d/server.pb" >/dev/null 2>"$TMP/err"
		expect_eq "util_merge_refused_$tag" "1" "$?"
	done
	# A payload that is not zlib: counted as alone, the rest loads.
	deflate "$TMP/server.pb" "$TMP/z/bad.pb" garbage
	"$TRACEBOX" traceconv merge -o "$TMP/zb.tar" --machine phone "$TMP/phone.pb" --machine server \
		"$TMP/z/bad.pb" 2>"$TMP/err" || fail merge_bad_zlib "$(cat "$TMP/err")"
	expect_eq bad_zlib_counted '"n","v"
1,1' "$(q "$TMP/zb.tar" "select (select count(*) from slice) as n, (select value from stats where name = 'compressed_packets_failure') as v")"
else
	skip compressed_members "no python3"
fi

# ---- manifest clock overrides in clock_snapshot -----------------------------
# Each `clocks` entry with sync_to is one snapshot of two clocks (source at
# max(0, -offset), sync_to's at max(0, offset)), numbered before the
# members' own; a clock the manifest's edges so far relate to the trace time
# gets a row (a clockless file's own clock is TRACE_FILE, 11).
"$TRACEBOX" traceconv merge -o "$TMP/cs.tar" --trace-time BOOTTIME "$TMP/phone.pb" --machine phone \
	--sync-to phone.pb --sync-clock BOOTTIME --offset 500 "$TMP/app.json" --sync-to app.json \
	--offset -1000 "$TMP/sys.systrace" 2>"$TMP/err" || fail merge_snapshots "$(cat "$TMP/err")"
expect_eq manifest_snapshot_rows '"ts","clock_id","clock_name","clock_value","snapshot_id","machine_id"
500,11,"[NULL]",0,0,1
500,6,"BOOTTIME",500,0,0
500,11,"[NULL]",1000,1,0
500,11,"[NULL]",0,1,1
1000000000,6,"BOOTTIME",1000000000,2,0
1000000000,1,"REALTIME",1700000001000000000,2,0
1000000000,3,"MONOTONIC",500000000,2,0' \
	"$(q "$TMP/cs.tar" "select ts, clock_id, clock_name, clock_value, snapshot_id, machine_id from clock_snapshot order by id")"
# Without trace_time the trace time is no clock of the manifest's: no rows,
# but the snapshot still takes its number.
expect_eq manifest_snapshot_no_trace_time '"snapshot_id","n"
1,3' "$(q "$TMP/mono.tar" "select snapshot_id, count(*) as n from clock_snapshot group by 1")"
# An entry relating a clock to itself is a snapshot with one clock twice:
# refused when the archive loads.
for m in "" phone; do
	"$TRACEBOX" traceconv merge -o "$TMP/dup.tar" ${m:+--machine $m} "$TMP/phone.pb" ${m:+--machine $m} \
		--clock BOOTTIME --sync-to phone.pb --sync-clock BOOTTIME --offset 5 "$TMP/sys.systrace" \
		2>"$TMP/err" || fail "merge_dup$m" "$(cat "$TMP/err")"
	"$bin" trace_processor_shell query "$TMP/dup.tar" "select 1" >/dev/null 2>"$TMP/err"
	rc=$?
	id=6
	[ -z "$m" ] || id="6(seq=0,tf=0,m=1)"
	expect_eq "snapshot_same_clock${m:+_$m}" "1 trace_processor_shell: cannot load '$TMP/dup.tar': Clock sync error: duplicate clock domain with id=$id at snapshot 0." \
		"$rc $(cat "$TMP/err")"
done
# Offsets whose chain passes int64 (6e18 twice from the trace time), and
# one offset past 2^62 ns: a clear error, no overflow (UBSan stops the
# ASan build on one).
"$TRACEBOX" traceconv merge -o "$TMP/big.tar" --trace-time BOOTTIME "$TMP/phone.pb" --machine phone \
	--sync-to phone.pb --sync-clock BOOTTIME --offset 6000000000000000000 "$TMP/app.json" \
	--sync-to app.json --offset 6000000000000000000 "$TMP/sys.systrace" 2>"$TMP/err" ||
	fail merge_big_offsets "$(cat "$TMP/err")"
"$bin" trace_processor_shell query "$TMP/big.tar" "select count(*) from trace_file" >"$TMP/out" 2>"$TMP/err"
expect_eq big_offsets "1 trace_processor_shell: cannot load '$TMP/big.tar': perfetto_manifest: clocks: offsets add up to more than 2^62 ns" \
	"$? $(cat "$TMP/err")"
"$TRACEBOX" traceconv merge -o "$TMP/big1.tar" --trace-time BOOTTIME "$TMP/phone.pb" --machine phone \
	--sync-to phone.pb --sync-clock BOOTTIME --offset 5000000000000000000 "$TMP/app.json" 2>"$TMP/err" ||
	fail merge_big_offset "$(cat "$TMP/err")"
"$bin" trace_processor_shell query "$TMP/big1.tar" "select count(*) from trace_file" >"$TMP/out" 2>"$TMP/err"
expect_eq big_offset "1 trace_processor_shell: cannot load '$TMP/big1.tar': perfetto_manifest: clocks: offsets add up to more than 2^62 ns" \
	"$? $(cat "$TMP/err")"
