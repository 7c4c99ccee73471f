# tests/rel/tbipc.py: a minimal Perfetto IPC client for the reliability
# tests, written from the wire format (components/ipc/README.md): 4-byte
# little-endian length + IPCFrame. It plays the hostile or unlucky peer:
# binds services, invokes methods by name, sends partial frames, never
# reads. Imported by the tests' inline Python (sys.path has tests/rel).
import socket
import struct
import time


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fv(fid, v):
    """A varint field."""
    return varint(fid << 3) + varint(v)


def fb(fid, b):
    """A length-delimited field."""
    if isinstance(b, str):
        b = b.encode()
    return varint(fid << 3 | 2) + varint(len(b)) + b


def fields(b):
    """(field number, value) pairs: int for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        k = s = 0
        while True:
            c = b[i]
            i += 1
            k |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                break
        fid, wt = k >> 3, k & 7
        if wt == 0:
            v = s = 0
            while True:
                c = b[i]
                i += 1
                v |= (c & 0x7F) << s
                s += 7
                if c < 0x80:
                    break
            yield fid, v
        elif wt == 2:
            n = s = 0
            while True:
                c = b[i]
                i += 1
                n |= (c & 0x7F) << s
                s += 7
                if c < 0x80:
                    break
            yield fid, b[i:i + n]
            i += n
        elif wt == 1:
            yield fid, b[i:i + 8]
            i += 8
        elif wt == 5:
            yield fid, b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)


def connect(name, timeout=5.0, retry_s=5.0):
    """A connected AF_UNIX stream socket to name ('@x' = abstract)."""
    addr = "\0" + name[1:] if name.startswith("@") else name
    deadline = time.time() + retry_s
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(addr)
            s.settimeout(timeout)
            return s
        except OSError:
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.05)


class Conn:
    def __init__(self, name, timeout=5.0, sock=None):
        self.s = sock or connect(name, timeout)
        self.rid = 0
        self.buf = b""
        self.methods = {}
        self.sid = 0

    def send_frame(self, body):
        """Send one frame; False if the peer has closed the connection."""
        try:
            self.s.sendall(struct.pack("<I", len(body)) + body)
            return True
        except OSError:
            return False

    def recv_frame(self):
        """The next IPCFrame's fields as a dict of lists, or None at EOF
        (or a reset, or the timeout)."""
        try:
            while True:
                if len(self.buf) >= 4:
                    n = struct.unpack("<I", self.buf[:4])[0]
                    if len(self.buf) >= 4 + n:
                        body, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                        d = {}
                        for k, v in fields(body):
                            d.setdefault(k, []).append(v)
                        return d
                got = self.s.recv(1 << 16)
                if not got:
                    return None
                self.buf += got
        except (ConnectionResetError, socket.timeout, OSError):
            return None

    def bind(self, service):
        """BindService; True once the reply says success (method table
        kept), False on a failure reply, None if the connection closed."""
        self.rid += 1
        if not self.send_frame(fv(2, self.rid) + fb(3, fb(1, service))):
            return None
        f = self.recv_frame()
        if f is None:
            return None
        ok = False
        for k, v in fields(f.get(4, [b""])[0]):
            if k == 1:
                ok = bool(v)
            elif k == 2:
                self.sid = v
            elif k == 3:
                mid, mname = 0, ""
                for a, b in fields(v):
                    if a == 1:
                        mid = b
                    elif a == 2:
                        mname = b.decode()
                self.methods[mname] = mid
        return ok

    def invoke(self, method, args=b"", drop=False):
        """InvokeMethod by name; returns the request id."""
        self.rid += 1
        inv = fv(1, self.sid) + fv(2, self.methods[method]) + fb(3, args)
        if drop:
            inv += fv(4, 1)
        self.send_frame(fv(2, self.rid) + fb(5, inv))
        return self.rid

    def reply(self):
        """The next InvokeMethodReply: (request id, success, has_more,
        reply_proto), or None if the connection closed."""
        while True:
            f = self.recv_frame()
            if f is None:
                return None
            if 6 not in f:
                continue
            ok, more, data = False, False, b""
            for k, v in fields(f[6][0]):
                if k == 1:
                    ok = bool(v)
                elif k == 2:
                    more = bool(v)
                elif k == 3:
                    data = v
            return f.get(2, [0])[0], ok, more, data

    def call(self, method, args=b""):
        """invoke + every reply until has_more is false: (success,
        [reply_proto...]), or None if the connection closed."""
        self.invoke(method, args)
        parts = []
        while True:
            r = self.reply()
            if r is None:
                return None
            _, ok, more, data = r
            parts.append(data)
            if not ok or not more:
                return ok, parts
