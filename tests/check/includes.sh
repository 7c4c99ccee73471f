#!/bin/sh
# tests/check/includes.sh: no component includes another component's
# private headers (STYLE.md, Layout). A component's private headers are its
# *_int.h files and every header in its subfolders (components/X/sub/*.h);
# only components/X/X.h (and other top-level X/*.h) is for other
# components. Tests, fuzz targets, tools and benchmarks (tests/, bench/) are
# white-box and may include any of them. Prints "file: includes 'header'
# (private to X)" for each violation and exits 1 when there is any. Run from
# the top of the tree.
set -u

# "header component" for every private header, under both names a file can
# include it by (its base name, with -I components/X/sub, or X-relative).
map=$(find components -name '*.h' | LC_ALL=C sort | awk -F/ '
	NF == 3 && $3 ~ /_int\.h$/ { print $3, $2; next }
	NF == 3 { next }
	{ n = $3; for (i = 4; i <= NF; i++) n = n "/" $i; print $NF, $2; print n, $2 }')

out=$(find components -name '*.[ch]' | LC_ALL=C sort | xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
	sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
	awk -v map="$map" '
		BEGIN { n = split(map, m, "\n"); for (i = 1; i <= n; i++) { split(m[i], kv, " "); own[kv[1]] = kv[2] } }
		{
			split($1, parts, "/"); c = own[$2]
			if (c != "" && c != parts[2]) print $1 ": includes \x27" $2 "\x27 (private to " c ")"
		}')
[ -z "$out" ] && exit 0
printf '%s\n' "$out"
echo "includes.sh: $(printf '%s\n' "$out" | wc -l) includes of another component's private headers (STYLE.md, Layout)" >&2
exit 1
