# The multi-call binary: --help, --version, help APPLET, argv[0] and argv[1]
# dispatch, the unknown-applet error versus autostart mode, and that the
# release binary is static.
. tests/lib.sh

version=$(cat VERSION)

expect_exit version-exit 0 "$TRACEBOX" --version
case $(cat "$TMP/out") in
"tracebox $version ("*")") pass version-text ;;
*) fail version-text "got: $(cat "$TMP/out")" ;;
esac

expect_exit help-exit 0 "$TRACEBOX" --help
grep -q '^Applets:' "$TMP/out" && grep -qi 'autostart mode' "$TMP/out" &&
	pass help-lists-applets-and-autostart || fail help-lists-applets-and-autostart "$(cat "$TMP/out")"

expect_exit help-subcommand 0 "$TRACEBOX" help
expect_exit no-args-usage 1 "$TRACEBOX"
grep -q '^Usage:' "$TMP/err" && pass no-args-usage-on-stderr || fail no-args-usage-on-stderr

expect_exit unknown-applet-exit-2 2 "$TRACEBOX" no_such_applet
expect_eq unknown-applet-one-line \
	"tracebox: unknown applet 'no_such_applet' (see tracebox --help)" "$(cat "$TMP/err")"
expect_exit help-unknown-applet 2 "$TRACEBOX" help no_such_applet

# Autostart mode: a first argument that is a flag or an ftrace event is
# perfetto's (here failing before any daemon starts: no -o; a bad flag
# prints perfetto's usage plus the autostart extra).
expect_exit autostart-flag 1 "$TRACEBOX" -t 1s
grep -q -- '--out is required' "$TMP/err" && pass autostart-flag-is-perfetto ||
	fail autostart-flag-is-perfetto "$(cat "$TMP/err")"
expect_exit autostart-event 1 "$TRACEBOX" sched/sched_switch
grep -q -- '--out is required' "$TMP/err" && pass autostart-event-is-perfetto ||
	fail autostart-event-is-perfetto "$(cat "$TMP/err")"
expect_exit autostart-bad-flag 1 "$TRACEBOX" --no-such-flag
grep -q -- '--system-sockets' "$TMP/err" && pass autostart-usage-extra ||
	fail autostart-usage-extra "$(cat "$TMP/err")"

# argv[0] dispatch: a symlink named like an applet runs it; a symlink with
# another name behaves as tracebox.
ln -s "$TRACEBOX" "$TMP/not_an_applet"
expect_exit symlink-other-name 0 "$TMP/not_an_applet" --version

# Every registered applet answers to its name in both dispatch forms.
for applet in $("$TRACEBOX" --help | sed -n '/^Applets:/,/^$/p' | awk 'NR > 1 && $1 !~ /^\(/ {print $1}'); do
	expect_exit "argv1-$applet-help" 0 "$TRACEBOX" "$applet" --help
	ln -sf "$TRACEBOX" "$TMP/$applet"
	expect_exit "argv0-$applet-help" 0 "$TMP/$applet" --help
	expect_exit "help-$applet" 0 "$TRACEBOX" help "$applet"
done

# The release binary: static, no interpreter or dynamic section, stripped,
# within the 3 MB budget.
if [ "$TRACEBOX" = "$TB_OUT/tracebox" ]; then
	hdr=$(readelf -lS "$TRACEBOX" 2>&1)
	if echo "$hdr" | grep -qE 'INTERP|DYNAMIC'; then
		fail static-no-interp-no-dynamic "$(echo "$hdr" | grep -E 'INTERP|DYNAMIC')"
	else
		pass static-no-interp-no-dynamic
	fi
	echo "$hdr" | grep -qE '\.symtab|\.debug_' && fail stripped "has .symtab or .debug_*" || pass stripped
	size=$(stat -c %s "$TRACEBOX")
	[ "$size" -le 3145728 ] && pass size-within-3mb || fail size-within-3mb "$size bytes"
else
	skip static-no-interp-no-dynamic "not the release binary"
fi
