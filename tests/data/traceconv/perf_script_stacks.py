#!/usr/bin/env python3
"""Stacks of a `perf script` text file, read independently of tracebox, for
the traceconv tests: one line per sample that has frames, in file order:

    PID TID SECONDS leaf_fn;...;root_fn ; leaf_dso;...;root_dso

Function names drop perf's +0xOFFSET suffix. Usage: perf_script_stacks.py FILE
"""
import re
import sys

HEADER = re.compile(r"^\S.*?\s+(?:(\d+)/)?(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):")
FRAME = re.compile(r"^\s+[0-9a-fA-F]+\s+(.*?)\s+\(([^()]*)\)\s*$")


def main():
    with open(sys.argv[1], errors="replace") as f:
        lines = f.read().split("\n")
    cur = None
    out = []

    def flush():
        if cur and cur[3]:
            out.append("%s %s %s %s ; %s" % (cur[0], cur[1], cur[2], ";".join(cur[3]),
                                             ";".join(cur[4])))

    for line in lines:
        if not line.strip():
            flush()
            cur = None
            continue
        if line.startswith("#"):
            continue
        if not line[0].isspace():
            flush()
            m = HEADER.match(line)
            cur = [m.group(1) or "-", m.group(2), m.group(3), [], []] if m else None
            continue
        m = FRAME.match(line)
        if cur is not None and m:
            cur[3].append(re.sub(r"\+0x[0-9a-fA-F]+$", "", m.group(1)))
            cur[4].append(m.group(2))
    flush()
    print("\n".join(out))


main()
