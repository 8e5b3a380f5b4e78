#!/usr/bin/env python3
"""Benchmarks/editor.sh's probe: /healthz latency (one connection, every 2 ms) alone, then while 2 clients open a 2 MB
section 10 times each and 2 clients save 1.9 MB of wikitext 10 times each (Python's JSON: non-ASCII as \\u escapes).
Usage: editor_probe.py PORT"""
import http.client, threading, time, json, statistics, sys
port = int(sys.argv[1]); stop = False; lat = []
def health():
    c = http.client.HTTPConnection("127.0.0.1", port)
    while not stop:
        t = time.perf_counter(); c.request("GET", "/healthz"); c.getresponse().read(); lat.append((time.perf_counter() - t) * 1000); time.sleep(0.002)
def opener(results, n):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        t = time.perf_counter(); c.request("GET", "/article/Big/edit", headers={"Authorization": "Bearer x", "Accept-Encoding": "gzip"}); r = c.getresponse(); b = r.read(); results.append((time.perf_counter() - t) * 1000)
def saver(results, n, text):
    c = http.client.HTTPConnection("127.0.0.1", port)
    body = json.dumps({"wikitext": text, "summary": "s", "baseRevision": 5})
    for _ in range(n):
        t = time.perf_counter(); c.request("POST", "/article/Big/edit", body=body, headers={"Authorization": "Bearer x", "Content-Type": "application/json"}); r = c.getresponse(); r.read(); assert r.status == 200, r.status; results.append((time.perf_counter() - t) * 1000)
h = threading.Thread(target=health); h.start(); time.sleep(0.5)
base = list(lat); lat.clear()
opens, saves = [], []
text = ("Einstein's ''Annus mirabilis'' papers – 日本語 & more. " * 40 + "\n") * 900
text = text.encode()[:1_900_000].decode("utf-8", "ignore")
ts = [threading.Thread(target=opener, args=(opens, 10)) for _ in range(2)] + [threading.Thread(target=saver, args=(saves, 10, text)) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
stop = True; h.join()
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]
print("healthz idle p50 %.2f ms p99 %.2f ms (n=%d)" % (q(base, .5), q(base, .99), len(base)))
print("healthz while 2 openers + 2 savers p50 %.2f ms p99 %.2f ms max %.2f (n=%d)" % (q(lat, .5), q(lat, .99), max(lat), len(lat)))
print("open 2 MB section p50 %.1f ms; save 1.9 MB p50 %.1f ms" % (q(opens, .5), q(saves, .5)))
