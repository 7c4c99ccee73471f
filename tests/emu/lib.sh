# tests/emu/lib.sh: sourced by tests/emu/*.sh after tests/lib.sh.
#
# The emulated tier runs each release target's binaries under its qemu
# user-mode emulator, on the oldest CPU model its code generation allows
# (build.sh's TARGETS table). ./build.sh tests lists what it built in
# $TB_OUT/emu/targets, one target a line:
#   name platform qemu cpu native(1|0) tracebox unit tools-folder
# The host's own target (amd64 here) runs under qemu too, on QEMU's x86-64
# baseline model qemu64, to prove the binary needs nothing newer.

EMU_TARGETS=$TB_OUT/emu/targets

# emu_each CMD: run CMD once per target whose binaries exist and whose
# emulator is installed, with E_NAME, E_PLAT, E_QEMU, E_CPU, E_NATIVE,
# E_TRACEBOX, E_UNIT and E_TOOLS set; other targets are reported SKIP
# (case E_NAME). Returns 1, having reported SKIP all, when there is no list.
emu_each() {
	if [ ! -f "$EMU_TARGETS" ]; then
		skip all "no $EMU_TARGETS (./build.sh tests builds every target)"
		return 1
	fi
	while read -r E_NAME E_PLAT E_QEMU E_CPU E_NATIVE E_TRACEBOX E_UNIT E_TOOLS; do
		[ -n "$E_NAME" ] || continue
		if ! command -v "$E_QEMU" >/dev/null 2>&1; then
			skip "$E_NAME" "$E_QEMU not installed (qemu-user-static; ./build.sh test installs it as root)"
		elif [ ! -x "$E_TRACEBOX" ] || [ ! -x "$E_UNIT" ]; then
			skip "$E_NAME" "$E_TRACEBOX or $E_UNIT not built"
		else
			"$@" </dev/null
		fi
	done <"$EMU_TARGETS"
}

# emu_each_parallel CMD: emu_each, with up to $TB_EMU_JOBS targets (default:
# the number of CPUs) at once. Each target's output is held in a file and
# printed whole, in the targets' order, so results read as emu_each's do. For
# scripts whose per-target work shares no port, path or global state.
emu_each_parallel() {
	jobs=${TB_EMU_JOBS:-$(nproc 2>/dev/null || echo 1)}
	[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
	if [ "$jobs" -eq 1 ]; then
		emu_each "$@"
		return
	fi
	if [ ! -f "$EMU_TARGETS" ]; then
		emu_each "$@"
		return
	fi
	n=0 running=0
	while read -r E_NAME E_PLAT E_QEMU E_CPU E_NATIVE E_TRACEBOX E_UNIT E_TOOLS; do
		[ -n "$E_NAME" ] || continue
		n=$((n + 1))
		(
			echo "$E_NAME $E_PLAT $E_QEMU $E_CPU $E_NATIVE $E_TRACEBOX $E_UNIT $E_TOOLS" >"$TMP/emu-job-$n.targets"
			EMU_TARGETS=$TMP/emu-job-$n.targets emu_each "$@"
		) </dev/null >"$TMP/emu-job-$n.out" 2>"$TMP/emu-job-$n.err" &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait
			running=0
		fi
	done <"$EMU_TARGETS"
	wait
	i=1
	while [ "$i" -le "$n" ]; do
		cat "$TMP/emu-job-$i.out"
		cat "$TMP/emu-job-$i.err" >&2
		i=$((i + 1))
	done
}

# emu CMD...: run a binary of the current target under its emulator and
# CPU model (QEMU_CPU is inherited by what it execs under binfmt, below).
emu() { QEMU_CPU=$E_CPU "$E_QEMU" -cpu "$E_CPU" "$@"; }

# emu_wrapper PATH: write an executable script at PATH that runs the
# current target's tracebox under the emulator with its arguments, for
# tools that take one command ($TRACEBOX-style).
emu_wrapper() {
	printf '#!/bin/sh\nQEMU_CPU=%s exec %s -cpu %s %s "$@"\n' "$E_CPU" \
		"$(command -v "$E_QEMU")" "$E_CPU" "$E_TRACEBOX" >"$1"
	chmod +x "$1"
}

# binfmt_sandbox_ok: true when this kernel gives a new user namespace its
# own binfmt_misc (Linux 6.7+) and unshare can make one: then
# binfmt_run runs a command in which foreign ELF binaries are executed by
# their qemu, without touching the machine's binfmt_misc.
binfmt_sandbox_ok() {
	command -v unshare >/dev/null 2>&1 &&
		unshare --user --map-root-user --mount sh -c \
			'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc' 2>/dev/null
}

# binfmt_run CMD...: CMD in a private user and mount namespace whose
# binfmt_misc sends the current target's ELF binaries to its qemu (magic
# and mask from qemu-user-static's /usr/lib/binfmt.d entry; flag F: the
# interpreter is opened now, so it needs no path inside the namespace).
binfmt_run() {
	name=${E_QEMU%-static}
	conf=/usr/lib/binfmt.d/$name.conf
	[ -f "$conf" ] || return 127
	rule=$(awk -F: -v q="$(command -v "$E_QEMU")" 'BEGIN { OFS = ":" }
		{ $7 = q; $8 = "F"; print; exit }' "$conf")
	QEMU_CPU=$E_CPU unshare --user --map-root-user --mount sh -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc &&
			printf "%s" "$1" >/proc/sys/fs/binfmt_misc/register || exit 125
		shift
		exec "$@"' sh "$rule" "$@"
}
