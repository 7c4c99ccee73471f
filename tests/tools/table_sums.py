#!/usr/bin/env python3
"""tests/tools/table_sums.py TRACEBOX TRACE...: one line per (trace, table),
"trace table rows sha1", from `export sqlite` read back with Python's sqlite3
(every table and view the export writes, all rows in their order, typed).
Used to prove a speed change keeps every answer: run it before and after on
the same traces and diff the two outputs. A trace that does not load prints
"trace - error". Not a test: it asserts nothing."""
import hashlib, os, sqlite3, subprocess, sys, tempfile

tb, traces = sys.argv[1], sys.argv[2:]
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "x.db")
    for t in traces:
        name = os.path.basename(t)
        if os.path.exists(db):
            os.unlink(db)
        r = subprocess.run([tb, "trace_processor_shell", "export", "sqlite", "-o", db, t],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            print(name, "-", "error", flush=True)
            continue
        con = sqlite3.connect(db)
        tabs = [r[0] for r in con.execute(
            "select name from sqlite_master where type in ('table', 'view') order by name")]
        for tab in tabs:
            h = hashlib.sha1()
            n = 0
            for row in con.execute('select * from "%s"' % tab.replace('"', '""')):
                h.update(repr(row).encode())
                n += 1
            print(name, tab, n, h.hexdigest()[:16], flush=True)
        con.close()
