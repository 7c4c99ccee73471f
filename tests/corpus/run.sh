# tests/corpus/run.sh: the ten aggregate queries of
# ../shared/reference/corpus_answers.json (Perfetto v58.2's answers on real
# traces of ../shared/corpus) run over every file there, compared with those
# answers. Run by tests/run.sh with TRACEBOX and TB_TEST_ROOT set; prints one
# PASS/FAIL/SKIP line per file.
#
# - A file Perfetto imports passes when all ten answers are Perfetto's. A
#   difference listed in known_differences.tsv (file, query, ours,
#   Perfetto's, reason) is reported SKIP while ours is still the listed
#   value; any other difference FAILs, and so does a listed one that is now
#   gone (remove its line: the list only shrinks).
# - A file Perfetto could not load ("error") or imported nothing from is not
#   a target: own_tools.tsv holds what the format's own tools show for it
#   (file, SQL, expected value, how it was found), checked here; a file with
#   no line there must at least load.
set -u
cd "${TB_TEST_ROOT:?}" || exit 1
answers=../shared/reference/corpus_answers.json
if [ ! -f "$answers" ]; then
	echo "SKIP corpus: $answers not found"
	exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP corpus: python3 not found"
	exit 0
fi
exec python3 - "$TRACEBOX" "$answers" tests/corpus/known_differences.tsv tests/corpus/own_tools.tsv <<'PY'
import json, subprocess, sys

tracebox, answers_path, known_path, own_path = sys.argv[1:5]
doc = json.load(open(answers_path))
queries = doc["queries"]
union = " union all ".join("select '%s', (%s)" % (k, q) for k, q in queries.items())


def tsv(path, ncols):
    rows = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < ncols:
            print("FAIL corpus/%s: malformed line: %s" % (path, line))
            continue
        rows.append(cols)
    return rows


known = {}
for f, q, ours, theirs, why in tsv(known_path, 5):
    known[(f, q)] = (ours, theirs, why)
own = {}
for f, sql, want, how in tsv(own_path, 4):
    own.setdefault(f, []).append((sql, want, how))


def query(path, sql):
    try:
        r = subprocess.run([tracebox, "trace_processor_shell", "query", path, sql],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    return r.stdout.splitlines(), ""


for f, a in sorted(doc["answers"].items()):
    path = "../shared/corpus/" + f
    name = "corpus/" + f
    comparable = a.get("slices") != "error" and not a.get("perfetto_imported_nothing")
    if not comparable:
        lines, err = query(path, "select 1")
        if lines is None:
            print("FAIL %s: does not load: %s" % (name, err))
            continue
        bad = []
        for sql, want, how in own.get(f, []):
            got, err = query(path, sql)
            got = got[-1].strip('"') if got else err
            if got != want:
                bad.append("%s = %s, not %s (%s)" % (sql, got, want, how))
        if bad:
            print("FAIL %s" % name)
            for b in bad:
                print("  " + b, file=sys.stderr)
        else:
            print("PASS %s" % name)
        continue
    lines, err = query(path, union)
    if lines is None:
        print("FAIL %s: does not load: %s" % (name, err))
        continue
    got = {}
    for line in lines[1:]:
        k, v = line.split(",", 1)
        got[k.strip('"')] = v.strip('"')
    fails, skips = [], []
    for k in queries:
        ours, theirs = got.get(k), a[k]
        listed = known.pop((f, k), None)
        if ours == theirs:
            if listed:
                fails.append("%s: now %s as Perfetto; remove it from known_differences.tsv" % (k, ours))
        elif listed and listed[0] == ours and listed[1] == theirs:
            skips.append("%s %s vs Perfetto's %s (%s)" % (k, ours, theirs, listed[2]))
        else:
            fails.append("%s: %s, Perfetto %s" % (k, ours, theirs))
    if fails:
        print("FAIL %s" % name)
        for x in fails:
            print("  " + x, file=sys.stderr)
    elif skips:
        print("SKIP %s: known difference: %s" % (name, "; ".join(skips)))
    else:
        print("PASS %s" % name)
for (f, k) in sorted(known):
    print("FAIL corpus/%s: known difference for %s lists a file or query not compared" % (f, k))
PY
