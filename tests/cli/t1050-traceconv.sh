#!/bin/sh
# traceconv: `folded` on every FlameGraph perf script input in ../shared/corpus
# prints what stackcollapse-perf.pl prints (expected/flamegraph_collapsed/):
# --all and --tid against the -all and -tid files, and the default (no
# annotations, comm only) against the -all file with its _[k]/_[j]
# annotations removed and re-sorted; stdin and a gzip'd input work too.
# `binary` turns a diff test's trace.textproto into a trace that answers a
# slice query like the provided trace.pb (not byte-identical: our nested
# lengths are 4-byte varints). Errors: unknown mode, missing input.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
corpus=$TB_SHARED/corpus

expect_exit unknown_mode 1 "$bin" traceconv no-such-mode
grep -q "unknown mode 'no-such-mode' (modes: json, systrace, ctrace, text, profile, folded, report, symbolize, decompress_packets, binary, bundle, merge, inspect" "$TMP/err" && pass unknown_mode_msg ||
	fail unknown_mode_msg "$(cat "$TMP/err")"
expect_exit missing_input 1 "$bin" traceconv folded "$TMP/nonexistent"
grep -q "cannot open '.*nonexistent': No such file or directory" "$TMP/err" &&
	pass missing_input_msg || fail missing_input_msg "$(cat "$TMP/err")"
expect_exit missing_input_binary 1 "$bin" traceconv binary "$TMP/nonexistent" "$TMP/o.pb"
[ ! -e "$TMP/o.pb" ] && pass no_output_on_error || fail no_output_on_error

# ---- folded ----------------------------------------------------------------
exp=$corpus/expected/flamegraph_collapsed
if [ ! -d "$corpus/perf_script" ] || [ ! -d "$exp" ]; then
	skip folded "../shared/corpus/perf_script not found"
else
	for f in "$corpus"/perf_script/brendangregg+FlameGraph__*; do
		base=$(basename "$f")
		base=${base%.gz}
		base=${base%.txt}
		for mode in all tid default; do
			case $mode in
			all) opt=--all want=$exp/$base-collapsed-all.txt ;;
			tid) opt=--tid want=$exp/$base-collapsed-tid.txt ;;
			default) opt= want=$exp/$base-collapsed-all.txt ;;
			esac
			[ -f "$want" ] || continue
			if [ "$mode" = default ]; then
				sed 's/_\[[kj]\]//g' "$want" | LC_ALL=C sort >"$TMP/want"
			else
				cp "$want" "$TMP/want"
			fi
			# shellcheck disable=SC2086
			if ! timeout 300 "$bin" traceconv folded $opt "$f" "$TMP/got" 2>"$TMP/err"; then
				fail "folded_${mode}_$base" "$(tail -3 "$TMP/err")"
			elif cmp -s "$TMP/want" "$TMP/got"; then
				pass "folded_${mode}_$base"
			else
				fail "folded_${mode}_$base" "$(diff "$TMP/want" "$TMP/got" | head -6)"
			fi
		done
	done
	f=$corpus/perf_script/brendangregg+FlameGraph__perf-funcab-cmd-01.txt
	if [ -f "$f" ]; then
		"$bin" traceconv folded --all - - <"$f" >"$TMP/got" 2>"$TMP/err" &&
			cmp -s "$TMP/got" "$exp/brendangregg+FlameGraph__perf-funcab-cmd-01-collapsed-all.txt" &&
			pass folded_stdin || fail folded_stdin "$(cat "$TMP/err")"
		gzip -c "$f" >"$TMP/in.gz"
		"$bin" traceconv folded --all "$TMP/in.gz" >"$TMP/got" 2>"$TMP/err" &&
			cmp -s "$TMP/got" "$exp/brendangregg+FlameGraph__perf-funcab-cmd-01-collapsed-all.txt" &&
			pass folded_gzip || fail folded_gzip "$(cat "$TMP/err")"
	fi
	f=$corpus/perf_script/brendangregg+FlameGraph__example-perf-stacks.txt.gz
	if [ -f "$f" ]; then
		"$bin" traceconv folded "$f" >"$TMP/got" 2>"$TMP/err" &&
			[ -s "$TMP/got" ] && ! grep -qv '^[^ ].* [0-9][0-9]*$' "$TMP/got" &&
			pass folded_gz_shape || fail folded_gz_shape "$(head -3 "$TMP/got") $(cat "$TMP/err")"
	fi
fi

# ---- binary ----------------------------------------------------------------
q='select count(*), sum(dur), group_concat(name) from slice'
n=0
for t in parser_track_event__test_flow_events_proto_v1 \
	parser_track_event__test_track_event_with_atrace \
	parser_track_event__test_track_event_name_resolution_extended; do
	d=$corpus/perfetto_difftests/$t
	[ -f "$d/trace.textproto" ] && [ -f "$d/trace.pb" ] || continue
	n=$((n + 1))
	if ! "$bin" traceconv binary "$d/trace.textproto" "$TMP/t.pb" 2>"$TMP/err"; then
		fail "binary_$t" "$(cat "$TMP/err")"
		continue
	fi
	got=$("$bin" trace_processor_shell query "$TMP/t.pb" "$q" 2>&1 | grep -v "^Query execution time: ")
	want=$("$bin" trace_processor_shell query "$d/trace.pb" "$q" 2>&1 | grep -v "^Query execution time: ")
	expect_eq "binary_$t" "$(echo "$want" | tail -n +2)" "$(echo "$got" | tail -n +2)"
	"$bin" traceconv binary <"$d/trace.textproto" >"$TMP/s.pb" 2>"$TMP/err" &&
		cmp -s "$TMP/s.pb" "$TMP/t.pb" && pass "binary_stdin_$t" ||
		fail "binary_stdin_$t" "$(cat "$TMP/err")"
done
[ "$n" -gt 0 ] || skip binary "../shared/corpus/perfetto_difftests not found"
printf 'packet { bogus: 1 }\n' >"$TMP/bad.textproto"
expect_exit binary_bad_text 1 "$bin" traceconv binary "$TMP/bad.textproto"
grep -q 'bad.textproto:1:10 error: No field named "bogus"' "$TMP/err" && pass binary_bad_text_msg ||
	fail binary_bad_text_msg "$(cat "$TMP/err")"

# ---- the output is replaced only when complete -------------------------------
# The input may be the output; a failed conversion keeps an older output; a
# device is written in place, not replaced.
printf 'packet { timestamp: 7 }\n' >"$TMP/same.textproto"
cp "$TMP/same.textproto" "$TMP/ref.textproto"
"$bin" traceconv binary "$TMP/ref.textproto" "$TMP/ref.pb" 2>"$TMP/err" &&
	"$bin" traceconv binary "$TMP/same.textproto" "$TMP/same.textproto" 2>"$TMP/err" &&
	cmp -s "$TMP/ref.pb" "$TMP/same.textproto" && pass output_is_input ||
	fail output_is_input "$(cat "$TMP/err")"
printf 'old\n' >"$TMP/old.pb"
expect_exit output_kept_on_failure 1 "$bin" traceconv binary "$TMP/bad.textproto" "$TMP/old.pb"
[ "$(cat "$TMP/old.pb" 2>/dev/null)" = old ] && [ -z "$(ls "$TMP" | grep 'old\.pb\.')" ] &&
	pass output_kept_on_failure_content || fail output_kept_on_failure_content "$(ls "$TMP")"
ln -s ref.pb "$TMP/link.pb"
"$bin" traceconv binary "$TMP/ref.textproto" "$TMP/link.pb" 2>"$TMP/err" && [ -L "$TMP/link.pb" ] &&
	cmp -s "$TMP/ref.pb" "$TMP/link.pb" && pass output_through_symlink ||
	fail output_through_symlink "$(cat "$TMP/err")"
"$bin" traceconv binary "$TMP/ref.textproto" /dev/null 2>"$TMP/err" && [ -c /dev/null ] &&
	pass output_device || fail output_device "$(cat "$TMP/err")"

# ---- zstd_compressed_packets is TracePacket field 133 ----------------------
# (51 is chrome_metadata: such a packet is printed and passed through as is.)
# One packet {zstd_compressed_packets: "abc"}, one {chrome_metadata {}}.
printf '\012\006\252\010\003abc' >"$TMP/zstd.pb"
printf '\012\003\232\003\000' >"$TMP/m51.pb"
"$bin" traceconv text "$TMP/zstd.pb" "$TMP/zstd.txt" 2>"$TMP/err" &&
	grep -q '^zstd_compressed_packets {' "$TMP/zstd.txt" && pass zstd_field_text ||
	fail zstd_field_text "$(cat "$TMP/zstd.txt" "$TMP/err")"
expect_exit zstd_field_decompress 1 "$bin" traceconv decompress_packets "$TMP/zstd.pb" "$TMP/o.pb"
grep -q 'zstd-compressed packets cannot be decompressed' "$TMP/err" && pass zstd_field_decompress_msg ||
	fail zstd_field_decompress_msg "$(cat "$TMP/err")"
"$bin" traceconv text "$TMP/m51.pb" "$TMP/m51.txt" 2>"$TMP/err" &&
	! grep -q 'zstd' "$TMP/m51.txt" && pass field51_text || fail field51_text "$(cat "$TMP/m51.txt" "$TMP/err")"
"$bin" traceconv decompress_packets "$TMP/m51.pb" "$TMP/o51.pb" 2>"$TMP/err" &&
	cmp -s "$TMP/m51.pb" "$TMP/o51.pb" && pass field51_passed_through ||
	fail field51_passed_through "$(cat "$TMP/err")"
