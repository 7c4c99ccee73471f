# A zlib v7 trace.dat (trace-cmd here writes and reads zstd only):
# tests/tools/tdat_recompress.py rewrites a recorded uncompressed v7 file
# (the fuzz seed v7_none.dat) with its metadata sections and pages zlib-
# compressed; our import gives the same rows as the stored file. Then the
# same zlib file with a chunk damaged: the rest loads, the chunk is counted.
# tests/root/t3040 does the same with a fresh recording, against its zstd
# original and trace-cmd report.
. tests/lib.sh

if ! command -v python3 >/dev/null 2>&1; then
	skip trace-dat-zlib "python3 is not installed"
	exit 0
fi
src=tests/fuzz/corpus/tp_trace_dat/v7_none.dat
python3 tests/tools/tdat_recompress.py "$src" "$TMP/zlib.dat"
expect_exit recompress 0 python3 tests/tools/tdat_recompress.py "$src" "$TMP/zlib.dat"
if grep -aq zlib "$TMP/zlib.dat" && [ "$(wc -c <"$TMP/zlib.dat")" -lt "$(wc -c <"$src")" ]; then
	pass is-zlib
else
	fail is-zlib "no zlib header, or not smaller than the stored file"
fi
Q="select count(*) from ftrace_event;
select e.ts, e.name, e.cpu, t.tid, a.key, a.int_value, a.string_value from ftrace_event e join thread t using (utid) left join args a using (arg_set_id) order by e.id, a.key;
select ts, dur, cpu, utid, end_state from sched order by ts, cpu;
select name, value from stats where value != 0 order by name"
"$TRACEBOX" trace_processor_shell query "$src" "$Q" >"$TMP/none.csv" 2>/dev/null
"$TRACEBOX" trace_processor_shell query "$TMP/zlib.dat" "$Q" >"$TMP/zlib.csv" 2>/dev/null
n=$(sed -n 2p "$TMP/none.csv")
if [ "${n:-0}" -gt 10 ] && cmp -s "$TMP/none.csv" "$TMP/zlib.csv"; then
	pass same-rows
else
	fail same-rows "$n events; $(diff "$TMP/none.csv" "$TMP/zlib.csv" | head -5)"
fi
# A zstd-compressed input is refused by the script (no zstd in the stdlib).
expect_exit zstd-refused 1 python3 tests/tools/tdat_recompress.py tests/fuzz/corpus/tp_trace_dat/v7_zstd.dat "$TMP/x.dat"
# Damage the last cpu's first chunk: trace_dat_decompress_failure, the
# other cpus still load.
python3 - "$TMP/zlib.dat" "$TMP/bad.dat" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
# the last chunk of the file: u32 chunks, u32 csize, u32 size, zlib data
i = d.rfind(b"\x78\x9c")
for k in range(i + 2, min(i + 40, len(d))):
    d[k] ^= 0x5a
open(sys.argv[2], "wb").write(d)
PY
got=$(tp_query "$TMP/bad.dat" "select value from stats where name = 'trace_dat_decompress_failure'")
m=$(tp_query "$TMP/bad.dat" "select count(*) from ftrace_event")
if [ "${got:-0}" -ge 1 ] && [ "${m:-0}" -gt 0 ] && [ "$m" -lt "$n" ]; then
	pass bad-chunk
else
	fail bad-chunk "decompress failures '$got', $m of $n events"
fi
