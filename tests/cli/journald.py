"""Helpers of tests/cli/t2500-journald.sh (not a test by itself).

  gen SEED N [now|old] [TAG]   journal export format on stdout: N entries with
                               varied fields (priorities, identifiers, units,
                               multi-line, UTF-8, binary, repeated and large
                               values); `now`: stamped with this boot's
                               clocks as they run, `old` (default): fixed
                               stamps of another boot. TAG starts each MESSAGE.
  norm-journalctl [xz]         journalctl -o json --all lines on stdin ->
                               one canonical line per entry (xz: values
                               journald compresses counted, not compared)
  norm-dump                    journal_dump lines on stdin -> the same form
  matches                      journalctl -o json lines on stdin -> one line
                               per entry: realtime, message (hex)
  recompress IN OUT lz4|xz     copy a journal file with its ZSTD payloads
                               compressed again with LZ4 (python3-lz4) or XZ
                               (lzma), as journald would have written them;
                               prints how many objects it converted
  expect-rows                  journalctl -o json lines on stdin -> the rows the
                               trace processor should hold for them, as CSV
                               (see the test)
"""
import json
import lzma
import os
import random
import struct
import subprocess
import sys
import time


def export_field(out, name, value):
    if isinstance(value, str):
        value = value.encode()
    if b"\n" in value or any(c < 32 and c not in (9,) for c in value):
        out.write(name.encode() + b"\n" + struct.pack("<Q", len(value)) + value + b"\n")
    else:
        out.write(name.encode() + b"=" + value + b"\n")


def gen(seed, n, when="old", tag="m"):
    rnd = random.Random(seed)
    out = sys.stdout.buffer
    idents = ["app", "kernel", "sshd", "cron"]
    units = ["app.service", "ssh.service", "cron.service"]
    if when == "now":
        boot = open("/proc/sys/kernel/random/boot_id").read().strip().replace("-", "")
    else:
        boot = "0123456789abcdef0123456789abcdef"
    for i in range(n):
        if when == "now":
            mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            real = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000
        else:
            mono = 5_000_000 + i * 1000
            real = 1_700_000_000_000_000 + i * 1000
        export_field(out, "__REALTIME_TIMESTAMP", str(real))
        export_field(out, "__MONOTONIC_TIMESTAMP", str(mono))
        export_field(out, "_BOOT_ID", boot)
        kind = i % 9
        if kind == 0:
            msg = "%s %d multi\nline\tmessage" % (tag, i)
        elif kind == 1:
            msg = "%s %d caf\u00e9 \u2603 utf-8" % (tag, i)
        elif kind == 2:
            msg = ("%s %d large " % (tag, i)) + "".join(
                rnd.choice("abcdefgh ") for _ in range(600 + rnd.randrange(3000)))
        elif kind == 3:
            msg = ("%s %d " % (tag, i)).encode() + bytes([0, 1, 2, 255, 254]) + b" binary"
        else:
            msg = "%s %d plain message %d" % (tag, i, rnd.randrange(1000))
        export_field(out, "MESSAGE", msg)
        if i % 11 != 5:
            export_field(out, "PRIORITY", str(rnd.randrange(8)))
        if i % 13 != 7:
            export_field(out, "SYSLOG_IDENTIFIER", rnd.choice(idents))
        if i % 17 == 3:
            export_field(out, "SYSLOG_IDENTIFIER", rnd.choice(idents))  # a second value
        if i % 5 != 4:
            export_field(out, "_SYSTEMD_UNIT", rnd.choice(units))
        pid = 100 + rnd.randrange(50)
        if i % 19 != 4:
            export_field(out, "_PID", str(pid))
            if i % 3 == 0:  # threads other than the main one: tids of their own
                export_field(out, "_TID", str(pid * 100 + 1 + rnd.randrange(3)))
        export_field(out, "_UID", str(rnd.choice([0, 1000, 65534])))
        export_field(out, "_GID", str(rnd.choice([0, 1000])))
        export_field(out, "_COMM", rnd.choice(["app", "sshd", "cron"]))
        export_field(out, "_EXE", "/usr/bin/" + rnd.choice(["app", "sshd", "cron"]))
        export_field(out, "_HOSTNAME", "host%d" % (i % 2))
        export_field(out, "_TRANSPORT", rnd.choice(["journal", "syslog", "stdout"]))
        if i % 7 == 2:
            export_field(out, "CODE_FILE", "src/x%d.c" % rnd.randrange(10))
        out.write(b"\n")
        if when == "now":
            out.flush()


def hexval(v):
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode().hex()
    return bytes(v).hex()


def canon(real, mono, boot, fields, undecoded):
    return json.dumps([real, mono, boot, sorted((k, v) for k, v in fields.items() if v),
                       undecoded])


def norm_journalctl(xz=False):
    """xz: the file's compressed payloads were made XZ, which the reader
    does not decode: leave out the values journald compresses (payloads of
    512 bytes or more) and count them instead."""
    for line in sys.stdin:
        e = json.loads(line)
        fields, undecoded = {}, 0
        for k, v in e.items():
            if k.startswith("__") or k == "_BOOT_ID":
                continue
            # Several values of one field come as a list of values; one
            # binary value as a list of byte numbers.
            vals = v if isinstance(v, list) and v and not isinstance(v[0], int) else [v]
            kept = []
            for x in vals:
                h = hexval(x)
                if xz and len(k) + 1 + len(h) // 2 >= 512:
                    undecoded += 1
                else:
                    kept.append(h)
            fields[k] = kept
        print(canon(e["__REALTIME_TIMESTAMP"], e["__MONOTONIC_TIMESTAMP"], e["_BOOT_ID"], fields,
                    undecoded))


def norm_dump():
    for line in sys.stdin:
        e = json.loads(line)
        fields = {k: v for k, v in e["fields"].items() if k != "_BOOT_ID"}
        print(canon(e["__REALTIME_TIMESTAMP"], e["__MONOTONIC_TIMESTAMP"], e["_BOOT_ID"], fields,
                    e["undecoded"]))


def first(v):
    if isinstance(v, list) and v and not isinstance(v[0], int):
        v = v[0]
    return v


def matches():
    for line in sys.stdin:
        e = json.loads(line)
        print(e["__REALTIME_TIMESTAMP"], hexval(first(e.get("MESSAGE"))))


def expect_rows():
    """The row of each entry as the test's query prints it: msg as hex,
    prio, tag, pid, tid, uid, comm, unit, hostname, transport; a field the
    data source does not write (absent, or not a number) is empty."""
    def num(v):
        v = first(v)
        return v if isinstance(v, str) and v.isdigit() and int(v) < 2**32 else ""

    def text(v):
        v = first(v)
        if v is None:
            return ""
        b = v.encode() if isinstance(v, str) else bytes(v)
        return b.hex() if b else ""

    for line in sys.stdin:
        e = json.loads(line)
        pid = num(e.get("_PID"))
        tid = num(e.get("_TID")) or pid
        if pid in ("", "0"):
            pid = tid = ""
        print(",".join([
            text(e.get("MESSAGE")), num(e.get("PRIORITY")) or "0", text(e.get("SYSLOG_IDENTIFIER")),
            pid, tid, num(e.get("_UID")), text(e.get("_COMM")), text(e.get("_SYSTEMD_UNIT")),
            text(e.get("_HOSTNAME")), text(e.get("_TRANSPORT"))]))


def lz4_block(plain):
    """One raw LZ4 block, from the lz4 tool's legacy format (magic, then
    each block as le32 size + block; one block below 8 MiB)."""
    out = subprocess.run(["lz4", "-l", "-c", "-q"], input=plain, stdout=subprocess.PIPE,
                         check=True).stdout
    size = struct.unpack_from("<I", out, 4)[0]
    return out[8:8 + size]


def recompress(src, dst, how):
    """Each ZSTD DATA object gets a copy compressed with LZ4 or XZ, appended
    after the last object; the entries point at the copy. The original stays
    in the hash and field chains, so lookups still find the value."""
    buf = bytearray(open(src, "rb").read())
    incompat = struct.unpack_from("<I", buf, 12)[0]
    compact = incompat & 16
    header_size, arena = struct.unpack_from("<QQ", buf, 88)
    tail, n_objects = struct.unpack_from("<QQ", buf, 136)
    poff = 72 if compact else 64
    end = min(len(buf), header_size + arena)
    objects, off = [], header_size
    while off + 16 <= end:
        otype, flags = buf[off], buf[off + 1]
        size = struct.unpack_from("<Q", buf, off + 8)[0]
        if otype == 0 or size < 16:
            break
        objects.append((off, otype, flags, size))
        if off == tail:
            break
        off += (size + 7) & ~7
    new_off = (tail + objects[-1][3] + 7) & ~7
    moved = {}
    for off, otype, flags, size in objects:
        if otype != 1 or flags != 4:
            continue
        plain = subprocess.run(["zstd", "-dc"], input=bytes(buf[off + poff:off + size]),
                               stdout=subprocess.PIPE, check=True).stdout
        if how == "lz4":
            payload, nflag = struct.pack("<Q", len(plain)) + lz4_block(plain), 2
        else:
            payload, nflag = lzma.compress(plain, format=lzma.FORMAT_XZ,
                                           check=lzma.CHECK_NONE), 1
        obj = bytearray(buf[off:off + poff]) + payload
        obj[1] = nflag
        struct.pack_into("<Q", obj, 8, len(obj))
        if new_off + len(obj) > end:
            break
        buf[new_off:new_off + len(obj)] = obj
        moved[off] = new_off
        tail, n_objects = new_off, n_objects + 1
        new_off = (new_off + len(obj) + 7) & ~7
        incompat |= nflag
    isz = 4 if compact else 16
    for off, otype, flags, size in objects:
        if otype != 3:
            continue
        for i in range(off + 64, off + size, isz):
            item = struct.unpack_from("<I" if compact else "<Q", buf, i)[0]
            if item in moved:
                struct.pack_into("<I" if compact else "<Q", buf, i, moved[item])
    struct.pack_into("<I", buf, 12, incompat)
    struct.pack_into("<QQ", buf, 136, tail, n_objects)
    open(dst, "wb").write(buf)
    os.chmod(dst, 0o640)
    print(len(moved))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:6])
    elif cmd == "norm-journalctl":
        norm_journalctl(sys.argv[2:] == ["xz"])
    elif cmd == "norm-dump":
        norm_dump()
    elif cmd == "matches":
        matches()
    elif cmd == "expect-rows":
        expect_rows()
    elif cmd == "recompress":
        recompress(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown command " + cmd)
