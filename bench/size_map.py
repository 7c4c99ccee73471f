#!/usr/bin/env python3
"""Where the release binary's bytes go, from the GNU ld map of an unstripped
link made with the release flags (`./build.sh size` makes it and runs this).

Every input section the linker kept (after --gc-sections) that occupies the
file (.text, .rodata, .data, .data.rel.ro, .eh_frame, ...; not .bss) is
counted once, under the library or component it came from: libsqlite3,
libmbedcrypto, libc (musl), ..., a component (components/<c>/, the trace
processor by subfolder: tp/<sub>), or gen/protos (protoc-c output). Prints
one line per group, largest first, with its text/rodata/data split, then
the largest symbols (from `nm`, when given the binary too).

    size_map.py MAP [BINARY [N]]
"""
import collections
import re
import subprocess
import sys

SECTION = re.compile(r'^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$')
SECTION_NAME = re.compile(r'^ (\.\S+)$')
CONTINUED = re.compile(r'^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$')
ARCHIVE = re.compile(r'lib([A-Za-z0-9_+-]+)\.a\(')


def group(path):
    m = ARCHIVE.search(path)
    if m:
        return 'libc (musl)' if m.group(1) == 'c' else 'lib' + m.group(1)
    if '/gen/protos/' in path:
        return 'gen/protos'
    if '/obj/components/' in path:
        parts = path.split('/obj/components/')[1].split('/')
        if parts[0] == 'trace_processor' and len(parts) > 2:
            return 'tp/' + parts[1]
        return parts[0]
    return 'other: ' + path.rsplit('/', 1)[-1]


def kind(section):
    for k in ('text', 'rodata', 'data.rel.ro', 'data', 'eh_frame'):
        if section.startswith('.' + k):
            return k
    return 'other'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    text = text[text.index('Linker script and memory map'):]
    sizes = collections.Counter()
    split = collections.Counter()
    pending = None
    for line in text.split('\n'):
        m = SECTION.match(line)
        if m:
            sec, addr, size, path = m.groups()
            pending = None
        else:
            n = SECTION_NAME.match(line)
            if n:
                pending = n.group(1)
                continue
            m = CONTINUED.match(line)
            if not m or not pending:
                pending = None
                continue
            addr, size, path = m.groups()
            sec, pending = pending, None
        size, addr = int(size, 16), int(addr, 16)
        if size == 0 or addr == 0 or sec.startswith(('.bss', '.tbss', '.comment', '.note')):
            continue
        g = group(path)
        sizes[g] += size
        split[g, kind(sec)] += size
    total = sum(sizes.values())
    print('%9s  %-22s %9s %9s %9s %9s' % ('bytes', 'library/component', 'text', 'rodata',
                                          'data', 'eh_frame'))
    for g, v in sizes.most_common():
        print('%9d  %-22s %9d %9d %9d %9d' % (
            v, g, split[g, 'text'], split[g, 'rodata'],
            split[g, 'data'] + split[g, 'data.rel.ro'], split[g, 'eh_frame']))
    print('%9d  total of the kept input sections' % total)
    if len(sys.argv) > 2:
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 30
        out = subprocess.run(['nm', '--size-sort', '-S', sys.argv[2]], capture_output=True,
                             text=True, check=True).stdout.splitlines()
        syms = [f for f in (l.split() for l in out) if len(f) == 4 and f[2] not in 'bB']
        print('\nlargest symbols (nm --size-sort -S, .bss left out):')
        for addr, size, t, name in syms[-n:][::-1]:
            print('%9d  %s %s' % (int(size, 16), t, name))


if __name__ == '__main__':
    main()
