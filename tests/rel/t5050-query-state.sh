# QueryServiceState larger than one IPC frame (issue 21 #13): one producer
# registering 2,000 data sources must not make --query fail for everyone;
# the state comes in several replies (has_more), each a valid
# TracingServiceState, as Perfetto splits it.
. tests/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
P=@tb-rel50-p-$$ C=@tb-rel50-c-$$
export PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C
TRACED_NOTIFY_FD=3 "$TRACEBOX" traced 3>"$TMP/ready" 2>"$TMP/traced.log" &
svc=$!
at_exit "kill -9 $svc 2>/dev/null"
for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done

"$TB_OUT/tools/rel_producer" --sources 2000 >"$TMP/prod.out" 2>&1 &
prod=$!
at_exit "kill $prod 2>/dev/null"
for _ in $(seq 200); do grep -q registered "$TMP/prod.out" && break; sleep 0.05; done
expect_eq sources-registered registered=2000 "$(cat "$TMP/prod.out")"

expect_exit query-exit-0 0 timeout 10 "$TRACEBOX" perfetto --query-raw
# count the data sources (field 2) of the merged TracingServiceState
n=$($PY -c 'import sys
sys.path.insert(0, sys.argv[1])
import tbipc
print(sum(1 for k, v in tbipc.fields(open(sys.argv[2], "rb").read()) if k == 2))' \
	"$TB_TEST_ROOT/tests/rel" "$TMP/out")
expect_eq query-all-sources 2000 "$n"
# On the wire: several replies, each under the frame cap, each parsing alone.
out=$(PYTHONPATH=$TB_TEST_ROOT/tests/rel $PY - "$C" <<'PY'
import sys, tbipc
c = tbipc.Conn(sys.argv[1])
c.bind("ConsumerPort")
ok, parts = c.call("QueryServiceState")
sizes = [len(p) for p in parts]
total = 0
for p in parts:
    st = dict(tbipc.fields(p)).get(1, b"")
    total += sum(1 for k, v in tbipc.fields(st) if k == 2)
print(ok, len(parts) > 1, max(sizes) < 128 * 1024, total)
PY
)
expect_eq query-split-replies "True True True 2000" "$out"
