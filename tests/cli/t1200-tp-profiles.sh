#!/bin/sh
# The profile formats and build logs trace_processor opens besides traces,
# each made by the real tool on this machine when it is installed (SKIP
# when not: build.sh installs them as test tools when run as root):
# - collapsed stacks: every FlameGraph stackcollapse-perf.pl result in
#   ../shared/corpus/expected/ imports with its total, and `traceconv
#   folded` of the import gives the file back byte for byte;
# - pprof: a Go program with two hot functions profiled by runtime/pprof
#   (CPU, gzip'd as Go writes it) and a heap profile: the flat value of each
#   function, for every sample type, equals `go tool pprof -top`'s;
# - .cpuprofile: `node --cpu-prof` on a small script, and the profiles in
#   ../shared/corpus/cpuprofile/: the sample count and the hottest leaf
#   function equal what the file says (python3 reading its JSON);
# - .ninja_log: ninja -j3 running a generated build of 12 steps, one with
#   two outputs: one slice per step, on at most 3 lanes, that never overlap;
# - bad input: one line and exit 1, or counted in stats.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
q() { "$bin" trace_processor_shell query "$@" 2>"$TMP/qerr" | grep -v '^"' ; }
# rows TRACE SQL: the result rows, quotes removed, no header.
rows() { "$bin" trace_processor_shell query "$1" "$2" 2>"$TMP/qerr" | sed '1d; s/"//g'; }

# ---- collapsed stacks --------------------------------------------------------
exp=$TB_SHARED/corpus/expected/flamegraph_collapsed
if [ -d "$exp" ]; then
	n=0 ok=0 bad=
	for f in "$exp"/*.txt; do
		n=$((n + 1))
		want=$(awk '{ s += $NF } END { print s }' "$f")
		got=$(rows "$f" "select cast(sum(value) as int) from __intrinsic_aggregate_sample")
		"$bin" traceconv folded "$f" "$TMP/folded" 2>/dev/null
		if [ "$got" = "$want" ] && cmp -s "$f" "$TMP/folded"; then
			ok=$((ok + 1))
		else
			bad="$bad $(basename "$f") (total $got, want $want)"
		fi
	done
	expect_eq "collapsed_flamegraph_roundtrip_$n" "$n" "$ok"
	[ -n "$bad" ] && echo "  differ:$bad" >&2
else
	skip collapsed_flamegraph_roundtrip "../shared/corpus/expected not found"
fi
printf 'a;b 3\na;b;c 4\na;b 5\n' >"$TMP/dup.folded"
"$bin" traceconv folded "$TMP/dup.folded" "$TMP/dup.out" 2>/dev/null
expect_eq collapsed_merges_equal_stacks "a;b 8
a;b;c 4" "$(cat "$TMP/dup.out")"

# ---- pprof (Go) -------------------------------------------------------------------
# top_cmp FILE TYPE NAME: the "function flat" lines of go tool pprof -top
# (in ns or bytes, unscaled) and of our import, for sample type TYPE.
top_cmp() {
	case $2 in cpu) unit=-unit=ns ;; *_space) unit=-unit=B ;; *) unit= ;; esac
	go tool pprof -top -nodefraction=0 -nodecount=10000 -sample_index="$2" $unit "$1" \
		2>/dev/null | awk 'f && $1 != "0" { print $6, $1 } /flat%/ { f = 1 }' |
		sed 's/ns$//; s/B$//' | LC_ALL=C sort >"$TMP/want"
	rows "$1" "select f.name || ' ' || cast(sum(s.value) as int) from __intrinsic_aggregate_sample s
		join __intrinsic_aggregate_profile p on p.id = s.aggregate_profile_id
		join stack_profile_callsite c on c.id = s.callsite_id
		join stack_profile_frame f on f.id = c.frame_id
		where p.sample_type_type = '$2' group by f.name having sum(s.value) != 0" |
		LC_ALL=C sort >"$TMP/got"
	if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then
		pass "$3"
	else
		fail "$3" "go tool pprof: $(tr '\n' ' ' <"$TMP/want")" "ours:          $(tr '\n' ' ' <"$TMP/got")"
	fi
}
if command -v go >/dev/null 2>&1; then
	mkdir -p "$TMP/go/cpu" "$TMP/go/heap"
	export HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS=-mod=mod GO111MODULE=off
	cat >"$TMP/go/cpu/main.go" <<'GO'
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

//go:noinline
func hotA(n int) {
	for i := 0; i < n; i++ {
		sink += uint64(i) * 7
	}
}

//go:noinline
func hotB(n int) {
	for i := 0; i < n; i++ {
		sink ^= uint64(i) * 13
	}
}

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		hotA(3000000)
		hotB(1000000)
	}
	pprof.StopCPUProfile()
	f.Close()
}
GO
	cat >"$TMP/go/heap/main.go" <<'GO'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func allocBig() { keep = append(keep, make([]byte, 1<<20)) }

//go:noinline
func allocSmall() { keep = append(keep, make([]byte, 4096)) }

func main() {
	runtime.MemProfileRate = 1
	for i := 0; i < 8; i++ {
		allocBig()
		allocSmall()
	}
	runtime.GC()
	f, _ := os.Create(os.Args[1])
	pprof.WriteHeapProfile(f)
	f.Close()
}
GO
	if (cd "$TMP/go/cpu" && go run main.go "$TMP/cpu.pprof") >"$TMP/goerr" 2>&1 &&
		(cd "$TMP/go/heap" && go run main.go "$TMP/heap.pprof") >>"$TMP/goerr" 2>&1; then
		expect_eq pprof_go_trace_type pprof "$(rows "$TMP/cpu.pprof" "select trace_type from trace_file")"
		top_cmp "$TMP/cpu.pprof" samples pprof_go_cpu_samples_top
		top_cmp "$TMP/cpu.pprof" cpu pprof_go_cpu_nanoseconds_top
		hot=$(rows "$TMP/cpu.pprof" "select f.name from __intrinsic_aggregate_sample s
			join stack_profile_callsite c on c.id = s.callsite_id
			join stack_profile_frame f on f.id = c.frame_id
			where f.name glob 'main.hot*' group by 1 order by sum(value) desc limit 1")
		expect_eq pprof_go_cpu_hottest main.hotA "$hot"
		for t in alloc_objects alloc_space inuse_objects inuse_space; do
			top_cmp "$TMP/heap.pprof" $t pprof_go_heap_${t}_top
		done
	else
		fail pprof_go_build "go run failed" "$(cat "$TMP/goerr")"
	fi
else
	skip pprof_go "go not installed (golang-go)"
fi

# ---- .cpuprofile ------------------------------------------------------------------
# cpuprofile_cmp FILE NAME: sample count and hottest leaf as the JSON says.
cpuprofile_cmp() {
	want=$(python3 - "$1" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
names = {}
def walk(n):
    names[n["id"]] = n["functionName"]
    for c in n.get("children", []):
        walk(c)
if "nodes" in d:
    for n in d["nodes"]:
        names[n["id"]] = n["callFrame"]["functionName"]
else:
    walk(d["head"])
times = d.get("timeDeltas", d.get("timestamps", []))
s = d["samples"][:len(times)]
c = collections.Counter(names[x] for x in s)
top = max(c.values())
print(len(s), sorted(k for k, v in c.items() if v == top)[0])
PY
)
	got=$(rows "$1" "select (select count(*) from cpu_profile_stack_sample) || ' ' ||
		(select f.name from cpu_profile_stack_sample s
		 join stack_profile_callsite c on c.id = s.callsite_id
		 join stack_profile_frame f on f.id = c.frame_id
		 group by f.name order by count(*) desc, f.name limit 1) AS r")
	expect_eq "$2" "$want" "$got"
}
if ! command -v python3 >/dev/null 2>&1; then
	skip cpuprofile "python3 not installed"
else
	if command -v node >/dev/null 2>&1; then
		cat >"$TMP/hot.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function spin(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x; }
let t = 0;
for (let i = 0; i < 6; i++) { t += fib(22); t += spin(60); }
console.log(t > 0 ? 'ok' : 'no');
JS
		if (cd "$TMP" && node --cpu-prof --cpu-prof-dir=prof --cpu-prof-interval 500 hot.js) >/dev/null 2>&1; then
			f=$(ls "$TMP"/prof/*.cpuprofile)
			cpuprofile_cmp "$f" cpuprofile_node
			expect_eq cpuprofile_node_spin_hottest spin "$(rows "$f" "select f.name from cpu_profile_stack_sample s
				join stack_profile_callsite c on c.id = s.callsite_id
				join stack_profile_frame f on f.id = c.frame_id
				where f.name in ('spin', 'fib') group by 1 order by count(*) desc limit 1")"
		else
			fail cpuprofile_node "node --cpu-prof failed"
		fi
	else
		skip cpuprofile_node "node not installed (nodejs)"
	fi
	if [ -d "$TB_SHARED/corpus/cpuprofile" ]; then
		for f in "$TB_SHARED"/corpus/cpuprofile/*.cpuprofile; do
			cpuprofile_cmp "$f" "cpuprofile_corpus_$(basename "$f" .cpuprofile)"
		done
	fi
fi

# ---- ninja ------------------------------------------------------------------------
if command -v ninja >/dev/null 2>&1; then
	mkdir -p "$TMP/nb"
	{
		echo "rule step"
		echo "  command = sleep \$t && touch \$out"
		echo "rule pair"
		echo "  command = sleep 0.05 && touch \$out"
		for i in 1 2 3 4 5 6 7 8 9 10 11; do
			echo "build s$i: step"
			echo "  t = 0.0$((i % 4 + 1))"
		done
		echo "build p1 p2: pair s1"
	} >"$TMP/nb/build.ninja"
	if (cd "$TMP/nb" && ninja -j3) >/dev/null 2>&1; then
		log=$TMP/nb/.ninja_log
		expect_eq ninja_trace_type ninja_log "$(rows "$log" "select trace_type from trace_file")"
		expect_eq ninja_one_slice_per_step 12 "$(rows "$log" "select count(*) from slice")"
		expect_eq ninja_multi_output_step "p1 p2" "$(rows "$log" "select name from slice where name glob 'p*'")"
		expect_eq ninja_durations_ms \
			"$(awk 'NR > 1 && $4 != "p2" { print $4, ($2 - $1) * 1000000 }' "$log" | LC_ALL=C sort | tr '\n' ' ')" \
			"$(rows "$log" "select replace(name, 'p1 p2', 'p1') || ' ' || dur from slice order by 1" | tr '\n' ' ')"
		lanes=$(rows "$log" "select count(distinct track_id) from slice")
		[ "$lanes" -ge 1 ] && [ "$lanes" -le 3 ] && pass ninja_at_most_j_lanes || fail ninja_at_most_j_lanes "lanes: $lanes"
		expect_eq ninja_lanes_do_not_overlap 0 "$(rows "$log" "select count(*) from slice a join slice b
			on a.track_id = b.track_id and a.id < b.id and b.ts < a.ts + a.dur and a.ts < b.ts + b.dur")"
	else
		fail ninja_build "ninja failed"
	fi
else
	skip ninja "ninja not installed (ninja-build)"
fi

# ---- bad input --------------------------------------------------------------------
printf '# ninja log v4\n1\t2\t0\ta\tff\n' >"$TMP/old.ninja_log"
expect_exit ninja_old_version_fails 1 "$bin" trace_processor_shell query "$TMP/old.ninja_log" "select 1"
grep -q "unsupported ninja log version '4'" "$TMP/err" && pass ninja_old_version_message ||
	fail ninja_old_version_message "$(cat "$TMP/err")"
printf '# ninja log v5\n1\t2\t0\ta\tff\nnonsense\n5\t3\t0\tb\tff\n' >"$TMP/bad.ninja_log"
expect_eq ninja_bad_lines_counted "1 2" "$(rows "$TMP/bad.ninja_log" \
	"select (select count(*) from slice) || ' ' || (select value from stats where name = 'ninja_parse_errors')")"
printf '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[1,' >"$TMP/cut.cpuprofile"
expect_exit cpuprofile_cut_fails 1 "$bin" trace_processor_shell query "$TMP/cut.cpuprofile" "select 1"
grep -q "malformed .cpuprofile" "$TMP/err" && pass cpuprofile_cut_message || fail cpuprofile_cut_message "$(cat "$TMP/err")"
if [ -f "$TMP/cpu.pprof" ]; then
	gzip -dc "$TMP/cpu.pprof" >"$TMP/raw.pprof"
	head -c $(($(wc -c <"$TMP/raw.pprof") - 7)) "$TMP/raw.pprof" >"$TMP/cut.pprof"
	if "$bin" trace_processor_shell query "$TMP/cut.pprof" "select value from stats where name = 'pprof_parse_error'" \
		>"$TMP/out" 2>"$TMP/err"; then
		grep -qx '[1-9][0-9]*' "$TMP/out" && pass pprof_cut_counted || fail pprof_cut_counted "$(cat "$TMP/out")"
	else
		grep -q . "$TMP/err" && pass pprof_cut_counted || fail pprof_cut_counted "no message"
	fi
fi
