# tests/run.sh: runs every test tier against $TRACEBOX and prints the
# closing line `N passed, N failed, N skipped`. Called by build.sh (test,
# asan), which builds everything first. Tiers:
#   unit  out/asan/unit: C unit tests under ASan+UBSan
#   fuzz  out/asan/*_fuzz replaying tests/fuzz/corpus/<target>/
#   cli   tests/cli/t*.sh driving the binary like a user
#   rel   tests/rel/t*.sh: reliability and security (hostile users, stuck
#         clients, fd exhaustion, crashes, bombs), each bounded in seconds
#   tp    tests/tp/ golden SQL tests
#   corpus tests/corpus/: Perfetto's answers on ../shared/corpus
#   root  tests/root/t*.sh: tracefs and perf_event (SKIP when not permitted)
#   ui    tests/ui/: the Perfetto UI's query sequences over server http
#   emu   tests/emu/t*.sh: every release target under its qemu (SKIP without)
# Each tier prints PASS/FAIL/SKIP lines; failing details go to stderr.
# Every tier and script's wall seconds go to $TB_OUT/test-times.txt, the
# slowest listed at the end (the suite's budget is 40 minutes).
set -u
: "${TRACEBOX:?}" "${TB_OUT:?}" "${TB_TEST_ROOT:?}"
export TRACEBOX TB_OUT TB_TEST_ROOT
cd "$TB_TEST_ROOT" || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
times=$TB_OUT/test-times.txt
: >"$times"

# run_tier LABEL CMD...: run, echo its result lines, count a crash as a failure.
run_tier() {
	label=$1
	shift
	t0=$(date +%s)
	before=$(wc -l <"$log")
	"$@" 2>&1 | while IFS= read -r line; do
		case $line in
		PASS\ * | FAIL\ * | SKIP\ *) echo "$line" >>"$log" ;;
		esac
		printf '%s\n' "$line"
	done
	if [ "$(wc -l <"$log")" -eq "$before" ]; then
		echo "FAIL $label (reported nothing)" | tee -a "$log"
	fi
	echo "$(($(date +%s) - t0)) $label" >>"$times"
}

# A command whose non-zero exit counts as a failure even when every line it
# printed was PASS (a sanitizer report after the last test, say).
strict() {
	label=$1
	shift
	"$@" || echo "FAIL $label (exit status $?)"
}

echo "== unit"
run_tier unit strict unit "$TB_OUT/asan/unit"

echo "== fuzz corpora"
for bin in "$TB_OUT"/asan/*_fuzz; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin" _fuzz)
	corpus=tests/fuzz/corpus/$name
	if [ -d "$corpus" ]; then
		run_tier "fuzz/$name" sh -c "'$bin' '$corpus' >/dev/null 2>&1 && echo 'PASS fuzz/$name' || echo 'FAIL fuzz/$name'"
	else
		echo "FAIL fuzz/$name (no corpus at $corpus)" | tee -a "$log"
	fi
done

for tier in cli rel root; do
	echo "== $tier"
	for t in tests/$tier/t*.sh; do
		[ -f "$t" ] || continue
		run_tier "$tier/$(basename "$t" .sh)" timeout 600 sh "$t"
	done
done

# Each emulated-tier script covers every target in turn: a longer bound.
echo "== emu"
for t in tests/emu/t*.sh; do
	[ -f "$t" ] || continue
	run_tier "emu/$(basename "$t" .sh)" timeout 1800 sh "$t"
done

if [ -f tests/tp/run.sh ]; then
	echo "== tp"
	run_tier tp sh tests/tp/run.sh
fi

if [ -f tests/corpus/run.sh ]; then
	echo "== corpus"
	run_tier corpus sh tests/corpus/run.sh
fi
if [ -f tests/ui/run.sh ]; then
	echo "== ui"
	run_tier ui sh tests/ui/run.sh
fi

p=$(grep -c '^PASS ' "$log")
f=$(grep -c '^FAIL ' "$log")
s=$(grep -c '^SKIP ' "$log")
echo
if [ "$f" -gt 0 ]; then
	echo "failed:"
	grep '^FAIL ' "$log" | sed 's/^/  /'
fi
echo "slowest (seconds, of $(awk '{ s += $1 } END { print s }' "$times") in all; $times):"
sort -rn "$times" | head -8 | sed 's/^/  /'
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
