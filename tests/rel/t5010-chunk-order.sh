# Chunks committed out of order (issue 21 #4): a producer committing chunk
# ids in decreasing order, or always in the middle (zigzag), costs traced
# about what increasing order does. Measured as traced's CPU time (utime +
# stime) for N chunks in each order, as a ratio to in-order: a functional
# check of O(log n) insertion, generous enough for a loaded 2-core machine
# (quadratic insertion made it ~50x at this N). Every packet must come back,
# in chunk order, per sequence.
. tests/lib.sh

N=40000
P=@tb-rel-p-$$ C=@tb-rel-c-$$
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C
TRACED_NOTIFY_FD=3 "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log" &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done

cat >"$TMP/cfg.pbtx" <<'CFG'
buffers { size_kb: 65536 fill_policy: DISCARD }
data_sources { config { name: "rel.ds" } }
CFG
"$TRACEBOX" perfetto --txt -c "$TMP/cfg.pbtx" -o "$TMP/t.pftrace" 2>"$TMP/perfetto.log" &
cons=$!
at_exit "kill -9 $cons 2>/dev/null"
sleep 0.3

# cpu_ticks: traced's utime + stime so far.
cpu_ticks() { awk '{print $14 + $15}' /proc/$svc/stat; }
# run ORDER: ticks of traced's CPU while rel_producer commits N chunks.
run() {
	before=$(cpu_ticks)
	if ! timeout 120 "$TB_OUT/tools/rel_producer" --chunks $N --order "$1" >"$TMP/$1.out" 2>&1; then
		echo "rel_producer --order $1 failed: $(cat "$TMP/$1.out")" >&2
	fi
	echo $(($(cpu_ticks) - before))
}
fwd=$(run forward)
rev=$(run reverse)
zig=$(run zigzag)
echo "traced CPU ticks for $N chunks: forward $fwd, reverse $rev, zigzag $zig" >&2
[ "$fwd" -lt 1 ] && fwd=1
[ $((rev)) -le $((5 * fwd + 25)) ] && pass reverse-order-cost ||
	fail reverse-order-cost "reverse $rev ticks vs forward $fwd"
[ $((zig)) -le $((5 * fwd + 25)) ] && pass zigzag-order-cost ||
	fail zigzag-order-cost "zigzag $zig ticks vs forward $fwd"

kill -INT $cons
wait $cons
# Every sequence holds N packets with timestamps 1..N in order.
got=$(pb_py "$TMP/t.pftrace" <<'PY'
seqs = {}
for fid, pkt in fields(open(sys.argv[1], "rb").read()):
    if fid != 1:
        continue
    d = dict(fields(pkt))
    if 8 in d and d.get(10, 1) != 1:
        seqs.setdefault(d[10], []).append(d[8])
print(" ".join("%d:%s" % (len(v), "sorted" if v == sorted(v) and v == list(range(1, len(v) + 1)) else "unsorted")
               for _, v in sorted(seqs.items())))
PY
)
expect_eq packets-in-chunk-order "$N:sorted $N:sorted $N:sorted" "$got"
