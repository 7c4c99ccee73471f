# The launcher on every platform: a release of every built target
# (release/package.sh) served from a file:// mirror, and the launcher run
# with `uname -m` answering each machine name a device reports. It must
# install the archive of that machine's platform (the cached binary is the
# target's own, byte for byte) and exec it: for a foreign target, inside a
# private user namespace whose binfmt_misc hands the target's ELF files to
# qemu (Linux 6.7+), as the kernel of a real device would run them natively;
# without that namespace the installed binary is run under qemu directly
# and the launcher's own exec is reported SKIP. Machines we do not build
# for get one clear line naming the supported ones.
. tests/lib.sh
. tests/emu/lib.sh

version=$(cat VERSION)
rel=$TMP/rel
[ -f "$EMU_TARGETS" ] || { emu_each true; exit 0; }

# fake_uname MACHINE: a folder whose uname says Linux MACHINE.
fake_uname() {
	d=$TMP/uname-$1
	mkdir -p "$d"
	printf '#!/bin/sh\ncase "$*" in\n"-s -m") echo "Linux %s" ;;\n-m) echo %s ;;\n-s) echo Linux ;;\n*) exec /bin/uname "$@" ;;\nesac\n' \
		"$1" "$1" >"$d/uname"
	chmod +x "$d/uname"
	echo "$d"
}

# The release: every target whose binary exists.
set --
while read -r name plat _ _ _ tb _; do
	[ -x "$tb" ] && set -- "$@" "$plat=$tb"
done <"$EMU_TARGETS"
if sh release/package.sh "$version" "$rel" "$@" 2>"$TMP/err" &&
	[ "$(grep -c . "$rel/SHA256SUMS")" = $# ] &&
	(cd "$rel" && sha256sum -c --quiet SHA256SUMS) >/dev/null 2>&1; then
	pass release
else
	fail release "$(cat "$TMP/err")"
	exit 0
fi
sh release/package.sh "$version" "$TMP/rel2" "$@" 2>/dev/null
why=
for f in "$rel"/*; do cmp -s "$f" "$TMP/rel2/${f##*/}" || why="$why ${f##*/}"; done
[ -z "$why" ] && pass reproducible-release || fail reproducible-release "differs:$why"

# A binary is refused under another platform's name (ELF class and machine).
first=${1#*=}
wrong=linux-riscv64
case $1 in linux-riscv64=*) wrong=linux-arm64 ;; esac
expect_exit wrong-platform-refused 1 sh release/package.sh "$version" "$TMP/rel3" "$wrong=$first"
grep -q "is not a $wrong binary" "$TMP/err" && pass wrong-platform-message ||
	fail wrong-platform-message "$(cat "$TMP/err")"

sandbox=false
binfmt_sandbox_ok && sandbox=true

# machine MACHINE: the launcher under `uname -m` = MACHINE picks the current
# target's archive, installs it and runs it.
machine() {
	m=$1 c=$TMP/cache-$1
	path=$(fake_uname "$m"):$PATH
	want=$(sha256sum <"$E_TRACEBOX" | cut -d' ' -f1)
	run="env PATH=$path TRACEBOX_CACHE_DIR=$c TRACEBOX_RELEASE_URL=file://$rel timeout 120 sh $rel/tracebox --version"
	if [ "$E_NATIVE" = 1 ]; then
		$run >"$TMP/out" 2>"$TMP/err"
	elif $sandbox; then
		binfmt_run $run >"$TMP/out" 2>"$TMP/err"
	else
		$run >"$TMP/out" 2>"$TMP/err"
		emu "$c/$version/tracebox" --version >"$TMP/out" 2>>"$TMP/err"
	fi
	rc=$?
	got=$(sha256sum <"$c/$version/tracebox" 2>/dev/null | cut -d' ' -f1)
	if [ "$got" = "$want" ] && [ -f "$c/$version/LICENSE" ]; then
		pass "$E_NAME/$m-installs-$E_PLAT"
	else
		fail "$E_NAME/$m-installs-$E_PLAT" "cached binary ${got:-missing}, want $E_TRACEBOX ($want)" \
			"$(cat "$TMP/err")"
	fi
	if [ "$E_NATIVE" = 0 ] && ! $sandbox; then
		skip "$E_NAME/$m-launcher-runs-it" "no private binfmt_misc to exec a foreign binary (Linux 6.7+)"
		case=$m-installed-binary-runs
	else
		case=$m-launcher-runs-it
	fi
	if [ "$rc" = 0 ] && grep -q "^tracebox $version" "$TMP/out"; then
		pass "$E_NAME/$case"
	else
		fail "$E_NAME/$case" "exit $rc" "$(cat "$TMP/out" "$TMP/err")"
	fi
}

machines() {
	case $E_NAME in
	amd64) machine x86_64 ;;
	arm64) machine aarch64; machine arm64 ;;
	armv7) machine armv7l; machine armv8l ;;
	riscv64) machine riscv64 ;;
	*) skip "$E_NAME" "no machine names for target $E_NAME" ;;
	esac
}
emu_each machines

# Machines without a build: one line naming the supported ones, exit 1.
for m in armv6l i686 mips64; do
	env PATH="$(fake_uname "$m"):$PATH" TRACEBOX_CACHE_DIR="$TMP/c-$m" \
		TRACEBOX_RELEASE_URL="file://$rel" timeout 60 sh "$rel/tracebox" --version \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
		grep -q "unsupported platform 'Linux $m'.*x86_64, aarch64 (arm64), armv7l/armv8l (32-bit ARM) and riscv64" "$TMP/err" &&
		[ ! -e "$TMP/c-$m/$version" ]; then
		pass "unsupported-$m"
	else
		fail "unsupported-$m" "exit $rc" "$(cat "$TMP/err")"
	fi
done

# A release without the machine's platform says which platforms it has.
amd=$(awk '$1 == "amd64" { print $6 }' "$EMU_TARGETS")
sh release/package.sh "$version" "$TMP/rel-one" "linux-amd64=$amd" 2>/dev/null
env PATH="$(fake_uname riscv64):$PATH" TRACEBOX_CACHE_DIR="$TMP/c-one" \
	TRACEBOX_RELEASE_URL="file://$TMP/rel-one" timeout 60 sh "$TMP/rel-one/tracebox" --version \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" = 1 ] && grep -qx "tracebox: release $version has no binary for linux-riscv64 (it has: linux-amd64)" "$TMP/err"; then
	pass missing-platform
else
	fail missing-platform "exit $rc" "$(cat "$TMP/err")"
fi
