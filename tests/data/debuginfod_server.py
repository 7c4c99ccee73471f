#!/usr/bin/env python3
"""A loopback debuginfod server for tests/root/t3100 (Python stdlib only).

Usage: debuginfod_server.py PORTFILE ROOT LOG

Listens on 127.0.0.1 on a free port (written to PORTFILE once listening)
and answers debuginfod's GET /buildid/HEX/debuginfo under three prefixes:
  /ok/...      ROOT/HEX if that file exists (200), else 404
  /missing/... always 404
  /stall/...   reads the request and never answers (the client must give up)
Every request line is appended to LOG. Runs until killed.
"""
import http.server
import os
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(LOG, 'a') as f:
            f.write(self.path + '\n')
        parts = self.path.strip('/').split('/')
        if parts[0] == 'stall':
            time.sleep(600)
            return
        if (parts[0] == 'ok' and len(parts) == 4 and parts[1] == 'buildid' and
                parts[3] == 'debuginfo' and all(c in '0123456789abcdef' for c in parts[2])):
            path = os.path.join(ROOT, parts[2])
            if os.path.isfile(path):
                with open(path, 'rb') as f:
                    data = f.read()
                self.send_response(200)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
        self.send_error(404)

    def log_message(self, *args):
        pass


PORTFILE, ROOT, LOG = sys.argv[1:4]
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
server.daemon_threads = True
with open(PORTFILE + '.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + '.tmp', PORTFILE)
server.serve_forever()
