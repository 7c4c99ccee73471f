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
import sys
sys.path.insert(0, "tests/tools")
import tdat_recompress as t
d = bytearray(open(sys.argv[1], "rb").read())
f = t.File(bytes(d))
# the last cpu's data: u32 chunks, then u32 csize, u32 size, the zlib
# stream of its first chunk
cpus = [c for oid, data in f.options() if oid == t.BUFFER
        for c in t.buffer_option(f, data)[4] if c[2]]
at = cpus[-1][1] + 12
assert d[at:at + 2] == b"\x78\x9c", "no zlib stream at the last cpu's first chunk"
for k in range(at + 2, at + 40):
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
# kallsyms in a compressed section: inflated only when a record needs a
# symbol. v7_none_kallsyms_bprint.dat is v6_kallsyms_bprint.dat as
# `trace-cmd convert --file-version 7 --compression none` writes it
# (bprint/bputs callers and function events are symbolized). Zlib-
# compressed, it gives the v6 file's rows; with its kallsyms section
# damaged it still loads every record, the addresses print as hex and
# the failure is counted.
v6=tests/fuzz/corpus/tp_trace_dat/v6_kallsyms_bprint.dat
python3 tests/tools/tdat_recompress.py tests/fuzz/corpus/tp_trace_dat/v7_none_kallsyms_bprint.dat "$TMP/ks.dat"
KQ="select e.ts, e.name, a.key, a.string_value, a.int_value from ftrace_event e left join args a using (arg_set_id) order by e.id, a.key"
"$TRACEBOX" trace_processor_shell query "$v6" "$KQ" >"$TMP/ks6.csv" 2>/dev/null
"$TRACEBOX" trace_processor_shell query "$TMP/ks.dat" "$KQ" >"$TMP/ks7.csv" 2>/dev/null
if grep -q '"ip","vfs_read"' "$TMP/ks6.csv" && cmp -s "$TMP/ks6.csv" "$TMP/ks7.csv"; then
	pass kallsyms-section-same-rows
else
	fail kallsyms-section-same-rows "$(diff "$TMP/ks6.csv" "$TMP/ks7.csv" | head -5)"
fi
# Damage the zlib stream of a file's kallsyms section (option 19), found
# through tdat_recompress.py's reader.
damage_kallsyms() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
sys.path.insert(0, "tests/tools")
import tdat_recompress as t
d = bytearray(open(sys.argv[1], "rb").read())
f = t.File(bytes(d))
at = [struct.unpack(f.e + "Q", data)[0] for oid, data in f.options() if oid == 19][0]
sid, flags, _, size = struct.unpack_from(f.e + "HHIQ", d, at)
# u16 id, u16 flags, u32 string id, u64 size, then u32 compressed size,
# u32 size and the zlib stream
assert sid == 19 and flags == 1 and d[at + 24:at + 26] == b"\x78\x9c", "no zlib kallsyms"
for k in range(at + 26, min(at + 16 + size, len(d))):
    d[k] ^= 0x5a
open(sys.argv[2], "wb").write(d)
PY
}
damage_kallsyms "$TMP/ks.dat" "$TMP/ks-bad.dat"
expect_exit kallsyms-damaged-loads 0 "$TRACEBOX" trace_processor_shell query "$TMP/ks-bad.dat" "select 1"
got=$(tp_query "$TMP/ks-bad.dat" "select value from stats where name = 'trace_dat_decompress_failure'")
rows=$(tp_query "$TMP/ks-bad.dat" "select count(*) from ftrace_event")
hex=$(tp_query "$TMP/ks-bad.dat" "select count(*) from args where key = 'ip' and string_value like '0x%'")
if [ "$got" = 1 ] && [ "$rows" = "$(tp_query "$v6" "select count(*) from ftrace_event")" ] && [ "${hex:-0}" -gt 0 ]; then
	pass kallsyms-damaged-counted
else
	fail kallsyms-damaged-counted "decompress failures '$got', $rows rows, $hex hex callers"
fi
# Not inflated when no record needs a symbol: the same damage in the
# sched/irq recording (v7_none.dat, zlib) loads every row and counts
# nothing.
damage_kallsyms "$TMP/zlib.dat" "$TMP/zlib-ks-bad.dat"
got=$(tp_query "$TMP/zlib-ks-bad.dat" "select value from stats where name = 'trace_dat_decompress_failure'")
m=$(tp_query "$TMP/zlib-ks-bad.dat" "select count(*) from ftrace_event")
if [ "$got" = 0 ] && [ "$m" = "$n" ]; then
	pass kallsyms-not-inflated-unless-needed
else
	fail kallsyms-not-inflated-unless-needed "decompress failures '$got', $m of $n events"
fi
