#!/usr/bin/env python3
"""A fake Wikimedia for the references benchmark: Parsoid HTML of about --bytes (default 2 MB) for any title at
/{lang}/w/rest.php/v1/page/{title}/html, each title its own revision (ETag), shaped as real pages are: paragraphs with
citations, then a reference list of web and book citations. Usage: references_upstream.py PORT [--bytes N]"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
SIZE = int(sys.argv[sys.argv.index("--bytes") + 1]) if "--bytes" in sys.argv else 2 << 20


def page(n):
    notes = max(1, n // 1100)
    out = ['<!DOCTYPE html><html><head><meta charset="utf-8"/></head><body class="mw-parser-output"><section data-mw-section-id="0"><p>']
    for k in range(notes):
        out.append('Some sentence of the article\'s text with <a rel="mw:WikiLink" href="./Other_page_%d" title="Other">a link</a> in it.' % k)
        out.append('<sup about="#mwt%d" class="mw-ref reference" id="cite_ref-%d" rel="dc:references" typeof="mw:Extension/ref" data-mw=\'{"name":"ref"}\'>'
                   '<a href="./Page#cite_note-%d"><span class="mw-reflink-text"><span class="cite-bracket">[</span>%d<span class="cite-bracket">]</span></span></a></sup>' % (k, k, k, k + 1))
    out.append('</p></section><section><h2 id="References">References</h2><div class="mw-references-wrap" typeof="mw:Extension/references"><ol class="mw-references references">')
    for k in range(notes):
        out.append('<li about="#cite_note-%d" id="cite_note-%d"><span class="mw-cite-backlink"><a href="./Page#cite_ref-%d" rel="mw:referencedBy"><span class="mw-linkback-text">↑ </span></a></span> '
                   '<span id="mw-reference-text-cite_note-%d" class="mw-reference-text reference-text"><cite class="citation %s cs1">"<a rel="mw:ExtLink" href="https://example.org/articles/%d?a=1&amp;b=2" class="external text">A source, number %d</a>". <i>Example</i>. Retrieved 2026-11-20.</cite></span></li>'
                   % (k, k, k, k, "web" if k % 2 == 0 else "book", k, k))
    out.append('</ol></div></section></body></html>')
    return "".join(out).encode()


PAGE = page(SIZE)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("ETag", 'W/"%d/render-%s"' % (len(PAGE), self.path.split("/")[-2]))
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


class Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
