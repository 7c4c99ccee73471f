# tests/lib.sh: sourced by every tests/cli/*.sh (and tests/root/*.sh) script.
#
# A script runs with cwd = the repository root and these variables set by
# tests/run.sh: TRACEBOX (the binary under test), TB_OUT (out/, absolute),
# TB_TEST_ROOT (the repository root). It reports each case on one line:
#   PASS cli/<script>/<case>   FAIL cli/<script>/<case>   SKIP cli/<script>/<case>: why
# which tests/run.sh counts. A script's exit status does not matter; a
# script that dies before reporting anything is counted as one failure.
set -u

TB_SCRIPT=$(basename "$0" .sh)
TB_TIER=$(basename "$(dirname "$0")")
TB_SHARED=$TB_TEST_ROOT/../shared
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tb-$TB_SCRIPT.XXXXXX")
tb_cleanup_hooks=
# at_exit CMD: run CMD (a string) when the script ends, before TMP is removed.
at_exit() { tb_cleanup_hooks="$1; $tb_cleanup_hooks"; }
trap 'eval "$tb_cleanup_hooks"; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $TB_TIER/$TB_SCRIPT/$1"; }
fail() { echo "FAIL $TB_TIER/$TB_SCRIPT/$1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@" >&2; return 0; }
skip() { echo "SKIP $TB_TIER/$TB_SCRIPT/$1: $2"; }

# check NAME CMD [ARGS...]: pass if CMD exits 0, else fail (with its output).
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "command failed: $*" "$out"
	fi
}

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected: $2" "actual:   $3"
	fi
}

# expect_exit NAME CODE CMD [ARGS...]: pass if CMD exits with CODE.
# Its stdout and stderr are left in $TMP/out and $TMP/err.
expect_exit() {
	name=$1 code=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err" && rc=0 || rc=$?
	if [ "$rc" = "$code" ]; then
		pass "$name"
	else
		fail "$name" "expected exit $code, got $rc: $*" "$(cat "$TMP/err")"
	fi
}

# perf_event_skip NAME: print SKIP NAME (and return 0) unless we are root and
# perf_event_open works here; for `perf_event_skip x && exit 0`.
perf_event_skip() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "not root"
	elif ! perf_event_usable; then
		skip "$1" "perf_event_open is refused here (perf_event_paranoid, seccomp or no python3)"
	else
		return 1
	fi
}

# perf_event_usable: true when this kernel (or container) lets us open a
# sampling cpu-clock event on every process (needs python3).
perf_event_usable() {
	python3 - <<'PY' 2>/dev/null
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 298, "aarch64": 241, "armv7l": 364, "armv8l": 364, "riscv64": 241,
      "i686": 336}.get(os.uname().machine)
# perf_event_attr (size 112): type=1 (software), config=0 (cpu-clock),
# sample_freq=1000, flags: disabled | freq (bits 0 and 10).
attr = struct.pack("<IIQQQQQ", 1, 112, 0, 1000, 0, 0, (1 << 0) | (1 << 10)) + bytes(64)
fd = libc.syscall(nr, ctypes.c_char_p(attr), -1, 0, -1, 0) if nr else -1
raise SystemExit(0 if fd >= 0 else 1)
PY
}

# free_port: an unused loopback TCP port.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# live_tracefs CASE: for tests that drive the real kernel's ftrace. Sets
# TRACEFS (and returns 0) when we are root, tracefs has sched/sched_switch
# and flock exists; else reports CASE as skipped and returns 1. Such tests
# serialise on /tmp/tb-ftrace-live.lock.
live_tracefs() {
	TRACEFS=
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -f "$d/tracing_on" ] && TRACEFS=$d && break
	done
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "not root"
	elif [ -z "$TRACEFS" ] || [ ! -f "$TRACEFS/events/sched/sched_switch/enable" ]; then
		skip "$1" "tracefs with sched/sched_switch is not available"
	elif ! command -v flock >/dev/null 2>&1; then
		skip "$1" "flock missing"
	else
		return 0
	fi
	return 1
}

# tp_query TRACE SQL: the result rows of SQL on TRACE with our trace
# processor (CSV, header dropped).
tp_query() { "$TRACEBOX" trace_processor_shell query "$1" "$2" 2>/dev/null | tail -n +2; }
# tp_meta_int TRACE NAME: the int_value of metadata row NAME.
tp_meta_int() { tp_query "$1" "select int_value from metadata where name = '$2'"; }
# marked_pids VAR=VALUE: pids, other than this script's, of processes whose
# environment holds VAR=VALUE (children a test marked, to find leftovers).
marked_pids() {
	grep -l -a "$1" /proc/[0-9]*/environ 2>/dev/null |
		sed 's|/proc/\([0-9]*\)/environ|\1|' | grep -v "^$$\$" || true
}

# pb_py FILE: run the Python script on stdin with FILE as sys.argv[1] and,
# defined before it, fields(b): a protobuf wire walker yielding (field
# number, value), an int for varints and bytes otherwise. For tests that
# count what a trace file holds beyond what the trace processor imports.
pb_py() {
	{
		cat <<'PY'
import sys
def fields(b):
    i = 0
    while i < len(b):
        k = 0; s = 0
        while True:
            c = b[i]; i += 1; k |= (c & 0x7f) << s; s += 7
            if c < 0x80: break
        fid, wt = k >> 3, k & 7
        if wt == 0:
            v = 0; s = 0
            while True:
                c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
                if c < 0x80: break
            yield fid, v
        elif wt == 2:
            n = 0; s = 0
            while True:
                c = b[i]; i += 1; n |= (c & 0x7f) << s; s += 7
                if c < 0x80: break
            yield fid, b[i:i + n]; i += n
        elif wt == 1: yield fid, b[i:i + 8]; i += 8
        elif wt == 5: yield fid, b[i:i + 4]; i += 4
        else: raise ValueError("wire type %d" % wt)
PY
		cat
	} | python3 - "$1"
}
