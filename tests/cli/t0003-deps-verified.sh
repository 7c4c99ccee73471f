# A dependency archive whose SHA-256 differs from DEPS stops the build before
# anything is unpacked, with a message naming the file and both hashes.
. tests/lib.sh

git clone -q "$TB_TEST_ROOT" "$TMP/src" 2>/dev/null || cp -r "$TB_TEST_ROOT/." "$TMP/src"
mkdir -p "$TMP/src/out/deps/src"
archive=$(awk '$1 == "musl" {print $3}' "$TMP/src/DEPS")
expected=$(awk '$1 == "musl" {print $4}' "$TMP/src/DEPS")
if [ ! -f "$TB_OUT/deps/src/$archive" ]; then
	skip tampered-archive-refused "no cached $archive"
	exit 0
fi
cp "$TB_OUT/deps/src/$archive" "$TMP/src/out/deps/src/$archive"
# Flip one byte in the middle: same size, different content.
size=$(stat -c %s "$TMP/src/out/deps/src/$archive")
printf '\001' | dd of="$TMP/src/out/deps/src/$archive" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
actual=$(sha256sum "$TMP/src/out/deps/src/$archive" | cut -d' ' -f1)

expect_exit tampered-archive-refused 1 sh -c "cd '$TMP/src' && ./build.sh"
expect_eq mismatch-message \
	"build.sh: checksum mismatch for '$archive': expected $expected, got $actual" \
	"$(grep 'checksum mismatch' "$TMP/err")"
[ ! -e "$TMP/src/out/deps/work/musl" ] && [ -z "$(ls -d "$TMP"/src/out/deps/musl-* 2>/dev/null)" ] &&
	pass nothing-unpacked || fail nothing-unpacked "$(ls "$TMP/src/out/deps")"
