# tests/ui/run.sh: the Perfetto UI's query sequences (../shared/reference/
# ui_queries/, five traces), each replayed in one WebSocket session against
# `trace_processor_shell server http` by replay.py, and compared with
# Perfetto v58.2's answers. Per sequence: every query Perfetto answers
# answers here, with its columns and rows, except those listed with a
# reason in known_differences.txt (a listed query that starts to match
# fails, so the list only shrinks); the queries of exact_rows.txt must
# match; each failed query is logged by the server. PASS/FAIL lines.
# Then chrome-json on its trace gzip'd (every check but the trace_uuid,
# a hash of the file's first bytes), and three of the sequences against one archive that `traceconv merge`
# made of their three traces: every query answered, with Perfetto's columns.
set -u
dir=../shared/reference/ui_queries
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP ui: python3 is not installed"
	exit 0
fi
if [ ! -d "$dir" ]; then
	echo "SKIP ui: no $dir"
	exit 0
fi
for seq in sched tracebox-perf-profile chrome-json pytorch trace-cmd-report; do
	timeout 300 python3 tests/ui/replay.py "$TRACEBOX" "$dir/$seq.json" \
		tests/ui/known_differences.txt tests/ui/exact_rows.txt ||
		echo "FAIL ui/$seq (replay exited $?)"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The chrome-json sequence again on its trace gzip'd, as users keep Chrome
# traces: the server inflates it on a helper thread; same answers.
if gzip -c "$dir/../../corpus/chrome_json/GoogleChrome+lighthouse__lh-lcp-m78.json" >"$tmp/lcp.json.gz"; then
	timeout 300 python3 tests/ui/replay.py "$TRACEBOX" "$dir/chrome-json.json" \
		tests/ui/known_differences.txt tests/ui/exact_rows.txt \
		--trace="$tmp/lcp.json.gz" --name=gzip-chrome-json --same ||
		echo "FAIL ui/gzip-chrome-json (replay exited $?)"
else
	echo "FAIL ui/gzip-chrome-json: gzip failed"
fi
if "$TRACEBOX" traceconv merge -o "$tmp/merged.tar" "$dir/../golden/traces/sched.pftrace" \
	"$dir/../../corpus/ftrace/ARM-software+trappy__raw_trace.dat.trace-cmd-report-R.txt" \
	"$dir/../../corpus/chrome_json/GoogleChrome+lighthouse__lh-lcp-m78.json" 2>"$tmp/err"; then
	for seq in sched trace-cmd-report chrome-json; do
		timeout 300 python3 tests/ui/replay.py "$TRACEBOX" "$dir/$seq.json" \
			tests/ui/known_differences.txt tests/ui/exact_rows.txt \
			--trace="$tmp/merged.tar" --name="merged-$seq" ||
			echo "FAIL ui/merged-$seq (replay exited $?)"
	done
else
	echo "FAIL ui/merged: traceconv merge failed: $(cat "$tmp/err")"
fi
