#!/bin/sh
# tests/check/fieldnums.sh: protobuf field numbers are named, never written
# as numbers (issue 17: out/gen/pb_fields.h, PB_F_<Message>_<field>, is the
# one place a renumbering has to reach). In components/ (but components/pb/,
# the library itself) and tests/unit/ (but pb_test.c, which tests that
# library with arbitrary ids), it flags an integer literal other than 0 (no
# field has it: a helper's "none")
#   - in the field id argument of pb_put_*, pb_begin_nested, pb_put_tag and
#     pb_find_field,
#   - in the field id argument of a helper: a function of the same file (or
#     of any header) that passes one of its parameters on to such an
#     argument, compares it with a field's .id or stores it in an .id
#     (found to a fixpoint, so helpers of helpers count),
#   - compared (== or !=) with a field's id (f.id == 3, f->id != 3),
#   - as a case label of a switch over a field's id.
# A number that is no field of our schema (a test's deliberately unknown
# field, a field protos/ does not declare yet) gets a local name saying so.
# Field numbers kept in tables, array indexes and range checks (f.id < 8)
# are not seen. Prints "file:line: literal field id N in CONTEXT" for each
# and exits 1 when there is any. Run from the top of the tree; with FILE...
# arguments it checks only those.
set -u

if [ $# -eq 0 ]; then
	set -- $( (find components -name '*.[ch]' ! -path 'components/pb/*'
		find tests/unit -name '*.[ch]' ! -name pb_test.c) | LC_ALL=C sort)
fi

exec python3 - "$@" <<'PY'
import re
import sys

IDENT = r'[A-Za-z_][A-Za-z0-9_]*'
# pb library calls and the position (0-based) of their field id argument.
PB_ID_ARG = {'pb_begin_nested': 1, 'pb_put_tag': 1, 'pb_find_field': 2}
PB_PUT = re.compile(r'pb_put_(?!raw)' + r'[a-z0-9_]+$')


def strip(text):
    """Comments and string/char literals blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def close_of(s, i, o='(', c=')'):
    """Index of the bracket closing the one at s[i]."""
    d = 0
    for j in range(i, len(s)):
        if s[j] == o:
            d += 1
        elif s[j] == c:
            d -= 1
            if d == 0:
                return j
    return len(s)


def split_args(s):
    args, d, cur = [], 0, []
    for ch in s:
        if ch in '([{':
            d += 1
        elif ch in ')]}':
            d -= 1
        if ch == ',' and d == 0:
            args.append(''.join(cur))
            cur = []
        else:
            cur.append(ch)
    args.append(''.join(cur))
    return args


def calls(s):
    """(name, offset of name, [(arg text, arg offset)]) of every call."""
    for m in re.finditer(r'\b(' + IDENT + r')\s*\(', s):
        name = m.group(1)
        if name in ('if', 'while', 'for', 'switch', 'return', 'sizeof'):
            continue
        o = m.end() - 1
        e = close_of(s, o)
        pos, res = o + 1, []
        for a in split_args(s[o + 1:e]):
            res.append((a, pos))
            pos += len(a) + 1
        yield name, m.start(), res


def id_positions(name, local):
    if name in PB_ID_ARG:
        return {PB_ID_ARG[name]}
    if PB_PUT.match(name):
        return {1}
    return local.get(name, set())


def functions(s):
    """(name, [param names], body text) of every function definition."""
    for m in re.finditer(r'^(?:static\s+|inline\s+)*[A-Za-z_][\w\s\*]*?\b(' + IDENT +
                         r')\s*\(([^;{}()]*)\)\s*\{', s, re.M):
        if m.group(1) in ('if', 'while', 'for', 'switch'):
            continue
        params = []
        for p in m.group(2).split(','):
            w = re.findall(IDENT, p)
            params.append(w[-1] if w else '')
        b = m.end() - 1
        yield m.group(1), params, s[b:close_of(s, b, '{', '}') + 1]


def helpers_of(s, known):
    """Helpers defined in s: name -> positions of their field id params."""
    found = {}
    changed = True
    while changed:
        changed = False
        table = dict(known)
        table.update(found)
        for name, params, body in functions(s):
            pos = set(found.get(name, set()))
            for i, p in enumerate(params):
                if not p or i in pos:
                    continue
                hit = re.search(r'[.>]id\s*[!=]?=\s*' + p + r'\b|\b' + p + r'\s*[!=]=\s*\w+(\.|->)id\b', body)
                if not hit:
                    for cn, _, args in calls(body):
                        for k in id_positions(cn, table):
                            if k < len(args) and re.fullmatch(r'\s*' + p + r'\s*', args[k][0]):
                                hit = True
                if hit:
                    pos.add(i)
            if pos != found.get(name, set()):
                found[name] = pos
                changed = True
    return {k: v for k, v in found.items() if v}


LIT = re.compile(r'(?<![\w.])(\d+)[uUlL]*(?![\w.])')


def check(path, s, table, out):
    line = lambda off: s.count('\n', 0, off) + 1
    for name, at, args in calls(s):
        for k in id_positions(name, table):
            if k < len(args):
                a, off = args[k]
                for m in LIT.finditer(a):
                    if int(m.group(1)) == 0:
                        continue  # 0 is no field: "none" to a helper
                    out.append('%s:%d: literal field id %s in %s()' %
                               (path, line(off + m.start()), m.group(1), name))
    for m in re.finditer(r'\b\w+(?:\.|->)id\s*([!=]=)\s*(\d+)\b|\b(\d+)\s*([!=]=)\s*\w+(?:\.|->)id\b', s):
        if int(m.group(2) or m.group(3)) == 0:
            continue
        out.append('%s:%d: literal field id %s compared with .id' %
                   (path, line(m.start()), m.group(2) or m.group(3)))
    for m in re.finditer(r'\bswitch\s*\(\s*[\w.>-]*(?:\.|->)id\s*\)\s*\{', s):
        b = m.end() - 1
        body = s[b:close_of(s, b, '{', '}') + 1]
        d = 0
        for t in re.finditer(r'[{}]|\bcase\s+(\d+)\s*:', body):
            if t.group(0) == '{':
                d += 1
            elif t.group(0) == '}':
                d -= 1
            elif d == 1:
                out.append('%s:%d: literal field id %s as a case of switch (...id)' %
                           (path, line(b + t.start()), t.group(1)))


def main(paths):
    texts = {p: strip(open(p, encoding='utf-8', errors='replace').read()) for p in paths}
    shared = {}
    for p in paths:
        if p.endswith('.h'):
            shared.update(helpers_of(texts[p], shared))
    out = []
    for p in paths:
        table = dict(shared)
        table.update(helpers_of(texts[p], shared))
        check(p, texts[p], table, out)
    if out:
        print('\n'.join(out))
        print('fieldnums.sh: %d literal protobuf field ids (name them: out/gen/pb_fields.h)'
              % len(out), file=sys.stderr)
        return 1
    return 0


sys.exit(main(sys.argv[1:]))
PY
