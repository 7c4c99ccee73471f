#!/bin/sh
# traceconv profile: perf samples as gzip'd pprof, one file per process
# (profile.N.pid.PID.pb, Perfetto's names). protoc decodes each file with
# our copy of pprof's profile.proto (tests/data/traceconv/), and every sample's
# stack (function names leaf first, mapping file names) must equal the stack
# perf script printed, in order, as read from the text by a separate script
# (tests/data/traceconv/perf_script_stacks.py). Also: --pid, the default
# $TMPDIR/perf_profile-* directory, --output-dir, and the errors.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
ps=$TB_SHARED/corpus/perf_script
data=tests/data/traceconv

# decode FILE: the facts pprof_stacks.py prints for a gzip'd profile.
decode() {
	gzip -dc "$1" | protoc --proto_path="$data" --decode=perftools.profiles.Profile \
		profile.proto | python3 "$data/pprof_stacks.py"
}

# want_stacks TEXT [PID]: "sample 1 stack ; dsos" lines from the perf script text.
want_stacks() {
	python3 "$data/perf_script_stacks.py" "$1" |
		awk -v pid="${2:-}" 'pid == "" || $1 == pid { $1 = $2 = $3 = ""; sub(/^ +/, ""); print "sample 1 " $0 }'
}

expect_exit bad_pid 1 "$bin" traceconv profile --pid x "$TMP/none"
grep -q "invalid --pid 'x'" "$TMP/err" && pass bad_pid_msg || fail bad_pid_msg "$(cat "$TMP/err")"
printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]}' >"$TMP/t.json"
expect_exit no_profile 1 "$bin" traceconv profile "$TMP/t.json" "$TMP/o"
grep -q "no profile found in the trace" "$TMP/err" && [ ! -e "$TMP/o" ] &&
	pass no_profile_msg || fail no_profile_msg "$(cat "$TMP/err")"

# A failed write (here: no file may grow past 0 bytes) leaves no partial
# profile, neither under its name nor as a temporary beside it.
if check fail_convert "$bin" traceconv binary tests/data/traceconv/perf_unnamed.textproto "$TMP/f.pb"; then
	mkdir "$TMP/full"
	# stderr goes through a pipe: the file size limit would stop it too.
	( (trap '' XFSZ; ulimit -f 0; exec "$bin" traceconv profile "$TMP/f.pb" "$TMP/full") \
		2>&1 >/dev/null; echo "exit $?") | cat >"$TMP/err"
	expect_eq write_error_exit "exit 1" "$(tail -1 "$TMP/err")"
	grep -q "cannot write '$TMP/full/profile\.1\.pid\.10\.pb'" "$TMP/err" &&
		pass write_error_msg || fail write_error_msg "$(cat "$TMP/err")"
	expect_eq write_error_no_files "" "$(ls -A "$TMP/full")"
fi

if ! command -v protoc >/dev/null 2>&1; then
	skip profile "protoc not installed"
	exit 0
fi

# A Perfetto trace (tests/data/traceconv/perf_unnamed.textproto): a frame
# without a name keeps its address; its mapping does not claim functions.
if check unnamed_convert "$bin" traceconv binary "$data/perf_unnamed.textproto" "$TMP/u.pb" &&
	check unnamed_profile "$bin" traceconv profile "$TMP/u.pb" "$TMP/u"; then
	expect_eq unnamed_files "profile.1.pid.10.pb profile.2.pid.20.pb" "$(ls "$TMP/u" | tr '\n' ' ' | sed 's/ $//')"
	expect_eq unnamed_pid10 'string0 ""
sample_type samples/count
mapping /libbar.so has_functions 1
mapping /libfoo.so has_functions 0
sample 1 ;main ; /libfoo.so;/libbar.so
sample 1 bar_work;main ; /libbar.so;/libbar.so' "$(decode "$TMP/u/profile.1.pid.10.pb")"
	expect_eq unnamed_pid20 'string0 ""
sample_type samples/count
mapping /libbar.so has_functions 1
sample 1 bar_work;main ; /libbar.so;/libbar.so' "$(decode "$TMP/u/profile.2.pid.20.pb")"
	gzip -dc "$TMP/u/profile.1.pid.10.pb" | protoc --proto_path="$data" \
		--decode=perftools.profiles.Profile profile.proto >"$TMP/u.txt"
	grep -q "address: $((0x7f0000001234))\$" "$TMP/u.txt" && pass unnamed_address ||
		fail unnamed_address "$(grep address "$TMP/u.txt")"
fi
f=$ps/jlfwong+speedscope__simple-with-pid.linux-perf.txt
if [ ! -f "$f" ]; then
	skip profile "../shared/corpus/perf_script not found"
	exit 0
fi

expect_exit alloc 1 "$bin" traceconv profile --alloc "$f" "$TMP/o"
grep -q "no allocator profile in the trace" "$TMP/err" && pass alloc_msg ||
	fail alloc_msg "$(cat "$TMP/err")"
expect_exit two_dirs 1 "$bin" traceconv profile --output-dir "$TMP/a" "$f" "$TMP/b"

# One process (pid 9): every sample, in order, with its exact stack.
check simple_convert "$bin" traceconv profile "$f" "$TMP/p1"
expect_eq simple_files "profile.1.pid.9.pb" "$(ls "$TMP/p1")"
expect_eq simple_gzip "1f8b" "$(od -An -tx1 -N2 "$TMP/p1/profile.1.pid.9.pb" | tr -d ' ')"
decode "$TMP/p1/profile.1.pid.9.pb" >"$TMP/got" 2>"$TMP/err" || fail simple_decode "$(cat "$TMP/err")"
expect_eq simple_header 'string0 ""
sample_type samples/count
period_type cpu-clock/nanoseconds
mapping /workdir/simple-terminates has_functions 1
mapping /lib/x86_64-linux-gnu/libc-2.27.so has_functions 1
mapping [unknown] has_functions 1
mapping [kernel.kallsyms] has_functions 1' "$(grep -v '^sample ' "$TMP/got")"
want_stacks "$f" >"$TMP/want"
expect_eq simple_sample_count 137 "$(grep -c '^sample ' "$TMP/got")"
grep '^sample ' "$TMP/got" >"$TMP/got.s"
if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got.s"; then
	pass simple_stacks
else
	fail simple_stacks "$(diff "$TMP/want" "$TMP/got.s" | head -6)"
fi

# Go's pprof, when installed, reads the file too (without looking for the
# binaries) and counts every sample.
if command -v go >/dev/null 2>&1; then
	HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -symbolize=none -top \
		"$TMP/p1/profile.1.pid.9.pb" >"$TMP/top" 2>&1
	grep -q 'of 137 total' "$TMP/top" && grep -q ' main$' "$TMP/top" && pass go_pprof ||
		fail go_pprof "$(head -5 "$TMP/top")"
else
	skip go_pprof "go (golang-go) not installed"
fi

# Four processes: one file each, numbered in process order; --pid keeps one.
f=$ps/generated__coreutils-sort-gzip.F-fields.perf.txt
if [ -f "$f" ]; then
	check multi_convert "$bin" traceconv profile --output-dir "$TMP/p4" "$f"
	expect_eq multi_files "profile.1.pid.6587.pb profile.2.pid.6588.pb profile.3.pid.6589.pb profile.4.pid.6585.pb" \
		"$(cd "$TMP/p4" && ls | sort -t. -k2,2n | tr '\n' ' ' | sed 's/ $//')"
	for pid in 6585 6587 6588 6589; do
		file=$(ls "$TMP/p4"/profile.*.pid.$pid.pb)
		decode "$file" | grep '^sample ' >"$TMP/got.s"
		want_stacks "$f" $pid >"$TMP/want"
		if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got.s"; then
			pass "multi_stacks_$pid"
		else
			fail "multi_stacks_$pid" "$(diff "$TMP/want" "$TMP/got.s" | head -6)"
		fi
	done
	check pid_convert "$bin" traceconv profile --pid 6589 "$f" "$TMP/p5"
	expect_eq pid_files "profile.1.pid.6589.pb" "$(ls "$TMP/p5")"
	expect_eq pid_samples 259 "$(decode "$TMP/p5/profile.1.pid.6589.pb" | grep -c '^sample ')"

	# No directory given: a new $TMPDIR/perf_profile-<time><random>.
	mkdir "$TMP/tmpdir"
	TMPDIR=$TMP/tmpdir "$bin" traceconv profile --perf --pid 6585 "$f" 2>"$TMP/err"
	d=$(ls -d "$TMP"/tmpdir/perf_profile-* 2>/dev/null)
	[ -n "$d" ] && [ -f "$d/profile.1.pid.6585.pb" ] && grep -q "Wrote profiles to $d" "$TMP/err" &&
		pass default_dir || fail default_dir "$(cat "$TMP/err")" "$d"
fi
