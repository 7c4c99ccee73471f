#!/usr/bin/env python3
"""Reads the DOM that `chromium --dump-dom` printed for a traceconv report
(stdin) and prints, in flame_expect.py's terms, what the page drew:

    state S / error E            <body data-state>, <body data-error>
    frames N                     <rect class="frame ..."> elements
    samples S, matched M         <body data-samples>, <body data-matched>
    match_rects K                frame rects with the "match" class
    bad_match_rects B            "match" rects whose data-name lacks SEARCH,
                                 plus plain rects whose data-name has it

    flame_dom.py SEARCH
"""
import sys
from html.parser import HTMLParser

search = "" if sys.argv[1] == "-" else sys.argv[1].lower()


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.body, self.frames, self.match, self.bad = {}, 0, 0, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "rect" and "frame" in a.get("class", "").split():
            self.frames += 1
            is_match = "match" in a["class"].split()
            has = bool(search) and search in a.get("data-name", "").lower()
            root = a.get("data-name") == "all"
            self.match += is_match
            self.bad += is_match != (has and not root)


d = Dom()
d.feed(sys.stdin.read())
print("state %s" % d.body.get("data-state"))
print("error %s" % d.body.get("data-error", "-"))
print("frames %d" % d.frames)
print("samples %s" % d.body.get("data-samples"))
print("matched %s" % d.body.get("data-matched"))
print("match_rects %d" % d.match)
print("bad_match_rects %d" % d.bad)
