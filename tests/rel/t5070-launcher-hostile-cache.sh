# The launcher against a hostile cache (issue 21 #8): a cache folder (or a
# folder above it) that someone else owns or may write is refused before
# anything in it runs; the binary that runs is the very file whose SHA-256
# was checked, even when the file at that path is swapped in between
# (a racing process renames a script over it, as an attacker with write
# access would); temporary folders of launchers that died are cleaned up.
. tests/lib.sh

[ "$(id -u)" = 0 ] || { skip all "needs root (to give folders to another uid)"; exit 0; }
version=$(cat VERSION)
case $(uname -m) in
x86_64) plat=linux-amd64 ;;
aarch64 | arm64) plat=linux-arm64 ;;
*) skip all "no release platform for machine $(uname -m)"; exit 0 ;;
esac
rel=$TMP/rel
if ! TRACEBOX_RELEASE_BASE_URL=file://$rel sh release/package.sh "$TRACEBOX" "$version" "$rel" \
	2>"$TMP/pkg.err"; then
	fail package "$(cat "$TMP/pkg.err")"
	exit 0
fi
L="timeout 60 sh $rel/tracebox"
launch() {
	c=$1
	shift
	env TRACEBOX_CACHE_DIR="$c" "$@" >"$TMP/out" 2>"$TMP/err" && rc=0 || rc=$?
}
# refused NAME PATTERN: the last launch failed with PATTERN on stderr and
# ran nothing.
refused() {
	if [ "$rc" != 0 ] && grep -q -- "$2" "$TMP/err" && ! grep -q "$version" "$TMP/out"; then
		pass "$1"
	else
		fail "$1" "exit $rc" "$(cat "$TMP/out" "$TMP/err")"
	fi
}
ran() {
	if [ "$rc" = 0 ] && grep -qF -- "$version" "$TMP/out"; then pass "$1"; else
		fail "$1" "exit $rc" "$(cat "$TMP/out" "$TMP/err")"; fi
}

# (a) a cache another uid owns, (b) one anybody may write, (c) a folder
# above it anybody may write (it could be renamed away and replaced).
mkdir -p "$TMP/a/cache" && chown 65534:65534 "$TMP/a/cache"
launch "$TMP/a/cache" $L --version
refused cache-owned-by-other "owned by uid 65534"
mkdir -p "$TMP/b/cache" && chmod 777 "$TMP/b/cache"
launch "$TMP/b/cache" $L --version
refused cache-world-writable "writable by others"
mkdir -p "$TMP/c/open/cache" && chmod 777 "$TMP/c/open"
launch "$TMP/c/open/cache" $L --version
refused cache-parent-world-writable "writable by others"
# (d) under a sticky, world-writable folder (like /tmp) our own cache is fine.
mkdir -p "$TMP/d" && chmod 1777 "$TMP/d"
launch "$TMP/d/cache" $L --version
ran cache-under-sticky-folder
[ "$(stat -c %a "$TMP/d/cache")" = 700 ] && pass cache-created-private ||
	fail cache-created-private "$(stat -c %a "$TMP/d/cache")"

# (e) a racer renaming a script over the cached binary and back: every run
# executes the genuine binary (or re-downloads it), never the script.
cache=$TMP/e
launch "$cache" $L --version
ran race-install
bin=$cache/$version/tracebox
cp "$bin" "$TMP/genuine"
printf '#!/bin/sh\necho SWAPPED\n' >"$TMP/evil"
chmod 755 "$TMP/evil"
(while :; do
	cp "$TMP/evil" "$bin.e" 2>/dev/null && mv -f "$bin.e" "$bin" 2>/dev/null
	cp "$TMP/genuine" "$bin.g" 2>/dev/null && mv -f "$bin.g" "$bin" 2>/dev/null
done) &
racer=$!
at_exit "kill $racer 2>/dev/null"
swapped=0 bad=0
for i in $(seq 60); do
	out=$(env TRACEBOX_CACHE_DIR="$cache" TRACEBOX_RELEASE_URL="file://$rel" timeout 60 \
		sh "$rel/tracebox" --version 2>/dev/null)
	case $out in
	*SWAPPED*) swapped=$((swapped + 1)) ;;
	*"$version"*) ;;
	*) bad=$((bad + 1)) ;;
	esac
done
kill $racer
wait $racer 2>/dev/null
expect_eq race-never-runs-swapped-file 0 "$swapped"
echo "launcher race: $swapped of 60 runs executed the swapped file, $bad failed" >&2

# (f) temporary folders of a launcher killed mid-download go away.
mkdir -p "$TMP/f/cache/.$version.999999/x" "$TMP/f/cache/.bad.999998"
chmod 700 "$TMP/f/cache"
launch "$TMP/f/cache" TRACEBOX_RELEASE_URL="file://$rel" $L --version
ran stale-install
expect_eq stale-temp-folders-removed "$version" "$(ls -A "$TMP/f/cache")"
