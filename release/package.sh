#!/bin/sh
# release/package.sh: turn a built binary into release files.
#
#   sh release/package.sh BINARY VERSION OUTDIR
#
# Recreates OUTDIR with
#   tracebox-VERSION-PLATFORM.tar.gz  folder tracebox-VERSION-PLATFORM/ holding
#                                     tracebox (0755) and LICENSE (0644)
#   SHA256SUMS                        sha256sum lines for the archive
#   tracebox                          the launcher (../tracebox) with a manifest
#                                     pinning this release
# PLATFORM is this machine's (uname -m): linux-amd64 or linux-arm64.
#
# The output is byte-for-byte reproducible: tar entries are sorted, owned by
# 0:0 and dated SOURCE_DATE_EPOCH (else the last commit's time, else 0), and
# gzip stores no name or time.
#
# TRACEBOX_RELEASE_BASE_URL sets where the launcher downloads the archive from
# (URL = base/<archive name>); the default is a placeholder.
set -eu

die() { printf 'package.sh: %s\n' "$*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: sh release/package.sh BINARY VERSION OUTDIR"
binary=$1 version=$2 outdir=$3
root=$(cd "$(dirname "$0")/.." && pwd)
base_url=${TRACEBOX_RELEASE_BASE_URL:-https://example.invalid/tracebox/releases/$version}
base_url=${base_url%/}

[ -f "$binary" ] || die "no binary '$binary'"
[ -f "$root/LICENSE" ] || die "no LICENSE in '$root'"
[ -f "$root/tracebox" ] || die "no launcher template '$root/tracebox'"
case $version in *[!0-9A-Za-z.+-]* | "") die "bad version '$version'" ;; esac
case $base_url in *[!!-~]* | *\'*) die "base URL must be printable ASCII without quotes or spaces" ;; esac

case $(uname -m) in
x86_64 | amd64) plat=linux-amd64 ;;
aarch64 | arm64) plat=linux-arm64 ;;
*) die "no release platform name for machine '$(uname -m)'" ;;
esac

mtime=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)}
mtime=${mtime:-0}

top=tracebox-$version-$plat
archive=$top.tar.gz

rm -rf "$outdir"
mkdir -p "$outdir/.stage/$top"
stage=$outdir/.stage
trap 'rm -rf "$stage"' EXIT

cp "$binary" "$stage/$top/tracebox"
cp "$root/LICENSE" "$stage/$top/LICENSE"
chmod 0755 "$stage/$top" "$stage/$top/tracebox"
chmod 0644 "$stage/$top/LICENSE"

tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
	--mtime="@$mtime" --format=gnu -cf - "$top" | gzip -n -9 >"$outdir/$archive"

size=$(wc -c <"$outdir/$archive" | tr -d ' ')
sha=$(sha256sum <"$outdir/$archive" | cut -d' ' -f1)
bin_sha=$(sha256sum <"$stage/$top/tracebox" | cut -d' ' -f1)
(cd "$outdir" && sha256sum "$archive") >"$outdir/SHA256SUMS"

# The launcher: the template with the lines between its manifest markers
# replaced by this release's manifest.
awk -v version="$version" -v q="'" \
	-v entry="$plat $archive $size $sha $bin_sha $base_url/$archive" '
	/^# >>> manifest/ {
		print; n++; skip = 1
		print "TB_VERSION=" version
		print "# platform file size sha256(archive) sha256(tracebox) url"
		print "TB_MANIFEST=" q
		print entry
		print q
		next
	}
	/^# <<< manifest/ { skip = 0; n++ }
	!skip { print }
	END { if (n != 2) exit 1 }
' "$root/tracebox" >"$outdir/tracebox" || die "no manifest markers in '$root/tracebox'"
chmod 0755 "$outdir/tracebox"
