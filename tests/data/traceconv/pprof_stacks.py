#!/usr/bin/env python3
"""Reads `protoc --decode=perftools.profiles.Profile profile.proto` text on
stdin and prints what the traceconv tests compare, one fact a line:

    string0 "<first string table entry>"
    sample_type <type>/<unit>
    period_type <type>/<unit>            (when present)
    mapping <filename> has_functions <0|1>   (in id order)
    sample <values,...> leaf_fn;...;root_fn ; leaf_dso;...;root_dso

Checks on the way that every id a sample uses resolves (location ->
mapping, line -> function, string indexes) and exits 1 otherwise.
"""
import re
import sys


def parse(lines):
    """protoc text format to nested dicts of lists."""
    stack = [{}]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            node = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(node)
            stack.append(node)
        elif line == "}":
            stack.pop()
        else:
            key, val = line.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = bytes(val[1:-1], "utf-8").decode("unicode_escape").encode(
                    "latin-1").decode("utf-8", "replace")
            else:
                val = {"true": 1, "false": 0}.get(val) if val in ("true", "false") else int(val)
            stack[-1].setdefault(key, []).append(val)
    return stack[0]


def main():
    p = parse(sys.stdin.read().split("\n"))
    strs = p.get("string_table", [])
    s = lambda i: strs[i]
    one = lambda m, k: m.get(k, [0])[0]
    print('string0 "%s"' % (strs[0] if strs else "<none>"))
    for vt in p.get("sample_type", []):
        print("sample_type %s/%s" % (s(one(vt, "type")), s(one(vt, "unit"))))
    for vt in p.get("period_type", []):
        print("period_type %s/%s" % (s(one(vt, "type")), s(one(vt, "unit"))))
    funcs = {one(f, "id"): f for f in p.get("function", [])}
    maps = {one(m, "id"): m for m in p.get("mapping", [])}
    locs = {one(l, "id"): l for l in p.get("location", [])}
    for i in sorted(maps):
        print("mapping %s has_functions %d" % (s(one(maps[i], "filename")),
                                               one(maps[i], "has_functions")))
    for smp in p.get("sample", []):
        names, dsos = [], []
        for lid in smp.get("location_id", []):
            loc = locs[lid]
            for line in loc.get("line", []):
                names.append(s(one(funcs[one(line, "function_id")], "name")))
            dsos.append(s(one(maps[one(loc, "mapping_id")], "filename")))
        print("sample %s %s ; %s" % (",".join(map(str, smp.get("value", []))),
                                     ";".join(names), ";".join(dsos)))


try:
    main()
except (KeyError, IndexError) as e:
    print("unresolved id: %r" % (e,))
    sys.exit(1)
