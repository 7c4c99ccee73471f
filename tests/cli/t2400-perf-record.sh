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
# all of them, the perf_sample rows they make (all but kernel_records_lost 17
# > 0 and producer_event 19), those skipped with sample_skipped_reason 18 = 3
# (UNWIND_ENQUEUE) and = 4 (NOT_IN_SCOPE), and the NOT_IN_SCOPE ones of pid $2.
perf_packets() {
	python3 - "$1" "${2:-0}" <<'PY'
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
n = rows = enq = out = out_pid = 0
for fid, pkt in fields(open(sys.argv[1], "rb").read()):
    if fid != 1:
        continue
    for f, v in fields(pkt):
        if f == 66:
            n += 1
            s = dict(fields(v))
            rows += not (s.get(17, 0) > 0 or 19 in s)
            enq += s.get(18) == 3
            out += s.get(18) == 4
            out_pid += s.get(18) == 4 and s.get(2) == int(sys.argv[2])
print(n, rows, enq, out, out_pid)
PY
}
set -- $(perf_packets "$TMP/p.pftrace")
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

# Scoped to one of two busy loops, with max_enqueued_footprint_kb: 1 and a
# 500 ms read period, so each read pass writes well over 1 KiB of samples.
# The other loop's samples are written as NOT_IN_SCOPE skips (perf_sample
# rows without a callsite, no stat), and past the first KiB of a pass the
# target's samples are skipped as UNWIND_ENQUEUE, which the trace processor
# counts in perf_samples_skipped_dataloss, one for one.
sh -c 'while :; do :; done' &
busy=$!
sh -c 'while :; do :; done' &
other=$!
at_exit '[ -n "$other" ] && kill $other 2>/dev/null'
cat >"$TMP/scoped.pbtxt" <<CFG
duration_ms: 1500
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.perf" perf_event_config {
	timebase { frequency: 1000 }
	callstack_sampling { scope { target_pid: $busy } }
	ring_buffer_read_period_ms: 500
	max_enqueued_footprint_kb: 1
} } }
CFG
expect_exit scoped-record 0 env T2400_MARK=$$ "$TRACEBOX" --txt -c "$TMP/scoped.pbtxt" \
	-o "$TMP/s.pftrace"
kill $busy $other 2>/dev/null
wait $busy $other 2>/dev/null
set -- $(perf_packets "$TMP/s.pftrace" "$other")
[ "${3:-0}" -gt 0 ] 2>/dev/null && pass footprint-sheds ||
	fail footprint-sheds "UNWIND_ENQUEUE skips: ${3:-none}"
[ "${5:-0}" -gt 20 ] 2>/dev/null && pass not-in-scope-skips ||
	fail not-in-scope-skips "NOT_IN_SCOPE skips of the other loop: ${5:-none}"
expect_eq skipped-dataloss-stat "${3:-none}" "$(tp_query "$TMP/s.pftrace" \
	"select value from stats where name = 'perf_samples_skipped_dataloss'")"
expect_eq skipped-sample-rows "${2:-none}" "$(tp_query "$TMP/s.pftrace" \
	"select count(*) from perf_sample")"
expect_eq other-loop-no-callsites "${5:-none} 0" "$(tp_query "$TMP/s.pftrace" \
	"select count(*), count(callsite_id) from perf_sample join thread using (utid)
	 where tid = $other" | tr ',' ' ')"
busy=
other=
