# The recorder's output file (issue 21, lows): `-o DIR` is refused before
# the capture, not after it; a recorder killed with SIGKILL leaves no hidden
# temporary file behind (the trace is written to an unnamed O_TMPFILE and
# only linked into place when complete).
. tests/lib.sh

mkdir "$TMP/dir"
start=$(date +%s)
expect_exit out-dir-refused 1 timeout 20 "$TRACEBOX" -t 3s -o "$TMP/dir"
took=$(($(date +%s) - start))
[ $took -le 1 ] && pass out-dir-refused-early || fail out-dir-refused-early "after $took s"
grep -q "Is a directory" "$TMP/err" && pass out-dir-message || fail out-dir-message "$(cat "$TMP/err")"

T5100_MARK=$$-k "$TRACEBOX" -t 10s -o "$TMP/k.pftrace" 2>"$TMP/k.err" &
cap=$!
sleep 1
kill -9 $cap
wait $cap 2>/dev/null
sleep 0.5
expect_eq killed-no-hidden-file "" "$(ls -A "$TMP" | grep '^\.k\.pftrace')"
[ -e "$TMP/k.pftrace" ] && fail killed-no-partial-file || pass killed-no-partial-file
for p in $(marked_pids "T5100_MARK=$$-k"); do kill -9 $p; done
