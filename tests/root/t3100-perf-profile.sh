#!/bin/sh
# t3100-perf-profile: a CPU profile as a user takes it, end to end.
# tests/data/perf_workload.c (two functions splitting ~2 s of CPU about
# 70/30) is built with frame pointers and recorded with the repository's
# unmodified configs/perf-1000hz.pbtx around the workload
# (`tracebox -c ... --txt -o p.pftrace --report p.html -- ./workload`),
# as root and as `nobody` at kernel.perf_event_paranoid=2, while an
# unrelated busy loop runs. Then, with no further step:
#   - the status line carries every field, healthy, complete;
#   - `traceconv folded` names both functions (symbolized at the end of the
#     capture) under the workload's thread name, with shares within 5 points
#     of `perf record -F 1000 -g` on the same workload; nothing of the busy
#     loop; no sample lost;
#   - the trace's own ModuleSymbols name the frames for the trace processor;
#   - the pprof (`traceconv profile`) decodes (`protoc --decode_raw`) to the
#     same names; the HTML report renders in headless Chromium with both
#     names in the ranked table and the flame graph, no script error;
#     `report --json` + `inspect` (and its line mode) rank them;
# and: a forked child's samples are there; `node --perf-basic-prof` gives a
# JavaScript function name; with --control, samples exist only between
# `enable` and `disable` (and none without enable); a binary without build
# id, an unreadable binary and a debuginfod server that has the file, has
# not (404) or stalls are counted and reported, and the capture succeeds.
# SKIP when not root, perf_event_open is refused, or gcc is missing; parts
# SKIP without perf, setpriv, protoc, chromium or node.
. tests/lib.sh

busy=
srv=
old_paranoid=
at_exit '[ -n "$busy" ] && kill $busy 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null; [ -n "$old_paranoid" ] && echo "$old_paranoid" >/proc/sys/kernel/perf_event_paranoid'

perf_event_skip profile && exit 0
if ! command -v gcc >/dev/null; then
	skip profile "gcc is needed to build the workload"
	exit 0
fi
root=$(pwd)
case $TRACEBOX in /*) tb=$TRACEBOX ;; *) tb=$root/$TRACEBOX ;; esac
# A folder everyone may enter, with a copy of tracebox and the workloads.
chmod 755 "$TMP"
mkdir -m 755 "$TMP/bin"
cp "$tb" "$TMP/bin/tracebox"
tb=$TMP/bin/tracebox
cfg=$root/configs/perf-1000hz.pbtx
cc() { gcc -O1 -fno-omit-frame-pointer -g "$@" tests/data/perf_workload.c; }
cc -o "$TMP/bin/workload" || { fail build-workload; exit 0; }

# rec DIR NAME [ENV=V ...] -- ARGS: record as root in DIR (made), status
# line of $DIR/NAME.err on stdout. ARGS are tracebox's after -c CONFIG.
rec() {
	d=$1 n=$2
	shift 2
	mkdir -p "$d"
	(cd "$d" && env "$@") >"$d/$n.out" 2>"$d/$n.err"
	grep '^workload_status=' "$d/$n.err" | tail -1
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# leaf_count FOLDED FN: samples whose leaf is FN
leaf_count() { awk -v fn="$2" '{ n = split($1, f, ";"); if (f[n] == fn) s += $2 } END { print s + 0 }' "$1"; }
# pct N M: N/(N+M) in tenths of a percent
pct() { [ $(($1 + $2)) -gt 0 ] && echo $(($1 * 1000 / ($1 + $2))) || echo 0; }
tpq() { "$tb" trace_processor_shell query "$1" "$2" 2>/dev/null | sed 1d | tr -d '"'; }

# ---- 1. root, next to a busy loop ------------------------------------------------
sh -c 'while :; do :; done' &
busy=$!
line=$(rec "$TMP/r" p "$tb" -c "$cfg" --txt -o p.pftrace --report p.html -- "$TMP/bin/workload" ours.txt)
kill $busy 2>/dev/null
wait $busy 2>/dev/null
busy=
expect_eq root-record "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
keys=$(echo "$line" | tr ' ' '\n' | sed 's/=.*//' | tr '\n' ' ')
expect_eq status-fields "workload_status trace_status health_status report_status sample_hz trace report bytes packets_lost samples samples_skipped samples_without_callsite lost_records capture_complete " "$keys"
expect_eq status-values "0 0 1000 p.html 0 0 0 0 1" \
	"$(for k in health_status report_status sample_hz report packets_lost samples_skipped samples_without_callsite lost_records capture_complete; do field "$line" $k; done | tr '\n' ' ' | sed 's/ $//')"
expect_eq status-bytes "$(stat -c %s "$TMP/r/p.pftrace" 2>/dev/null)" "$(field "$line" bytes)"
read -r wpid wcpu <"$TMP/r/ours.txt" || { fail workload-ran "$(cat "$TMP/r/p.err")"; exit 0; }
samples=$(field "$line" samples)
want=$((wcpu / 1000000 * 90 / 100))
[ "${samples:-0}" -ge "$want" ] && pass no-samples-lost ||
	fail no-samples-lost "$samples samples for $wcpu ns of CPU (want >= $want)"

"$tb" traceconv folded "$TMP/r/p.pftrace" >"$TMP/r/p.folded" 2>"$TMP/r/folded.err"
s70=$(leaf_count "$TMP/r/p.folded" hot_seventy)
s30=$(leaf_count "$TMP/r/p.folded" hot_thirty)
[ "$s70" -gt 0 ] && [ "$s30" -gt 0 ] && pass folded-names ||
	fail folded-names "$(head -5 "$TMP/r/p.folded")" "$(cat "$TMP/r/folded.err")"
expect_eq folded-thread-name "workload" "$(cut -d';' -f1 "$TMP/r/p.folded" | sort -u | tr '\n' ' ' | sed 's/ $//')"
ours=$(pct "$s70" "$s30")
echo "# root: hot_seventy $s70, hot_thirty $s30 samples: $((ours / 10)).$((ours % 10)) %"
expect_eq names-in-trace "workload|workload" \
	"$(tpq "$TMP/r/p.pftrace" "select t.name || '|' || replace(p.name, rtrim(p.name, replace(p.name, '/', '')), '') from thread t join process p using (upid) where t.tid = $wpid")"
expect_eq only-target-samples 0 \
	"$(tpq "$TMP/r/p.pftrace" "select count(*) from perf_sample s join thread t using (utid) where t.tid != $wpid")"
expect_eq module-symbols "hot_seventy hot_thirty" \
	"$(tpq "$TMP/r/p.pftrace" "select distinct name from stack_profile_symbol where name like 'hot_%' order by 1" | tr '\n' ' ' | sed 's/ $//')"

# pprof, decoded without a schema
if command -v protoc >/dev/null; then
	"$tb" traceconv profile "$TMP/r/p.pftrace" "$TMP/r/pprof" >/dev/null 2>&1
	f=$(ls "$TMP/r/pprof"/profile.*.pb 2>/dev/null | head -1)
	names=$(gzip -dc "$f" 2>/dev/null | protoc --decode_raw 2>/dev/null | grep -o '"hot_[a-z]*"' | sort -u | tr '\n' ' ')
	expect_eq pprof-names '"hot_seventy" "hot_thirty" ' "$names"
else
	skip pprof-names "protoc not installed"
fi

# the report, rendered
[ -s "$TMP/r/p.html" ] && pass report-written || fail report-written
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ] && [ -s "$TMP/r/p.html" ]; then
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync --disable-quic \
		--user-data-dir="$TMP/chrome" --virtual-time-budget=5000 \
		--dump-dom "file://$TMP/r/p.html" >"$TMP/r/dom" 2>"$TMP/r/chrome.log"
	expect_eq report-ready 'data-state="ready"' "$(grep -o 'data-state="[a-z]*"' "$TMP/r/dom" | head -1)"
	grep -q 'data-error=' "$TMP/r/dom" && fail report-no-script-error "$(grep -o 'data-error="[^"]*"' "$TMP/r/dom")" ||
		pass report-no-script-error
	for fn in hot_seventy hot_thirty; do
		grep -q "<tr data-name=\"$fn\"" "$TMP/r/dom" && pass "report-table-$fn" || fail "report-table-$fn"
		grep -q "<rect class=\"frame[^\"]*\"[^>]*data-name=\"$fn\"" "$TMP/r/dom" &&
			pass "report-flame-$fn" || fail "report-flame-$fn"
	done
	grep -q 'data-healthy="1"' "$TMP/r/dom" && pass report-healthy || fail report-healthy
else
	skip report-chromium "chromium not installed"
fi
"$tb" traceconv report --json "$TMP/r/p.pftrace" "$TMP/r/p.json"
"$tb" traceconv inspect "$TMP/r/p.json" --limit 5 >"$TMP/r/inspect" 2>&1
grep -q ' hot_seventy  (workload)$' "$TMP/r/inspect" && grep -q ' hot_thirty  (workload)$' "$TMP/r/inspect" &&
	pass inspect-ranks || fail inspect-ranks "$(cat "$TMP/r/inspect")"
id=$(awk '$NF == "(workload)" && $(NF-1) == "hot_seventy" { print $1 }' "$TMP/r/inspect")
printf 'summary\nfunction %s 2\nquit\n' "${id:-0}" |
	"$tb" traceconv inspect "$TMP/r/p.json" --interactive >"$TMP/r/inter" 2>&1
expect_eq inspect-interactive-answers 2 "$(grep -c '^--- end ---$' "$TMP/r/inter")"
grep -q "^function ${id:-x}: hot_seventy" "$TMP/r/inter" && pass inspect-function ||
	fail inspect-function "$(cat "$TMP/r/inter")"

# ---- 2. nobody, at perf_event_paranoid 2 -------------------------------------------
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
if [ "$paranoid" != 2 ] && echo 2 2>/dev/null >/proc/sys/kernel/perf_event_paranoid; then
	old_paranoid=$paranoid
fi
asnobody=
if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip nobody "setpriv or the user nobody is missing"
elif [ "$(cat /proc/sys/kernel/perf_event_paranoid)" != 2 ]; then
	skip nobody "kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid) and cannot be set to 2"
else
	asnobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	mkdir -m 777 "$TMP/n"
	line=$(rec "$TMP/n" p $asnobody env HOME="$TMP/n" "$tb" -c "$cfg" --txt -o p.pftrace -- "$TMP/bin/workload" ours.txt)
	expect_eq nobody-record "0 0 0" \
		"$(field "$line" workload_status) $(field "$line" trace_status) $(field "$line" health_status)"
	"$tb" traceconv folded "$TMP/n/p.pftrace" >"$TMP/n/p.folded" 2>/dev/null
	n70=$(leaf_count "$TMP/n/p.folded" hot_seventy)
	n30=$(leaf_count "$TMP/n/p.folded" hot_thirty)
	[ "$n70" -gt 0 ] && [ "$n30" -gt 0 ] && pass nobody-folded-names ||
		fail nobody-folded-names "$(head -5 "$TMP/n/p.folded")" "$(tail -5 "$TMP/n/p.err")"
	nobody_pct=$(pct "$n70" "$n30")
	echo "# nobody: hot_seventy $n70, hot_thirty $n30 samples: $((nobody_pct / 10)).$((nobody_pct % 10)) %"
fi

# ---- 3. perf record on the same workload ----------------------------------------------
if ! command -v perf >/dev/null; then
	skip perf-split "perf is not installed"
elif ! (cd "$TMP/r" && perf record -F 1000 -g -o perf.data -- "$TMP/bin/workload" perf.txt) \
	>"$TMP/perf.out" 2>&1 || ! perf script -i "$TMP/r/perf.data" >"$TMP/r/perf.txt" 2>/dev/null; then
	skip perf-split "perf record cannot run here: $(tail -1 "$TMP/perf.out")"
else
	"$tb" traceconv folded "$TMP/r/perf.txt" >"$TMP/r/perf.folded" 2>/dev/null
	theirs=$(pct "$(leaf_count "$TMP/r/perf.folded" hot_seventy)" "$(leaf_count "$TMP/r/perf.folded" hot_thirty)")
	echo "# perf: $((theirs / 10)).$((theirs % 10)) % hot_seventy"
	d=$((ours - theirs))
	[ "${d#-}" -le 50 ] && pass split-like-perf ||
		fail split-like-perf "ours $ours vs perf $theirs (tenths of a percent)"
	if [ -n "$asnobody" ]; then
		d=$((nobody_pct - theirs))
		[ "${d#-}" -le 50 ] && pass nobody-split-like-perf ||
			fail nobody-split-like-perf "nobody $nobody_pct vs perf $theirs (tenths of a percent)"
	fi
fi

# ---- 4. a forked child ---------------------------------------------------------------
line=$(rec "$TMP/f" p "$tb" -c "$cfg" --txt -o p.pftrace -- "$TMP/bin/workload" ours.txt fork 1000)
read -r fpid fcpu cpid <"$TMP/f/ours.txt"
# the child's most sampled leaf, and its name (a fork keeps the parent's)
expect_eq fork-child-samples "hot_thirty|workload" \
	"$(tpq "$TMP/f/p.pftrace" "select coalesce(f.name, y.name) || '|' || t.name from perf_sample s join thread t using (utid) join stack_profile_callsite c on c.id = s.callsite_id join stack_profile_frame f on f.id = c.frame_id left join stack_profile_symbol y on y.symbol_set_id = f.symbol_set_id where t.tid = ${cpid:-0} group by 1 order by count(*) desc limit 1")"
n=$(tpq "$TMP/f/p.pftrace" "select count(*) from perf_sample s join thread t using (utid) where t.tid = ${cpid:-0}")
[ "${n:-0}" -ge 300 ] && pass fork-child-sampled || fail fork-child-sampled "${n:-0} samples of the child"

# ---- 5. a JIT: node --perf-basic-prof ---------------------------------------------------
if command -v node >/dev/null; then
	cat >"$TMP/hot.js" <<'JS'
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) | 0; } return s; }
let t = Date.now(), x = 0;
while (Date.now() - t < 1500) x += hotLoop(100000);
console.log(x);
JS
	line=$(rec "$TMP/j" p "$tb" -c "$cfg" --txt -o p.pftrace -- node --perf-basic-prof "$TMP/hot.js")
	"$tb" traceconv folded "$TMP/j/p.pftrace" >"$TMP/j/p.folded" 2>/dev/null
	n=$(grep 'hotLoop' "$TMP/j/p.folded" | awk '{ s += $NF } END { print s + 0 }')
	[ "$n" -gt 100 ] && pass node-js-function || fail node-js-function "$n samples in hotLoop" "$(sort -t' ' -k2 -n "$TMP/j/p.folded" | tail -3)"
	for p in $(tpq "$TMP/j/p.pftrace" "select pid from process where name like '%node%'"); do
		rm -f "/tmp/perf-$p.map"
	done
else
	skip node-js-function "node not installed"
fi

# ---- 6. --control: a start gate the workload holds ----------------------------------------
line=$(rec "$TMP/c" p "$tb" -c "$cfg" --txt -o p.pftrace --control "fifo:$TMP/c/ctl,$TMP/c/ack" -- "$TMP/bin/workload" ours.txt control 1600)
expect_eq control-record "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
expect_eq control-answers "ack err ack ack" "$(sed -n 2p "$TMP/c/ours.txt")"
"$tb" traceconv folded "$TMP/c/p.pftrace" >"$TMP/c/p.folded" 2>/dev/null
c30=$(leaf_count "$TMP/c/p.folded" hot_thirty)
c70=$(leaf_count "$TMP/c/p.folded" hot_seventy)
[ "$c30" -ge 500 ] && [ "$c70" -le 3 ] && pass control-only-between ||
	fail control-only-between "hot_thirty $c30 (want >= 500), hot_seventy $c70 (want <= 3)"
[ ! -e "$TMP/c/ctl" ] && [ ! -e "$TMP/c/ack" ] && pass control-fifos-removed || fail control-fifos-removed
line=$(rec "$TMP/c" idle "$tb" -c "$cfg" --txt -o idle.pftrace --control "fifo:$TMP/c/ctl2" -- "$TMP/bin/workload" idle.txt idle 300)
expect_eq control-no-enable-no-samples "0 0 1" \
	"$(field "$line" trace_status) $(field "$line" samples) $(field "$line" health_status)"

# ---- 7. binaries that cannot be symbolized -------------------------------------------------
# (a) stripped, without a build id
cc -Wl,--build-id=none -s -o "$TMP/bin/nobid" || fail build-nobid
line=$(rec "$TMP/s" p "$tb" -c "$cfg" --txt -o p.pftrace -- "$TMP/bin/nobid" o.txt split 400)
expect_eq nobid-capture "0 0" "$(field "$line" trace_status) $(field "$line" health_status)"
grep -q "frames stay unnamed: $TMP/bin/nobid (no build id)" "$TMP/s/p.err" && pass nobid-reported ||
	fail nobid-reported "$(cat "$TMP/s/p.err")"
"$tb" traceconv report --json "$TMP/s/p.pftrace" "$TMP/s/p.json"
grep -q "\"mapping\":\"$TMP/bin/nobid\",\"reason\":\"no build id\"" "$TMP/s/p.json" &&
	pass nobid-in-report || fail nobid-in-report "$(head -c 600 "$TMP/s/p.json")"
# (b) unreadable: removed under the running program (an upgrade), so the
# profiler cannot read the file its frames are in
cp "$TMP/bin/workload" "$TMP/bin/gone"
line=$(rec "$TMP/g" p "$tb" -c "$cfg" --txt -o p.pftrace -- "$TMP/bin/gone" o.txt unlink 400)
expect_eq unreadable-capture "0 0 0" \
	"$(field "$line" workload_status) $(field "$line" trace_status) $(field "$line" health_status)"
grep -q "frames stay unnamed: $TMP/bin/gone (deleted) (no build id)" "$TMP/g/p.err" &&
	pass unreadable-reported || fail unreadable-reported "$(cat "$TMP/g/p.err")"
"$tb" traceconv report --json "$TMP/g/p.pftrace" "$TMP/g/p.json"
grep -q "\"mapping\":\"$TMP/bin/gone (deleted)\",\"reason\":\"no build id\"" "$TMP/g/p.json" &&
	pass unreadable-in-report || fail unreadable-in-report "$(head -c 600 "$TMP/g/p.json")"
# ... and one its user may run but not read: the kernel makes such a
# process undumpable and does not sample it; the capture still succeeds and
# says why nothing was sampled.
if [ -n "$asnobody" ]; then
	cp "$TMP/bin/workload" "$TMP/bin/secret"
	chmod 711 "$TMP/bin/secret"
	mkdir -m 777 "$TMP/u"
	line=$(rec "$TMP/u" p $asnobody env HOME="$TMP/u" "$tb" -c "$cfg" --txt -o p.pftrace -- "$TMP/bin/secret" o.txt split 400)
	expect_eq unreadable-exec-capture "0 0 1 0" \
		"$(field "$line" workload_status) $(field "$line" trace_status) $(field "$line" health_status) $(field "$line" samples)"
	grep -q "no sample of the workload (pid [0-9]*): the kernel does not sample a program its user cannot read" "$TMP/u/p.err" &&
		pass unreadable-exec-reported || fail unreadable-exec-reported "$(cat "$TMP/u/p.err")"
fi
# (c) debuginfod: a binary stripped of its symbols (build id kept); the
# server has its full copy (200), has nothing (404), or never answers.
cp "$TMP/bin/workload" "$TMP/bin/stripped"
strip --strip-all "$TMP/bin/stripped"
bid=$(tpq "$TMP/r/p.pftrace" "select build_id from stack_profile_mapping where name = '$TMP/bin/workload'")
mkdir -p "$TMP/dbgd"
[ -n "$bid" ] && cp "$TMP/bin/workload" "$TMP/dbgd/$bid"
python3 tests/data/debuginfod_server.py "$TMP/port" "$TMP/dbgd" "$TMP/dbgd.log" &
srv=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
port=$(cat "$TMP/port" 2>/dev/null)
if [ -z "$port" ] || [ -z "$bid" ]; then
	fail debuginfod-server "port '$port', build id '$bid'"
else
	for mode in ok missing stall; do
		start=$(date +%s)
		line=$(rec "$TMP/d-$mode" p DEBUGINFOD_URLS="http://127.0.0.1:$port/$mode" DEBUGINFOD_TIMEOUT=1 \
			DEBUGINFOD_CACHE_PATH="$TMP/d-$mode/cache" "$tb" -c "$cfg" --txt -o p.pftrace -- \
			"$TMP/bin/stripped" o.txt split 400)
		secs=$(($(date +%s) - start))
		expect_eq "debuginfod-$mode-capture" "0 0" "$(field "$line" workload_status) $(field "$line" trace_status)"
		"$tb" traceconv folded "$TMP/d-$mode/p.pftrace" >"$TMP/d-$mode/p.folded" 2>/dev/null
		n=$(leaf_count "$TMP/d-$mode/p.folded" hot_seventy)
		case $mode in
		ok)
			[ "$n" -gt 0 ] && [ -s "$TMP/d-ok/cache/$bid/debuginfo" ] && pass debuginfod-ok-names ||
				fail debuginfod-ok-names "hot_seventy $n" "$(cat "$TMP/d-ok/p.err")" ;;
		missing)
			expect_eq debuginfod-404-unnamed 0 "$n"
			grep -q 'debuginfod: 0 fetched, [1-9][0-9]* not found, 0 timed out' "$TMP/d-missing/p.err" &&
				pass debuginfod-404-counted || fail debuginfod-404-counted "$(cat "$TMP/d-missing/p.err")" ;;
		stall)
			expect_eq debuginfod-stall-unnamed 0 "$n"
			grep -q 'debuginfod: 0 fetched, 0 not found, [1-9][0-9]* timed out' "$TMP/d-stall/p.err" &&
				pass debuginfod-stall-counted || fail debuginfod-stall-counted "$(cat "$TMP/d-stall/p.err")"
			[ "$secs" -le 15 ] && pass debuginfod-stall-bounded || fail debuginfod-stall-bounded "$secs s" ;;
		esac
	done
fi
