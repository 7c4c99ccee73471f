#!/bin/sh
# tests/tools/table_sums.sh TRACEBOX TRACE...: one line per (trace, table),
# "trace table rows sha1", from `export sqlite` read back by Debian's sqlite3
# (every table and view the export writes, all rows in their order). Used to
# prove a speed change keeps every answer: run it before and after on the
# same traces and diff the two outputs. A trace that does not load prints
# "trace - error". Not a test: it asserts nothing.
set -u
tb=$1
shift
command -v sqlite3 >/dev/null 2>&1 || { echo "table_sums.sh: needs sqlite3" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "$@"; do
	name=$(basename "$t")
	rm -f "$tmp/x.db"
	if ! "$tb" trace_processor_shell export sqlite -o "$tmp/x.db" "$t" >/dev/null 2>&1; then
		echo "$name - error"
		continue
	fi
	sqlite3 "$tmp/x.db" "select name from sqlite_master where type in ('table', 'view') order by name" |
		while IFS= read -r tab; do
			n=$(sqlite3 "$tmp/x.db" "select count(*) from \"$tab\"")
			h=$(sqlite3 -csv "$tmp/x.db" "select * from \"$tab\"" | sha1sum | cut -c1-16)
			echo "$name $tab $n $h"
		done
done
