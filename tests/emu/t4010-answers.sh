# Same answers on every target, byte for byte, as this machine's binary
# ($TRACEBOX) gives: each target's tracebox runs under its emulator over
#   tp       every golden SQL test and Perfetto diff test of tests/tp (their
#            raw query output and exit status, kept by TB_TP_SAVE);
#   traces   the golden Perfetto traces and a sample of the corpus
#            (tests/emu/corpus_sample.txt, one file per format family) with
#            tests/emu/queries.sql (row counts, sums, floats, args, stats);
#   textproto  traceconv binary of Perfetto's diff-test textprotos;
#   folded   traceconv folded of the corpus' perf script sample.
# One PASS per target and group; a FAIL names the first differing cases.
. tests/lib.sh
. tests/emu/lib.sh

corpus=$TB_SHARED/corpus
golden=$TB_SHARED/reference/golden
difftests=$corpus/perfetto_difftests

# answers DIR TRACEBOX: every group's outputs under DIR/<group>/.
answers() {
	d=$1 tb=$2
	mkdir -p "$d/tp" "$d/traces" "$d/textproto" "$d/folded"
	TB_TP_SAVE=$d/tp TRACEBOX=$tb sh tests/tp/run.sh >/dev/null 2>&1
	for f in "$golden"/traces/*.pftrace "$golden"/ipc/*.pftrace; do
		[ -f "$f" ] || continue
		"$tb" trace_processor_shell query -f tests/emu/queries.sql "$f" \
			>"$d/traces/golden_$(basename "$f")" 2>/dev/null
		echo "exit $?" >>"$d/traces/golden_$(basename "$f")"
	done
	grep -v '^#' tests/emu/corpus_sample.txt | while read -r f; do
		[ -f "$corpus/$f" ] || continue
		out=$d/traces/$(echo "$f" | tr / _)
		"$tb" trace_processor_shell query -f tests/emu/queries.sql "$corpus/$f" >"$out" 2>/dev/null
		echo "exit $?" >>"$out"
	done
	for f in "$difftests"/*/trace.textproto; do
		[ -f "$f" ] || continue
		n=$(basename "$(dirname "$f")")
		"$tb" traceconv binary "$f" "$d/textproto/$n" >/dev/null 2>&1
		echo "exit $?" >>"$d/textproto/$n"
	done
	for f in "$corpus"/perf_script/*.txt; do
		case $f in *vertx* | *sched-tracepoints*) ;; *) continue ;; esac
		n=$(basename "$f")
		"$tb" traceconv folded "$f" "$d/folded/$n" >/dev/null 2>&1
		echo "exit $?" >>"$d/folded/$n"
	done
}

if [ ! -d "$corpus" ]; then
	skip all "../shared/corpus not found"
	exit 0
fi
[ -f "$EMU_TARGETS" ] && answers "$TMP/ref" "$TRACEBOX"

compare() {
	start=$(date +%s)
	emu_wrapper "$TMP/tb-$E_NAME"
	answers "$TMP/$E_NAME" "$TMP/tb-$E_NAME"
	for g in tp traces textproto folded; do
		n=$(ls "$TMP/ref/$g" | wc -l)
		if [ "$n" -eq 0 ]; then
			fail "$E_NAME/$g" "no reference answers from $TRACEBOX"
			continue
		fi
		differ=
		for f in "$TMP/ref/$g"/*; do
			cmp -s "$f" "$TMP/$E_NAME/$g/${f##*/}" || differ="$differ ${f##*/}"
		done
		if [ -z "$differ" ]; then
			pass "$E_NAME/$g"
		else
			first=${differ# }
			first=${first%% *}
			fail "$E_NAME/$g" "differs from $TRACEBOX:$differ" \
				"$(diff "$TMP/ref/$g/$first" "$TMP/$E_NAME/$g/$first" | head -10)"
		fi
		echo "  ($E_NAME $g: $n answers compared)" >&2
	done
	echo "  ($E_NAME: answers in $(($(date +%s) - start)) s)" >&2
}

emu_each_parallel compare
