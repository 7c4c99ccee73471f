#!/usr/bin/env python3
"""Write a small v6 trace.dat by hand (python3 stdlib only): this kernel's
formats of the ftrace events function, funcgraph_entry/exit, bprint and
bputs, a saved kallsyms and printk formats section, one cpu, one page.
`trace-cmd report` reads it like a recorded file; tests/cli/t3052 compares
that text with our import of the file. On this VM the kernel refuses the
function tracer and trace_printk needs a module, so these records are made
here, byte for byte as the kernel lays them out.

usage: tdat_build.py OUT.dat [bad]   (bad: add malformed bprint records)
"""
import struct
import sys

HEADER_PAGE = (
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"
)
HEADER_EVENT = (
    "# compressed entry header\n\ttype_len    :    5 bits\n"
    "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
    "\tpadding     : type == 29\n\ttime_extend : type == 30\n"
    "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n"
)
COMMON = (
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
)


def fmt(name, eid, fields, pfmt):
    return ("name: %s\nID: %d\nformat:\n" % (name, eid) + COMMON +
            "".join("\tfield:%s;\toffset:%d;\tsize:%d;\tsigned:%d;\n" % f
                    for f in fields) + "\nprint fmt: " + pfmt + "\n")


FORMATS = [
    fmt("function", 1, [("unsigned long ip", 8, 8, 0),
                        ("unsigned long parent_ip", 16, 8, 0),
                        ("unsigned long args[]", 24, 0, 0)],
        '" %ps <-- %ps", (void *)REC->ip, (void *)REC->parent_ip'),
    fmt("bprint", 6, [("unsigned long ip", 8, 8, 0),
                      ("const char * fmt", 16, 8, 0),
                      ("u32 buf[]", 24, 0, 0)],
        '"%ps: %s", (void *)REC->ip, REC->fmt'),
    fmt("funcgraph_exit", 10, [("unsigned long func", 8, 8, 0),
                               ("unsigned int depth", 16, 4, 0),
                               ("unsigned int overrun", 20, 4, 0),
                               ("unsigned long long calltime", 24, 8, 0),
                               ("unsigned long long rettime", 32, 8, 0)],
        '"<-- %ps (%u) (start: %llx  end: %llx) over: %u", (void *)REC->func, '
        'REC->depth, REC->calltime, REC->rettime, REC->depth'),
    fmt("funcgraph_entry", 11, [("unsigned long func", 8, 8, 0),
                                ("unsigned int depth", 16, 4, 0),
                                ("unsigned long args[]", 24, 0, 0)],
        '"--> %ps (%u)", (void *)REC->func, REC->depth'),
    fmt("bputs", 15, [("unsigned long ip", 8, 8, 0),
                      ("const char * str", 16, 8, 0)],
        '"%ps: %s", (void *)REC->ip, REC->str'),
]

K = 0xffffffff81000000
SYMS = [  # address, type, name
    (K + 0x0000, "T", "_stext"),
    (K + 0x1000, "T", "vfs_read"),
    (K + 0x1200, "t", "ksys_read"),
    (K + 0x1400, "T", "tb_probe_fn"),
    (K + 0x2000, "D", "some_data"),
    (K + 0x3000, "T", "do_syscall_64"),
]
P = 0xffffffff82000000
PRINTK = [  # address, format (as the file stores it: newline escaped)
    (P + 0x00, "tb bputs message\\n"),
    (P + 0x40, "tb int=%d neg=%d u=%u x=%x long=%ld ll=%llu lx=%lx\\n"),
    (P + 0x80, "tb str=%s next=%d sym=%pS short=%ps\\n"),
    (P + 0xc0, "tb w=%5d|%s| exact=%pS data=%ps lx=%lx pct=%% end\\n"),
]
PID = 4242


def u32s(*v):
    return struct.pack("<%dI" % len(v), *v)


def bprint_buf(parts):
    """vbin_printf's packing: ints 4 bytes, longs 8 (4-aligned), strings
    inline NUL-terminated, each number 4-byte aligned."""
    b = bytearray()
    for kind, v in parts:
        if kind == "s":
            b += v.encode() + b"\0"
            continue
        while len(b) % 4:
            b += b"\0"
        if kind == "i":
            b += struct.pack("<i", v)
        elif kind == "u":
            b += struct.pack("<I", v)
        elif kind == "c":
            b += struct.pack("<B", v)
        else:  # "l": 8 bytes
            b += struct.pack("<Q", v & (2**64 - 1))
    while len(b) % 4:
        b += b"\0"
    return bytes(b)


def rec(eid, body):
    """One event record: common header + fields, padded to 4 bytes."""
    d = struct.pack("<HBBi", eid, 1, 0, PID) + body
    while len(d) % 4:
        d += b"\0"
    return d


def events(bad):
    ev = [
        rec(1, struct.pack("<QQ", K + 0x1000, K + 0x1200 + 0x5a)),  # exact, +off
        rec(1, struct.pack("<QQ", K + 0x1410, K + 0x3000 + 0x7f)),
        rec(1, struct.pack("<QQ", 0xffffffff80000010, K + 0x1000)),  # below all symbols
        rec(11, struct.pack("<QII", K + 0x1000, 1, 0)),
        rec(11, struct.pack("<QII", K + 0x1200 + 0x10, 2, 0)),
        rec(10, struct.pack("<QIIQQ", K + 0x1200 + 0x10, 2, 0, 1000, 1900)),
        rec(10, struct.pack("<QIIQQ", K + 0x1000, 1, 0, 900, 2500)),
        rec(15, struct.pack("<QQ", K + 0x1400, P)),
        rec(6, struct.pack("<QQ", K + 0x1400, P + 0x40) + bprint_buf(
            [("i", 42), ("i", -7), ("u", 4000000000), ("u", 0xbeef),
             ("l", -1234567890123), ("l", 2**63 + 5), ("l", 0xdeadbeefcafe)])),
        rec(6, struct.pack("<QQ", K + 0x1400, P + 0x80) + bprint_buf(
            [("s", "hello world"), ("i", 17), ("l", K + 0x1200 + 0x5a),
             ("l", K + 0x1000)])),
        rec(6, struct.pack("<QQ", K + 0x1400, P + 0xc0) + bprint_buf(
            [("i", 7), ("s", ""), ("l", K + 0x1000),
             ("l", K + 0x2010), ("l", 0x1f)])),
    ]
    if bad:
        ev += [
            # buf too short for its format's arguments
            rec(6, struct.pack("<QQ", K + 0x1400, P + 0x40) + u32s(1)),
            # a string with no NUL before the record's end
            rec(6, struct.pack("<QQ", K + 0x1400, P + 0x80) + b"abcdefgh"),
            # a fmt address the file has no printk format for
            rec(6, struct.pack("<QQ", K + 0x1400, P + 0x400) + u32s(1)),
        ]
    return ev


def page(evs, ts0):
    data = bytearray()
    for i, e in enumerate(evs):
        n = len(e) // 4
        assert 1 <= n <= 28
        delta = 0 if i == 0 else 1000
        data += struct.pack("<I", n | delta << 5) + e
    assert len(data) <= 4080
    return struct.pack("<Qq", ts0, len(data)) + bytes(data) + b"\0" * (4080 - len(data))


def main():
    out = sys.argv[1]
    bad = len(sys.argv) > 2 and sys.argv[2] == "bad"
    f = bytearray(b"\x17\x08\x44tracing6\0")
    f += struct.pack("<BBI", 0, 8, 4096)
    hp, he = HEADER_PAGE.encode(), HEADER_EVENT.encode()
    f += b"header_page\0" + struct.pack("<Q", len(hp)) + hp
    f += b"header_event\0" + struct.pack("<Q", len(he)) + he
    f += struct.pack("<I", len(FORMATS))
    for t in FORMATS:
        t = t.encode()
        f += struct.pack("<Q", len(t)) + t
    f += struct.pack("<I", 0)  # no event systems
    ks = "".join("%016x %s %s\n" % s for s in SYMS).encode()
    f += struct.pack("<I", len(ks)) + ks
    pk = "".join('0x%x : "%s"\n' % p for p in PRINTK).encode()
    f += struct.pack("<I", len(pk)) + pk
    cl = ("%d tbtest\n" % PID).encode()
    f += struct.pack("<Q", len(cl)) + cl
    f += struct.pack("<I", 1)  # cpus
    f += b"options  \0" + struct.pack("<H", 0)
    f += b"flyrecord\0"
    off = (len(f) + 16 + 4095) & ~4095
    pg = page(events(bad), 5000000000)
    f += struct.pack("<QQ", off, len(pg))
    f += b"\0" * (off - len(f)) + pg
    with open(out, "wb") as o:
        o.write(f)


main()
