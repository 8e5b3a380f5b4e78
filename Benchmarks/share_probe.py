#!/usr/bin/env python3
"""Benchmarks/share.sh's probe: render time of uncached cards (a new text each request) at scale 2 for Latin, Arabic
and CJK text, one request at a time; then /healthz latency (one connection, every 2 ms) while 16 clients keep asking
for new cards. Usage: share_probe.py PORT [ROUNDS]"""
import http.client, sys, threading, time, urllib.parse

port = int(sys.argv[1]); rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
texts = {
    "latin": "Imagination is more important than knowledge, for knowledge is limited to all we now know and understand",
    "arabic": "الخيال أهم من المعرفة، فالمعرفة محدودة بكل ما نعرفه ونفهمه الآن، بينما الخيال يحتضن العالم كله",
    "cjk": "想像力は知識よりも重要である。知識には限界があるが、想像力は世界を包み込む。",
}
def q(xs, p): xs = sorted(xs); return xs[min(len(xs) - 1, int(len(xs) * p))]
def card(c, text, n):
    path = "/share/Albert_Einstein.png?text=" + urllib.parse.quote("%s %d" % (text, n))
    t = time.perf_counter(); c.request("GET", path); r = c.getresponse(); r.read()
    assert r.status == 200, r.status
    return (time.perf_counter() - t) * 1000
c = http.client.HTTPConnection("127.0.0.1", port)
card(c, "warm up", 0)
for name, text in texts.items():
    ms = [card(c, text, i) for i in range(rounds)]
    print("render %-6s p50 %6.1f ms  p99 %6.1f ms  (n=%d, scale 2, uncached)" % (name, q(ms, .5), q(ms, .99), len(ms)))

stop = False; lat = []
def health():
    h = http.client.HTTPConnection("127.0.0.1", port)
    while not stop:
        t = time.perf_counter(); h.request("GET", "/healthz"); h.getresponse().read(); lat.append((time.perf_counter() - t) * 1000); time.sleep(0.002)
def renderer(k):
    rc = http.client.HTTPConnection("127.0.0.1", port); n = 0
    while not stop:
        n += 1; card(rc, "load %d" % k, n)
th = threading.Thread(target=health); th.start(); time.sleep(1); alone = list(lat); lat.clear()
rs = [threading.Thread(target=renderer, args=(k,)) for k in range(16)]
for r in rs: r.start()
time.sleep(8); stop = True
for r in rs + [th]: r.join()
print("healthz alone            p50 %.2f ms  p99 %.2f ms (n=%d)" % (q(alone, .5), q(alone, .99), len(alone)))
print("healthz while 16 render  p50 %.2f ms  p99 %.2f ms  max %.2f ms (n=%d)" % (q(lat, .5), q(lat, .99), max(lat), len(lat)))
