#!/usr/bin/env python3
"""A fake Wikimedia for the Saved tab's benchmark: the reading lists' interface for one user (`Bearer bench`: a default
list of N entries over en, de and it, one page of 100 at a time with `next`) and a summary for any title, every summary
answer taking --delay seconds (the cold tab). Threaded, so delayed summaries overlap as Wikimedia's do.
Usage: saved_upstream.py PORT [--entries N] [--delay SECONDS]   (loopback only; runs until killed)."""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

PORT = int(sys.argv[1])
ENTRIES = int(sys.argv[sys.argv.index("--entries") + 1]) if "--entries" in sys.argv else 100
DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0
RL = "/w/rest.php/readinglists/v0/lists"
EDITIONS = ["en", "de", "it"]
entries = [{"id": 1000 + i, "listId": 7, "project": "https://%s.wikipedia.org" % EDITIONS[i % 3], "title": "Saved article %d" % i,
            "created": "2026-11-%02dT10:00:00Z" % (20 - i // 10), "updated": "2026-11-%02dT10:%02d:00Z" % (20 - i // 10, 59 - i % 10)} for i in range(ENTRIES)]
LISTS = json.dumps({"lists": [{"id": 7, "name": "default", "default": True, "description": "", "created": "2025-01-01T00:00:00Z",
                               "updated": "2026-11-20T10:00:00Z"}]}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # headers and body go out in two writes: no 40 ms wait for a delayed ACK

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        parts = url.path.split("/")
        lang, rest = parts[1], "/" + "/".join(parts[2:])
        if rest == RL:
            return self.answer(200, LISTS)
        if rest == RL + "/7/entries":
            q = parse_qs(url.query)
            start = int((q.get("next") or ["0"])[0])
            limit = min(100, int((q.get("limit") or ["10"])[0]))
            page = {"entries": entries[start:start + limit]}
            if start + limit < len(entries):
                page["next"] = str(start + limit)
            return self.answer(200, json.dumps(page).encode())
        if rest.startswith("/api/rest_v1/page/summary/"):
            if DELAY:
                time.sleep(DELAY)
            title = unquote(rest[len("/api/rest_v1/page/summary/"):]).replace("_", " ")
            extract = title + " (/ˈsɛɪvd/) is an article saved for the benchmark, with a sentence or two of text."
            return self.answer(200, json.dumps({"type": "standard", "title": title, "displaytitle": title, "lang": lang, "dir": "ltr",
                                                "description": "Benchmark article", "extract": extract, "extract_html": "<p>" + extract + "</p>",
                                                "thumbnail": {"source": "https://upload.wikimedia.org/x/320px-a.jpg", "width": 320, "height": 213},
                                                "content_urls": {"desktop": {"page": "https://%s.wikipedia.org/wiki/x" % lang}}}).encode())
        self.answer(404, b'{"errorKey":"rest-no-match","httpCode":404,"httpReason":"Not Found"}')


class Server(ThreadingHTTPServer):
    request_queue_size = 1024   # the listen backlog: 100 cards connect at once
    daemon_threads = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
