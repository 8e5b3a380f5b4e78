#!/usr/bin/env python3
"""A fake Wikimedia for CI's second schemathesis run: Wikimedia's real answers (Tests/Fixtures/wikimedia) where they
were recorded, realistic ones elsewhere, and the Action API's manners — errors as {"error": {...}} with HTTP 200, a
notifications `continue` it did not issue refused as badcontinue, a token it does not know refused as
mwoauth-invalid-authorization (the demo tokens are the known ones), a REST 404 for a page that does not exist, and the
ReadingLists extension's REST interface (its error bodies {errorKey, messageTranslations, httpCode, httpReason}, `next`
pages, `duplicate: true`): demo-alice has a list of three, demo-bob never set up sync (a save sets it up). The editor's
calls answer with errorformat=html like MediaWiki: the query (three sections, `nosuchsection` past them, bob partially
blocked), the anonymous token without credentials, and action=edit (`badtoken` for a token it did not issue, else
Success with a new revision). Lead images (`--media-upstream` pointed here): any /wikipedia/… path answers a JPEG
(Tests/Fixtures/media/lead.jpg), so the share card never reaches the network.
Usage: fake-wikimedia.py PORT FIXTURES_DIR   (loopback only; runs until killed)."""
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

PORT = int(sys.argv[1])
FIXTURES = sys.argv[2]


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


FEED_EN = fixture("feed_featured__ios_2026-07-20_missing_view_history.json")
FEED_VI = fixture("feed_featured__ios_vi_tfa_only.json")
SUMMARY_DOG = fixture("summary__ios_dog.json")
SUMMARY_MOSCOW = fixture("summary__android_moscow_geo.json")
PREFIX = fixture("query_prefixsearch__ios_2026.json")
FULLTEXT = fixture("query_search_fulltext__android.json")
NOTIFICATIONS = fixture("notifications__ios_mentions.json")
ISSUED_CONTINUE = json.loads(NOTIFICATIONS).get("query", {}).get("notifications", {}).get("continue")
TOKENS = fixture("tokens_csrf__android.json")
with open(os.path.join(FIXTURES, "..", "media", "lead.jpg"), "rb") as f:
    LEAD_JPEG = f.read()


def action_error(code, info):
    return json.dumps({"error": {"code": code, "info": info, "docref": "See https://en.wikipedia.org/w/api.php for API usage."},
                       "servedby": "fake"}).encode()


SECTIONS = ["A '''dog''' is a domesticated descendant of the wolf.\n", "== Taxonomy ==\nDogs are [[Canis]].\n",
            "=== ''Canis familiaris'' ===\nThe name of 1758 – 日本語: 犬.\n"]


def html_error(code, html, data=None):
    e = {"code": code, "html": html, "module": "main"}
    if data:
        e["data"] = data
    return json.dumps({"errors": [e], "docref": "See https://en.wikipedia.org/w/api.php for API usage.", "servedby": "fake"}).encode()


def editor_query(one, auth):
    title = (one("titles") or "Dog").replace("_", " ")
    user = {"id": 0, "name": "192.0.2.1", "anon": True} if auth is None else {"id": 42, "name": auth[len("Bearer demo-"):].title()}
    if title.lower().startswith("no such"):
        return json.dumps({"batchcomplete": True, "query": {"pages": [{"ns": 0, "title": title, "missing": True, "actions": {"edit": []}}], "userinfo": user}}).encode()
    refusals = []
    if auth == "Bearer demo-bob":
        refusals.append({"code": "blockedtext-partial", "html": "You have been blocked from editing this page by <a href=\"/wiki/User:Admin\">Admin</a>.",
                         "data": {"blockinfo": {"blockid": 7, "blockedby": "Admin", "blockedbyid": 2, "blockreason": "Edit warring",
                                                "blockedtimestamp": "2026-11-19T12:00:00Z", "blockexpiry": "infinite", "blockpartial": True}}})
    page = {"pageid": 4269567, "ns": 0, "title": title, "contentmodel": "wikitext", "pagelanguage": "en", "lastrevid": 1250000000,
            "length": 180000, "protection": [{"type": "move", "level": "sysop", "expiry": "infinity"}], "restrictiontypes": ["edit", "move"],
            "actions": {"edit": refusals}}
    if "revisions" in one("prop"):
        section = one("rvsection")
        if section and (not section.isdigit() or int(section) >= len(SECTIONS)):
            return html_error("nosuchsection", "There is no section %s in r1250000000." % section.replace("<", "&lt;"))
        content = SECTIONS[int(section)] if section else "".join(SECTIONS)
        page["revisions"] = [{"revid": 1250000000, "parentid": 1249999999, "timestamp": "2026-11-26T08:00:00Z",
                              "slots": {"main": {"contentmodel": "wikitext", "contentformat": "text/x-wiki", "content": content}}}]
    return json.dumps({"batchcomplete": True, "query": {"pages": [page], "userinfo": user}}).encode()


def edit_answer(one, auth):
    issued = json.loads(TOKENS)["query"]["tokens"]["csrftoken"] if auth else "+\\"
    if one("token") != issued:
        return html_error("badtoken", "Invalid CSRF token.")
    if one("title").lower().startswith("no_such") or one("title").lower().startswith("no such"):
        return html_error("missingtitle", "The page you specified doesn't exist.")
    section = one("section")
    if section and (not section.isdigit() or int(section) >= len(SECTIONS)):
        return html_error("nosuchsection", "There is no section %s." % section.replace("<", "&lt;"))
    return json.dumps({"edit": {"result": "Success", "pageid": 4269567, "title": one("title").replace("_", " "), "contentmodel": "wikitext",
                                "oldrevid": 1250000000, "newrevid": 1250000001, "newtimestamp": "2026-11-27T10:00:00Z", "watched": True}}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.route(parse_qs(urlparse(self.path).query))

    def do_DELETE(self):
        self.raw_body = b""
        self.route({})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length)
        form = parse_qs(self.raw_body.decode("utf-8", "replace")) if b"=" in self.raw_body else {}
        query = parse_qs(urlparse(self.path).query)
        query.update(form)
        self.route(query)

    def route(self, q):
        path = urlparse(self.path).path
        parts = path.split("/")
        lang = parts[1] if len(parts) > 1 else "en"
        rest = "/" + "/".join(parts[2:])
        one = lambda k: (q.get(k) or [""])[0]
        if path.startswith("/wikipedia/"):
            return self.answer(200, LEAD_JPEG, "image/jpeg")
        if rest == RL or rest.startswith(RL + "/"):
            return self.reading_lists(rest[len(RL):], one)
        if rest.startswith("/api/rest_v1/feed/featured/"):
            return self.answer(200, FEED_VI if lang == "vi" else FEED_EN)
        if rest.startswith("/api/rest_v1/page/summary/"):
            title = unquote(rest[len("/api/rest_v1/page/summary/"):])
            if title.lower().startswith("no_such"):
                return self.answer(404, json.dumps({"type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found", "title": "Not found.",
                                                    "method": "get", "detail": "Page or revision not found.", "uri": path}).encode(),
                                   "application/problem+json")
            return self.answer(200, SUMMARY_MOSCOW if "moscow" in title.lower() else SUMMARY_DOG)
        if rest.startswith("/w/rest.php/v1/page/") and rest.endswith("/html"):
            title = unquote(rest[len("/w/rest.php/v1/page/"):-len("/html")])
            if title.lower().startswith("no_such"):
                return self.answer(404, json.dumps({"messageTranslations": {"en": "The specified page does not exist"}, "httpCode": 404,
                                                    "httpReason": "Not Found"}).encode())
            body = PARSOID.replace("{title}", title.replace("&", "&amp;").replace("<", "&lt;")).encode()
            self.send_response(200)
            self.send_header("Content-Type", 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.8.0"')
            self.send_header("ETag", 'W/"1234567/0f1e2d3c-aaaa-11ef-bbbb-cccccccccccc"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return self.wfile.write(body)
        if rest.startswith("/api/rest_v1/page/mobile-html-offline-resources/"):
            meta, local = "//meta.wikimedia.org/api/rest_v1/data/", "//%s.wikipedia.org/api/rest_v1/data/" % lang
            return self.answer(200, json.dumps([meta + "css/mobile/base", meta + "css/mobile/pcs", meta + "javascript/mobile/pcs",
                                                local + "css/mobile/site", local + "i18n/pcs"]).encode())
        if rest.startswith("/api/rest_v1/page/media-list/"):
            return self.answer(200, json.dumps({"revision": "1", "tid": "1", "items": [
                {"title": "File:YellowLabradorLooking_new.jpg", "leadImage": True, "section_id": 0, "type": "image", "showInGallery": True,
                 "caption": {"html": "A <b>Labrador</b>", "text": "A Labrador"},
                 "srcset": [{"src": "//upload.wikimedia.org/wikipedia/commons/thumb/2/26/YellowLabradorLooking_new.jpg/640px-YellowLabradorLooking_new.jpg", "scale": "1x"}]},
                {"title": "File:Dog_icon.svg", "leadImage": False, "section_id": 1, "type": "image", "showInGallery": True},
            ]}).encode())
        if rest != "/w/api.php":
            return self.answer(404, b'{"error":"not found"}')
        if one("action") == "parse":
            page = one("page") or "Dog"
            return self.answer(200, json.dumps({"parse": {"title": page.replace("_", " "), "pageid": 4269567, "displaytitle": page.replace("_", " "), "sections": [
                {"toclevel": 1, "level": "2", "line": "Taxonomy", "number": "1", "index": "1", "fromtitle": page, "byteoffset": 3311, "anchor": "Taxonomy", "linkAnchor": "Taxonomy"},
                {"toclevel": 2, "level": "3", "line": "<i>Canis familiaris</i>", "number": "1.1", "index": "2", "fromtitle": page, "byteoffset": 5210, "anchor": "Canis_familiaris", "linkAnchor": "Canis_familiaris"},
            ]}}).encode())
        editor = one("action") == "edit" or one("intestactions") == "edit"
        user_bound = one("action") == "echomarkread" or one("meta") in ("notifications", "tokens") or editor
        auth = self.headers.get("Authorization")
        if auth is None and (editor or one("meta") == "tokens"):
            pass  # an anonymous edit: the anonymous token, an anonymous user
        elif user_bound and auth not in ("Bearer demo-alice", "Bearer demo-bob"):
            # Like Wikimedia with an OAuth token it does not know: the Action API's error, with HTTP 200.
            return self.answer(200, action_error("mwoauth-invalid-authorization-invalid-user",
                                                 "The authorization headers in your request are not valid: Invalid user"))
        if one("action") == "echomarkread":
            return self.answer(200, b'{"query":{"echomarkread":{"result":"success","rawcount":0,"count":"0"}}}')
        if one("meta") == "siteinfo":
            return self.answer(200, json.dumps({"batchcomplete": True, "query": {"general": {"mainpage": "Main Page", "sitename": "Wikipedia", "lang": lang}}}).encode())
        if one("meta") == "tokens":
            return self.answer(200, TOKENS if auth else b'{"batchcomplete":true,"query":{"tokens":{"csrftoken":"+\\\\"}}}')
        if one("intestactions") == "edit":
            return self.answer(200, editor_query(one, auth))
        if one("action") == "edit":
            return self.answer(200, edit_answer(one, auth))
        if one("meta") == "notifications":
            if "list" not in (one("notprop") or "list").split("|"):
                # Echo's count-only answer (the badge's call): the counts alone, no list and no continue.
                unread = sum(1 for n in json.loads(NOTIFICATIONS)["query"]["notifications"]["list"] if "read" not in n)
                counts = {"rawcount": unread, "count": str(unread) if unread < 100 else "99+"}
                return self.answer(200, json.dumps({"batchcomplete": True, "query": {"notifications": counts}}).encode())
            cont = one("notcontinue")
            if cont and cont != ISSUED_CONTINUE:
                return self.answer(200, action_error("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query."))
            if cont:
                last = json.loads(NOTIFICATIONS)
                last["query"]["notifications"].pop("continue", None)
                return self.answer(200, json.dumps(last).encode())
            return self.answer(200, NOTIFICATIONS)
        if one("prop") == "info|revisions" and one("curtimestamp") == "1":
            # The offline sync's revisions: every title a page at one revision, as MediaWiki answers with formatversion=2.
            pages = [{"pageid": 4269567 + i, "ns": 0, "title": t.replace("_", " "), "lastrevid": 1234567 + i,
                      "revisions": [{"revid": 1234567 + i, "parentid": 1234566 + i, "timestamp": "2026-11-20T08:00:00Z"}]}
                     for i, t in enumerate(one("titles").split("|")) if t]
            return self.answer(200, json.dumps({"batchcomplete": True, "curtimestamp": "2026-11-21T00:00:00Z", "query": {"pages": pages}}).encode())
        if one("prop") == "langlinks":
            title = one("titles") or "Dog"
            return self.answer(200, json.dumps({"batchcomplete": True, "query": {"pages": [{"pageid": 4269567, "ns": 0, "title": title.replace("_", " "), "langlinks": [
                {"lang": "de", "title": "Haushund", "url": "https://de.wikipedia.org/wiki/Haushund", "langname": "German", "autonym": "Deutsch"},
                {"lang": "ja", "title": "イヌ", "url": "https://ja.wikipedia.org/wiki/%E3%82%A4%E3%83%8C", "langname": "Japanese", "autonym": "日本語"},
            ]}]}}).encode())
        if one("prop") == "imageinfo":
            pages = []
            for i, t in enumerate(one("titles").split("|")):
                small = "icon" in t.lower()
                pages.append({"ns": 6, "title": t.replace("_", " "), "missing": True, "known": True, "imagerepository": "shared", "imageinfo": [{
                    "size": 1000, "width": 24 if small else 1200, "height": 24 if small else 800,
                    "thumburl": "https://upload.wikimedia.org/thumb/%d.jpg" % i, "thumbwidth": 24 if small else 640, "thumbheight": 24 if small else 427,
                    "url": "https://upload.wikimedia.org/%d.jpg" % i, "descriptionurl": "https://commons.wikimedia.org/wiki/" + t,
                    "extmetadata": {"Artist": {"value": "<a href=\"//commons.wikimedia.org/wiki/User:X\">X</a>", "source": "commons-desc-page"},
                                    "LicenseShortName": {"value": "CC BY-SA 3.0", "source": "commons-desc-page"},
                                    "AttributionRequired": {"value": "true", "source": "commons-desc-page"}}}]})
            return self.answer(200, json.dumps({"batchcomplete": True, "query": {"pages": pages}}).encode())
        generator = one("generator")
        if generator in ("prefixsearch", "geosearch"):
            return self.answer(200, PREFIX)
        if generator in ("search", "random"):
            return self.answer(200, FULLTEXT)
        return self.answer(200, action_error("badvalue", "Unrecognized value for parameter \"action\": %s." % one("action")))

    def rl_error(self, status, key):
        reason = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}.get(status, "Error")
        return self.answer(status, json.dumps({"errorKey": key, "messageTranslations": {"en": key}, "httpCode": status, "httpReason": reason}).encode())

    def reading_lists(self, rest, one):
        token = (self.headers.get("Authorization") or "")[len("Bearer "):]
        if token not in READING_LISTS:
            return self.rl_error(401, "rest-permission-denied-anon")
        user = READING_LISTS[token]
        parts = [p for p in rest.split("/") if p]
        method = self.command
        if method == "POST" and parts == ["setup"]:
            if user["setup"]:
                return self.rl_error(400, "readinglists-db-error-already-set-up")
            user["setup"] = True
            return self.answer(200, json.dumps({"default": {"id": user["id"], "name": "default", "default": True}}).encode())
        if not user["setup"]:
            return self.rl_error(400, "readinglists-db-error-not-set-up")
        if method == "GET" and parts[:2] == ["changes", "since"]:
            return self.answer(200, json.dumps({"lists": [], "entries": []}).encode())
        if method == "GET" and not parts:
            return self.answer(200, json.dumps({"lists": [{"id": user["id"], "name": "default", "default": True, "description": "",
                                                           "created": "2025-01-01T00:00:00Z", "updated": "2026-11-20T10:00:00Z"}]}).encode())
        if len(parts) < 2 or parts[1] != "entries" or parts[0] != str(user["id"]):
            return self.rl_error(404, "readinglists-db-error-no-such-list")
        entries = user["entries"]
        if method == "GET" and len(parts) == 2:
            start = int(one("next") or 0)
            limit = min(100, int(one("limit") or 10))
            page = {"entries": entries[start:start + limit]}
            if start + limit < len(entries):
                page["next"] = str(start + limit)
            return self.answer(200, json.dumps(page).encode())
        if method == "POST" and len(parts) == 2:
            try:
                body = json.loads(self.raw_body or b"{}")
                project, title = body["project"], body["title"]
            except (ValueError, KeyError, TypeError):
                return self.rl_error(400, "rest-bad-json-body")
            for e in entries:
                if e["project"] == project and e["title"] == title:
                    return self.answer(200, json.dumps({"id": e["id"], "entry": e, "duplicate": True}).encode())
            if len(entries) >= 5000:
                return self.rl_error(400, "readinglists-db-error-entry-limit")
            READING_LISTS["next_id"] += 1
            e = {"id": READING_LISTS["next_id"], "listId": user["id"], "project": project, "title": title,
                 "created": "2026-11-21T00:00:00Z", "updated": "2026-11-21T00:00:00Z"}
            entries.insert(0, e)
            return self.answer(200, json.dumps({"id": e["id"], "entry": e}).encode())
        if method == "DELETE" and len(parts) == 3:
            for i, e in enumerate(entries):
                if str(e["id"]) == parts[2]:
                    del entries[i]
                    return self.answer(200, b"{}")
            return self.rl_error(404, "readinglists-db-error-no-such-list-entry")
        return self.rl_error(404, "rest-no-match")


PARSOID = ('<!DOCTYPE html><html><head><meta charset="utf-8"/><title>{title}</title></head><body class="mw-parser-output">'
           '<section data-mw-section-id="0"><p>The dog is a domesticated descendant of the wolf.<sup about="#mwt1" class="mw-ref reference" id="cite_ref-1" '
           'rel="dc:references" typeof="mw:Extension/ref" data-mw=\'{"name":"ref"}\'><a href="./Dog#cite_note-1"><span class="mw-reflink-text">'
           '<span class="cite-bracket">[</span>1<span class="cite-bracket">]</span></span></a></sup></p></section><section data-mw-section-id="9">'
           '<h2 id="References">References</h2><div class="mw-references-wrap" typeof="mw:Extension/references"><ol class="mw-references references">'
           '<li about="#cite_note-1" id="cite_note-1"><span class="mw-cite-backlink"><a href="./Dog#cite_ref-1" rel="mw:referencedBy">'
           '<span class="mw-linkback-text">↑ </span></a></span> <span class="mw-reference-text reference-text"><cite class="citation journal cs1">'
           'Thalmann, O. (2013). "Complete mitochondrial genomes". <i>Science</i>. <a rel="mw:ExtLink" href="//doi.org/10.1126/science.1243650">doi</a>.'
           '</cite></span></li></ol></div></section></body></html>')
RL = "/w/rest.php/readinglists/v0/lists"
READING_LISTS = {
    "next_id": 100,
    "demo-alice": {"setup": True, "id": 7, "entries": [
        {"id": 11, "listId": 7, "project": "https://en.wikipedia.org", "title": "Dog", "created": "2026-11-20T09:00:00Z", "updated": "2026-11-20T09:00:00Z"},
        {"id": 12, "listId": 7, "project": "https://en.wikipedia.org", "title": "Moscow", "created": "2026-11-19T09:00:00Z", "updated": "2026-11-19T09:00:00Z"},
        {"id": 13, "listId": 7, "project": "https://en.wiktionary.org", "title": "dog", "created": "2026-11-18T09:00:00Z", "updated": "2026-11-18T09:00:00Z"},
    ]},
    "demo-bob": {"setup": False, "id": 8, "entries": []},
}


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
server.serve_forever()
