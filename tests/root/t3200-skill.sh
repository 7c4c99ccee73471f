# The agent skill that ships in the binary (`tracebox skill`). Its format
# (Agent Skills: YAML front matter with name and description) and
# `--install DIR`; then every command and every query in it, taken from the
# text itself, runs here so the skill cannot drift from the binary:
#   ```sh blocks   run in order in one folder, `tracebox` on PATH, against
#                  ./my_program (built here: marks two phases in
#                  trace_marker, computes, writes with fsync, sleeps and, with
#                  systemd-journal-remote, appends a journal entry): each
#                  exits 0 and every capture's status line says the trace is
#                  complete, nothing lost
#   ```sql blocks  each runs on one capture made here with everything the
#                  skill records (scheduler, blocking, markers, perf samples,
#                  journal, process tree): none fails, and the ones about the
#                  scheduler, slices and samples find rows
# Needs root, tracefs and perf_event for the commands (SKIP otherwise).
. tests/lib.sh

# ---- the skill's text ---------------------------------------------------------

"$TRACEBOX" skill >"$TMP/skill.md"
rc=$?
expect_eq prints 0 "$rc"
expect_eq front-matter ok "$(python3 - "$TMP/skill.md" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
m = re.match(r"---\nname: ([^\n]*)\ndescription: ([^\n]*)\n---\n", s)
if not m:
    print("no front matter")
elif not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", m.group(1)) or len(m.group(1)) > 64:
    print("bad name " + m.group(1))
elif not 0 < len(m.group(2)) <= 1024:
    print("description of %d characters" % len(m.group(2)))
else:
    print("ok")
PY
)"
expect_exit install 0 "$TRACEBOX" skill --install "$TMP/skills"
expect_eq install-path "$TMP/skills/tracebox/SKILL.md" "$(cat "$TMP/out")"
cmp -s "$TMP/skill.md" "$TMP/skills/tracebox/SKILL.md" && pass install-same-text ||
	fail install-same-text
expect_exit install-again 0 "$TRACEBOX" skill --install "$TMP/skills"
: >"$TMP/file"
expect_exit install-under-a-file 1 "$TRACEBOX" skill --install "$TMP/file"
expect_eq install-error-one-line 1 "$(wc -l <"$TMP/err")"
expect_exit bad-argument 2 "$TRACEBOX" skill --no-such-flag

# ---- its commands and queries ----------------------------------------------------

live_tracefs commands || exit 0
perf_event_skip commands && exit 0

W=$TMP/w
mkdir -p "$W" "$TMP/bin" "$TMP/blocks"
ln -s "$(cd "$(dirname "$TRACEBOX")" && pwd)/$(basename "$TRACEBOX")" "$TMP/bin/tracebox"
python3 - "$TMP/skill.md" "$TMP/blocks" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
n = 0
for kind, body in re.findall(r"^```(\w*)\n(.*?)^```", s, re.S | re.M):
    if kind in ("sh", "sql"):
        n += 1
        open("%s/%02d.%s" % (sys.argv[2], n, kind), "w").write(body)
PY
nsh=$(ls "$TMP/blocks" | grep -c '\.sh$')
nsql=$(ls "$TMP/blocks" | grep -c '\.sql$')
[ "$nsh" -ge 7 ] && [ "$nsql" -ge 10 ] && pass blocks-found || fail blocks-found "$nsh sh, $nsql sql"

# Journal entries for the log capture, when systemd's writer is here:
# my_program runs ./journal-entry.sh, which appends one.
JR=/lib/systemd/systemd-journal-remote
mkdir -p "$TMP/journal"
echo true >"$W/journal-entry.sh"
if [ -x "$JR" ]; then
	python3 tests/cli/journald.py gen 2 1 now before | "$JR" --output="$TMP/journal/system.journal" - >/dev/null 2>&1
	cat >"$W/journal-entry.sh" <<EOF
python3 '$TB_TEST_ROOT/tests/cli/journald.py' gen 3 1 now skill |
	'$JR' --output='$TMP/journal/system.journal' - >/dev/null 2>&1
EOF
fi
# my_program: a native program (a profile's target_cmdline matches its
# argv[0]) with frame pointers, so its samples have stacks.
cat >"$TMP/my_program.c" <<EOF
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void mark(const char *s)
{
	int fd = open("$TRACEFS/trace_marker", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0) {}
		close(fd);
	}
}
__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i * i;
	return x;
}
__attribute__((noinline)) static unsigned long compute(void)
{
	return spin(300000000ul);
}
int main(void)
{
	char buf[64], block[65536] = {0};
	snprintf(buf, sizeof buf, "B|%d|compute", (int)getpid());
	mark(buf);
	printf("%lu\n", compute() & 1);
	snprintf(buf, sizeof buf, "E|%d", (int)getpid());
	mark(buf);
	snprintf(buf, sizeof buf, "B|%d|write", (int)getpid());
	mark(buf);
	int fd = open("io.bin", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; fd >= 0 && i < 64; i++)
		if (write(fd, block, sizeof block) < 0 || fsync(fd) != 0)
			break;
	if (fd >= 0)
		close(fd);
	snprintf(buf, sizeof buf, "E|%d", (int)getpid());
	mark(buf);
	usleep(200000);
	return system("sh ./journal-entry.sh") != 0;
}
EOF
cc -O1 -fno-omit-frame-pointer -o "$W/my_program" "$TMP/my_program.c" || fail build-my-program
chmod +x "$W/my_program"

exec 9>/tmp/tb-ftrace-live.lock
flock 9
bad=
for b in "$TMP"/blocks/*.sh; do
	n=$(basename "$b" .sh)
	(cd "$W" && PATH="$TMP/bin:$PATH" TRACEBOX_JOURNAL_DIRS="$TMP/journal" timeout 300 sh -e "$b") \
		>"$TMP/sh.out" 2>"$TMP/sh.err"
	rc=$?
	if [ "$rc" != 0 ]; then
		bad="$bad $n:exit-$rc"
		sed 's/^/    /' "$TMP/sh.err" | tail -5 >&2
	elif grep 'trace_status=' "$TMP/sh.err" |
		grep -qvE 'workload_status=0 trace_status=0 .*packets_lost=0( |$)'; then
		bad="$bad $n:$(grep 'trace_status=' "$TMP/sh.err")"
	fi
	cp "$TMP/sh.out" "$TMP/blocks/$n.out"
done
expect_eq commands-run "" "$bad"
[ -s "$W/prof.html" ] && pass report-written || fail report-written
[ -s "$W/prof.folded" ] && pass folded-written || fail folded-written

# One capture with everything the skill records, for its queries.
cat >"$TMP/all.pbtx" <<'CFG'
duration_ms: 120000
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: "linux.ftrace" ftrace_config {
	ftrace_events: "sched/sched_switch" ftrace_events: "sched/sched_waking"
	ftrace_events: "sched/sched_blocked_reason" ftrace_events: "ftrace/print"
	symbolize_ksyms: true } } }
data_sources { config { name: "linux.process_stats" process_stats_config {
	scan_all_processes_on_start: true } } }
data_sources { config { name: "linux.systemd_journald" } }
data_sources { config { name: "linux.perf" perf_event_config {
	timebase { counter: SW_CPU_CLOCK frequency: 1000 timestamp_clock: PERF_CLOCK_MONOTONIC }
	callstack_sampling { scope { target_cmdline: "my_program" } kernel_frames: false
		user_frames: UNWIND_FRAME_POINTER } } } }
CFG
(cd "$W" && TRACEBOX_JOURNAL_DIRS="$TMP/journal" "$TRACEBOX" -c "$TMP/all.pbtx" --txt \
	-o "$TMP/all.pftrace" -- ./my_program) >/dev/null 2>"$TMP/all.err"
rc=$?
[ "$rc" = 0 ] || tail -5 "$TMP/all.err" >&2
expect_eq capture-for-queries 0 "$rc"
flock -u 9

bad= empty=
for q in "$TMP"/blocks/*.sql; do
	n=$(basename "$q" .sql)
	"$TRACEBOX" trace_processor_shell query -f "$q" "$TMP/all.pftrace" >"$TMP/q.out" 2>"$TMP/q.err"
	rc=$?
	if [ "$rc" != 0 ] || grep -qi 'error' "$TMP/q.err"; then
		bad="$bad $n"
		head -3 "$TMP/q.err" >&2
	elif [ "$(wc -l <"$TMP/q.out")" -lt 2 ]; then
		# Only the health query may answer nothing (a healthy trace), and
		# the logs query when no journal entry could be written here.
		case $(cat "$q") in
		*"FROM stats"*) ;;
		*linux_systemd_journald_logs*) [ -x "$JR" ] && empty="$empty $n" ;;
		*) empty="$empty $n" ;;
		esac
	fi
done
expect_eq queries-run "" "$bad"
expect_eq queries-find-rows "" "$empty"
