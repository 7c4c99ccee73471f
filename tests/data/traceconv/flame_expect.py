#!/usr/bin/env python3
"""What the report's flame graph must show for a view, computed from
perf_script_stacks.py output (stdin) without tracebox or JavaScript:

    flame_expect.py VIEW SEARCH TID FROM_MS TO_MS [ZOOM]     ('-' for none)

prints `frames N` (rectangles: the root plus one per distinct path of
frame labels, root first for topdown, leaf first for bottomup), `samples S`,
`matched M` (samples with a label containing SEARCH, case-insensitively) and
`match_rects K` (rectangles whose label contains SEARCH). ZOOM is a path of
labels from the root, joined by ","; zoomed, only the frames on that path and
below it are drawn (as deep as the path exists). A label is the
function name; a nameless or "[unknown]" frame is named after its DSO's
file name: as it is when it starts with '[', else "[name]".
"""
import sys

view, search, tid, lo, hi = sys.argv[1:6]
zoom = tuple(sys.argv[6].split(",")) if len(sys.argv) > 6 and sys.argv[6] != "-" else ()
search = "" if search == "-" else search.lower()


def ns(secs):
    whole, frac = secs.split(".")
    return int(whole) * 10**9 + int((frac + "000000000")[:9])


def label(name, dso):
    if name and name != "[unknown]":
        return name
    base = dso.rsplit("/", 1)[-1]
    return base if base.startswith("[") else "[" + base + "]"


samples = []
for line in sys.stdin.read().split("\n"):
    if not line:
        continue
    head, dsos = line.split(" ; ")
    pid, t, secs, stack = head.split(" ", 3)
    names = [label(n, d) for n, d in zip(stack.split(";"), dsos.split(";"))]
    samples.append((t, ns(secs), names))
t0 = samples[0][1] if samples else 0
paths, shown, matched = set(), 0, 0
for t, when, names in samples:
    rel = when - t0
    if tid != "-" and t != tid:
        continue
    if lo != "-" and rel < float(lo) * 1e6:
        continue
    if hi != "-" and rel > float(hi) * 1e6:
        continue
    shown += 1
    order = names[::-1] if view == "topdown" else names
    for i in range(1, len(order) + 1):
        paths.add(tuple(order[:i]))
    if search and any(search in n.lower() for n in names):
        matched += 1
while zoom and zoom not in paths:  # zoom as far as the path exists
    zoom = zoom[:-1]
drawn = [p for p in paths if p[:len(zoom)] == zoom or zoom[:len(p)] == p]
print("frames %d" % (len(drawn) + 1 if shown else 0))
print("samples %d" % shown)
print("matched %d" % matched)
print("match_rects %d" % sum(1 for p in drawn if search and search in p[-1].lower()))
