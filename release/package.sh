#!/bin/sh
# release/package.sh: turn built binaries into release files.
#
#   sh release/package.sh VERSION OUTDIR PLATFORM=BINARY...
#   sh release/package.sh BINARY VERSION OUTDIR     (one binary, this machine's platform)
#
# PLATFORM is linux-amd64, linux-arm64, linux-armv7 or linux-riscv64; each
# BINARY's ELF header must match it (class and machine), so a binary cannot
# be shipped under another platform's name. Recreates OUTDIR with
#   tracebox-VERSION-PLATFORM.tar.gz  per platform: folder
#                                     tracebox-VERSION-PLATFORM/ holding
#                                     tracebox (0755) and LICENSE (0644)
#   SHA256SUMS                        sha256sum lines for every archive
#   tracebox                          the launcher (../tracebox) with a manifest
#                                     pinning every archive of this release
#
# The output is byte-for-byte reproducible: tar entries are sorted, owned by
# 0:0 and dated SOURCE_DATE_EPOCH (else the last commit's time, else 0), and
# gzip stores no name or time.
#
# TRACEBOX_RELEASE_BASE_URL sets where the launcher downloads the archives
# from (URL = base/<archive name>); the default is a placeholder.
set -eu

die() { printf 'package.sh: %s\n' "$*" >&2; exit 1; }

usage="usage: sh release/package.sh VERSION OUTDIR PLATFORM=BINARY... (or BINARY VERSION OUTDIR)"
[ $# -ge 3 ] || die "$usage"
if [ $# -eq 3 ] && [ -f "$1" ]; then
	case $(uname -m) in
	x86_64 | amd64) plat=linux-amd64 ;;
	aarch64 | arm64) plat=linux-arm64 ;;
	armv7l | armv8l) plat=linux-armv7 ;;
	riscv64) plat=linux-riscv64 ;;
	*) die "no release platform name for machine '$(uname -m)'" ;;
	esac
	set -- "$2" "$3" "$plat=$1"
fi
version=$1 outdir=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
base_url=${TRACEBOX_RELEASE_BASE_URL:-https://example.invalid/tracebox/releases/$version}
base_url=${base_url%/}

[ -f "$root/LICENSE" ] || die "no LICENSE in '$root'"
[ -f "$root/tracebox" ] || die "no launcher template '$root/tracebox'"
case $version in *[!0-9A-Za-z.+-]* | "") die "bad version '$version'" ;; esac
case $base_url in *[!!-~]* | *\'*) die "base URL must be printable ASCII without quotes or spaces" ;; esac

# elf_id FILE: "<class> <machine>" from FILE's ELF header (class 1 = 32-bit,
# 2 = 64-bit; e_machine as a decimal number), or nothing if not ELF.
elf_id() {
	[ "$(od -An -c -N4 "$1" | tr -d ' ')" = 177ELF ] || return 0
	printf '%s %s\n' "$(od -An -tu1 -j4 -N1 "$1" | tr -d ' ')" \
		"$(od -An -tu2 -j18 -N2 --endian=little "$1" | tr -d ' ')"
}

# Each platform's ELF class and e_machine (EM_X86_64 62, EM_AARCH64 183,
# EM_ARM 40, EM_RISCV 243).
plats=
for arg in "$@"; do
	plat=${arg%%=*} binary=${arg#*=}
	case $plat in
	linux-amd64) want="2 62" ;;
	linux-arm64) want="2 183" ;;
	linux-armv7) want="1 40" ;;
	linux-riscv64) want="2 243" ;;
	*) die "unknown platform '$plat' in '$arg' (platforms: linux-amd64 linux-arm64 linux-armv7 linux-riscv64)" ;;
	esac
	[ "$arg" != "$plat" ] && [ -f "$binary" ] || die "no binary '$binary' for $plat"
	got=$(elf_id "$binary")
	[ "$got" = "$want" ] ||
		die "'$binary' is not a $plat binary (ELF class and machine: ${got:-not ELF}, expected $want)"
	case " $plats " in *" $plat "*) die "platform $plat given twice" ;; esac
	plats="$plats $plat"
done

mtime=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)}
mtime=${mtime:-0}

rm -rf "$outdir"
mkdir -p "$outdir/.stage"
stage=$outdir/.stage
trap 'rm -rf "$stage"' EXIT

# One archive per platform, in platform order; manifest lines collected in
# $stage/manifest.
: >"$stage/manifest"
for plat in $(printf '%s\n' $plats | LC_ALL=C sort); do
	for arg in "$@"; do
		[ "${arg%%=*}" = "$plat" ] && binary=${arg#*=}
	done
	top=tracebox-$version-$plat
	archive=$top.tar.gz
	mkdir "$stage/$top"
	cp "$binary" "$stage/$top/tracebox"
	cp "$root/LICENSE" "$stage/$top/LICENSE"
	chmod 0755 "$stage/$top" "$stage/$top/tracebox"
	chmod 0644 "$stage/$top/LICENSE"
	tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$mtime" --format=gnu -cf - "$top" | gzip -n -9 >"$outdir/$archive"
	size=$(wc -c <"$outdir/$archive" | tr -d ' ')
	sha=$(sha256sum <"$outdir/$archive" | cut -d' ' -f1)
	bin_sha=$(sha256sum <"$stage/$top/tracebox" | cut -d' ' -f1)
	echo "$plat $archive $size $sha $bin_sha $base_url/$archive" >>"$stage/manifest"
done
(cd "$outdir" && sha256sum tracebox-"$version"-*.tar.gz) >"$outdir/SHA256SUMS"

# The launcher: the template with the lines between its manifest markers
# replaced by this release's manifest.
awk -v version="$version" -v q="'" -v list="$stage/manifest" '
	/^# >>> manifest/ {
		print; n++; skip = 1
		print "TB_VERSION=" version
		print "# platform file size sha256(archive) sha256(tracebox) url"
		print "TB_MANIFEST=" q
		while ((getline line < list) > 0) print line
		print q
		next
	}
	/^# <<< manifest/ { skip = 0; n++ }
	!skip { print }
	END { if (n != 2) exit 1 }
' "$root/tracebox" >"$outdir/tracebox" || die "no manifest markers in '$root/tracebox'"
chmod 0755 "$outdir/tracebox"
