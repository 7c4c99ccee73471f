# traced_perf through tracebox autostart: linux.perf at 1000 Hz on every CPU
# with callstack sampling and no scope, recorded for 1 s while a busy loop
# runs; the trace loads in the trace processor, holds well over 100
# PerfSample packets, and no service child outlives the capture. Needs root
# and a kernel that lets us open cpu-clock sampling events.
. tests/lib.sh

leftovers() {
	grep -l -a "T2400_MARK=$1" /proc/[0-9]*/environ 2>/dev/null |
		sed 's|/proc/\([0-9]*\)/environ|\1|' | grep -v "^$$\$" || true
}
busy=
at_exit '[ -n "$busy" ] && kill $busy 2>/dev/null; for p in $(leftovers $$); do kill -9 $p; done'

check applet-version "$TRACEBOX" traced_perf --version
expect_exit applet-bad-flag 1 "$TRACEBOX" traced_perf --no-such-flag
"$TRACEBOX" --help | grep -q '^  traced_perf ' && pass applet-listed || fail applet-listed

perf_event_skip record && exit 0

cat >"$TMP/perf.pbtxt" <<'CFG'
duration_ms: 1000
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.perf" perf_event_config {
	timebase { frequency: 1000 }
	callstack_sampling { }
} } }
CFG
sh -c 'while :; do :; done' &
busy=$!
expect_exit record 0 env T2400_MARK=$$ "$TRACEBOX" --txt -c "$TMP/perf.pbtxt" -o "$TMP/p.pftrace"
kill $busy 2>/dev/null
wait $busy 2>/dev/null
busy=
expect_eq no-children-left "" "$(leftovers $$)"

check trace-loads "$TRACEBOX" trace_processor_shell query "$TMP/p.pftrace" "select 1"

# TracePacket.perf_sample (field 66), counted with a minimal protobuf walker:
# all of them, then the real samples (no kernel_records_lost 17,
# sample_skipped_reason 18 or producer_event 19), which become perf_sample rows.
set -- $(python3 - "$TMP/p.pftrace" <<'PY'
import sys
def varint(b, i):
    v = 0; s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        fid, wt = k >> 3, k & 7
        if wt == 0:
            v, i = varint(b, i); yield fid, v
        elif wt == 2:
            n, i = varint(b, i); yield fid, b[i:i + n]; i += n
        elif wt == 1: yield fid, b[i:i + 8]; i += 8
        elif wt == 5: yield fid, b[i:i + 4]; i += 4
        else: raise ValueError("wire type %d" % wt)
n = rows = 0
for fid, pkt in fields(open(sys.argv[1], "rb").read()):
    if fid != 1:
        continue
    for f, v in fields(pkt):
        if f == 66:
            n += 1
            rows += not any(g in (17, 18, 19) for g, _ in fields(v))
print(n, rows)
PY
)
n=${1:-}
rows=${2:-}
[ "${n:-0}" -gt 100 ] 2>/dev/null && pass perf-samples ||
	fail perf-samples "PerfSample packets: ${n:-none}"

# The trace processor imports every real sample, most with a callstack.
got=$("$TRACEBOX" trace_processor_shell query "$TMP/p.pftrace" \
	"select count(*) from perf_sample" 2>/dev/null | tail -n +2)
expect_eq perf-sample-rows "${rows:-none}" "$got"
cs=$("$TRACEBOX" trace_processor_shell query "$TMP/p.pftrace" \
	"select count(*) from perf_sample where callsite_id is not null" 2>/dev/null | tail -n +2)
[ "${cs:-0}" -gt 0 ] 2>/dev/null && pass perf-sample-callsites ||
	fail perf-sample-callsites "samples with a callsite: ${cs:-none}"
