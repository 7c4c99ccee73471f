# Two builds of one commit give byte-identical release files, even in
# different folders (a clean clone against this checkout's own build): out/tracebox and, for every target this checkout built
# (out/emu/targets, made by ./build.sh tests), each archive, SHA256SUMS and
# the launcher of `./build.sh release`. The clones reuse this checkout's
# dependency cache.
. tests/lib.sh

if ! git -C "$TB_TEST_ROOT" rev-parse HEAD >/dev/null 2>&1; then
	skip identical-builds "not a git checkout"
	exit 0
fi
targets=
[ -f "$TB_OUT/emu/targets" ] && targets=$(awk '{ printf "%s ", $1 }' "$TB_OUT/emu/targets")
# A clean clone builds HEAD; the other build is this checkout's own (made by
# ./build.sh test just before), when the checkout is HEAD with nothing
# changed; otherwise a second clean clone. Either way two builds of one
# commit in different folders.
rev=$(git -C "$TB_TEST_ROOT" rev-parse HEAD)
clones="a"
ref=$TB_TEST_ROOT
if [ -n "$(git -C "$TB_TEST_ROOT" status --porcelain --untracked-files=no)" ] ||
	[ ! -f "$TB_OUT/tracebox" ] || [ "$TB_OUT" != "$TB_TEST_ROOT/out" ] ||
	{ [ -n "$targets" ] && [ ! -d "$TB_OUT/release" ]; }; then
	clones="a b"
	ref=$TMP/b
fi
for n in $clones; do
	git clone -q "$TB_TEST_ROOT" "$TMP/$n" && git -C "$TMP/$n" checkout -q "$rev" &&
		mkdir -p "$TMP/$n/out" &&
		ln -s "$TB_OUT/deps" "$TMP/$n/out/deps" ||
		{ fail identical-builds "cannot clone into $TMP/$n"; exit 0; }
	start=$(date +%s)
	# shellcheck disable=SC2086
	if [ -n "$targets" ]; then
		(cd "$TMP/$n" && ./build.sh release $targets) >"$TMP/$n.log" 2>&1
	else
		(cd "$TMP/$n" && ./build.sh) >"$TMP/$n.log" 2>&1
	fi || { fail identical-builds "build in $TMP/$n failed: $(tail -5 "$TMP/$n.log")"; exit 0; }
	echo "  (clean build $n of ${targets:-the host target} took $(($(date +%s) - start)) s)" >&2
done
if cmp -s "$TMP/a/out/tracebox" "$ref/out/tracebox"; then
	pass identical-builds
else
	fail identical-builds "$(cmp "$TMP/a/out/tracebox" "$ref/out/tracebox")"
fi
if [ -n "$targets" ]; then
	why= n=0
	for f in "$TMP/a/out/release"/*; do
		n=$((n + 1))
		cmp -s "$f" "$ref/out/release/${f##*/}" || why="$why ${f##*/}"
	done
	# An archive, SHA256SUMS and the launcher per target list.
	[ "$n" = $(($(echo $targets | wc -w) + 2)) ] || why="$why ($n files)"
	[ -z "$why" ] && pass identical-release || fail identical-release "differ:$why"
else
	skip identical-release "no out/emu/targets (./build.sh tests lists the targets built)"
fi
# A second build with nothing changed does no work (no object is rebuilt).
before=$(stat -c %i.%Y "$TMP/a/out/tracebox")
start=$(date +%s)
(cd "$TMP/a" && ./build.sh) >/dev/null 2>&1
after=$(stat -c %i.%Y "$TMP/a/out/tracebox")
[ "$before" = "$after" ] && pass rebuild-is-noop || fail rebuild-is-noop "out/tracebox was relinked"
echo "  (no-op rebuild took $(($(date +%s) - start)) s)" >&2
