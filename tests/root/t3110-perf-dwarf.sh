#!/bin/sh
# t3110-perf-dwarf: DWARF unwinding (callstack_sampling.user_frames:
# UNWIND_DWARF, Perfetto's default) of programs built without frame
# pointers, end to end, as root:
#   - tests/data/perf_dwarf_workload.c built with `gcc -O2
#     -fomit-frame-pointer` (its hot comparator reached through libc's
#     qsort and an inlined bsearch, plus a function called directly),
#     recorded at 1000 Hz: >= 95 % of its samples reach main, both paths
#     are there (through libc's qsort frames, and directly), and the
#     inclusive split sort_and_search / mix_direct is within 5 points of
#     `perf record --call-graph dwarf` on the same workload;
#   - the same workload with UNWIND_FRAME_POINTER: its stacks stop after the
#     leaf (fewer than 20 % reach main), the difference DWARF makes;
#   - Debian's python3 in a loop: the stacks go from the interpreter's
#     eval loop down to Py_BytesMain and _start;
#   - short-lived processes (gone before their samples are read) unwind
#     from maps kept by FORK, exec and MMAP2 records;
#   - a child's samples from between its fork and its exec unwind with the
#     parent's maps, those after the exec with the new image's;
#   - a 200-deep recursion: stacks are cut at 128 frames and end with the
#     marker frame "ERROR MAX_FRAME_EXCEEDED", counted in SQL through
#     perf_sample.unwind_error.
# SKIP when not root, perf_event_open is refused, or gcc is missing; the
# comparison SKIPs without perf, the python part without /usr/bin/python3
# (Debian's: a python3 earlier in PATH may be another build, or a shim).
. tests/lib.sh

perf_event_skip dwarf && exit 0
if ! command -v gcc >/dev/null; then
	skip dwarf "gcc is needed to build the workload"
	exit 0
fi
root=$(pwd)
case $TRACEBOX in /*) tb=$TRACEBOX ;; *) tb=$root/$TRACEBOX ;; esac
gcc -O2 -fomit-frame-pointer -g -o "$TMP/dwarfwl" tests/data/perf_dwarf_workload.c ||
	{ fail build-workload; exit 0; }

# cfg MODE: a 1000 Hz cpu-clock config with user_frames MODE.
cfg() {
	cat <<EOF
duration_ms: 120000
data_source_stop_timeout_ms: 30000
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.perf" perf_event_config {
  timebase { counter: SW_CPU_CLOCK frequency: 1000 timestamp_clock: PERF_CLOCK_MONOTONIC }
  callstack_sampling { kernel_frames: false user_frames: $1 }
} } }
EOF
}
cfg UNWIND_DWARF >"$TMP/dwarf.pbtx"
cfg UNWIND_FRAME_POINTER >"$TMP/fp.pbtx"
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# rec NAME CONFIG ARGS...: record ARGS in $TMP/NAME.pftrace, its folded
# stacks in $TMP/NAME.folded; prints the status line.
rec() {
	n=$1 c=$2
	shift 2
	(cd "$TMP" && "$tb" -c "$c" --txt -o "$n.pftrace" -- "$@") >"$TMP/$n.out" 2>"$TMP/$n.err"
	"$tb" traceconv folded "$TMP/$n.pftrace" >"$TMP/$n.folded" 2>"$TMP/$n.ferr"
	grep '^workload_status=' "$TMP/$n.err" | tail -1
}
# count FOLDED THREAD [REGEX]: samples of THREAD whose stack matches REGEX
count() {
	awk -v t="$2;" -v re="${3:-.}" 'index($0, t) == 1 && $0 ~ re { s += $NF } END { print s + 0 }' "$1"
}
pct() { [ $(($1 + $2)) -gt 0 ] && echo $(($1 * 1000 / ($1 + $2))) || echo 0; }

# ---- 1. DWARF --------------------------------------------------------------------
line=$(rec d "$TMP/dwarf.pbtx" "$TMP/dwarfwl" d.txt 2)
expect_eq dwarf-record "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
total=$(count "$TMP/d.folded" dwarfwl)
main=$(count "$TMP/d.folded" dwarfwl ';main(;| )')
echo "# DWARF: $main of $total samples reach main"
[ "$total" -ge 500 ] && [ $((main * 100)) -ge $((total * 95)) ] && pass dwarf-reach-main ||
	fail dwarf-reach-main "$main of $total" "$(sort -t' ' -k2 -n -r "$TMP/d.folded" | head -5)"
via_qsort=$(count "$TMP/d.folded" dwarfwl ';main;sort_and_search;[^ ]*qsort[^ ]*;.*;by_key ')
via_bsearch=$(count "$TMP/d.folded" dwarfwl ';main;sort_and_search;by_key ')
echo "# comparator via libc qsort: $via_qsort, via the inlined bsearch: $via_bsearch"
[ "$via_qsort" -gt 0 ] && [ "$via_bsearch" -gt 0 ] && pass dwarf-through-libc ||
	fail dwarf-through-libc "$via_qsort $via_bsearch" "$(head -5 "$TMP/d.folded")"
sort_n=$(count "$TMP/d.folded" dwarfwl ';sort_and_search(;| )')
direct_n=$(count "$TMP/d.folded" dwarfwl ';mix_direct(;| )')
ours=$(pct "$sort_n" "$direct_n")
echo "# DWARF split: sort_and_search $sort_n, mix_direct $direct_n: $((ours / 10)).$((ours % 10)) %"
# (a sample whose stack the kernel could not copy, at the process' start or
# exit, ends right after its first frame: rare, perf has them too)
errs=$(count "$TMP/d.folded" dwarfwl ';ERROR ')
[ $((errs * 100)) -le "$total" ] && pass dwarf-unwind-errors || fail dwarf-unwind-errors "$errs of $total"

# ---- 2. perf record --call-graph dwarf on the same workload -----------------------------
if ! command -v perf >/dev/null; then
	skip dwarf-perf-split "perf not installed"
elif ! (cd "$TMP" && perf record -F 1000 --call-graph dwarf -o perf.data -- "$TMP/dwarfwl" p.txt 2) \
	>"$TMP/perf.out" 2>&1 || ! perf script -i "$TMP/perf.data" -F comm,ip,sym >"$TMP/perf.txt" 2>/dev/null; then
	skip dwarf-perf-split "perf record cannot run here: $(tail -1 "$TMP/perf.out")"
else
	set -- $(awk 'BEGIN { RS = "" } $1 == "dwarfwl" {
		s += index($0, " sort_and_search\n") > 0; d += index($0, " mix_direct\n") > 0
	} END { print s + 0, d + 0 }' "$TMP/perf.txt")
	theirs=$(pct "$1" "$2")
	echo "# perf --call-graph dwarf split: sort_and_search $1, mix_direct $2: $((theirs / 10)).$((theirs % 10)) %"
	diff=$((ours - theirs))
	[ "$1" -gt 0 ] && [ "${diff#-}" -le 50 ] && pass dwarf-perf-split ||
		fail dwarf-perf-split "ours $ours, perf $theirs (tenths of a percent)"
fi

# ---- 3. frame pointers only: the same workload's stacks are cut short -------------------
line=$(rec f "$TMP/fp.pbtx" "$TMP/dwarfwl" f.txt 1)
expect_eq fp-record "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
ftotal=$(count "$TMP/f.folded" dwarfwl)
fmain=$(count "$TMP/f.folded" dwarfwl ';main(;| )')
echo "# frame pointers: $fmain of $ftotal samples reach main"
[ "$ftotal" -ge 300 ] && [ $((fmain * 100)) -lt $((ftotal * 20)) ] && pass fp-truncated ||
	fail fp-truncated "$fmain of $ftotal"

# ---- 4. Debian's python3 (no frame pointers) ------------------------------------------
if ! [ -x /usr/bin/python3 ]; then
	skip dwarf-python "/usr/bin/python3 not installed"
else
	cat >"$TMP/loop.py" <<'EOF'
import time
t = time.process_time()
def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
while time.process_time() - t < 1.5:
    f(10000)
EOF
	line=$(rec py "$TMP/dwarf.pbtx" /usr/bin/python3 "$TMP/loop.py")
	expect_eq python-record "0 0 0" \
		"$(field "$line" workload_status) $(field "$line" trace_status) $(field "$line" health_status)"
	eval_n=$(count "$TMP/py.folded" python3 ';_PyEval_EvalFrameDefault(;| )')
	# (python's main tail-calls Py_BytesMain: no frame of its own)
	full=$(count "$TMP/py.folded" python3 ';_start;.*;Py_BytesMain;.*_PyEval_EvalFrameDefault(;| )')
	echo "# python3: $full of $eval_n eval-loop samples reach Py_BytesMain and _start"
	[ "$eval_n" -ge 500 ] && [ $((full * 100)) -ge $((eval_n * 95)) ] && pass dwarf-python ||
		fail dwarf-python "$full of $eval_n" "$(sort -t' ' -k2 -n -r "$TMP/py.folded" | head -3)"
fi

# ---- 5. deeper than the frame limit: an explicit marker frame, countable in SQL ---------------
line=$(rec deep "$TMP/dwarf.pbtx" "$TMP/dwarfwl" deep.txt 1 deep)
expect_eq deep-record "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
cut=$(count "$TMP/deep.folded" dwarfwl '^dwarfwl;ERROR MAX_FRAME_EXCEEDED;deep;')
dtotal=$(count "$TMP/deep.folded" dwarfwl ';mix_direct ')
[ "$dtotal" -ge 300 ] && [ $((cut * 100)) -ge $((dtotal * 95)) ] && pass deep-marker-frame ||
	fail deep-marker-frame "$cut of $dtotal" "$(head -c 600 "$TMP/deep.folded")"
q="select count(*) from perf_sample s join thread t using (utid)
   where t.name = 'dwarfwl' and s.unwind_error = 'max_frames_exceeded'"
n=$("$tb" trace_processor_shell query "$TMP/deep.pftrace" "$q" 2>/dev/null | sed 1d | tr -d '"')
[ "${n:-0}" -ge "$cut" ] && [ "$cut" -gt 0 ] && pass deep-unwind-error-sql ||
	fail deep-unwind-error-sql "$n rows, $cut cut stacks"
q="select count(*) from stack_profile_frame where name = 'ERROR MAX_FRAME_EXCEEDED'"
expect_eq deep-marker-in-sql 1 \
	"$("$tb" trace_processor_shell query "$TMP/deep.pftrace" "$q" 2>/dev/null | sed 1d | tr -d '"')"
q="select max(depth) from stack_profile_callsite"
expect_eq deep-frame-limit 128 \
	"$("$tb" trace_processor_shell query "$TMP/deep.pftrace" "$q" 2>/dev/null | sed 1d | tr -d '"')"

# ---- 6. processes gone before their samples are read ---------------------------------------
# Ten 50 ms runs of the workload from a shell script: each has exited by
# the time its samples are read (every 100 ms), so its maps come from its
# FORK, exec and MMAP2 records; every sample of its own run (not of the
# dynamic loader starting it, nor before main or after it) unwinds to main.
cat >"$TMP/short.sh" <<EOF2
#!/bin/sh
for i in 1 2 3 4 5 6 7 8 9 10; do "$TMP/dwarfwl" /dev/null 0.05; done
EOF2
chmod +x "$TMP/short.sh"
# settled FOLDED THREAD: samples of THREAD outside its process' start-up
# and exit: not rooted in the dynamic loader (ld.so runs before the
# program's _start; its entry has no CFI, so such stacks end in an error
# frame, as with libunwind), and not under _start without main.
settled() {
	awk -v t="$2;" 'index($0, t) == 1 {
		s = substr($0, length(t) + 1); sub(/^ERROR [A-Z_]+;/, "", s)
		if (s ~ /^(\[ld-linux[^];]*\]|_dl_[a-z_]+)(;| )/) next
		if (s ~ /^_start(;| )/ && s !~ /;main(;| )/) next
		n += $NF } END { print n + 0 }' "$1"
}
line=$(rec short "$TMP/dwarf.pbtx" "$TMP/short.sh")
expect_eq short-record "0 0 0 0" "$(field "$line" workload_status) $(field "$line" trace_status) \
$(field "$line" health_status) $(field "$line" samples_skipped)"
stotal=$(settled "$TMP/short.folded" dwarfwl)
smain=$(count "$TMP/short.folded" dwarfwl ';main(;| )')
echo "# short-lived: $smain of $stotal samples past start-up reach main"
[ "$stotal" -ge 200 ] && [ $((smain * 100)) -ge $((stotal * 95)) ] && pass short-lived-unwound ||
	fail short-lived-unwound "$smain of $stotal" "$(grep -v ';main[; ]' "$TMP/short.folded" | head -20)"

# ---- 7. samples taken between a fork and its exec ------------------------------------------
# The workload forks five children one after another; each spins 30 ms in
# before_exec, then execs the workload anew (another load address). A
# sample taken before the exec is unwound with the parent's maps as they
# were at the fork, one taken after it with the new image's, whatever the
# order the records and samples are read in.
line=$(rec fe "$TMP/dwarf.pbtx" "$TMP/dwarfwl" /dev/null 0.05 forkexec)
expect_eq fe-record "0 0 0 0" "$(field "$line" workload_status) $(field "$line" trace_status) \
$(field "$line" health_status) $(field "$line" samples_skipped)"
fpre=$(count "$TMP/fe.folded" dwarfwl ';main;fork_exec;before_exec(;| )')
ftotal=$(settled "$TMP/fe.folded" dwarfwl)
fmain=$(count "$TMP/fe.folded" dwarfwl ';main(;| )')
echo "# fork-exec: $fpre samples before the exec; $fmain of $ftotal past start-up reach main"
[ "$fpre" -ge 50 ] && pass fe-before-exec-unwound ||
	fail fe-before-exec-unwound "$fpre" "$(grep -v ';main[; ]' "$TMP/fe.folded" | head -20)"
[ "$ftotal" -ge 200 ] && [ $((fmain * 100)) -ge $((ftotal * 95)) ] && pass fe-reach-main ||
	fail fe-reach-main "$fmain of $ftotal" "$(grep -v ';main[; ]' "$TMP/fe.folded" | head -20)"
