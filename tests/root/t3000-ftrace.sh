#!/bin/sh
# t3000-ftrace: the ftrace core against the real kernel. Runs the unit test
# probes_live_sched_switch (out/asan/unit), which enables sched/sched_switch
# for ~200 ms, parses every CPU's trace_pipe_raw pages, checks the decoded
# fields and that every tracefs setting is restored; it prints SKIP itself
# when not root or tracefs cannot be found or mounted.
. tests/lib.sh

unit=$TB_OUT/asan/unit
if [ ! -x "$unit" ]; then
	skip sched-switch-live "no $unit (build with ./build.sh asan)"
elif [ "$(id -u)" != 0 ]; then
	skip sched-switch-live "not root"
else
	out=$("$unit" probes_live_sched_switch 2>&1)
	case $out in
	*"SKIP unit/probes_live_sched_switch: "*)
		skip sched-switch-live "$(printf '%s\n' "$out" | sed -n 's/^SKIP unit\/probes_live_sched_switch: //p')"
		;;
	*"PASS unit/probes_live_sched_switch"*) pass sched-switch-live ;;
	*) fail sched-switch-live "$out" ;;
	esac
fi
