# SQL cannot touch the filesystem and cannot crash the shell (issue 21 #1,
# #2): without --allow-sql-file-access, ATTACH of a file and VACUUM INTO
# are refused (and ATTACH does not tell whether a path exists), in `query`,
# the interactive shell and the RPC's /query; an in-memory ATTACH works. A
# very deep expression, macro nesting or parenthesis nesting is an SQL
# error, never a crash, in the three too.
. tests/lib.sh

tps() { "$TRACEBOX" trace_processor_shell "$@"; }

cat >"$TMP/t.json" <<'JSON'
{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]}
JSON
mkdir "$TMP/dir"
touch "$TMP/exists.db"

# ---- file access ----------------------------------------------------------------
expect_exit attach-file-refused 1 tps query "$TMP/t.json" \
	"ATTACH '$TMP/new.db' AS x; CREATE TABLE x.t(a); INSERT INTO x.t VALUES (1)"
grep -q 'not authorized' "$TMP/err" && pass attach-file-message || fail attach-file-message "$(cat "$TMP/err")"
[ ! -e "$TMP/new.db" ] && pass attach-file-not-created || fail attach-file-not-created
# The same answer whether the path exists, is a directory, or is missing.
for p in exists.db dir missing/x.db; do
	tps query "$TMP/t.json" "ATTACH '$TMP/$p' AS x" 2>&1 >/dev/null | tail -1 >"$TMP/attach-$(basename "$p")"
done
if cmp -s "$TMP/attach-exists.db" "$TMP/attach-dir" && cmp -s "$TMP/attach-dir" "$TMP/attach-x.db"; then
	pass attach-no-oracle
else
	fail attach-no-oracle "$(cat "$TMP/attach-exists.db" "$TMP/attach-dir" "$TMP/attach-x.db")"
fi
expect_exit attach-expression-refused 1 tps query "$TMP/t.json" "ATTACH '$TMP/' || 'e.db' AS x"
[ ! -e "$TMP/e.db" ] && pass attach-expression-not-created || fail attach-expression-not-created
expect_exit vacuum-into-refused 1 tps query "$TMP/t.json" "VACUUM INTO '$TMP/v.db'"
grep -q 'not authorized: SQL may not read or write files' "$TMP/err" && pass vacuum-into-message ||
	fail vacuum-into-message "$(cat "$TMP/err")"
[ ! -e "$TMP/v.db" ] && pass vacuum-into-not-created || fail vacuum-into-not-created
expect_exit attach-memory 0 tps query "$TMP/t.json" \
	"ATTACH ':memory:' AS m; CREATE TABLE m.t(a); INSERT INTO m.t VALUES (7); SELECT a FROM m.t; DETACH m"
expect_eq attach-memory-rows '"a"
7' "$(cat "$TMP/out")"
expect_exit attach-temp 0 tps query "$TMP/t.json" "ATTACH '' AS e; CREATE TABLE e.t(a); SELECT count(*) AS n FROM e.t"
expect_exit vacuum-in-memory 0 tps query "$TMP/t.json" "VACUUM"
# The interactive shell: an error, the file not made, the shell goes on.
printf "ATTACH '%s' AS x;\nCREATE TABLE x.t(a);\nselect 5 as five;\n" "$TMP/i.db" |
	tps "$TMP/t.json" >"$TMP/out" 2>"$TMP/err"
grep -q '^not authorized' "$TMP/err" && grep -q '^ *5 $' "$TMP/out" && [ ! -e "$TMP/i.db" ] &&
	pass interactive-attach-refused ||
	fail interactive-attach-refused "$(cat "$TMP/out")" "$(cat "$TMP/err")"
# --allow-sql-file-access: the user's choice.
expect_exit allowed-attach 0 tps query --allow-sql-file-access "$TMP/t.json" \
	"ATTACH '$TMP/ok.db' AS x; CREATE TABLE x.t(a); INSERT INTO x.t VALUES (3); DETACH x"
[ -s "$TMP/ok.db" ] && pass allowed-attach-created || fail allowed-attach-created
expect_exit allowed-vacuum-into 0 tps -Q "VACUUM INTO '$TMP/ok2.db'" --allow-sql-file-access "$TMP/t.json"
[ -s "$TMP/ok2.db" ] && pass allowed-vacuum-into-created || fail allowed-vacuum-into-created

# ---- depth --------------------------------------------------------------------------
python3 -c 'print("select " + "+".join(["1"] * 100000) + " as x")' >"$TMP/long.sql"
python3 -c 'print("select " + "(" * 100000 + "1" + ")" * 100000 + " as x")' >"$TMP/parens.sql"
python3 -c 'print("select " + "cast_int!(" * 5000 + "1" + ")" * 5000 + " as x")' >"$TMP/macros.sql"
python3 -c 'print("select " + "abs(" * 100000 + "1" + ")" * 100000 + " as x")' >"$TMP/calls.sql"
python3 -c 'print("select 1 as x " + "union all select 1 " * 20000)' >"$TMP/union.sql"
for q in long parens macros calls; do
	expect_exit "deep-$q" 1 tps query -f "$TMP/$q.sql" "$TMP/t.json"
	if grep -q '^Traceback (most recent call last):' "$TMP/err"; then pass "deep-$q-error"; else fail "deep-$q-error" "$(tail -c 300 "$TMP/err")"; fi
done
tps query -f "$TMP/long.sql" "$TMP/t.json" 2>"$TMP/err" >/dev/null
grep -q 'Expression tree is too large (maximum depth 1000)' "$TMP/err" && pass deep-long-sqlite-message ||
	fail deep-long-sqlite-message "$(tail -c 300 "$TMP/err")"
expect_exit long-union 1 tps query -f "$TMP/union.sql" "$TMP/t.json"
grep -q 'too many terms in compound SELECT' "$TMP/err" && pass long-union-message ||
	fail long-union-message "$(tail -c 300 "$TMP/err")"
# A depth SQLite accepts still works.
python3 -c 'print("select " + "+".join(["1"] * 900) + " as x")' >"$TMP/ok.sql"
expect_exit deep-900 0 tps query -f "$TMP/ok.sql" "$TMP/t.json"
expect_eq deep-900-value '"x"
900' "$(cat "$TMP/out")"
# Interactive: an error, then the next statement.
{ cat "$TMP/long.sql" | tr -d '\n'; printf ';\nselect 6 as six;\n'; } | tps "$TMP/t.json" >"$TMP/out" 2>"$TMP/err"
grep -q '^Expression tree is too large' "$TMP/err" && grep -q '^ *6 $' "$TMP/out" &&
	pass interactive-deep || fail interactive-deep "$(tail -c 300 "$TMP/out")" "$(tail -c 300 "$TMP/err")"

# ---- the RPC's /query ----------------------------------------------------------------
PORT=$(free_port)
"$TRACEBOX" trace_processor_shell server http --port "$PORT" "$TMP/t.json" >"$TMP/srv.out" 2>"$TMP/srv.err" &
SRV=$!
at_exit "kill $SRV 2>/dev/null"
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/status"; do
	sleep 0.1
	i=$((i + 1))
done
cat >"$TMP/rpc.py" <<'PY'
import http.client, sys
port = int(sys.argv[1])
def varint(v):
    out = b""
    while v >= 0x80: out += bytes([v & 0x7F | 0x80]); v >>= 7
    return out + bytes([v])
def fields(b):
    i, out = 0, []
    def rv(i):
        v = s = 0
        while True:
            c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
            if c < 0x80: return v, i
    while i < len(b):
        tag, i = rv(i)
        if tag & 7 == 0: v, i = rv(i)
        elif tag & 7 == 1: v = b[i:i + 8]; i += 8
        elif tag & 7 == 5: v = b[i:i + 4]; i += 4
        else: n, i = rv(i); v = b[i:i + n]; i += n
        out.append((tag >> 3, v))
    return out
for sql in sys.argv[2:]:
    if sql.startswith("@"): sql = open(sql[1:]).read()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    q = sql.encode()
    c.request("POST", "/query", b"\x0a" + varint(len(q)) + q)
    body = c.getresponse().read()
    err = [v.decode() for f, v in fields(body) if f == 2]
    print(err[0].split("\n")[-1] if err else "ok")  # the message under the traceback
PY
python3 "$TMP/rpc.py" "$PORT" "ATTACH '$TMP/r.db' AS x" "VACUUM INTO '$TMP/r2.db'" "@$TMP/long.sql" \
	"@$TMP/parens.sql" "@$TMP/macros.sql" "select 1" >"$TMP/rpc.out" 2>&1
NA="not authorized: SQL may not read or write files (ATTACH of a file, VACUUM INTO) unless trace_processor_shell runs with --allow-sql-file-access"
expect_eq rpc-attach "$NA" "$(sed -n 1p "$TMP/rpc.out")"
expect_eq rpc-vacuum-into "$NA" "$(sed -n 2p "$TMP/rpc.out")"
expect_eq rpc-deep "Expression tree is too large (maximum depth 1000)" "$(sed -n 3p "$TMP/rpc.out")"
case $(sed -n 4p "$TMP/rpc.out") in ok | "") fail rpc-parens "$(cat "$TMP/rpc.out")" ;; *) pass rpc-parens ;; esac
case $(sed -n 5p "$TMP/rpc.out") in ok | "") fail rpc-macros "$(cat "$TMP/rpc.out")" ;; *) pass rpc-macros ;; esac
expect_eq rpc-survives ok "$(sed -n 6p "$TMP/rpc.out")"
[ ! -e "$TMP/r.db" ] && [ ! -e "$TMP/r2.db" ] && pass rpc-no-files || fail rpc-no-files
kill -0 $SRV 2>/dev/null && pass rpc-server-alive || fail rpc-server-alive "$(tail -5 "$TMP/srv.err")"
kill $SRV 2>/dev/null
wait $SRV 2>/dev/null
exit 0
