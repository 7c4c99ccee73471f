# Journal files and linux.systemd_journald. The files are real: written by
# systemd's own systemd-journal-remote from journal export streams
# (tests/cli/journald.py makes them: priorities, identifiers, units,
# multi-line, UTF-8, binary, repeated and large, so ZSTD-compressed,
# values), in every layout systemd 252 writes (compact or regular, keyed
# siphash or Jenkins hashes); journalctl reading the same file is the
# reference.
#   reader    every entry's fields and timestamps equal `journalctl -o json`;
#             the data source's filters give journalctl's matches; DATA
#             lookups through the hash table and field value lists equal
#             journalctl's; LZ4 payloads (the lz4 tool's blocks, laid out as
#             journald writes them) decode; XZ ones are counted, the entry
#             kept; cut, corrupted and half-written files never crash it
#   capture   a capture records exactly the entries appended while it runs,
#             from a file growing under it, across its rotation, and from a
#             file created during it (not archived files, not a copy of old
#             entries, not a file that is no journal), with their fields, BOOTTIME timestamps and journalctl's
#             matches as filters; the counters reach the stats table; no
#             folder, or journald's own folders, still make a valid trace
. tests/lib.sh

JR=/lib/systemd/systemd-journal-remote
DUMP=$TB_OUT/tools/journal_dump
H="python3 tests/cli/journald.py"
if ! command -v journalctl >/dev/null 2>&1 || [ ! -x "$JR" ] || ! command -v python3 >/dev/null 2>&1; then
	skip journald "needs journalctl, $JR (Debian's systemd-journal-remote) and python3"
	exit 0
fi
if [ ! -x "$DUMP" ]; then
	skip journald "no $DUMP (./build.sh tests builds it)"
	exit 0
fi

# mkjournal FILE [VAR=VALUE...] < export: a journal file from an export stream.
mkjournal() {
	out=$1
	shift
	env "$@" "$JR" --output="$out" - >/dev/null 2>&1
}

# same CASE FILE1 FILE2: pass when equal and not empty.
same() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "$(wc -l <"$2") vs $(wc -l <"$3") lines" "$(diff "$2" "$3" | head -5 | cut -c1-300)"
	fi
}

# ---- the reader against journalctl -------------------------------------------

$H gen 1 400 >"$TMP/g.exp"
for v in compact:- regular:SYSTEMD_JOURNAL_COMPACT=0 jenkins:SYSTEMD_JOURNAL_KEYED_HASH=0 \
	regular-jenkins:SYSTEMD_JOURNAL_COMPACT=0,SYSTEMD_JOURNAL_KEYED_HASH=0; do
	name=${v%%:*} vars=$(echo "${v#*:}" | tr ',' ' ' | sed 's/^-$//')
	f=$TMP/$name.journal
	# shellcheck disable=SC2086
	mkjournal "$f" $vars <"$TMP/g.exp"
	flags=$(journalctl --file "$f" --header | sed -n 's/^Incompatible flags: //p')
	journalctl --file "$f" -o json --all | $H norm-journalctl >"$TMP/j"
	"$DUMP" "$f" 2>"$TMP/dump.err" | $H norm-dump >"$TMP/d"
	same "$name-every-entry" "$TMP/j" "$TMP/d"
	expect_eq "$name-entries" 400 "$(wc -l <"$TMP/d")"
	expect_eq "$name-nothing-bad" "entries=400 bad_entries=0 bad_items=0 undecoded=0 truncated=0 bad_chain=0" \
		"$(tail -n 1 "$TMP/dump.err")"
	case $name in
	compact) expect_eq compact-flags "COMPRESSED-ZSTD KEYED-HASH COMPACT" "$flags" ;;
	regular-jenkins) expect_eq regular-jenkins-flags "COMPRESSED-ZSTD" "$flags" ;;
	esac

	# The data source's filters against journalctl's matches.
	n=0
	while IFS='|' read -r ours theirs; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		journalctl --file "$f" -o json --all $theirs | $H norm-journalctl >"$TMP/j"
		# shellcheck disable=SC2086
		"$DUMP" $ours "$f" 2>/dev/null | $H norm-dump >"$TMP/d"
		same "$name-filter-$n" "$TMP/j" "$TMP/d"
	done <<-'EOF'
		--prio 0|-p 0
		--prio 3|-p 3
		--prio 6|-p 6
		--ident app --ident cron|SYSLOG_IDENTIFIER=app SYSLOG_IDENTIFIER=cron
		--unit ssh.service|_SYSTEMD_UNIT=ssh.service
		--prio 4 --ident sshd --unit cron.service --unit app.service|-p 4 SYSLOG_IDENTIFIER=sshd _SYSTEMD_UNIT=cron.service _SYSTEMD_UNIT=app.service
	EOF

	# DATA objects through the data hash table and their entry arrays.
	for m in SYSLOG_IDENTIFIER=app _HOSTNAME=host1 PRIORITY=7 _COMM=sshd; do
		journalctl --file "$f" -o json --all "$m" | $H norm-journalctl >"$TMP/j"
		"$DUMP" --data "$m" "$f" 2>/dev/null | $H norm-dump >"$TMP/d"
		same "$name-lookup-$m" "$TMP/j" "$TMP/d"
	done
	expect_eq "$name-lookup-absent" "" "$("$DUMP" --data MESSAGE=absent "$f" 2>/dev/null)"
	# A field's values through the field hash table (journalctl -F).
	journalctl --file "$f" -F _SYSTEMD_UNIT | sort >"$TMP/j"
	"$DUMP" --field _SYSTEMD_UNIT "$f" 2>/dev/null |
		python3 -c 'import sys; [print(bytes.fromhex(l.strip()).decode()) for l in sys.stdin]' | sort >"$TMP/d"
	same "$name-field-values" "$TMP/j" "$TMP/d"
done

# LZ4 and XZ payloads: the compact file's ZSTD objects compressed again.
if command -v lz4 >/dev/null 2>&1 && command -v zstd >/dev/null 2>&1; then
	n=$($H recompress "$TMP/compact.journal" "$TMP/lz4.journal" lz4)
	[ "$n" -gt 10 ] && pass lz4-objects || fail lz4-objects "$n objects recompressed"
	journalctl --file "$TMP/lz4.journal" -o json --all | $H norm-journalctl >"$TMP/j"
	"$DUMP" "$TMP/lz4.journal" 2>"$TMP/dump.err" | $H norm-dump >"$TMP/d"
	same lz4-every-entry "$TMP/j" "$TMP/d"
	n=$($H recompress "$TMP/compact.journal" "$TMP/xz.journal" xz)
	journalctl --file "$TMP/xz.journal" -o json --all | $H norm-journalctl xz >"$TMP/j"
	"$DUMP" "$TMP/xz.journal" 2>"$TMP/dump.err" | $H norm-dump >"$TMP/d"
	same xz-entries-kept "$TMP/j" "$TMP/d"
	expect_eq xz-counted "undecoded=$n" "$(tail -n 1 "$TMP/dump.err" | grep -o 'undecoded=[0-9]*')"
else
	skip lz4-and-xz "needs the lz4 and zstd tools"
fi

# Cut after every 4 KiB (and at odd places), then bytes flipped: never a
# crash; a cut file gives the entries before the cut, exactly.
"$DUMP" "$TMP/compact.journal" >"$TMP/full" 2>/dev/null
end=$(python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(); t=struct.unpack_from("<Q",b,136)[0]; print(t+struct.unpack_from("<Q",b,t+8)[0])' "$TMP/compact.journal")
bad=
cut=0
while [ "$cut" -le "$((end + 4096))" ]; do
	for c in "$cut" "$((cut + 7))" "$((cut + 1021))"; do
		head -c "$c" "$TMP/compact.journal" >"$TMP/cut.journal"
		"$DUMP" "$TMP/cut.journal" >"$TMP/part" 2>/dev/null
		rc=$?
		if [ "$rc" -gt 1 ] || ! head -n "$(wc -l <"$TMP/part")" "$TMP/full" | cmp -s - "$TMP/part"; then
			bad="$bad $c:$rc"
		fi
	done
	cut=$((cut + 4096))
done
expect_eq cut-files-read-up-to-the-cut "" "$bad"
python3 - "$TMP/compact.journal" "$TMP/flip" "$end" <<'PY'
import random, sys
b = open(sys.argv[1], "rb").read()[:int(sys.argv[3])]
r = random.Random(2500)
for i in range(150):
    c = bytearray(b)
    for _ in range(1 + i % 8):
        c[r.randrange(len(c))] = r.randrange(256)
    open("%s.%d.journal" % (sys.argv[2], i), "wb").write(c)
PY
bad=
for f in "$TMP"/flip.*.journal; do
	"$DUMP" "$f" >/dev/null 2>&1
	rc=$?
	[ "$rc" -gt 1 ] && bad="$bad $(basename "$f"):$rc"
	"$DUMP" --data SYSLOG_IDENTIFIER=app "$f" >/dev/null 2>&1
	rc=$?
	[ "$rc" -gt 1 ] && bad="$bad data-$(basename "$f"):$rc"
done
expect_eq corrupted-files-no-crash "" "$bad"
rm -f "$TMP"/flip.*.journal

# Half written: the writer killed mid-stream leaves an ONLINE file, which
# journalctl reads; so do we, the same entries.
$H gen 7 200 >"$TMP/h.exp"
python3 -c '
import sys, time
d = open(sys.argv[1], "rb").read()
sys.stdout.buffer.write(d[:len(d) * 2 // 3]); sys.stdout.buffer.flush(); time.sleep(30)' "$TMP/h.exp" |
	"$JR" --output="$TMP/half.journal" - >/dev/null 2>&1 &
for _ in $(seq 50); do
	[ -s "$TMP/half.journal" ] && [ "$(journalctl --file "$TMP/half.journal" 2>/dev/null | wc -l)" -gt 100 ] && break
	sleep 0.1
done
jrpid=$(pgrep -f "output=$TMP/half.journal")
[ -n "$jrpid" ] && kill -9 $jrpid
wait 2>/dev/null
expect_eq half-written-online "ONLINE" "$(journalctl --file "$TMP/half.journal" --header | sed -n 's/^State: //p')"
journalctl --file "$TMP/half.journal" -o json --all 2>/dev/null | $H norm-journalctl >"$TMP/j"
"$DUMP" "$TMP/half.journal" 2>/dev/null | $H norm-dump >"$TMP/d"
same half-written-entries "$TMP/j" "$TMP/d"

# ---- captures -----------------------------------------------------------------

# rows TRACE: each journald row as expect-rows prints one (sorted).
rows() {
	tp_query "$1" "select lower(hex(l.msg)) || ',' || l.prio || ',' || lower(hex(l.tag)) || ',' ||
		coalesce(p.pid, '') || ',' || coalesce(t.tid, '') || ',' ||
		coalesce(extract_arg(l.arg_set_id, 'uid'), '') || ',' ||
		lower(hex(extract_arg(l.arg_set_id, 'comm'))) || ',' ||
		lower(hex(extract_arg(l.arg_set_id, 'systemd_unit'))) || ',' ||
		lower(hex(extract_arg(l.arg_set_id, 'hostname'))) || ',' ||
		lower(hex(extract_arg(l.arg_set_id, 'transport'))) as r
		from logs l left join thread t using (utid) left join process p using (upid)
		where l.log_source = 'systemd_journald'" | sed 's/^"//; s/"$//' | sort
}
# entries_with PREFIX FILE [MATCHES...]: journalctl JSON of FILE's entries
# whose MESSAGE starts with PREFIX.
entries_with() {
	prefix=$1 file=$2
	shift 2
	journalctl --file "$file" -o json --all "$@" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line).get("MESSAGE")
    if isinstance(m, list) and m and isinstance(m[0], int):
        m = bytes(m).decode("latin-1")
    if isinstance(m, str) and m.startswith(sys.argv[1] + " "):
        sys.stdout.write(line)' "$prefix"
}

J=$TMP/jdir
mkdir -p "$J"
$H gen 10 30 now pre | mkjournal "$J/system.journal"
# An archived file (nothing is appended to those: closed at once) and one
# that is not a journal (skipped, logged).
$H gen 11 10 now archived | mkjournal "$J/system@0-1-2.journal"
printf '\002' | dd of="$J/system@0-1-2.journal" bs=1 seek=16 conv=notrunc 2>/dev/null
head -c 8192 /dev/urandom >"$J/junk.journal"
cat >"$TMP/j.pbtx" <<'CFG'
buffers { size_kb: 8192 fill_policy: DISCARD }
data_sources { config { name: "linux.systemd_journald" } }
CFG
# During the capture: 60 entries appended to the file followed from its
# tail, which is then rotated as journald does (renamed, archived, a new
# system.journal with 15 entries); 25 in a file made during the capture;
# and a file of old entries copied in (skipped: written before the start).
cat >"$TMP/during.sh" <<EOF
$H gen 12 60 now during | "$JR" --output="$J/system.journal" - >/dev/null 2>&1
mv "$J/system.journal" "$J/system@0123-0001-0002.journal"
printf '\002' | dd of="$J/system@0123-0001-0002.journal" bs=1 seek=16 conv=notrunc 2>/dev/null
$H gen 16 15 now during3 | "$JR" --output="$J/system.journal" - >/dev/null 2>&1
$H gen 13 25 now during2 | "$JR" --output="$J/user-1000.journal" - >/dev/null 2>&1
$H gen 14 15 old copied | "$JR" --output="$J/copied.journal" - >/dev/null 2>&1
EOF
expect_exit capture 0 env TRACEBOX_JOURNAL_DIRS="$J" "$TRACEBOX" --txt -c "$TMP/j.pbtx" \
	-o "$TMP/j.pftrace" -- sh "$TMP/during.sh"
$H gen 15 10 now post | mkjournal "$J/system.journal"
expect_eq capture-v57-query '"systemd_journald",100' \
	"$(tp_query "$TMP/j.pftrace" "select log_source, count(*) as n from logs where msg is not null group by log_source")"
{
	entries_with during "$J/system@0123-0001-0002.journal"
	entries_with during3 "$J/system.journal"
	entries_with during2 "$J/user-1000.journal"
} | $H expect-rows | sort >"$TMP/expected"
rows "$TMP/j.pftrace" >"$TMP/actual"
expect_eq capture-expected-count 100 "$(wc -l <"$TMP/expected")"
same capture-exactly-the-entries-appended "$TMP/expected" "$TMP/actual"
expect_eq capture-counters '"0,100"' "$(tp_query "$TMP/j.pftrace" "select
	(select value from stats where name = 'systemd_journal_num_failed') || ',' ||
	(select value from stats where name = 'systemd_journal_num_total') as r")"
# BOOTTIME: each entry's ts is its monotonic time plus the clocks' offset.
entries_with during "$J/system@0123-0001-0002.journal" | python3 -c '
import json, sys
for l in sys.stdin:
    print(json.loads(l)["__MONOTONIC_TIMESTAMP"])' >"$TMP/mono"
tp_query "$TMP/j.pftrace" "select ts from logs where msg like 'during %' order by ts" >"$TMP/ts"
off=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
expect_eq capture-boottime ok "$(paste -d' ' "$TMP/mono" "$TMP/ts" | awk -v off="$off" '
	{ d = $2 - $1 * 1000; if (NR == 1) first = d; if (d != first) bad = 1 }
	END { if (NR != 60 || bad || first - off > 5000000 || off - first > 5000000) print "bad " NR " " first " " off; else print "ok" }')"

# Filters: journalctl's matches on the entries appended.
J2=$TMP/jdir2
mkdir -p "$J2"
$H gen 20 5 now pre | mkjournal "$J2/system.journal"
cat >"$TMP/f.pbtx" <<'CFG'
buffers { size_kb: 8192 fill_policy: DISCARD }
data_sources { config { name: "linux.systemd_journald" journald_config {
	min_prio: 4 filter_identifiers: "app" filter_identifiers: "sshd"
	filter_units: "ssh.service" filter_units: "app.service" } } }
CFG
expect_exit capture-filtered 0 env TRACEBOX_JOURNAL_DIRS="$J2" "$TRACEBOX" --txt -c "$TMP/f.pbtx" \
	-o "$TMP/f.pftrace" -- sh -c "$H gen 21 300 now during | '$JR' --output='$J2/system.journal' - >/dev/null 2>&1"
entries_with during "$J2/system.journal" -p 4 SYSLOG_IDENTIFIER=app SYSLOG_IDENTIFIER=sshd \
	_SYSTEMD_UNIT=ssh.service _SYSTEMD_UNIT=app.service | $H expect-rows | sort >"$TMP/expected"
rows "$TMP/f.pftrace" >"$TMP/actual"
same capture-filters-are-journalctl-matches "$TMP/expected" "$TMP/actual"
n=$(wc -l <"$TMP/expected")
[ "$n" -gt 5 ] && [ "$n" -lt 150 ] && pass capture-filters-select || fail capture-filters-select "$n of 300"

# No journal folder at all: a valid trace without entries; journald's own
# folders (whatever this machine has): a valid trace.
expect_exit capture-no-folder 0 env TRACEBOX_JOURNAL_DIRS="$TMP/none" "$TRACEBOX" --txt \
	-c "$TMP/j.pbtx" -o "$TMP/n.pftrace" -- true
expect_eq capture-no-folder-empty '"0,0"' "$(tp_query "$TMP/n.pftrace" "select
	(select count(*) from logs) || ',' || (select value from stats where name = 'systemd_journal_num_total') as r")"
expect_exit capture-system-folders 0 env -u TRACEBOX_JOURNAL_DIRS "$TRACEBOX" --txt -c "$TMP/j.pbtx" \
	-o "$TMP/s.pftrace" -- true
expect_eq capture-system-folders-counted 1 \
	"$(tp_query "$TMP/s.pftrace" "select count(*) from stats where name = 'systemd_journal_num_total'")"
