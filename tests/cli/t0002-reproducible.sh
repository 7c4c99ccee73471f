# Two clean builds of one commit give a byte-identical out/tracebox, even in
# different folders. Both clones reuse this checkout's dependency cache.
. tests/lib.sh

if ! git -C "$TB_TEST_ROOT" rev-parse HEAD >/dev/null 2>&1; then
	skip identical-builds "not a git checkout"
	exit 0
fi
# Both clones build the same commit, even if HEAD moves meanwhile.
rev=$(git -C "$TB_TEST_ROOT" rev-parse HEAD)
for n in a b; do
	git clone -q "$TB_TEST_ROOT" "$TMP/$n" && git -C "$TMP/$n" checkout -q "$rev" &&
		mkdir -p "$TMP/$n/out" &&
		ln -s "$TB_OUT/deps" "$TMP/$n/out/deps" ||
		{ fail identical-builds "cannot clone into $TMP/$n"; exit 0; }
	(cd "$TMP/$n" && ./build.sh) >"$TMP/$n.log" 2>&1 ||
		{ fail identical-builds "build in $TMP/$n failed: $(tail -5 "$TMP/$n.log")"; exit 0; }
done
if cmp -s "$TMP/a/out/tracebox" "$TMP/b/out/tracebox"; then
	pass identical-builds
else
	fail identical-builds "$(cmp "$TMP/a/out/tracebox" "$TMP/b/out/tracebox")"
fi
# A second build with nothing changed does no work (no object is rebuilt).
before=$(stat -c %i.%Y "$TMP/a/out/tracebox")
start=$(date +%s)
(cd "$TMP/a" && ./build.sh) >/dev/null 2>&1
after=$(stat -c %i.%Y "$TMP/a/out/tracebox")
[ "$before" = "$after" ] && pass rebuild-is-noop || fail rebuild-is-noop "out/tracebox was relinked"
echo "  (no-op rebuild took $(($(date +%s) - start)) s)" >&2
