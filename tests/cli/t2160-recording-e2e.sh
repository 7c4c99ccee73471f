# Recording end to end with real processes: tests/tools/test_producer (built
# into out/tools/ by build.sh) is the workload of a gated capture
# (tracebox ... -- test_producer), connects to the private traced and writes
# a known sequence of TrackEvent slices (slice i named "slice<i % 16>",
# duration 1 ns) at full speed; our trace processor counts what arrived.
# Each capture is bounded by `timeout 20`.
. tests/lib.sh

PRODUCER=$TB_OUT/tools/test_producer
if [ ! -x "$PRODUCER" ]; then
	skip all "no $PRODUCER (./build.sh tests builds it)"
	exit 0
fi
query() { tp_query "$@"; }
field() { grep '^workload_status=' "$TMP/err" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
export TRACEBOX_LOG=error

# (a) one million slices through a big DISCARD buffer: every one arrives
# (the trace is ~56 MB, more than the IPC send queue's cap, so ReadBuffers
# must stream it in steps).
cat >"$TMP/discard.pbtx" <<'CFG'
buffers { size_kb: 131072 fill_policy: DISCARD }
data_sources { config { name: "tb.test" } }
CFG
expect_exit million-exit 0 timeout 20 "$TRACEBOX" --txt -c "$TMP/discard.pbtx" \
	-o "$TMP/a.pftrace" -- "$PRODUCER" --slices 1000000
expect_eq million-producer-wrote "written=1000000 dropped=0" "$(cat "$TMP/out")"
expect_eq million-trace-status 0 "$(field trace_status)"
expect_eq million-nothing-lost 0 "$(field packets_lost)"
expect_eq million-bytes "$(stat -c %s "$TMP/a.pftrace" 2>/dev/null)" "$(field bytes)"
expect_eq million-all-slices "1000000,16,1000000" \
	"$(query "$TMP/a.pftrace" "select count(*), count(distinct name), sum(dur = 1) from slice")"
expect_eq million-per-name "62500,62500" \
	"$(query "$TMP/a.pftrace" "select min(n), max(n) from (select count(*) n from slice group by name)")"

# (b) a small RING_BUFFER keeps the newest slices: the last one written
# ("slice15", as 99999 % 16 = 15) is there, the oldest are not, and the
# service reports the overwritten chunks (packets_lost, from trace stats).
# The service clears incremental state every 10 ms and the producer is
# paced, so names in the kept window resolve.
cat >"$TMP/ring.pbtx" <<'CFG'
buffers { size_kb: 2048 fill_policy: RING_BUFFER }
data_sources { config { name: "tb.test" } }
incremental_state_config { clear_period_ms: 10 }
CFG
expect_exit ring-exit 0 timeout 20 "$TRACEBOX" --txt -c "$TMP/ring.pbtx" -o "$TMP/b.pftrace" \
	-- "$PRODUCER" --slices 100000 --pause-ms 1
lost=$(field packets_lost)
[ "${lost:-0}" -gt 0 ] && pass ring-overwrite-reported || fail ring-overwrite-reported "$(cat "$TMP/err")"
n=$(query "$TMP/b.pftrace" "select count(*) from slice")
[ "${n:-0}" -gt 0 ] && [ "$n" -lt 100000 ] && pass ring-keeps-part || fail ring-keeps-part "slices: $n"
expect_eq ring-newest-kept '"slice15"' "$(query "$TMP/b.pftrace" "select name from slice order by ts desc limit 1")"
expect_eq ring-names-resolve 0 "$(query "$TMP/b.pftrace" "select count(*) from slice where name is null")"

# (c) a producer SIGKILLed in the middle of a packet (after 300000 slices)
# leaves a valid trace: every CommitData that reached the service before the
# kill (whole batches of 1000 slices; frames still queued in the dead
# process are lost) is there, complete, and the gated capture reports the
# kill as status 137.
expect_exit killed-exit 137 timeout 20 "$TRACEBOX" --txt -c "$TMP/discard.pbtx" \
	-o "$TMP/c.pftrace" -- "$PRODUCER" --slices 100000000 --kill-after 300000
expect_eq killed-trace-status 0 "$(field trace_status)"
row=$(query "$TMP/c.pftrace" "select count(*), sum(dur = 1), count(*) % 1000 from slice")
n=${row%%,*}
[ "${n:-0}" -gt 0 ] && [ "$n" -le 300000 ] && [ "$row" = "$n,$n,0" ] &&
	pass killed-committed-slices || fail killed-committed-slices "slices: $row"
[ -n "$(query "$TMP/c.pftrace" "select int_value from metadata where name = 'tracing_disabled_ns'")" ] &&
	pass killed-trace-complete || fail killed-trace-complete
