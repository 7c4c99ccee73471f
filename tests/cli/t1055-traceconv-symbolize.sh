#!/bin/sh
# Symbolization: a perf trace whose frames point (by rel_pc, without names)
# into a program this test compiles gets names from the program's ELF file.
# `traceconv symbolize` writes ModuleSymbols packets; appended to the trace
# they fill stack_profile_symbol (C++ names demangled) and frames'
# symbol_set_id, frame names untouched. trace_processor_shell does the same
# at load when PERFETTO_BINARY_PATH is set (index and find modes), here with
# the installed binary stripped so only the roots can answer. Errors:
# non-proto traces are refused with one line.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox

if ! command -v g++ >/dev/null || ! command -v nm >/dev/null; then
	skip all "g++ and nm are needed to build the test program"
	exit 0
fi
mkdir -p "$TMP/app" "$TMP/syms"
cat >"$TMP/app/prog.cc" <<'SRC'
namespace ns { int work(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ x; return s; } }
extern "C" int spin(int x) { return ns::work(x) + 1; }
int main(int argc, char **argv) { (void)argv; return spin(argc); }
SRC
g++ -O1 -g -fno-inline -Wl,--build-id -o "$TMP/app/prog" "$TMP/app/prog.cc" || {
	fail build "g++ failed"
	exit 0
}
cp "$TMP/app/prog" "$TMP/syms/prog-with-symbols"
addr() { nm "$TMP/app/prog" | awk -v s="$1" '$3 == s { print $1 }'; }
id=$(readelf -n "$TMP/app/prog" | awk '/Build ID/ { print $3 }')
work=$(addr _ZN2ns4workEi) spin=$(addr spin)

# The trace: one mapping of prog (its build id, exec segment's file offset),
# frames without names at spin+4, work+8 and a pc in no function (0x10).
python3 - "$TMP/app/prog" "$id" "$work" "$spin" "$TMP/t.pftrace" <<'PY'
import sys
path, bid, work, spin, out = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3], 16), int(sys.argv[4], 16), sys.argv[5]
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
pcs = [spin + 4, work + 8, 0x10]
for i, pc in enumerate(pcs):
    interned += f(6, f(1, i + 1) + f(3, 1) + f(4, pc))
interned += f(7, f(1, 1) + f(2, 1) + f(2, 2)) + f(7, f(1, 2) + f(2, 3))
trace = f(1, f(10, 7) + f(8, 100) + f(13, 1) + f(12, interned))
for i, cs in enumerate([1, 1, 2]):
    trace += f(1, f(10, 7) + f(8, 200 + i) + f(13, 2) + f(66, f(2, 40) + f(3, 40) + f(4, cs)))
open(out, 'wb').write(trace)
PY

q="select s.name, f.name is null as unnamed from stack_profile_frame f
	left join stack_profile_symbol s using (symbol_set_id) order by f.rel_pc"
want_sym='"name","unnamed"
"[NULL]",1
"ns::work(int)",1
"spin",1'
want_none='"name","unnamed"
"[NULL]",1
"[NULL]",1
"[NULL]",1'

expect_exit symbolize 0 "$bin" traceconv symbolize "$TMP/t.pftrace" "$TMP/syms.pb"
[ -s "$TMP/syms.pb" ] && pass symbols-written || fail symbols-written
cat "$TMP/t.pftrace" "$TMP/syms.pb" >"$TMP/sym.pftrace"
got=$("$bin" trace_processor_shell query "$TMP/sym.pftrace" "$q" 2>/dev/null)
expect_eq symbolized-names "$want_sym" "$got"
got=$("$bin" trace_processor_shell query "$TMP/sym.pftrace" \
	"select count(*) from stack_profile_symbol" 2>/dev/null | tail -1)
expect_eq one-symbol-per-address '2' "$got"
# With llvm-symbolizer (any llvm-symbolizer-<N>) on PATH, file and line too.
have_llvm=
for d in $(echo "$PATH" | tr ':' ' '); do
	for x in "$d"/llvm-symbolizer "$d"/llvm-symbolizer-[0-9]*; do
		[ -x "$x" ] && have_llvm=$x && break 2
	done
done
fl="select s.name, s.source_file, s.line_number from stack_profile_symbol s order by s.name"
want_fl="\"name\",\"source_file\",\"line_number\"
\"ns::work(int)\",\"$TMP/app/prog.cc\",1
\"spin\",\"$TMP/app/prog.cc\",2"
if [ -n "$have_llvm" ]; then
	got=$("$bin" trace_processor_shell query "$TMP/sym.pftrace" "$fl" 2>/dev/null)
	expect_eq llvm-file-and-line "$want_fl" "$got"
else
	skip llvm-file-and-line "llvm-symbolizer is not installed"
fi
got=$("$bin" trace_processor_shell query "$TMP/t.pftrace" "$q" 2>/dev/null)
expect_eq unsymbolized-before "$want_none" "$got"
# symbolizing a symbolized trace adds nothing
expect_exit symbolize-again 0 "$bin" traceconv symbolize "$TMP/sym.pftrace" "$TMP/syms2.pb"
[ ! -s "$TMP/syms2.pb" ] && pass nothing-left || fail nothing-left

# Stripped in place: only PERFETTO_BINARY_PATH roots can answer now.
strip "$TMP/app/prog"
expect_exit stripped 0 env -u PERFETTO_BINARY_PATH "$bin" traceconv symbolize "$TMP/t.pftrace" "$TMP/s3.pb"
grep -q "frames from 1 mappings could not be symbolized" "$TMP/err" && pass stripped-reported ||
	fail stripped-reported "$(cat "$TMP/err")"
got=$(PERFETTO_BINARY_PATH=/nonexistent:$TMP/syms "$bin" trace_processor_shell query "$TMP/t.pftrace" "$q" 2>/dev/null)
expect_eq shell-index-mode "$want_sym" "$got"
mv "$TMP/syms/prog-with-symbols" "$TMP/syms/prog"
got=$(PERFETTO_SYMBOLIZER_MODE=find PERFETTO_BINARY_PATH=$TMP/syms "$bin" trace_processor_shell query "$TMP/t.pftrace" "$q" 2>/dev/null)
expect_eq shell-find-mode "$want_sym" "$got"
got=$(env -u PERFETTO_BINARY_PATH "$bin" trace_processor_shell query "$TMP/t.pftrace" "$q" 2>/dev/null)
expect_eq shell-no-path-no-symbols "$want_none" "$got"

printf '[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]' >"$TMP/t.json"
expect_exit json-refused 1 "$bin" traceconv symbolize "$TMP/t.json" "$TMP/j.pb"
grep -q "symbols can only be appended to a Perfetto protobuf trace" "$TMP/err" &&
	pass json-refused-msg || fail json-refused-msg "$(cat "$TMP/err")"
[ ! -e "$TMP/j.pb" ] && pass json-no-output || fail json-no-output
