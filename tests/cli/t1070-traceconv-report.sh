#!/bin/sh
# traceconv report: one self-contained HTML flame graph. Without a browser:
# the page references nothing outside itself and carries the samples. In
# headless Chromium (SKIP when not installed; ./build.sh test installs it):
# for views set through the URL hash (search, bottom-up, thread, time range)
# the page loads without a script error, draws exactly the rectangles the
# perf script text implies (tests/data/traceconv/flame_expect.py, computed
# without tracebox), and the searched frame's rectangles, and only they,
# carry the highlight class.
. tests/lib.sh

bin=$TRACEBOX
[ -x "$TB_OUT/asan/tracebox" ] && bin=$TB_OUT/asan/tracebox
data=tests/data/traceconv
f=$TB_SHARED/corpus/perf_script/jlfwong+speedscope__simple-with-pid.linux-perf.txt

printf '{"traceEvents":[]}' >"$TMP/t.json"
expect_exit no_samples 1 "$bin" traceconv report "$TMP/t.json" "$TMP/none.html"
grep -q "has no perf samples" "$TMP/err" && [ ! -e "$TMP/none.html" ] && pass no_samples_msg ||
	fail no_samples_msg "$(cat "$TMP/err")"
if [ ! -f "$f" ]; then
	skip report "../shared/corpus/perf_script not found"
	exit 0
fi

check convert "$bin" traceconv report "$f" "$TMP/r.html"
"$bin" traceconv report - <"$f" >"$TMP/stdin.html" 2>"$TMP/err" &&
	[ "$(sed 's/"title":"[^"]*"//' "$TMP/stdin.html" | cksum)" = "$(sed 's/"title":"[^"]*"//' "$TMP/r.html" | cksum)" ] &&
	pass stdin || fail stdin "$(cat "$TMP/err")"
# Self-contained: no external script, style, image or link; the only URL is
# the SVG namespace name, which is never fetched.
if grep -Eq '<(link|img|iframe)|src=|@import|url\(' "$TMP/r.html" ||
	[ -n "$(grep -o 'https\?://[^"]*' "$TMP/r.html" | grep -v '^http://www.w3.org/2000/svg$')" ]; then
	fail self_contained "$(grep -Eo '<(link|img|iframe)[^>]*|src=[^ ]*|https?://[^"]*' "$TMP/r.html" | head -3)"
else
	pass self_contained
fi
grep -q '"title":"jlfwong+speedscope__simple-with-pid.linux-perf.txt"' "$TMP/r.html" &&
	pass data_embedded || fail data_embedded

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	skip chromium "chromium not installed (apt-get install chromium)"
	exit 0
fi
python3 "$data/perf_script_stacks.py" "$f" >"$TMP/stacks"

# view NAME HASH VIEW SEARCH TID FROM TO [ZOOM]: load report.html#HASH, compare.
view() {
	name=$1 hash=$2
	shift 2
	python3 "$data/flame_expect.py" "$@" <"$TMP/stacks" >"$TMP/want"
	echo "bad_match_rects 0" >>"$TMP/want"
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chrome" --virtual-time-budget=5000 \
		--dump-dom "file://$TMP/r.html#$hash" >"$TMP/dom" 2>"$TMP/chrome.log"
	python3 "$data/flame_dom.py" "$2" <"$TMP/dom" >"$TMP/got"
	if [ "$(head -2 "$TMP/got")" != "state ready
error -" ]; then
		fail "${name}_loaded" "$(head -2 "$TMP/got")" "$(tail -3 "$TMP/chrome.log")"
		return
	fi
	pass "${name}_loaded"
	expect_eq "$name" "$(cat "$TMP/want")" "$(tail -n +3 "$TMP/got")"
}

# Searches a function in 23 of the 137 samples; one rectangle top-down.
view search_topdown "search=_Z5gammav" topdown _Z5gammav - - -
view search_bottomup "view=bottomup&search=_Z5gammav" bottomup _Z5gammav - - -
view search_substring "search=DELTA" topdown DELTA - - -
view all_topdown "" topdown - - - -
view thread "thread=9&view=bottomup" bottomup - 9 - -
view no_thread "thread=12345" topdown - 12345 - -
# First 50 ms of samples (the sample times are 1 ms apart; 50.5 avoids ties).
view time_range "from=0&to=50.5&search=main" topdown main - 0 50.5

# Zoomed on main (called from __libc_start_main), searching delta: only the
# frames on the path to main and below it are drawn.
view zoom "zoom=%5Bunknown%5D,__libc_start_main,main&search=delta" topdown delta - - - \
	"[unknown],__libc_start_main,main"
grep -q 'data-zoom="3"' "$TMP/dom" && pass zoom_depth || fail zoom_depth "$(grep -o '<body[^>]*>' "$TMP/dom")"
# A path the graph does not have zooms as far as it goes: [unknown], every
# stack's root, so the whole graph is drawn.
view zoom_missing "zoom=%5Bunknown%5D,nosuchframe" topdown - - - - "[unknown],nosuchframe"

# A script error is reported on <body>, not swallowed.
sed 's/"v":2,/"v":2,,/' "$TMP/r.html" >"$TMP/bad.html"
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$TMP/chrome" --virtual-time-budget=5000 \
	--dump-dom "file://$TMP/bad.html" >"$TMP/dom" 2>/dev/null
python3 "$data/flame_dom.py" - <"$TMP/dom" >"$TMP/got"
grep -q '^state error' "$TMP/got" && grep -q '^error .*JSON' "$TMP/got" && pass error_reported ||
	fail error_reported "$(head -2 "$TMP/got")"
