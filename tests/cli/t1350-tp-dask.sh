# Many traces on an existing distributed engine (issue 19): the Dask
# snippet of README.md's "Many traces" section, taken from between its
# markers and run as written on a LocalCluster of two worker processes
# (Debian's python3-distributed), maps `trace_processor_shell query -f
# q.sql TRACE` over a folder of golden and corpus traces and sums the
# counts per slice name. Its answer must equal the same sums over
# `query --batch`'s one table and over a plain shell loop of single-trace
# queries.
. tests/lib.sh

PY=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import dask.distributed' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	skip all "no python3 with dask.distributed (Debian's python3-distributed)"
	exit 0
fi
G=$TB_SHARED/reference/golden/traces
C=$TB_SHARED/corpus/chrome_json
if [ ! -d "$G" ] || [ ! -d "$C" ]; then
	skip all "no golden traces or corpus in $TB_SHARED"
	exit 0
fi

mkdir -p "$TMP/traces"
for f in "$G/sched.pftrace" "$G/ftrace_generic.pftrace" \
	"$C/catapult-project+catapult__simple_trace.json" \
	"$C/catapult-project+catapult__async_begin_end.json" \
	"$C/catapult-project+catapult__flow.json" \
	"$C/catapult-project+catapult__instant_events.json" \
	"$C/jlfwong+speedscope__speedscope-te__simple.json" \
	"$C/jlfwong+speedscope__speedscope-te__matching-x.json" \
	"$C/GoogleChrome+lighthouse__lh-user-timing-trace.json"; do
	ln -s "$f" "$TMP/traces/$(basename "$f")"
done
echo 'select name, count(*) as n from slice group by name' >"$TMP/q.sql"

# The snippet, exactly as the README shows it.
sed -n '/^<!-- t1350-dask begin -->$/,/^<!-- t1350-dask end -->$/p' README.md |
	sed -e '1d' -e '$d' | sed -e '1{/^```python$/d}' -e '${/^```$/d}' >"$TMP/snippet.py"
if grep -q '^import' "$TMP/snippet.py" && grep -q 'LocalCluster(n_workers=2' "$TMP/snippet.py"; then
	pass readme-snippet
else
	fail readme-snippet "no Dask snippet between the t1350-dask markers of README.md"
fi

# sum_by_name: "name,n" CSV rows (a header or a trace column first
# dropped by the caller) summed per name, sorted as the snippet prints.
sum_by_name() {
	"$PY" -c '
import csv, sys
from collections import Counter
t = Counter()
for row in csv.reader(sys.stdin):
    t[row[-2]] += int(row[-1])
for k, v in sorted(t.items()):
    print(f"{k},{v}")'
}

ABS=$(cd "$(dirname "$TRACEBOX")" && pwd)/$(basename "$TRACEBOX")
if (cd "$TMP" && TRACEBOX=$ABS timeout 300 "$PY" snippet.py traces q.sql >dask.out 2>dask.err); then
	pass dask-runs
else
	fail dask-runs "the snippet failed" "$(tail -20 "$TMP/dask.err")"
fi

for t in "$TMP"/traces/*; do
	"$TRACEBOX" trace_processor_shell query -f "$TMP/q.sql" "$t" 2>/dev/null | tail -n +2
done | sum_by_name >"$TMP/loop.out"
"$TRACEBOX" trace_processor_shell query --batch -j 2 -f "$TMP/q.sql" "$TMP"/traces/* \
	2>/dev/null | tail -n +2 | sum_by_name >"$TMP/batch.out"

n=$(wc -l <"$TMP/loop.out")
if [ "$n" -ge 20 ] && grep -qx 'B,1' "$TMP/loop.out"; then
	pass loop-answer
else
	fail loop-answer "expected >= 20 names with B,1 from the shell loop, got $n" "$(head "$TMP/loop.out")"
fi
if cmp -s "$TMP/loop.out" "$TMP/dask.out"; then
	pass dask-equals-loop
else
	fail dask-equals-loop "$(diff "$TMP/loop.out" "$TMP/dask.out" | head -20)"
fi
if cmp -s "$TMP/loop.out" "$TMP/batch.out"; then
	pass batch-equals-loop
else
	fail batch-equals-loop "$(diff "$TMP/loop.out" "$TMP/batch.out" | head -20)"
fi
