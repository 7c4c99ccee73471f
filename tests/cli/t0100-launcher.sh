# The launcher (./tracebox) and release/package.sh: package $TRACEBOX into a
# release under $TMP whose base URL is a loopback HTTP server, then drive the
# generated launcher through downloads, cache hits, tampered, truncated and
# mis-sized archives, a modified cache, concurrent first runs, an unsupported
# platform and dash. A second server serves altered copies as a mirror
# (TRACEBOX_RELEASE_URL). Every launcher run is bounded by a timeout.
. tests/lib.sh

version=$(cat VERSION)
case $(uname -m) in
x86_64) plat=linux-amd64 ;;
aarch64 | arm64) plat=linux-arm64 ;;
armv7l | armv8l) plat=linux-armv7 ;;
riscv64) plat=linux-riscv64 ;;
*) skip all "no release platform for machine $(uname -m)"; exit 0 ;;
esac
for tool in python3 timeout; do
	command -v $tool >/dev/null 2>&1 || { skip all "$tool not installed"; exit 0; }
done
if command -v curl >/dev/null 2>&1; then get='curl -fsS -o /dev/null'
elif command -v wget >/dev/null 2>&1; then get='wget -q -O /dev/null'
else skip all "neither curl nor wget installed"; exit 0
fi

file=tracebox-$version-$plat.tar.gz
rel=$TMP/rel bad=$TMP/bad
mkdir "$rel" "$bad"

# serve DIR: start an HTTP server on a free loopback port for DIR; sets
# $port and $srv (its pid) and waits until it answers.
serve() {
	port=$(free_port)
	python3 -m http.server --bind 127.0.0.1 "$port" --directory "$1" \
		>>"$TMP/http.log" 2>&1 &
	srv=$!
	at_exit "kill $srv 2>/dev/null"
	i=0
	until $get "http://127.0.0.1:$port/" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || return 1
		sleep 0.1
	done
}

# launch CACHE [ENV=VALUE...] -- ARGS: run the release launcher with cache
# folder CACHE; stdout in $TMP/out, stderr in $TMP/err, exit status in $rc.
launch() {
	c=$1
	shift
	env TRACEBOX_CACHE_DIR="$c" "$@" >"$TMP/out" 2>"$TMP/err" && rc=0 || rc=$?
}
L="timeout 60 sh $rel/tracebox"

# refused NAME CACHE PATTERN...: the last launch failed, its stderr has every
# PATTERN, and CACHE holds nothing (no version folder, no temporary files).
refused() {
	name=$1 c=$2
	shift 2
	why=
	[ "$rc" != 0 ] || why="exit status 0"
	for p in "$@"; do
		grep -qF -- "$p" "$TMP/err" || why="$why; stderr lacks '$p'"
	done
	left=$(ls -A "$c" 2>/dev/null)
	[ -z "$left" ] || why="$why; cache holds: $left"
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why" "$(cat "$TMP/err")"; fi
}

# ran NAME: the last launch succeeded and printed the version.
ran() {
	if [ "$rc" = 0 ] && grep -qF -- "$version" "$TMP/out"; then
		pass "$1"
	else
		fail "$1" "exit $rc" "$(cat "$TMP/out" "$TMP/err")"
	fi
}

# The template in the tree pins nothing and says so.
expect_exit template-refuses 1 timeout 10 sh tracebox --version
grep -q unreleased "$TMP/err" && pass template-says-unreleased ||
	fail template-says-unreleased "$(cat "$TMP/err")"

serve "$rel" || { fail all "loopback HTTP server did not start: $(tail -3 "$TMP/http.log")"; exit 0; }
good_srv=$srv
if ! TRACEBOX_RELEASE_BASE_URL=http://127.0.0.1:$port sh release/package.sh \
	"$TRACEBOX" "$version" "$rel" 2>"$TMP/err"; then
	fail package "$(cat "$TMP/err")"
	exit 0
fi
pass package
size=$(wc -c <"$rel/$file" | tr -d ' ')
sha=$(sha256sum <"$rel/$file" | cut -d' ' -f1)
bin_sha=$(sha256sum <"$TRACEBOX" | cut -d' ' -f1)
check sha256sums sh -c "cd '$rel' && sha256sum -c --quiet SHA256SUMS"
tar -tvzf "$rel/$file" >"$TMP/list" 2>&1
grep -q "^-rwxr-xr-x 0/0 .* tracebox-$version-$plat/tracebox\$" "$TMP/list" &&
	grep -q "^-rw-r--r-- 0/0 .* tracebox-$version-$plat/LICENSE\$" "$TMP/list" &&
	pass archive-layout || fail archive-layout "$(cat "$TMP/list")"

# (j) Packaging twice gives identical files.
TRACEBOX_RELEASE_BASE_URL=http://127.0.0.1:$port sh release/package.sh \
	"$TRACEBOX" "$version" "$TMP/rel2" 2>/dev/null
why=
for f in "$file" SHA256SUMS tracebox; do
	cmp -s "$rel/$f" "$TMP/rel2/$f" || why="$why $f differs;"
done
[ -z "$why" ] && pass reproducible-package || fail reproducible-package "$why"

# (a) First run downloads, installs and runs; (b) the second needs no server.
cache=$TMP/cache
launch "$cache" $L --version
ran first-run-downloads
[ "$(ls -A "$cache")" = "$version" ] && [ "$(ls -A "$cache/$version")" = "LICENSE
tracebox" ] && pass cache-layout || fail cache-layout "$(ls -AR "$cache")"
kill "$good_srv"
wait "$good_srv" 2>/dev/null
$get "http://127.0.0.1:$port/" 2>/dev/null && fail server-stopped || pass server-stopped
launch "$cache" $L --version
ran second-run-offline

# file:// mirrors work offline.
launch "$TMP/c-file" TRACEBOX_RELEASE_URL="file://$rel" $L --version
ran file-url-mirror

serve "$bad" || { fail all "second HTTP server did not start"; exit 0; }
mirror=TRACEBOX_RELEASE_URL=http://127.0.0.1:$port

# (c) One byte flipped, same size: refused before unpacking.
cp "$rel/$file" "$bad/$file"
off=$((size / 2))
b=$(od -An -tu1 -j $off -N1 "$bad/$file" | tr -d ' ')
printf "\\$(printf %o $((b ^ 1)))" | dd of="$bad/$file" bs=1 seek=$off conv=notrunc 2>/dev/null
bad_sha=$(sha256sum <"$bad/$file" | cut -d' ' -f1)
launch "$TMP/c-tamper" $mirror $L --version
refused tampered-archive "$TMP/c-tamper" "sha256 mismatch" "$sha" "$bad_sha"

# (d) A truncated download: size mismatch.
head -c $((size - 100)) "$rel/$file" >"$bad/$file"
launch "$TMP/c-trunc" $mirror $L --version
refused truncated-archive "$TMP/c-trunc" "size mismatch" "$size" "$((size - 100))"

# (e) A manifest with the wrong size refuses the genuine archive.
cp "$rel/$file" "$bad/$file"
sed "s/ $size $sha / $((size + 1)) $sha /" "$rel/tracebox" >"$TMP/wrong-size"
launch "$TMP/c-size" $mirror timeout 60 sh "$TMP/wrong-size" --version
refused wrong-manifest-size "$TMP/c-size" "size mismatch" "$((size + 1))" "$size"

# (f) A cached binary modified after install is detected and downloaded
# again from a mirror; with no server reachable it is refused and removed.
printf x >>"$cache/$version/tracebox"
launch "$cache" $mirror $L --version
ran modified-cache-redownloaded
grep -qF "fails verification" "$TMP/err" && pass modified-cache-reported ||
	fail modified-cache-reported "$(cat "$TMP/err")"
[ "$(sha256sum <"$cache/$version/tracebox" | cut -d' ' -f1)" = "$bin_sha" ] &&
	pass modified-cache-repaired || fail modified-cache-repaired "binary still differs"
printf x >>"$cache/$version/tracebox"
launch "$cache" $L --version
refused modified-cache-no-server "$cache" "fails verification" "$bin_sha"

# (g) Concurrent first runs all succeed and leave one intact install.
why=
for i in 1 2 3 4 5 6; do
	(env TRACEBOX_CACHE_DIR="$TMP/c-race" $mirror $L --version >"$TMP/race$i" 2>&1 ||
		echo "exit $?" >>"$TMP/race$i") &
	pids="${pids:-} $!"
done
wait $pids
for i in 1 2 3 4 5 6; do
	grep -qF -- "$version" "$TMP/race$i" && ! grep -q '^exit' "$TMP/race$i" ||
		why="$why run $i: $(cat "$TMP/race$i");"
done
[ "$(ls -A "$TMP/c-race")" = "$version" ] || why="$why cache holds $(ls -A "$TMP/c-race");"
[ "$(ls -A "$TMP/c-race/$version")" = "LICENSE
tracebox" ] || why="$why install holds $(ls -A "$TMP/c-race/$version");"
[ "$(sha256sum <"$TMP/c-race/$version/tracebox" | cut -d' ' -f1)" = "$bin_sha" ] ||
	why="$why installed binary differs;"
[ -z "$why" ] && pass concurrent-first-runs || fail concurrent-first-runs "$why"

# (h) An unsupported platform: one clear line naming it, exit 1.
mkdir "$TMP/fakebin"
printf '#!/bin/sh\necho Plan9 mips\n' >"$TMP/fakebin/uname"
chmod +x "$TMP/fakebin/uname"
launch "$TMP/c-plan9" PATH="$TMP/fakebin:$PATH" $L --version
if [ "$rc" = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "unsupported platform 'Plan9 mips'" "$TMP/err"; then
	pass unsupported-platform
else
	fail unsupported-platform "exit $rc" "$(cat "$TMP/err")"
fi

# (i) The launcher is plain POSIX sh: it runs under dash.
if command -v dash >/dev/null 2>&1; then
	launch "$TMP/c-dash" $mirror timeout 60 dash "$rel/tracebox" --version
	ran dash
else
	skip dash "dash not installed"
fi
