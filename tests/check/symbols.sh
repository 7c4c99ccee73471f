#!/bin/sh
# tests/check/symbols.sh OBJDIR: every external symbol a component defines
# carries that component's prefix (STYLE.md, Names), so that no two
# components, and none of them and SQLite, mbedtls, zlib or protobuf-c, can
# define the same name. OBJDIR holds the objects as build.sh lays them out
# (OBJDIR/components/<name>/**/*.o). Prints each symbol without its prefix
# as "component: symbol (file)" and exits 1 when there is any.
#
# The table: a component's prefixes; base keeps short family prefixes
# (STYLE.md). The exceptions are the applets' entry points, which carry the
# applet's name (tracebox/applets.c's table), the C entry point, and base's
# memcmp, which replaces musl's byte-at-a-time one in the static builds
# (base/memcmp.c).
set -u
objdir=${1:?usage: tests/check/symbols.sh OBJDIR}
[ -d "$objdir/components" ] || { echo "symbols.sh: no objects in '$objdir/components'" >&2; exit 2; }

prefixes() {
	case $1 in
	base) echo "tb_ arena_ vec_ strpool_ hmap_ log_ loop_ elf_ sym_ ksyms_ http_ =memcmp" ;;
	perf) echo "perf_ =traced_perf_main" ;;
	probes) echo "probes_ =traced_probes_main" ;;
	trace_processor) echo "tp_ =trace_processor_shell_main" ;;
	tracebox) echo "tracebox_ =main" ;;
	*) echo "$1_" ;;
	esac
}

bad=0
for dir in "$objdir"/components/*/; do
	c=$(basename "$dir")
	p=$(prefixes "$c")
	out=$(find "$dir" -name '*.o' | LC_ALL=C sort | xargs -r nm -A -g --defined-only |
		awk -v p="$p" -v c="$c" -v root="$objdir/" '
			BEGIN { n = split(p, pre, " ") }
			NF == 3 {
				sym = $3
				file = $1; sub(/:[^:]*$/, "", file); sub(root, "", file)
				for (i = 1; i <= n; i++) {
					if (substr(pre[i], 1, 1) == "=") {
						if (sym == substr(pre[i], 2)) next
					} else if (index(sym, pre[i]) == 1) next
				}
				print c ": " sym " (" file ")"
			}')
	[ -z "$out" ] && continue
	printf '%s\n' "$out"
	bad=$((bad + $(printf '%s\n' "$out" | wc -l)))
done
[ "$bad" = 0 ] && exit 0
echo "symbols.sh: $bad external symbols without their component's prefix (STYLE.md, Names)" >&2
exit 1
