# The unit tests, built like each target's release binary (static musl,
# -O2, its code generation flags), run under the target's emulator: one
# PASS per target when every test passed, a FAIL per failing test. Tests
# listed in tests/emu/unit_skips.txt for a target (an emulator limitation,
# with the reason) are reported SKIP there, and FAIL if they pass, so the
# list only shrinks.
. tests/lib.sh
. tests/emu/lib.sh

run_unit() {
	start=$(date +%s)
	TB_TEST_ROOT=$TB_TEST_ROOT timeout 1200 sh -c \
		'QEMU_CPU=$1 exec "$2" -cpu "$1" "$3"' sh "$E_CPU" "$E_QEMU" "$E_UNIT" \
		>"$TMP/$E_NAME.out" 2>"$TMP/$E_NAME.err"
	rc=$?
	want=$(grep -c '^X(' "$(dirname "$E_UNIT")/unit_tests.h")
	got=$(grep -c -e '^PASS unit/' -e '^SKIP unit/' "$TMP/$E_NAME.out") # TEST_SKIP's own skips (no tracefs, perf or ../shared here) count as run
	why=
	for t in $(sed -n 's/^FAIL unit\///p' "$TMP/$E_NAME.out"); do
		reason=$(awk -v a="$E_NAME" -v t="$t" '$1 == a && $2 == t {
			sub(/^[^#]*#[ \t]*/, ""); print; exit }' tests/emu/unit_skips.txt)
		if [ -n "$reason" ]; then
			skip "$E_NAME/$t" "$reason"
			want=$((want - 1))
		else
			fail "$E_NAME/unit/$t" "$(grep -A3 -F "$t" "$TMP/$E_NAME.err" | head -8)"
			why="$why $t"
		fi
	done
	for t in $(awk -v a="$E_NAME" '$1 == a { print $2 }' tests/emu/unit_skips.txt); do
		grep -qx "PASS unit/$t" "$TMP/$E_NAME.out" &&
			fail "$E_NAME/$t" "listed in tests/emu/unit_skips.txt but passes: remove it"
	done
	secs=$(($(date +%s) - start))
	if [ -z "$why" ] && [ "$got" = "$want" ] && { [ "$rc" = 0 ] || grep -q "^$E_NAME " tests/emu/unit_skips.txt; }; then
		pass "$E_NAME"
	else
		fail "$E_NAME" "exit $rc, $got of $want tests passed ($E_QEMU -cpu $E_CPU)" \
			"$(grep -v '^\[' "$TMP/$E_NAME.err" | tail -5)"
	fi
	echo "  ($E_NAME: $got unit tests passed under $E_QEMU -cpu $E_CPU in $secs s)" >&2
}

emu_each_parallel run_unit
