#!/usr/bin/env python3
"""Cut a trace-cmd trace.dat down to a small seed: the first PAGES pages of
each cpu, the formats of the events those pages hold, the kallsyms and
printk lines and the cmdlines their records mention.

    trace-cmd convert --file-version 6 --compression none -i big.dat -o v6.dat
    tests/tools/trace_dat_shrink.py v6.dat small.dat [PAGES]

Input: a little-endian file version 6 (the top buffer, or one instance
buffer from `trace-cmd extract -B`). Output: version 6, its data in the
top flyrecord; `trace-cmd convert` turns it into v7 (zstd or none) again.
"""
import struct
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    pages = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    d = open(src, "rb").read()
    p = 10
    assert d[:10] == b"\x17\x08\x44tracing" and d[10:12] == b"6\0", "need a v6 file"
    p = 12
    assert d[p] == 0, "need a little-endian file"
    long_size = d[p + 1]
    p += 2
    (page_size,) = struct.unpack_from("<I", d, p)
    p += 4

    def u32():
        nonlocal p
        (v,) = struct.unpack_from("<I", d, p)
        p += 4
        return v

    def u64():
        nonlocal p
        (v,) = struct.unpack_from("<Q", d, p)
        p += 8
        return v

    def blob(n):
        nonlocal p
        b = d[p : p + n]
        p += n
        return b

    header = []
    for name in (b"header_page", b"header_event"):
        assert d[p : p + len(name) + 1] == name + b"\0"
        p += len(name) + 1
        header.append((name, blob(u64())))
    ftrace = [blob(u64()) for _ in range(u32())]
    systems = []
    for _ in range(u32()):
        e = d.index(b"\0", p)
        sysname = d[p:e]
        p = e + 1
        systems.append((sysname, [blob(u64()) for _ in range(u32())]))
    kallsyms = blob(u32())
    printk = blob(u32())
    cmdlines = blob(u64())
    cpus = u32()
    buffers = []
    while True:
        tag = blob(10)
        if tag == b"options  \0":
            while True:
                (oid,) = struct.unpack_from("<H", d, p)
                p += 2
                if oid == 0:
                    break
                data = blob(u32())
                if oid == 3:
                    buffers.append(struct.unpack_from("<Q", data, 0)[0])
            continue
        assert tag == b"flyrecord\0", tag
        break
    table = [(u64(), u64()) for _ in range(cpus)]
    if all(s == 0 for _, s in table) and buffers:
        q = buffers[0] + 10
        table = [struct.unpack_from("<QQ", d, q + 16 * i) for i in range(cpus)]

    # Keep the first pages of each cpu; note what their records mention.
    kept = []
    ids, words = set(), set()
    for off, size in table:
        data = d[off : off + min(size, pages * page_size)]
        kept.append(data)
        for pg in range(0, len(data), page_size):
            page = data[pg : pg + page_size]
            if len(page) < 16 + 8:
                continue
            commit = struct.unpack_from("<Q", page, 8)[0] & ((1 << 27) - 1)
            q, end = 16, 16 + min(commit, page_size - 16)
            while q + 4 <= end:
                (h,) = struct.unpack_from("<I", page, q)
                tl = h & 31
                if tl == 29 and h >> 5 == 0:
                    break
                if tl >= 29:
                    q += 8 if tl > 29 else 4 + struct.unpack_from("<I", page, q + 4)[0]
                    continue
                if tl == 0:
                    n = struct.unpack_from("<I", page, q + 4)[0] - 4
                    rec = page[q + 8 : q + 8 + n]
                    q += 8 + n
                else:
                    rec = page[q + 4 : q + 4 + tl * 4]
                    q += 4 + tl * 4
                if len(rec) >= 8:
                    ids.add(struct.unpack_from("<H", rec, 0)[0])
                for i in range(0, len(rec) - 3, 4):
                    words.add(struct.unpack_from("<I", rec, i)[0])
                    if i + 8 <= len(rec):
                        words.add(struct.unpack_from("<Q", rec, i)[0])

    def fmt_id(f):
        for line in f.split(b"\n"):
            if line.startswith(b"ID: "):
                return int(line[4:])
        return -1

    ftrace = [f for f in ftrace if fmt_id(f) in ids]
    systems = [(s, [f for f in fs if fmt_id(f) in ids]) for s, fs in systems]
    systems = [(s, fs) for s, fs in systems if fs]
    ks = []
    for line in kallsyms.split(b"\n"):
        parts = line.split(b" ")
        if len(parts) >= 3 and int(parts[0], 16) in words:
            ks.append(line)
    pk = []
    for line in printk.split(b"\n"):
        if line.startswith(b"0x") and int(line.split(b" ")[0], 16) in words:
            pk.append(line)
    cl = []
    for line in cmdlines.split(b"\n"):
        parts = line.split(b" ", 1)
        if len(parts) == 2 and parts[0].isdigit() and int(parts[0]) in words:
            cl.append(line)

    out = bytearray(b"\x17\x08\x44tracing6\0")
    out += bytes([0, long_size]) + struct.pack("<I", page_size)
    for name, b in header:
        out += name + b"\0" + struct.pack("<Q", len(b)) + b
    out += struct.pack("<I", len(ftrace))
    for f in ftrace:
        out += struct.pack("<Q", len(f)) + f
    out += struct.pack("<I", len(systems))
    for s, fs in systems:
        out += s + b"\0" + struct.pack("<I", len(fs))
        for f in fs:
            out += struct.pack("<Q", len(f)) + f
    for blk, w in ((b"\n".join(ks) + b"\n" if ks else b"", 4),
                   (b"\n".join(pk) + b"\n" if pk else b"", 4),
                   (b"\n".join(cl) + b"\n" if cl else b"", 8)):
        out += struct.pack("<I" if w == 4 else "<Q", len(blk)) + blk
    # An options block with only CPUCOUNT (trace-cmd convert wants one).
    out += struct.pack("<I", cpus) + b"options  \0"
    out += struct.pack("<HII", 8, 4, cpus) + struct.pack("<H", 0)
    out += b"flyrecord\0"
    table_at = len(out)
    out += b"\0" * 16 * cpus
    for i, data in enumerate(kept):
        out += b"\0" * (-len(out) % page_size)
        struct.pack_into("<QQ", out, table_at + 16 * i, len(out) if data else 0, len(data))
        out += data
    open(dst, "wb").write(out)


main()
