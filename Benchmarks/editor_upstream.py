#!/usr/bin/env python3
"""The editor's upstream for Benchmarks/editor.sh: a page whose every section is 2 MB of wikitext (multi-byte text
among it), a token, and an edit that succeeds. Usage: editor_upstream.py PORT   (loopback only; runs until killed)."""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
text = ("== Section ==\n" + "Einstein's ''Annus mirabilis'' papers – 日本語 & more. " * 40 + "\n") * 900
text = text[:2_000_000]
body = json.dumps({"batchcomplete": True, "query": {"pages": [{"pageid": 1, "ns": 0, "title": "Big", "lastrevid": 5, "protection": [], "actions": {"edit": []},
    "revisions": [{"revid": 5, "slots": {"main": {"content": text}}}]}], "userinfo": {"id": 1, "name": "A"}}}).encode()
ok = b'{"edit":{"result":"Success","oldrevid":5,"newrevid":6}}'
tok = b'{"query":{"tokens":{"csrftoken":"t+\\\\"}}}'
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, b):
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self): self.reply(tok if "meta=tokens" in self.path else body)
    def do_POST(self):
        n = int(self.headers["Content-Length"]); self.rfile.read(n); self.reply(ok)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
