#!/usr/bin/env python3
"""A fake Wikimedia for the cold-feed benchmark: every answer takes 100 ms (or --delay) more.

Serves realistic shapes for the two calls a non-personal /feed makes: the featured feed and random candidates.
Usage: slow_upstream.py PORT [--delay SECONDS]
"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.1

def summary(title, extract):
    key = title.replace(" ", "_")
    return {"type": "standard", "title": key, "displaytitle": title, "namespace": {"id": 0, "text": ""},
            "titles": {"canonical": key, "normalized": title, "display": title}, "pageid": 1, "lang": "en", "dir": "ltr",
            "description": "Benchmark article", "extract": extract, "extract_html": "<p>" + extract + "</p>",
            "thumbnail": {"source": "https://upload.wikimedia.org/x/320px-" + key + ".jpg", "width": 320, "height": 213},
            "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/" + key}}}

FEED = json.dumps({
    "tfa": summary("Amsterdam", "Amsterdam (/ˈæmstərdæm/ AM-stər-dam) is the capital of the Netherlands."),
    "mostread": {"date": "2026-11-19Z", "articles": [dict(summary("Article %d" % i, "Text %d (born 1950) is here." % i), views=1000 - i, rank=i + 1) for i in range(5)]},
    "image": {"title": "File:X.jpg", "thumbnail": {"source": "https://upload.wikimedia.org/x.jpg", "width": 640, "height": 427},
              "artist": {"text": "Someone"}, "license": {"type": "CC BY-SA 4.0"}, "structured": {"captions": {"en": "A caption"}}},
    "news": [{"story": "Something happened.", "links": [summary("Madrid", "Madrid (Spanish: [maˈðɾið]) is the capital of Spain.")]}],
    "onthisday": [{"text": "An event.", "year": 1969, "pages": [summary("Apollo 11", "Apollo 11 was a spaceflight.")]}],
}).encode()
RANDOM = json.dumps({"batchcomplete": True, "query": {"pages": [
    {"pageid": 10 + i, "ns": 0, "title": "Random %d" % i, "description": "d", "extract": "Random article %d." % i} for i in range(12)]}}).encode()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle + delayed ACK add 40 ms per answer.
    disable_nagle_algorithm = True
    def do_GET(self):
        time.sleep(DELAY)
        body = FEED if "/feed/featured/" in self.path else RANDOM
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
