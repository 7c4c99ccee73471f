#!/usr/bin/env python3
"""Rewrite a v7 trace.dat with every section zlib-compressed (python3
stdlib only), for the zlib path of the trace.dat importer: Debian's
trace-cmd 3.1 cannot write zlib files.

usage: tdat_recompress.py IN.dat OUT.dat
       tdat_recompress.py --dump IN.dat     (list the sections)

IN is a v7 file whose sections are stored uncompressed or with zlib: a
zstd file (trace-cmd's default) first goes through `trace-cmd convert
--file-version 7 --compression none`, since Python's stdlib has no zstd
before 3.14. OUT has the same options, metadata and ring-buffer pages: the
compression header says "zlib", the metadata sections (header info,
formats, kallsyms, printk, cmdlines) are compressed whole (the options
stay stored, as trace-cmd writes them, in one options section), and each
cpu's pages in chunks of up to 8 pages ((u32 chunks, then per chunk u32
compressed size, u32 size, data), as trace-cmd writes them). Layout:
README.md of components/trace_processor/importers/trace_dat.
"""
import struct
import sys
import zlib

MAGIC = b"\x17\x08\x44tracing"
META = (16, 17, 18, 19, 20, 21)  # HEADER_INFO .. CMDLINES option ids
BUFFER = 3
PAGES_PER_CHUNK = 8


class Bad(Exception):
    pass


class File:
    def __init__(self, data):
        self.d = data
        if data[:10] != MAGIC:
            raise Bad("not a trace.dat")
        p = 10
        v, p = self.cstr(p)
        if v != b"7":
            raise Bad("file version %s, not 7" % v.decode(errors="replace"))
        self.endian, self.long_size = data[p], data[p + 1]
        self.e = ">" if self.endian else "<"
        self.page_size = self.u32(p + 2)
        p += 6
        self.comp, p = self.cstr(p)
        self.comp_version, p = self.cstr(p)
        self.opt_at = p
        self.first_opt = self.u64(p)
        self.head = data[:p]
        if self.comp not in (b"none", b"zlib"):
            raise Bad("compression %s: convert it with `trace-cmd convert "
                      "--file-version 7 --compression none` first" % self.comp.decode())

    def u16(self, p):
        return struct.unpack_from(self.e + "H", self.d, p)[0]

    def u32(self, p):
        return struct.unpack_from(self.e + "I", self.d, p)[0]

    def u64(self, p):
        return struct.unpack_from(self.e + "Q", self.d, p)[0]

    def cstr(self, p):
        z = self.d.index(b"\0", p)
        return self.d[p:z], z + 1

    def section(self, off):
        """(id, flags, string id, body inflated)"""
        sid, flags, strid, size = struct.unpack_from(self.e + "HHIQ", self.d, off)
        body = self.d[off + 16:off + 16 + size]
        if len(body) != size:
            raise Bad("section at %d is cut" % off)
        if flags & 1:
            body = self.inflate(body)
        return sid, flags, strid, body

    def inflate(self, body):
        csize, usize = struct.unpack_from(self.e + "II", body, 0)
        out = zlib.decompress(body[8:8 + csize])
        if len(out) != usize:
            raise Bad("a section inflates to %d bytes, not %d" % (len(out), usize))
        return out

    def options(self):
        """Every option of the chain, in order: (id, data)."""
        out, off, seen = [], self.first_opt, 0
        while off and seen < 64:
            sid, _, _, body = self.section(off)
            if sid != 0:
                raise Bad("section %d where options were expected" % sid)
            off, p = 0, 0
            while p + 6 <= len(body):
                oid, n = struct.unpack_from(self.e + "HI", body, p)
                data = body[p + 6:p + 6 + n]
                p += 6 + n
                if oid == 0:
                    off = struct.unpack(self.e + "Q", data)[0] if n == 8 else 0
                    break
                out.append((oid, data))
            seen += 1
        return out

    def cpu_pages(self, off, size, compressed):
        if not compressed:
            return self.d[off:off + size]
        n = self.u32(off)
        p, out = off + 4, bytearray()
        for _ in range(n):
            csize, usize = self.u32(p), self.u32(p + 4)
            chunk = zlib.decompress(self.d[p + 8:p + 8 + csize])
            if len(chunk) != usize:
                raise Bad("a chunk inflates to %d bytes, not %d" % (len(chunk), usize))
            out += chunk
            p += 8 + csize
        return bytes(out)


def buffer_option(f, data):
    """BUFFER: u64 section offset, name, clock, u32 page size, u32 cpus,
    (u32 cpu, u64 offset, u64 size) per cpu."""
    off = struct.unpack_from(f.e + "Q", data, 0)[0]
    p = 8
    z = data.index(b"\0", p)
    name = data[p:z]
    p = z + 1
    z = data.index(b"\0", p)
    clock = data[p:z]
    p = z + 1
    psize, ncpu = struct.unpack_from(f.e + "II", data, p)
    p += 8
    cpus = []
    for _ in range(ncpu):
        cpus.append(struct.unpack_from(f.e + "IQQ", data, p))
        p += 20
    return off, name, clock, psize, cpus, data[p:]


def dump(f):
    print("compression %s %s, options at %d" % (f.comp.decode(), f.comp_version.decode(), f.first_opt))
    for oid, data in f.options():
        if oid in META:
            off = struct.unpack(f.e + "Q", data)[0]
            sid, flags, strid, body = f.section(off)
            print("option %d: section %d at %d flags %d, %d bytes" % (oid, sid, off, flags, len(body)))
        elif oid == BUFFER:
            off, name, clock, psize, cpus, _ = buffer_option(f, data)
            sid, flags, strid, size = struct.unpack_from(f.e + "HHIQ", f.d, off)
            print("buffer '%s' clock %s: section %d at %d flags %d size %d" %
                  (name.decode(), clock.decode(), sid, off, flags, size))
            for c in cpus:
                print("  cpu %d at %d, %d bytes" % c)
        else:
            print("option %d: %d bytes" % (oid, len(data)))


def compress(body):
    c = zlib.compress(body, 6)
    return struct.pack("<II", len(c), len(body)) + c


def recompress(f):
    if f.endian:
        raise Bad("big-endian files are not handled")
    out = bytearray(f.head[:f.opt_at - len(f.comp) - len(f.comp_version) - 2])
    out += b"zlib\0" + zlib.ZLIB_VERSION.encode() + b"\0"
    opt_at = len(out)
    out += b"\0" * 8
    opts = []
    for oid, data in f.options():
        if oid in META:
            off = struct.unpack(f.e + "Q", data)[0]
            sid, _, strid, body = f.section(off)
            at = len(out)
            c = compress(body)
            out += struct.pack("<HHIQ", sid, 1, strid, len(c)) + c
            opts.append((oid, struct.pack("<Q", at)))
        elif oid == BUFFER:
            off, name, clock, psize, cpus, rest = buffer_option(f, data)
            sid, flags, strid, _ = struct.unpack_from(f.e + "HHIQ", f.d, off)
            while len(out) % f.page_size:
                out += b"\0"
            at = len(out)
            out += b"\0" * 16
            new = []
            for cpu, o, s in cpus:
                pages = f.cpu_pages(o, s, flags & 1) if s else b""
                if not pages:
                    new.append((cpu, 0, 0))
                    continue
                step = PAGES_PER_CHUNK * psize
                chunks = [pages[i:i + step] for i in range(0, len(pages), step)]
                start = len(out)
                out += struct.pack("<I", len(chunks))
                for ch in chunks:
                    out += compress(ch)
                # The size does not count the chunk count (as trace-cmd writes it).
                new.append((cpu, start, len(out) - start - 4))
            struct.pack_into("<HHIQ", out, at, sid, 1, strid, len(out) - at - 16)
            d = struct.pack("<Q", at) + name + b"\0" + clock + b"\0"
            d += struct.pack("<II", psize, len(new))
            for c in new:
                d += struct.pack("<IQQ", *c)
            opts.append((oid, d + rest))
        else:
            opts.append((oid, data))
    # One options section, its DONE option ending the chain; stored, as
    # trace-cmd stores options sections.
    body = b"".join(struct.pack("<HI", oid, len(d)) + d for oid, d in opts)
    body += struct.pack("<HIQ", 0, 8, 0)
    at = len(out)
    out += struct.pack("<HHIQ", 0, 0, 0, len(body)) + body
    struct.pack_into("<Q", out, opt_at, at)
    return bytes(out)


def main():
    try:
        if len(sys.argv) == 3 and sys.argv[1] == "--dump":
            dump(File(open(sys.argv[2], "rb").read()))
            return 0
        if len(sys.argv) != 3:
            print(__doc__.strip(), file=sys.stderr)
            return 2
        f = File(open(sys.argv[1], "rb").read())
        data = recompress(f)
        with open(sys.argv[2], "wb") as o:
            o.write(data)
        return 0
    except (Bad, struct.error, zlib.error, ValueError) as e:
        print("tdat_recompress: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
