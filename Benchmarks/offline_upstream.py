#!/usr/bin/env python3
"""A fake Wikimedia for the offline sync's benchmark (issue 70): one user (`Bearer bench`) whose default reading list
holds N articles of English Wikipedia; the Action API's revisions call (`prop=info|revisions`, up to 50 titles, with
`curtimestamp`); PCS's `mobile-html-offline-resources` and `media-list` (IMAGES images an article, three sizes each),
pinned or not; the reading lists' `changes/since`. Every answer waits --delay seconds (Wikimedia's round trip). It
counts calls and answer bytes by kind (`GET /_calls`), and `POST /_edit?n=K` gives the first K articles a new revision.
Usage: offline_upstream.py PORT [--entries N] [--images K] [--delay SECONDS]   (loopback only; runs until killed)."""
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

PORT = int(sys.argv[1])
arg = lambda name, default: type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default
ENTRIES, IMAGES, DELAY = arg("--entries", 300), arg("--images", 12), arg("--delay", 0.0)
RL = "/w/rest.php/readinglists/v0/lists"
TITLES = ["Saved article %d" % i for i in range(ENTRIES)]
entries = [{"id": 1000 + i, "listId": 7, "project": "https://en.wikipedia.org", "title": t,
            "created": "2026-10-%02dT10:00:00Z" % (1 + i % 28), "updated": "2026-10-%02dT10:00:00Z" % (1 + i % 28)} for i, t in enumerate(TITLES)]
revisions = {t: (1_300_000_000 + i, "2026-10-01T00:00:00Z") for i, t in enumerate(TITLES)}
calls, sizes = {}, {}
lock = threading.Lock()
now = lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body, kind=None):
        if kind:
            with lock:
                calls[kind] = calls.get(kind, 0) + 1
                sizes[kind] = sizes.get(kind, 0) + len(body)
        if DELAY and kind:
            time.sleep(DELAY)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        u = urlparse(self.path)
        if u.path == "/_edit":
            k = int(parse_qs(u.query).get("n", ["1"])[0])
            with lock:
                for t in TITLES[:k]:
                    rev, _ = revisions[t]
                    revisions[t] = (rev + 1_000_000, now())
            return self.answer(200, b"{}")
        self.route(u, {**parse_qs(u.query), **parse_qs(body)})

    def do_GET(self):
        u = urlparse(self.path)
        if u.path == "/_calls":
            with lock:
                return self.answer(200, json.dumps({"calls": calls, "bytes": sizes}).encode())
        self.route(u, parse_qs(u.query))

    def route(self, u, q):
        parts = u.path.split("/")
        rest = "/" + "/".join(parts[2:])
        one = lambda k: (q.get(k) or [""])[0]
        if rest == RL:
            return self.answer(200, json.dumps({"lists": [{"id": 7, "name": "default", "default": True, "description": "",
                                                           "created": "2025-01-01T00:00:00Z", "updated": "2026-11-20T10:00:00Z"}]}).encode(), "readinglists")
        if rest.startswith(RL + "/changes/since/"):
            return self.answer(200, b'{"lists":[],"entries":[]}', "readinglists-changes")
        if rest == RL + "/7/entries":
            start = int(one("next") or 0)
            page = {"entries": entries[start:start + 100]}
            if start + 100 < len(entries):
                page["next"] = str(start + 100)
            return self.answer(200, json.dumps(page).encode(), "readinglists-entries")
        if rest == "/w/api.php" and one("curtimestamp") == "1":
            pages = []
            with lock:
                for t in one("titles").split("|"):
                    rev, ts = revisions[t]
                    pages.append({"pageid": rev % 100000, "ns": 0, "title": t, "contentmodel": "wikitext", "touched": ts, "lastrevid": rev, "length": 40000,
                                  "revisions": [{"revid": rev, "parentid": rev - 1, "timestamp": ts}]})
            return self.answer(200, json.dumps({"batchcomplete": True, "curtimestamp": now(), "query": {"pages": pages}}).encode(), "revisions")
        if rest.startswith("/api/rest_v1/page/mobile-html-offline-resources/"):
            meta, local = "//meta.wikimedia.org/api/rest_v1/data/", "//en.wikipedia.org/api/rest_v1/data/"
            return self.answer(200, json.dumps([meta + "css/mobile/base", meta + "css/mobile/pcs", meta + "javascript/mobile/pcs",
                                                local + "css/mobile/site", local + "i18n/pcs"]).encode(), "offline-resources")
        if rest.startswith("/api/rest_v1/page/media-list/"):
            title = unquote(rest[len("/api/rest_v1/page/media-list/"):].split("/")[0]).replace("_", " ")
            items = []
            for k in range(IMAGES):
                f = "%s_figure_%d.jpg" % (title.replace(" ", "_"), k)
                items.append({"title": "File:" + f, "leadImage": k == 0, "section_id": k, "type": "image", "showInGallery": True,
                              "caption": {"html": "Figure %d of <i>%s</i>" % (k, title), "text": "Figure %d of %s" % (k, title)},
                              "srcset": [{"src": "//upload.wikimedia.org/wikipedia/commons/thumb/a/ab/%s/%dpx-%s" % (f, w, f), "scale": s}
                                         for w, s in ((320, "1x"), (480, "1.5x"), (640, "2x"))]})
            return self.answer(200, json.dumps({"revision": "1", "tid": "t", "items": items}).encode(), "media-list")
        if rest.startswith("/api/rest_v1/page/mobile-html/"):
            return self.answer(200, b"<!DOCTYPE html><html>" + b"x" * 60000 + b"</html>", "mobile-html")
        return self.answer(404, b'{"error":"not found"}')


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
