# Every JSON, perf script text and Perfetto-protobuf trace in ../shared/corpus (MANIFEST.tsv)
# and the golden Perfetto traces load with exit 0, under ASan when the
# sanitizer build exists. Every file of corpus/ftrace and corpus/systrace_html
# (and the systrace inputs of Perfetto's diff tests) loads as a text trace
# with at least one ftrace event. Files that are not one trace we import
# (zip archives, cpuprofile) are left to the issues that add those formats.
. tests/lib.sh

corpus=$TB_SHARED/corpus
if [ ! -f "$corpus/MANIFEST.tsv" ]; then
	skip corpus "../shared/corpus not found"
	exit 0
fi
bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox

load() { # NAME FILE
	if timeout 300 "$bin" trace_processor_shell query "$2" 'select count(*) from slice' \
		>"$TMP/out" 2>"$TMP/err"; then
		pass "$1"
	else
		fail "$1" "$(tail -3 "$TMP/err")"
	fi
}

tab=$(printf '\t')
while IFS=$tab read -r path format _; do
	case $format in
	chrome_json | go_trace_json | node_trace_events | pytorch_kineto | devtools | derived_gzip | perf_script) ;;
	*) continue ;;
	esac
	case $path in *.zip) continue ;; esac
	load "$(echo "$path" | tr '/' '_')" "$corpus/$path"
done <"$corpus/MANIFEST.tsv"

for f in "$TB_SHARED"/reference/golden/traces/*.pftrace "$TB_SHARED"/reference/golden/ipc/*.pftrace; do
	[ -f "$f" ] && load "golden_$(basename "$f")" "$f"
done

# load_text NAME FILE: a text trace, imported as one with events.
load_text() {
	if timeout 300 "$bin" trace_processor_shell query "$2" \
		"select (select str_value from metadata where name = 'trace_type') || ' ' || \
		 (select count(*) > 0 from ftrace_event)" >"$TMP/out" 2>"$TMP/err" &&
		grep -q '^"systrace 1"$' "$TMP/out"; then
		pass "$1"
	else
		fail "$1" "$(cat "$TMP/out")" "$(tail -3 "$TMP/err")"
	fi
}
for f in "$corpus"/ftrace/* "$corpus"/systrace_html/* "$corpus"/perfetto_difftests/*/trace.systrace; do
	[ -f "$f" ] || continue
	case $f in */trace.systrace) name=$(basename "$(dirname "$f")") ;; *) name=$(basename "$f") ;; esac
	load_text "text_$name" "$f"
done
