# tracebox traced: starts, listens on the sockets named by the environment,
# answers a BindService on each, and exits cleanly on SIGTERM.
. tests/lib.sh

expect_exit version 0 "$TRACEBOX" traced --version
expect_exit bad-option 1 "$TRACEBOX" traced --no-such-option

P=@tb-t2000-p-$$
C=@tb-t2000-c-$$
PERFETTO_PRODUCER_SOCK_NAME=$P PERFETTO_CONSUMER_SOCK_NAME=$C \
	"$TRACEBOX" traced >"$TMP/log" 2>&1 &
pid=$!
at_exit "kill $pid 2>/dev/null"

# BindService(name) with request_id 1; the reply must say success.
bind() {
	python3 - "$1" "$2" <<'PY'
import socket, struct, sys, time
name, svc = sys.argv[1], sys.argv[2].encode()
for _ in range(100):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("\0" + name[1:])
        break
    except OSError:
        time.sleep(0.05)
else:
    sys.exit(2)
inner = b"\x0a" + bytes([len(svc)]) + svc
frame = b"\x10\x01\x1a" + bytes([len(inner)]) + inner
s.sendall(struct.pack("<I", len(frame)) + frame)
s.settimeout(5)
hdr = s.recv(4)
n = struct.unpack("<I", hdr)[0]
body = b""
while len(body) < n:
    body += s.recv(n - len(body))
# msg_bind_service_reply (field 4) whose first field is success=1.
sys.exit(0 if b"\x22" in body[:4] and b"\x08\x01" in body else 1)
PY
}
check producer-port bind "$P" ProducerPort
check consumer-port bind "$C" ConsumerPort

kill -TERM $pid
rc=0
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
	fail sigterm-exit "still running after SIGTERM"
else
	wait $pid || rc=$?
	expect_eq sigterm-exit 0 "$rc"
fi
