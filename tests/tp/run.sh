# tests/tp/run.sh: golden SQL tests for trace_processor_shell.
#
# 1. tests/tp/<name>/: an input (trace.json, trace.pb, trace.*), query.sql and
#    expected.csv, and optionally flags: shell flags for the query (one
#    line, split at spaces). `sh tests/tp/run.sh --rebase` rewrites expected.csv from
#    the current output; review the diff in the commit.
# 2. Perfetto's own diff tests in ../shared/corpus/perfetto_difftests/, in
#    the suites listed in difftest_suites.txt; a test without a loadable
#    input, one that expects a metric, or one whose query includes a stdlib
#    module we do not provide is reported SKIP with the reason. Lines are
#    compared with surrounding
#    whitespace stripped, as Perfetto's runner does. Inputs: trace.json,
#    trace.pb or trace.systrace. difftest_known_failures.txt lists those we
#    do not pass yet (a name, then optionally whitespace and a '#' reason):
#    a listed test is reported SKIP, an
#    unlisted failure FAIL, and a listed test that now passes FAIL too, so
#    the list only shrinks. Tests listed in difftest_trace_modifiers.txt
#    get their trace modified first, as Perfetto's runner does
#    (out/tools/trace_inject).
# Run by tests/run.sh with TRACEBOX, TB_TEST_ROOT set; prints PASS/FAIL/SKIP.
set -u
cd "${TB_TEST_ROOT:?}" || exit 1
here=tests/tp
rebase=false
[ "${1:-}" = --rebase ] && rebase=true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

strip() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$1"; }

# run_query TRACE QUERY OUT ERR [FLAG...]: the shell's query mode, bounded
# in time. With TB_TP_SAVE=DIR each answer is also kept, byte for byte with
# its exit status, as DIR/<test name> (tests/emu compares them across
# targets).
run_query() {
	t=$1 q=$2 o=$3 e=$4
	shift 4
	timeout 120 "$TRACEBOX" trace_processor_shell query "$@" -f "$q" "$t" >"$o" 2>"$e"
	rc=$?
	[ -z "${TB_TP_SAVE:-}" ] || { cat "$o" && echo "exit $rc"; } >"$TB_TP_SAVE/$name"
	return $rc
}

input_of() {
	for f in "$1"/trace.*; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
}

for dir in "$here"/*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	[ -f "$dir/query.sql" ] || continue
	trace=$(input_of "$dir")
	flags=
	[ -f "$dir/flags" ] && flags=$(cat "$dir/flags")
	if $rebase; then
		# shellcheck disable=SC2086
		run_query "$trace" "$dir/query.sql" "$dir/expected.csv" "$tmp/err" $flags
		echo "rebased $name"
		continue
	fi
	# shellcheck disable=SC2086
	if run_query "$trace" "$dir/query.sql" "$tmp/out" "$tmp/err" $flags &&
		[ "$(strip "$tmp/out")" = "$(strip "$dir/expected.csv")" ]; then
		echo "PASS tp/$name"
	else
		echo "FAIL tp/$name"
		diff "$dir/expected.csv" "$tmp/out" | head -20 >&2
		head -5 "$tmp/err" >&2
	fi
done
$rebase && exit 0

difftests=$TB_TEST_ROOT/../shared/corpus/perfetto_difftests
if [ ! -d "$difftests" ]; then
	echo "SKIP tp/difftests: ../shared/corpus/perfetto_difftests not found"
	exit 0
fi
known=$here/difftest_known_failures.txt
modifiers=$here/difftest_trace_modifiers.txt
inject=${TB_OUT:-out}/tools/trace_inject
# Perfetto's diff test runner always passes these flags.
dtflags="--analyze-trace-proto-content --crop-track-events"
suites=$(grep -v '^#' "$here/difftest_suites.txt")
for suite in $suites; do
	ran=0 passed=0
	for dir in "$difftests/${suite}__"*/; do
		dir=${dir%/}
		name=$(basename "$dir")
		if [ ! -f "$dir/query.sql" ]; then
			echo "SKIP tp/difftest/$name: a metric test (metrics are not provided)"
			continue
		fi
		trace=
		for f in trace.json trace.pb trace.systrace trace.zip trace.tar; do
			[ -f "$dir/$f" ] && trace=$dir/$f
		done
		if [ -z "$trace" ]; then
			echo "SKIP tp/difftest/$name: no input we can load (the extraction has none)"
			continue
		fi
		# Perfetto's trace_modifier: fields set in some packets.
		mod=$(grep -E "^$name[[:space:]]" "$modifiers" 2>/dev/null)
		if [ -n "$mod" ]; then
			if [ ! -x "$inject" ]; then
				echo "SKIP tp/difftest/$name: needs $inject (./build.sh tests)"
				continue
			fi
			# shellcheck disable=SC2086
			set -- $mod
			shift
			fields=$1
			shift
			"$inject" "$trace" "$tmp/injected.pb" "$fields" "$@" || {
				echo "FAIL tp/difftest/$name (trace_inject failed)"
				continue
			}
			trace=$tmp/injected.pb
		fi
		ran=$((ran + 1))
		ok=false want=
		if [ -f "$dir/expected.error" ]; then
			! run_query "$trace" "$dir/query.sql" "$tmp/out" "$tmp/err" $dtflags &&
				grep -qF "$(cat "$dir/expected.error")" "$tmp/err" && ok=true
		elif [ -f "$dir/expected.csv" ] || [ -f "$dir/expected.out" ]; then
			# expected.out: the test's .out file, the same CSV.
			want=$dir/expected.csv
			[ -f "$want" ] || want=$dir/expected.out
			run_query "$trace" "$dir/query.sql" "$tmp/out" "$tmp/err" $dtflags &&
				[ "$(strip "$tmp/out")" = "$(strip "$want")" ] && ok=true
		else
			echo "SKIP tp/difftest/$name: expects a metric proto (metrics are not provided)"
			ran=$((ran - 1))
			continue
		fi
		# A stdlib module we do not provide: counted, with its name.
		missing=$(sed -n "s/^unknown module '\([^']*\)'.*/\1/p" "$tmp/err" | head -1)
		if ! $ok && [ -n "$missing" ]; then
			echo "SKIP tp/difftest/$name: stdlib module $missing is not provided"
			ran=$((ran - 1))
			continue
		fi
		listed=false
		grep -qE "^$name([[:space:]]|\$)" "$known" 2>/dev/null && listed=true
		if $ok; then
			passed=$((passed + 1))
			if $listed; then
				echo "FAIL tp/difftest/$name (passes now: remove it from $known)"
			else
				echo "PASS tp/difftest/$name"
			fi
		elif $listed; then
			echo "SKIP tp/difftest/$name: known failure"
		else
			echo "FAIL tp/difftest/$name"
			diff "${want:-$dir/expected.csv}" "$tmp/out" 2>/dev/null | head -10 >&2
			head -3 "$tmp/err" >&2
		fi
	done
	echo "difftests $suite: $passed of $ran pass" >&2
done
