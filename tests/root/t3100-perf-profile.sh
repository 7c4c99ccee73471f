#!/bin/sh
# t3100-perf-profile: a CPU profile a user would take. tests/data/perf_workload.c
# (two hot functions splitting ~2 s of CPU about 70/30) is built with frame
# pointers and recorded with the repository's configs/perf-1000hz.pbtx
# around the workload (`tracebox -c ... --txt -o p.pftrace -- ./workload`)
# while an unrelated busy loop runs; `traceconv symbolize` names its frames.
# Then: the top two symbolized user leaf functions are hot_seventy and
# hot_thirty and split the samples as `perf record -F 1000 -g` does on the
# same workload (within 5 points); no sample was lost (no kernel lost
# records, >= 90 % of 1000 per CPU second: in frequency mode the kernel
# adapts the period, and lowers perf_event_max_sample_rate when a loaded
# machine makes sampling interrupts slow, so a few percent fewer samples is
# not a loss); every sample is the target's.
# SKIP when not root, perf_event_open is refused, or gcc is missing; the
# perf comparison alone SKIPs when `perf record` cannot run.
. tests/lib.sh

busy=
at_exit '[ -n "$busy" ] && kill $busy 2>/dev/null'

perf_event_skip profile && exit 0
if ! command -v gcc >/dev/null; then
	skip profile "gcc is needed to build the workload"
	exit 0
fi
root=$(pwd)
case $TRACEBOX in /*) tb=$TRACEBOX ;; *) tb=$root/$TRACEBOX ;; esac
gcc -O1 -fno-omit-frame-pointer -g -o "$TMP/workload" tests/data/perf_workload.c ||
	{ fail build-workload; exit 0; }

# The user leaf of each sample (kernel frames skipped), by symbolized name,
# most sampled first.
leaves='with recursive up(sid, cs) as (
  select id, callsite_id from perf_sample where callsite_id is not null
  union all
  select up.sid, c.parent_id from up join stack_profile_callsite c on c.id = up.cs
  where c.parent_id is not null),
userf as (
  select up.sid, coalesce(f.name, sy.name) as fn,
    row_number() over (partition by up.sid order by c.depth desc) as rn
  from up join stack_profile_callsite c on c.id = up.cs
  join stack_profile_frame f on f.id = c.frame_id
  join stack_profile_mapping m on m.id = f.mapping
  left join stack_profile_symbol sy on sy.symbol_set_id = f.symbol_set_id
  where m.name not like '\''[kernel%'\'' and m.name != '\''kernel'\'')
select fn, count(*) as n from userf where rn = 1 group by fn order by n desc limit 2'
# top2 TRACE: "fn1 n1 fn2 n2"
top2() {
	"$TRACEBOX" trace_processor_shell query "$1" "$leaves" 2>/dev/null |
		sed 1d | tr -d '"' | tr ',\n' '  '
}
# pct N M: N/(N+M) in tenths of a percent
pct() { echo $(($1 * 1000 / ($1 + $2))); }

sh -c 'while :; do :; done' &
busy=$!
(cd "$TMP" && "$tb" -c "$root/configs/perf-1000hz.pbtx" --txt -o p.pftrace -- \
	./workload ours.txt) >"$TMP/rec.out" 2>&1 && pass record || fail record "$(cat "$TMP/rec.out")"
kill $busy 2>/dev/null
wait $busy 2>/dev/null
busy=
read -r wpid wcpu <"$TMP/ours.txt" || { fail workload-ran; exit 0; }

check symbolize "$TRACEBOX" traceconv symbolize "$TMP/p.pftrace" "$TMP/syms"
cat "$TMP/p.pftrace" "$TMP/syms" >"$TMP/sym.pftrace"
set -- $(top2 "$TMP/sym.pftrace")
expect_eq top-two-leaves "hot_seventy hot_thirty" "${1:-} ${3:-}"
ours=$(pct "${2:-0}" "${4:-1}")
echo "# ours: hot_seventy ${2:-0}, hot_thirty ${4:-0} samples: $((ours / 10)).$((ours % 10)) %"

# Samples of other processes are rows without a callsite (NOT_IN_SCOPE).
q="select (select count(*) from perf_sample where callsite_id is not null) as samples,
	(select value from stats where name = 'perf_samples_skipped_dataloss') +
	(select coalesce(sum(value), 0) from stats where name = 'perf_cpu_lost_records') as lost,
	(select count(distinct t.tid) from perf_sample s join thread t using (utid)
	 where t.tid != $wpid and s.callsite_id is not null) as others"
set -- $("$TRACEBOX" trace_processor_shell query "$TMP/p.pftrace" "$q" 2>/dev/null | sed 1d | tr ',' ' ')
expect_eq no-kernel-lost-records 0 "${2:-}"
want=$((wcpu / 1000000 * 90 / 100))
[ "${1:-0}" -ge "$want" ] && pass no-samples-lost ||
	fail no-samples-lost "${1:-0} samples for $wcpu ns of CPU (want >= $want)"
expect_eq only-target-samples 0 "${3:-}"

if ! command -v perf >/dev/null; then
	skip perf-split "perf is not installed"
	exit 0
fi
if ! (cd "$TMP" && perf record -F 1000 -g -o perf.data -- ./workload perf.txt) \
	>"$TMP/perf.out" 2>&1 || ! perf script -i "$TMP/perf.data" >"$TMP/perf.txt" 2>/dev/null; then
	skip perf-split "perf record cannot run here: $(tail -1 "$TMP/perf.out")"
	exit 0
fi
set -- $(top2 "$TMP/perf.txt")
expect_eq perf-top-two-leaves "hot_seventy hot_thirty" "${1:-} ${3:-}"
theirs=$(pct "${2:-0}" "${4:-1}")
echo "# perf: hot_seventy ${2:-0}, hot_thirty ${4:-0} samples: $((theirs / 10)).$((theirs % 10)) %"
d=$((ours - theirs))
[ "${d#-}" -le 50 ] && pass split-like-perf ||
	fail split-like-perf "ours $ours vs perf $theirs (tenths of a percent)"
