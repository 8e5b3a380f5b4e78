#!/usr/bin/env python3
"""Times a streamed (JSON Lines) answer as an app sees it: the head line, the first section, the last line.
   stream_timing.py PORT PATH[,PATH...] [--classic]
Each PATH is requested once on a fresh connection with Accept: application/jsonl (or, with --classic, as the classic
JSON answer: the time to the whole body and how many placeholders it holds). Prints one line of milliseconds per path,
then p50 and p99 over them."""
import json, socket, statistics, sys, time

port = int(sys.argv[1])
paths = sys.argv[2].split(",")
classic = "--classic" in sys.argv

def request(path):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    accept = "application/json" if classic else "application/jsonl"
    t0 = time.monotonic()
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: b\r\nAccept: {accept}\r\nConnection: close\r\n\r\n".encode())
    buf = b""
    head_end = None
    chunked = False
    marks = []          # arrival time of each complete body line (streamed)
    body = b""
    status = 0
    while True:
        data = s.recv(65536)
        now = (time.monotonic() - t0) * 1000
        if not data:
            break
        buf += data
        if head_end is None and b"\r\n\r\n" in buf:
            head_end = buf.index(b"\r\n\r\n")
            status = int(buf.split(b" ", 2)[1])
            chunked = b"transfer-encoding: chunked" in buf[:head_end].lower()
            buf = buf[head_end + 4:]
        if head_end is None:
            continue
        if classic:
            body += buf; buf = b""
            continue
        if not chunked:
            # All warm: one Content-Length body (the connection closes after it).
            body += buf; buf = b""
            while b"\n" in body:
                line, body = body.split(b"\n", 1)
                marks.append((now, json.loads(line)))
            continue
        # Chunked: take whole chunks, note the lines they complete.
        while True:
            nl = buf.find(b"\r\n")
            if nl < 0:
                break
            size = int(buf[:nl], 16)
            if len(buf) < nl + 2 + size + 2:
                break
            chunk = buf[nl + 2:nl + 2 + size]
            buf = buf[nl + 2 + size + 2:]
            if size == 0:
                s.close()
                return status, marks, None
            body += chunk
            while b"\n" in body:
                line, body = body.split(b"\n", 1)
                marks.append((now, json.loads(line)))
    s.close()
    if classic:
        doc = json.loads(body) if status == 200 else {}
        placeholders = sum(1 for x in doc.get("sections", []) if x.get("status") == "placeholder")
        return status, [((time.monotonic() - t0) * 1000, doc)], placeholders
    return status, marks, None

def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]

heads, firsts, lasts, statuses, ph = [], [], [], [], []
for path in paths:
    status, marks, placeholders = request(path)
    statuses.append(status)
    if classic:
        lasts.append(marks[0][0]); ph.append(placeholders or 0)
        continue
    heads.append(marks[0][0])
    firsts.append(marks[1][0] if len(marks) > 1 else marks[0][0])
    lasts.append(marks[-1][0])
    ph.append(sum(1 for _, l in marks[1:] if l.get("status") == "placeholder"))
codes = ",".join(sorted(set(str(s) for s in statuses)))
if classic:
    print(f"  classic: status {codes}; whole answer p50 {statistics.median(lasts):.1f} ms, p99 {pct(lasts, 99):.1f} ms; placeholders per answer {statistics.median(ph):.0f} (max {max(ph)})")
else:
    print(f"  streamed: status {codes}; head p50 {statistics.median(heads):.1f} / p99 {pct(heads, 99):.1f} ms; first section p50 {statistics.median(firsts):.1f} / p99 {pct(firsts, 99):.1f} ms; "
          f"last line p50 {statistics.median(lasts):.1f} / p99 {pct(lasts, 99):.1f} ms; placeholders {max(ph)}")
