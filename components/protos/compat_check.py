#!/usr/bin/env python3
"""Compare our .proto files with a Perfetto checkout, field by field.

Usage: compat_check.py PERFETTO_ROOT
Compiles every .proto here and the same paths under PERFETTO_ROOT/protos/
into descriptor sets with protoc, then checks that every message, field
(number, label, type, type name, packed, oneof) and enum value we declare is
identical in Perfetto. Prints what we omit (informational). Exit 1 on any
difference. A maintenance tool; the build does not run it.
"""
import os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DESCRIPTOR = '/usr/include/google/protobuf/descriptor.proto'


def descriptor_text(root, files):
    with tempfile.NamedTemporaryFile(suffix='.pb') as f:
        subprocess.check_call(['protoc', '-I' + root, '--include_imports',
                               '--descriptor_set_out=' + f.name] + files)
        with open(f.name, 'rb') as b:
            return subprocess.run(
                ['protoc', '-I' + os.path.dirname(os.path.dirname(os.path.dirname(DESCRIPTOR))),
                 '--decode=google.protobuf.FileDescriptorSet', 'google/protobuf/descriptor.proto'],
                stdin=b, capture_output=True, text=True, check=True).stdout


def parse(text):
    toks = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[\w.\-]+:?', text)

    def block(i):
        d = []
        while i < len(toks):
            t = toks[i]
            if t == '}':
                return d, i + 1
            if t.endswith(':'):
                d.append((t[:-1], toks[i + 1].strip('"')))
                i += 2
            else:
                sub, i = block(i + 2)
                d.append((t, sub))
        return d, i
    return block(0)[0]
def g(d,k): return [v for kk,v in d if kk==k]
def g1(d,k,dflt=None):
    v=g(d,k); return v[0] if v else dflt
def collect(fds):
    msgs={};enums={}
    def walk_enum(e,prefix):
        enums[prefix+g1(e,'name')]={g1(v,'name'):g1(v,'number') for v in g(e,'value')}
    def walk_msg(m,prefix):
        fn=prefix+g1(m,'name')
        fields={}
        for f in g(m,'field'):
            oi=g1(f,'oneof_index')
            fields[g1(f,'name')]=(g1(f,'number'),g1(f,'label'),g1(f,'type'),g1(f,'type_name'),
              'packed' if any(g1(o,'packed')=='true' for o in g(f,'options')) else '', 'oneof' if oi is not None else '')
        msgs[fn]=fields
        for n in g(m,'nested_type'): walk_msg(n,fn+'.')
        for e in g(m,'enum_type'): walk_enum(e,fn+'.')
    for fd in g(fds,'file'):
        pkg='.'+g1(fd,'package')+'.'
        for m in g(fd,'message_type'): walk_msg(m,pkg)
        for e in g(fd,'enum_type'): walk_enum(e,pkg)
    return msgs,enums


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours = sorted(os.path.relpath(os.path.join(d, f), HERE)
                  for d, _, fs in os.walk(HERE) for f in fs if f.endswith('.proto'))
    om, oe = collect(parse(descriptor_text(HERE, ours)))
    tm, te = collect(parse(descriptor_text(sys.argv[1], ['protos/' + f for f in ours])))
    err = 0
    for m, fs in sorted(om.items()):
        if m not in tm:
            print('message not in Perfetto:', m); err += 1; continue
        for f, v in fs.items():
            if tm[m].get(f) != v:
                print('field differs:', m, f, v, tm[m].get(f)); err += 1
        for f, v in tm[m].items():
            if f not in fs:
                print('omitted: %s.%s = %s (%s)' % (m, f, v[0], v[3] or v[2]))
    for e, vs in sorted(oe.items()):
        if te.get(e) != vs:
            print('enum differs:', e); err += 1
    print('%d messages, %d enums, %d differences' % (len(om), len(oe), err))
    sys.exit(1 if err else 0)


if __name__ == '__main__':
    main()
