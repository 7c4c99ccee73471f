#!/bin/sh
# perf.data (the binary file `perf record` writes) in trace_processor,
# checked against `perf script` on the same files (needs root, perf and a
# working perf_event_open; SKIP elsewhere):
# - a CPU-bound program with two hot functions, `-e cpu-clock -g -k mono`:
#   the sample count, the thread set, the first timestamp (ns) and the
#   leaf-function counts of the hot functions (perf script -G -F ip,sym
#   against our leaf frame, symbolized from the binary with
#   PERFETTO_BINARY_PATH) equal perf script's; the `perf script` text of
#   the same file loaded with our perf_text importer has the same count;
# - the same program forking children, two events (-e cpu-clock -e
#   task-clock: the count of each), `-z` (zstd-compressed records) and pipe
#   mode (`perf record -o - > f`): counts and threads equal perf script's;
# - bad input: a cut header is one line and exit 1; a file cut inside its
#   data loads what precedes the cut and counts perf_data_truncated;
# - per-event counter tracks (a fixed-period and a frequency event with
#   --sample-cpu, one without cpus, a group read {a,b}:S): names, types,
#   cpus, rows and totals equal perf script's periods summed, and every
#   sample's counter set holds its rows at its ts.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
# rows TRACE SQL: the result rows, quotes removed, no header.
rows() { "$bin" trace_processor_shell query "$1" "$2" 2>"$TMP/qerr" | sed '1d; s/"//g'; }

perf_event_skip perf_data && exit 0
if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
	skip perf_data "perf or gcc not installed"
	exit 0
fi

cat >"$TMP/burn.c" <<'C'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) unsigned long burn_a(unsigned long n)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i * i;
	return x;
}
__attribute__((noinline)) unsigned long burn_b(unsigned long n)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x ^= i * 3;
	return x;
}
int main(int argc, char **argv)
{
	long forks = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	unsigned long n = 60000000;
	for (long k = 0; k < forks; k++)
		if (fork() == 0) {
			burn_a(n / 2);
			burn_b(n / 4);
			_exit(0);
		}
	burn_a(n);
	burn_b(n / 2);
	while (wait(NULL) > 0)
		;
	return 0;
}
C
gcc -O1 -g -Wl,--build-id -o "$TMP/burn" "$TMP/burn.c" || {
	fail build_workload "gcc failed"
	exit 0
}
export PERFETTO_BINARY_PATH=$TMP

rec() { # rec OUT PERF-RECORD-ARGS... -- CMD
	out=$1
	shift
	perf record -q "$@" >/dev/null 2>"$TMP/perr"
}

# same_counts NAME FILE: sample count and thread set equal perf script's.
same_counts() {
	want=$(perf script -i "$2" -G -F tid 2>/dev/null | wc -l)
	got=$(rows "$2" "select count(*) from perf_sample")
	if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
		pass "$1_count"
	else
		fail "$1_count" "perf script: $want samples, we: $got" "$(cat "$TMP/qerr")"
	fi
	want=$(perf script -i "$2" -G -F tid 2>/dev/null | awk '{ print $1 }' | sort -n | uniq | tr '\n' ' ')
	got=$(rows "$2" "select distinct t.tid from perf_sample s join thread t using (utid) order by 1" | tr '\n' ' ')
	expect_eq "$1_threads" "$want" "$got"
}

# leaf_counts NAME FILE: per hot function, the samples whose leaf it is.
leaf_counts() {
	want=$(perf script -i "$2" -G -F ip,sym 2>/dev/null | awk '$2 == "burn_a" || $2 == "burn_b" { n[$2]++ } END { print n["burn_a"] + 0, n["burn_b"] + 0 }')
	got=$(rows "$2" "select
		sum(coalesce(nullif(f.name, ''), y.name) = 'burn_a'),
		sum(coalesce(nullif(f.name, ''), y.name) = 'burn_b')
		from perf_sample s join stack_profile_callsite c on c.id = s.callsite_id
		join stack_profile_frame f on f.id = c.frame_id
		left join stack_profile_symbol y on y.symbol_set_id = f.symbol_set_id" | tr ',' ' ')
	case $want in
	"0 "* | *" 0") fail "$1_leaf" "perf script names no hot leaf: $want" ;;
	*) expect_eq "$1_leaf" "$want" "$got" ;;
	esac
}

# ---- file mode, -k mono -------------------------------------------------------
f=$TMP/mono.data
if rec "$f" -e cpu-clock -g -k mono -o "$f" -- "$TMP/burn"; then
	same_counts mono "$f"
	leaf_counts mono "$f"
	want=$(perf script -i "$f" -G -F time --ns 2>/dev/null | head -1 | tr -d ' :.')
	got=$(rows "$f" "select min(ts) from perf_sample")
	expect_eq mono_first_ts "$(echo "$want" | sed 's/^0*//')" "$got"
	got=$(rows "$f" "select count(*) from perf_session where cmdline like '%perf record%'")
	expect_eq mono_session_cmdline 1 "$got"
	got=$(rows "$f" "select count(distinct cpu_mode) > 0 from perf_sample where cpu_mode = 'user'")
	expect_eq mono_cpu_mode 1 "$got"
	# The text perf script prints, through our perf_text importer.
	perf script -i "$f" >"$TMP/mono.txt" 2>/dev/null
	want=$(rows "$f" "select count(*) from perf_sample")
	got=$(rows "$TMP/mono.txt" "select count(*) from perf_sample")
	expect_eq mono_vs_perf_text_count "$want" "$got"
	# Bad input: a cut header, a cut data section.
	head -c 50 "$f" >"$TMP/cut50.data"
	expect_exit cut_header 1 "$bin" trace_processor_shell query "$TMP/cut50.data" "select 1"
	lines=$(wc -l <"$TMP/err")
	expect_eq cut_header_one_line 1 "$lines"
	size=$(wc -c <"$f")
	head -c $((size / 2)) "$f" >"$TMP/half.data"
	got=$(rows "$TMP/half.data" "select (select count(*) from perf_sample) > 0, (select value from stats where name = 'perf_data_truncated')")
	expect_eq cut_data_partial "1,1" "$got"
else
	fail mono_record "$(cat "$TMP/perr")"
fi

# ---- a forking workload ----------------------------------------------------------
f=$TMP/fork.data
if rec "$f" -e cpu-clock -g -k mono -o "$f" -- "$TMP/burn" 3; then
	same_counts fork "$f"
	leaf_counts fork "$f"
	got=$(rows "$f" "select count(distinct t.upid) >= 4 from perf_sample s join thread t using (utid)")
	expect_eq fork_processes 1 "$got"
else
	fail fork_record "$(cat "$TMP/perr")"
fi

# ---- two events ------------------------------------------------------------------
f=$TMP/two.data
if rec "$f" -e cpu-clock -e task-clock -g -o "$f" -- "$TMP/burn"; then
	same_counts two_events "$f"
	want=$(perf script -i "$f" -G -F event 2>/dev/null | tr -d ' :' | sort | uniq -c | awk '{ print $2 "=" $1 }' | tr '\n' ' ')
	got=$(rows "$f" "select event_name || '=' || count(*) from __intrinsic_profiler_sample group by event_name order by event_name" | tr '\n' ' ')
	expect_eq two_events_per_event "$want" "$got"
else
	fail two_events_record "$(cat "$TMP/perr")"
fi

# ---- compressed records (-z) -----------------------------------------------------------
f=$TMP/z.data
if rec "$f" -z -e cpu-clock -g -k mono -o "$f" -- "$TMP/burn" 1; then
	same_counts zstd "$f"
	leaf_counts zstd "$f"
else
	fail zstd_record "$(cat "$TMP/perr")"
fi

# ---- pipe mode -----------------------------------------------------------------------
f=$TMP/pipe.data
if perf record -q -e cpu-clock -g -k mono -o - -- "$TMP/burn" 1 >"$f" 2>"$TMP/perr"; then
	same_counts pipe "$f"
	leaf_counts pipe "$f"
else
	fail pipe_record "$(cat "$TMP/perr")"
fi
f=$TMP/zpipe.data
if perf record -q -z -e cpu-clock -g -o - -- "$TMP/burn" >"$f" 2>"$TMP/perr"; then
	same_counts zstd_pipe "$f"
else
	fail zstd_pipe_record "$(cat "$TMP/perr")"
fi

# ---- per-event counter tracks -----------------------------------------------------------
# Each event's counter track per cpu (perf_cpu_counter; perf_global_counter
# when samples carry no cpu), one row per sample: the running total of the
# sample periods, or for a group read (:S) the value read. Compared with
# perf script's periods summed per event and cpu: "name,type,cpu,
# is_timebase,rows,last value".
tracks() {
	rows "$1" "select t.name, t.type, coalesce(t.cpu, -1) as cpu, t.is_timebase, count(c.id) as n,
		cast(max(c.value) as int) as last from perf_counter_track t join counter c on c.track_id = t.id
		group by t.id" | sort
}
want_tracks() { # FILE TYPE
	if [ "$2" = perf_cpu_counter ]; then
		perf script -i "$1" -F event,cpu,period 2>/dev/null | tr -d '[]:' |
			awk '{ print $3, $1 + 0, $2 }'
	else
		perf script -i "$1" -F event,period 2>/dev/null | tr -d ':' | awk '{ print $2, -1, $1 }'
	fi | awk -v t="$2" '{ k = $1 "," t "," $2 ",1"; n[k]++; s[k] += $3 } END { for (k in n) print k "," n[k] "," s[k] }' | sort
}
# in_sets FILE: samples, and counter rows in their counter sets at their ts.
in_sets() {
	rows "$1" "select (select count(*) from __intrinsic_profiler_sample) as samples,
		(select count(*) from __intrinsic_profiler_sample s join __intrinsic_profiler_counter_set cs
		on cs.counter_set_id = s.counter_set_id join counter c on c.id = cs.counter_id and c.ts = s.ts) as in_sets"
}
f=$TMP/ctr.data
if rec "$f" --sample-cpu -e cpu-clock/period=250000/ -e task-clock/freq=2000/ -o "$f" -- "$TMP/burn"; then
	want=$(want_tracks "$f" perf_cpu_counter)
	case $want in
	*"cpu-clock/period=250000/,perf_cpu_counter,"*"task-clock/freq=2000/,perf_cpu_counter,"*)
		expect_eq counter_tracks_cpu "$want" "$(tracks "$f")" ;;
	*) fail counter_tracks_cpu "perf script shows no samples of both events: $want" ;;
	esac
	n=$(rows "$f" "select count(*) from perf_sample")
	expect_eq counter_sets_cpu "$n,$n" "$(in_sets "$f")"
else
	fail counter_record "$(cat "$TMP/perr")"
fi
f=$TMP/ctrg.data
if rec "$f" -e cpu-clock -c 250000 -o "$f" -- "$TMP/burn"; then
	want=$(want_tracks "$f" perf_global_counter)
	case $want in
	"cpu-clock,perf_global_counter,-1,1,"*) expect_eq counter_tracks_global "$want" "$(tracks "$f")" ;;
	*) fail counter_tracks_global "perf script: $want" ;;
	esac
else
	fail counter_global_record "$(cat "$TMP/perr")"
fi
f=$TMP/ctrr.data
if rec "$f" --sample-cpu -e '{cpu-clock,task-clock}:S' -c 250000 -o "$f" -- "$TMP/burn"; then
	want=$(want_tracks "$f" perf_cpu_counter)
	case $want in
	*"cpu-clock,perf_cpu_counter,"*"task-clock,perf_cpu_counter,"*)
		expect_eq counter_tracks_read "$want" "$(tracks "$f")" ;;
	*) fail counter_tracks_read "perf script: $want" ;;
	esac
	n=$(rows "$f" "select count(*) from perf_sample")
	expect_eq counter_sets_read "$n,$((2 * n))" "$(in_sets "$f")"
else
	fail counter_read_record "$(cat "$TMP/perr")"
fi
