#!/usr/bin/env python3
"""Counts protobuf field numbers written as literals in C sources.

Usage: field_literals.py [-v] [PATH...]   (default: components tests bench)

A literal is a number where a field id goes: the id argument of pb_put_*,
pb_put_tag, pb_begin_nested and pb_find_field; a `case N:` of a switch on
a field id (`switch (f.id)`, `switch (id)`, ...); and `X.id == N` /
`X->id != N` comparisons (0 is no field number: left out). components/pb/ and its own tests (pb_test.c,
pb_fuzz.c) are left out: there numbers are wire-format examples, not
schema fields. Prints one `FILE COUNT` line per file with literals (-v:
every hit as FILE:LINE: text) and the total last.
"""
import os
import re
import sys

CALL = re.compile(r'\bpb_(?:put_\w+|begin_nested)\s*\([^,()]*(?:\([^()]*\))?[^,()]*,\s*(\d+)\b')
FIND = re.compile(r'\bpb_find_field\s*\((?:[^,()]*(?:\([^()]*\))?[^,()]*,){2}\s*(\d+)\b')
CMP = re.compile(r'(?:\.|->)id\s*[!=]=\s*(\d+)\b')
SWITCH = re.compile(r'\bswitch\s*\(([^()]*(?:\.|->|\b)id)\)\s*\{')
CASE = re.compile(r'\bcase\s+(\d+)\s*:')
EXCLUDE = ('components/pb/', 'tests/unit/pb_test.c', 'tests/fuzz/pb_fuzz.c')


def line_of(text, pos):
    return text.count('\n', 0, pos) + 1


def hits(path):
    text = open(path, encoding='utf-8', errors='replace').read()
    found = set()
    for rx in (CALL, FIND, CMP):
        for m in rx.finditer(text):
            found.add(m.start(1))
    for m in SWITCH.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        for c in CASE.finditer(text, m.end(), i):
            found.add(c.start(1))
    found = {p for p in found if text[p:p + 2] != '0' and not text[p:p + 2].startswith('0')}
    lines = text.split('\n')
    return [(line_of(text, p), lines[line_of(text, p) - 1].strip()) for p in sorted(found)]


def main():
    args = sys.argv[1:]
    verbose = bool(args) and args[0] == '-v'
    roots = [a for a in args if a != '-v'] or ['components', 'tests', 'bench']
    files = []
    for r in roots:
        if os.path.isfile(r):
            files.append(r)
        for d, _, names in os.walk(r):
            files += [os.path.join(d, n) for n in names if n.endswith(('.c', '.h'))]
    total = 0
    for f in sorted(files):
        if f.startswith(EXCLUDE):
            continue
        h = hits(f)
        total += len(h)
        if h and verbose:
            for ln, s in h:
                print('%s:%d: %s' % (f, ln, s))
        elif h:
            print('%s %d' % (f, len(h)))
    print('total %d' % total)


if __name__ == '__main__':
    main()
