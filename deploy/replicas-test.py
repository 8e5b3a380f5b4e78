#!/usr/bin/env python3
"""Three Lede replicas behind nginx (deploy/nginx.conf.template) on loopback, bounded in time:
  1. shared cache: public answers are stored and served as HITs, gzip and identity kept apart, user-bound answers
     never stored and never crossed between users;
  2. rolling restart under steady load: each replica gets SIGTERM, is started again once it has exited; zero failed
     requests, zero 5xx, every replica served traffic;
  3. a replica is SIGKILLed under load: the balancer stops sending it traffic; failed requests at most ALLOWED_KILL_FAILURES;
  4. live bells across a rolling restart: three more replicas polling a shared fake Echo hold /notifications/stream
     clients through the balancer while notifications are created; each replica drains its streams with a retry hint,
     every client reconnects with Last-Event-ID and receives every notification created meanwhile exactly once.
Usage: deploy/replicas-test.py path/to/lede   (needs nginx on PATH)."""
import http.client, importlib.util, json, os, shutil, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LEDE = sys.argv[1] if len(sys.argv) > 1 else ".build/release/lede"
ALLOWED_KILL_FAILURES = 0   # proxy_next_upstream retries a refused connection on another replica
HERE = os.path.dirname(os.path.abspath(__file__))
# The one nginx configuration (deploy/nginx.conf.template), rendered as compose.yaml's is.
_spec = importlib.util.spec_from_file_location("render_nginx", os.path.join(HERE, "render-nginx.py"))
render_nginx = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(render_nginx)


def free_port():
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def get(port, path, headers=None, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


class Replica:
    def __init__(self, port, extra=()):
        self.port, self.proc, self.extra = port, None, list(extra)

    def start(self):
        self.proc = subprocess.Popen([LEDE, "--host", "127.0.0.1", "--port", str(self.port), "--access-log", "off",
                                      "--log-level", "warning", "--drain-timeout", "3"] + self.extra, stdout=subprocess.DEVNULL)
        for _ in range(100):
            try:
                if get(self.port, "/healthz", timeout=1)[0] == 200: return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit(f"replica on {self.port} did not start")

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=15)


class Load:
    """Steady load through the balancer: requests that reach the replicas (distinct summaries, badges), counted."""
    def __init__(self, port, workers=4):
        self.port, self.workers = port, workers
        self.lock = threading.Lock()
        self.sent = self.failed = self.server_errors = 0
        self.by_replica = {}
        self.errors = []
        self.running = True
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(workers)]

    def run(self, worker):
        titles = ["Albert_Einstein", "Amsterdam", "Mumbai", "Rijksmuseum", "Copenhagen", "Madrid"]
        n = 0
        while self.running:
            n += 1
            if n % 2:
                path, headers = "/notifications/badge", {"Authorization": "Bearer demo-bob"}
            else:
                path, headers = f"/summary/{titles[n % len(titles)]}?w={worker}&n={n}", {}
            try:
                status, h, _ = get(self.port, path, headers)
                with self.lock:
                    self.sent += 1
                    if status >= 500: self.server_errors += 1; self.errors.append(f"{status} {path}")
                    up = h.get("x-upstream-addr", "").split(",")[-1].strip()   # the last replica tried answered
                    if up: self.by_replica[up] = self.by_replica.get(up, 0) + 1
            except Exception as e:
                with self.lock:
                    self.sent += 1; self.failed += 1; self.errors.append(f"{type(e).__name__} {path}")

    def __enter__(self):
        for t in self.threads: t.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        for t in self.threads: t.join(timeout=10)

    def snapshot(self):
        with self.lock: return self.sent, self.failed, self.server_errors, dict(self.by_replica), list(self.errors[:10])


class FakeEcho:
    """Echo's meta=notifications for every token: the same unread notifications, to which the test adds."""
    def __init__(self):
        self.lock = threading.Lock()
        self.ids = []
        self.polls = []   # (Authorization, User-Agent) of each call: the User-Agent names the replica (--contact)
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args): pass

            def do_GET(self):
                q = parse_qs(urlparse(self.path).query)
                limit = int(q.get("notlimit", ["20"])[0])
                with echo.lock: echo.polls.append((self.headers.get("Authorization"), self.headers.get("User-Agent")))
                with echo.lock: ids = sorted(echo.ids, reverse=True)
                items = [{"wiki": "enwiki", "id": i, "type": "edit-user-talk", "category": "edit-user-talk",
                          "timestamp": {"utciso8601": "2026-11-20T10:00:00Z", "utcunix": 1763632800},
                          "title": {"full": "User talk:Reader"}, "agent": {"id": 2, "name": "Bob"},
                          "*": {"header": f"Message {i}"}} for i in ids[:limit]]
                body = json.dumps({"batchcomplete": True, "query": {"notifications": {
                    "count": str(len(ids)), "list": items, "rawcount": len(ids)}}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self):
        with self.lock:
            self.ids.append((max(self.ids) if self.ids else 1000) + 1)
            return self.ids[-1]


class Bell(threading.Thread):
    """An app's live bell through the balancer: on the stream's end it reconnects with Last-Event-ID, as EventSource does."""
    def __init__(self, port, user):
        super().__init__(daemon=True)
        self.port, self.user = port, user
        self.running = True
        self.first_badge = None
        self.got = []
        self.connects = 0
        self.errors = []

    def run(self):
        last = None
        while self.running:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                headers = {"Authorization": f"Bearer user-{self.user}"}
                if last is not None: headers["Last-Event-ID"] = last
                c.request("GET", "/notifications/stream", headers=headers)
                r = c.getresponse()
                if r.status != 200:
                    self.errors.append(f"status {r.status}"); r.read(); c.close(); time.sleep(0.1); continue
                self.connects += 1
                event, eid = None, None
                while self.running:
                    line = r.readline()
                    if not line: break
                    line = line.decode().rstrip("\n")
                    if line == "":
                        if event == "notification": self.got.append(int(eid))
                        if event == "badge" and self.first_badge is None: self.first_badge = int(eid)
                        if eid is not None: last = eid
                        event, eid = None, None
                    elif line.startswith("event: "): event = line[7:]
                    elif line.startswith("id: "): eid = line[4:]
                c.close()
            except Exception as e:
                self.errors.append(type(e).__name__)
            time.sleep(0.05)


class BellCluster:
    """Three replicas polling one fake Echo behind nginx (rendered from the template), and the app's bells through it;
    `with` starts them all once every bell has its first badge, and stops them all, whatever happened."""
    def __init__(self, work, name, replica_args, users):
        self.echo = FakeEcho()
        self.replicas = [Replica(free_port(), ["--upstream", f"http://127.0.0.1:{self.echo.port}/{{lang}}"] + replica_args(i)) for i in range(3)]
        self.lb_port = free_port()
        self.dir = os.path.join(work, name); os.makedirs(self.dir)
        conf = render_nginx.render(f"127.0.0.1:{self.lb_port}", self.dir, os.path.join(self.dir, "nginx.pid"), [f"127.0.0.1:{r.port}" for r in self.replicas])
        if os.geteuid() == 0: conf = "user root;\n" + conf
        self.conf_path = os.path.join(self.dir, "nginx.conf")
        open(self.conf_path, "w").write(conf)
        self.users, self.nginx, self.bells = users, None, []

    def __enter__(self):
        try:
            for r in self.replicas: r.start()
            self.nginx = subprocess.Popen(["nginx", "-p", self.dir, "-c", self.conf_path, "-g", "daemon off;"], stderr=open(os.path.join(self.dir, "nginx.log"), "w"))
            for _ in range(100):
                try:
                    if get(self.lb_port, "/healthz", timeout=1)[0] == 200: break
                except OSError:
                    time.sleep(0.05)
            self.bells = [Bell(self.lb_port, u) for u in self.users]
            for b in self.bells: b.start()
            deadline = time.time() + 10
            while time.time() < deadline and not all(b.first_badge is not None for b in self.bells): time.sleep(0.05)
        except BaseException:
            self.__exit__(); raise
        return self

    def __exit__(self, *exc):
        for b in self.bells: b.running = False
        if self.nginx: self.nginx.terminate(); self.nginx.wait(timeout=10)
        for r in self.replicas:
            if r.proc and r.proc.poll() is None: r.stop()
        self.echo.server.shutdown()


def bells_across_a_restart(work):
    """Part 4: live bells held across a rolling restart of replicas that poll a shared fake Echo."""
    with BellCluster(work, "bells", lambda i: ["--notifications-poll", "0.3"], range(6)) as cluster:
        echo, replicas, bells = cluster.echo, cluster.replicas, cluster.bells
        created = []
        stop = threading.Event()
        def create():
            while not stop.is_set():
                created.append(echo.add()); time.sleep(0.4)
        creator = threading.Thread(target=create, daemon=True); creator.start()
        time.sleep(1)
        codes = []
        for r in replicas:
            codes.append(r.stop(signal.SIGTERM))
            r.start()
            time.sleep(2.5)
        stop.set(); creator.join()
        time.sleep(2.5)   # the last notifications reach every bell within a few polls
    ok = True
    reconnects = sum(b.connects for b in bells) - len(bells)
    for b in bells:
        wanted = [i for i in created if b.first_badge is not None and i > b.first_badge]
        if sorted(b.got) != wanted or len(set(b.got)) != len(b.got):
            missing = sorted(set(wanted) - set(b.got)); twice = sorted({i for i in b.got if b.got.count(i) > 1})
            print(f"FAIL bell of user-{b.user}: {len(b.got)} events for {len(wanted)} notifications; missing {missing[:10]}, twice {twice[:10]}, errors {b.errors[:5]}")
            ok = False
    if any(c != 0 for c in codes): print(f"FAIL a replica exited {codes} after SIGTERM"); ok = False
    print(f"live bells: {len(bells)} clients, {len(created)} notifications created during a rolling restart, {reconnects} reconnections")
    if ok: print("ok   live bells: every notification created during the restart reached every client exactly once (Last-Event-ID)")
    if reconnects < len(bells): print("FAIL the streams were not drained and reconnected"); ok = False
    return ok


def one_poll_per_user(work):
    """Part 5: 6 devices of 2 users across 3 replicas: the balancer's consistent hash of Authorization brings each
    user's devices to one replica, so Echo is polled twice per round (once per user), not once per user per replica."""
    with BellCluster(work, "by-user", lambda i: ["--notifications-poll", "0.5", "--contact", f"replica-{i}"], (0, 0, 0, 1, 1, 1)) as cluster:
        echo, bells = cluster.echo, cluster.bells
        with echo.lock: echo.polls.clear()
        time.sleep(3)   # about six rounds
        with echo.lock: polls = list(echo.polls)
    pollers = sorted(set(polls))
    per_user = {}
    for auth, agent in pollers: per_user.setdefault(auth, set()).add(agent)
    rounds = len(polls) / max(1, len(pollers))
    print(f"one poll per user: {len(bells)} devices of 2 users across 3 replicas -> {len(pollers)} polls per round "
          f"({len(polls)} Echo calls in 3 s, about {rounds:.1f} rounds)")
    ok = len(pollers) == 2 and all(len(agents) == 1 for agents in per_user.values()) and all(b.first_badge is not None for b in bells)
    print(("ok   " if ok else "FAIL ") + "each user's devices meet on one replica: Echo is polled once per user per round"
          + ("" if ok else f"  (pollers {pollers}, badges {[b.first_badge for b in bells]})"))
    return ok


def main():
    if not shutil.which("nginx"): raise SystemExit("nginx is not installed")
    work = tempfile.mkdtemp(prefix="lede-replicas-")
    replicas = [Replica(free_port()) for _ in range(3)]
    lb_port = free_port()
    conf = render_nginx.render(f"127.0.0.1:{lb_port}", work, os.path.join(work, "nginx.pid"), [f"127.0.0.1:{r.port}" for r in replicas])
    # The test reads which replica answered; production configurations leave this header out.
    conf = conf.replace("add_header X-Cache-Status", "add_header X-Upstream-Addr $upstream_addr always;\n            add_header X-Cache-Status")
    # Revalidation needs an answer that expires within the test: this location keeps answers 1 s whatever Lede's
    # max-age says, so the next request after that is a conditional one (If-None-Match) that Lede must answer 304.
    conf = conf.replace("        location / {", """        location /revalidate/ {
            rewrite ^/revalidate(/.*)$ $1 break;
            proxy_pass http://lede;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache lede;
            proxy_cache_key revalidate$scheme$host$request_uri;
            proxy_ignore_headers Cache-Control Expires;
            proxy_cache_valid 200 1s;
            proxy_cache_revalidate on;
            add_header X-Cache-Status $upstream_cache_status always;
        }

        location / {""", 1)
    if os.geteuid() == 0:
        conf = "user root;\n" + conf   # CI runs as root: workers keep access to the private temp directory
    conf_path = os.path.join(work, "nginx.conf")
    open(conf_path, "w").write(conf)
    ok = True
    nginx = None
    try:
        for r in replicas: r.start()
        nginx_log = open(os.path.join(work, "nginx.log"), "w")
        nginx = subprocess.Popen(["nginx", "-p", work, "-c", conf_path, "-g", "daemon off;"], stderr=nginx_log)
        for _ in range(100):
            try:
                if get(lb_port, "/healthz", timeout=1)[0] == 200: break
            except OSError:
                time.sleep(0.05)

        # 1. Shared cache.
        def cache(path, headers=None):
            s, h, b = get(lb_port, path, headers)
            return s, h.get("x-cache-status"), h.get("content-encoding"), b
        first, second = cache("/summary/Albert_Einstein"), cache("/summary/Albert_Einstein")
        # /feed is large enough to be offered gzip (Vary: Accept-Encoding): two variants under one key.
        feed1, feed2 = cache("/feed"), cache("/feed")
        gz1, gz2 = cache("/feed", {"Accept-Encoding": "gzip"}), cache("/feed", {"Accept-Encoding": "gzip"})
        feed3 = cache("/feed")
        lang1, lang2 = cache("/languages"), cache("/languages")
        checks = [
            ("summary stored, then a HIT", first[1] in ("MISS", "EXPIRED") and second[1] == "HIT"),
            ("gzip is its own variant: MISS then HIT, gzip-encoded", gz1[1] == "MISS" and gz2[1] == "HIT" and gz2[2] == "gzip"),
            ("identity stays identity beside it", feed3[1] == "HIT" and feed3[2] is None and feed3[3] == feed2[3]),
            ("/feed stored, then a HIT", feed2[1] == "HIT"),
            ("/languages stored, then a HIT", lang2[1] == "HIT"),
        ]
        r1 = cache("/revalidate/summary/Amsterdam")
        time.sleep(2.2)   # nginx counts validity in whole seconds
        r2 = cache("/revalidate/summary/Amsterdam")
        checks.append(("after expiry the cache revalidates with If-None-Match and Lede answers 304 (REVALIDATED)",
                       r1[1] == "MISS" and r2[1] == "REVALIDATED" and r2[0] == 200 and r2[3] == r1[3]))
        if checks[-1][1] is False: print("revalidation:", r1[:3], r2[:3])
        alice = [get(lb_port, "/notifications/badge", {"Authorization": "Bearer demo-alice"}) for _ in range(3)]
        bob = [get(lb_port, "/notifications/badge", {"Authorization": "Bearer demo-bob"}) for _ in range(3)]
        # 2. The operators' metrics never through the public entry (however the path is written).
        metrics = [get(lb_port, p)[0] for p in ("/metrics", "/metrics?x=1", "/%6detrics", "//metrics")]
        checks.append(("/metrics is not reachable through nginx", all(s == 404 for s in metrics)))
        if checks[-1][1] is False: print("metrics through nginx:", metrics)
        checks.append(("badges never stored (BYPASS)", all(h.get("x-cache-status") == "BYPASS" for _, h, _ in alice + bob)))
        checks.append(("badges never crossed between users", all(b'"99+"' in b for _, _, b in alice) and all(b'"99+"' not in b for _, _, b in bob)))
        # Hit ratio over a browse of the public routes (10 URLs, 200 requests, both encodings).
        urls = ["/feed", "/languages", "/summary/Amsterdam", "/summary/Mumbai", "/related/Amsterdam", "/nearby?lat=52.37&lon=4.89",
                "/search?q=Amst", "/article/Rijksmuseum", "/animals", "/places/locations"]
        statuses = [cache(urls[i % len(urls)], {"Accept-Encoding": "gzip"} if i % 3 == 0 else {})[1] for i in range(200)]
        hits = statuses.count("HIT")
        print(f"cache: {hits} HITs of 200 requests over {len(urls)} public URLs (hit ratio {hits / 200:.2f})")
        checks.append(("public browsing is served mostly from the cache", hits >= 150))
        for name, passed in checks:
            print(("ok   " if passed else "FAIL ") + name + ("" if passed else f"  (summary {first[1]}/{second[1]}, feed gzip {gz1[1]}/{gz2[1]} {gz2[2]}, feed {feed3[1]} {feed3[2]})"))
            ok &= passed

        # 2. Rolling restart under load.
        with Load(lb_port) as load:
            time.sleep(1)
            for r in replicas:
                code = r.stop(signal.SIGTERM)
                if code != 0: print(f"FAIL replica {r.port} exited {code} after SIGTERM"); ok = False
                r.start()
                time.sleep(3)   # longer than fail_timeout: the restarted replica is back in rotation before the next goes
            time.sleep(1)
        sent, failed, errors5xx, by, samples = load.snapshot()
        served = {r.port: sum(n for addr, n in by.items() if addr.endswith(f":{r.port}")) for r in replicas}
        print(f"rolling restart: {sent} requests, {failed} failed, {errors5xx} 5xx, by replica {served}")
        if failed or errors5xx or not all(served.values()):
            print("FAIL rolling restart", samples); ok = False
        else:
            print("ok   rolling restart: no failed request, no 5xx, every replica served")

        # 3. One replica dies.
        with Load(lb_port) as load:
            time.sleep(0.5)
            victim = replicas[1]
            victim.stop(signal.SIGKILL)
            time.sleep(2)
            before = load.snapshot()[3].get(f"127.0.0.1:{victim.port}", 0)
            time.sleep(1.5)
            after = load.snapshot()[3].get(f"127.0.0.1:{victim.port}", 0)
        sent, failed, errors5xx, by, samples = load.snapshot()
        print(f"SIGKILL: {sent} requests, {failed} failed, {errors5xx} 5xx; the dead replica answered {after - before} in the last 1.5 s")
        if failed + errors5xx > ALLOWED_KILL_FAILURES or after != before:
            print("FAIL replica death", samples); ok = False
        else:
            print(f"ok   a dead replica is taken out (failures {failed + errors5xx} ≤ {ALLOWED_KILL_FAILURES})")
        victim.start()

        # 4. Live bells across a rolling restart.
        ok &= bells_across_a_restart(work)

        # 5. One poll per user across replicas.
        ok &= one_poll_per_user(work)
    finally:
        if nginx: nginx.terminate(); nginx.wait(timeout=10)
        if not ok and os.path.exists(os.path.join(work, "nginx.log")):
            print("nginx's log (last lines):\n" + "".join(open(os.path.join(work, "nginx.log")).readlines()[-20:]))
        for r in replicas:
            if r.proc and r.proc.poll() is None: r.stop()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
