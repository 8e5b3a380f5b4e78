#!/usr/bin/env bash
# The Saved tab (issue 46), measured against peers in the same run:
#  1. warm: GET /saved of a 100-entry list (limit=50, the default page, and limit=100, the whole tab), cards warm, as
#     a ratio of the warm shared /feed in alternating rounds. Each /saved request makes its two reading-list calls to
#     the upstream (nothing of a user is kept): here nginx serving the extension's JSON as files, so the upstream is
#     not the bottleneck.
#  2. cold: every summary call taking 1 s (Benchmarks/saved_upstream.py --delay 1): the whole tab (limit=100) with
#     --upstream-concurrency 100 (here all editions share one origin: 100 stands for three editions of ~34 each), 64
#     and the default 16, and the streamed head's time to first byte. Env CONCURRENCIES to choose.
#   Benchmarks/saved.sh [seconds-per-measurement]   (default 3)
# Env: ROUNDS (3), WRK_CONNECTIONS (32), IDENTITY (set: no Accept-Encoding: gzip), SAVED_TTL (--saved-cache-ttl of the
# warm server, default 5: a page written moments ago is answered on the loop; 0: every read asks the upstream). Needs wrk, nginx, python3, curl. Not part of CI.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
duration=${1:-3}
rounds=${ROUNDS:-3}
conns=${WRK_CONNECTIONS:-32}
for tool in wrk nginx python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
work=$(mktemp -d /tmp/lede-saved-bench-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
debug() { cat "$work/first.json" >&2; cat "$work/error.log" >&2 2>/dev/null; }

# The upstream as files: the lists, one page of 100 entries, a summary per saved article.
python3 - "$work/www" <<'PY'
import json, os, sys
root = sys.argv[1]
ed = ["en", "de", "it"]
rl = os.path.join(root, "en/w/rest.php/readinglists/v0")
os.makedirs(rl, exist_ok=True)
json.dump({"lists": [{"id": 7, "name": "default", "default": True, "description": "", "created": "2025-01-01T00:00:00Z", "updated": "2026-11-20T10:00:00Z"}]}, open(os.path.join(rl, "lists.json"), "w"))
entries = [{"id": 1000 + i, "listId": 7, "project": "https://%s.wikipedia.org" % ed[i % 3], "title": "Saved article %d" % i,
            "created": "2026-11-%02dT10:00:00Z" % (20 - i // 10), "updated": "2026-11-%02dT10:%02d:00Z" % (20 - i // 10, 59 - i % 10)} for i in range(100)]
json.dump({"entries": entries}, open(os.path.join(rl, "entries.json"), "w"))
for lang in ed:
    d = os.path.join(root, lang, "api/rest_v1/page/summary")
    os.makedirs(d, exist_ok=True)
    for i in range(100):
        t = "Saved article %d" % i
        x = t + " (/ˈsɛɪvd/) is an article saved for the benchmark, with a sentence or two of text."
        json.dump({"type": "standard", "title": t, "displaytitle": t, "lang": lang, "dir": "ltr", "description": "Benchmark article", "extract": x,
                   "extract_html": "<p>" + x + "</p>", "thumbnail": {"source": "https://upload.wikimedia.org/x/320px-a.jpg", "width": 320, "height": 213},
                   "content_urls": {"desktop": {"page": "https://%s.wikipedia.org/wiki/x" % lang}}}, open(os.path.join(d, t.replace(" ", "_") + ".json"), "w"))
PY
ngx=18290
cat > "$work/nginx.conf" <<NGX
worker_processes 1; pid $work/nginx.pid; error_log $work/error.log; daemon on;
events { worker_connections 4096; }
http {
  access_log off; default_type application/json; keepalive_requests 100000;
  server {
    listen 127.0.0.1:$ngx;
    location = /en/w/rest.php/readinglists/v0/lists { alias $work/www/en/w/rest.php/readinglists/v0/lists.json; }
    location = /en/w/rest.php/readinglists/v0/lists/7/entries { alias $work/www/en/w/rest.php/readinglists/v0/entries.json; }
    location ~ ^/(\w+)/api/rest_v1/page/summary/(.+)\$ { alias $work/www/\$1/api/rest_v1/page/summary/\$2.json; }
  }
}
NGX
chmod -R a+rX "$work"
nginx -c "$work/nginx.conf"

port=18291
"$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning --upstream "http://127.0.0.1:$ngx/{lang}" --upstream-concurrency 64 \
  --saved-cache-ttl "${SAVED_TTL:-5}" &
pids+=($!)
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
auth='Authorization: Bearer bench'
curl -s -H "$auth" "http://127.0.0.1:$port/saved?limit=100" | tee "$work/first.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["count"] == 100 and all(i["card"] for i in d["items"]), d["count"]' || { debug; exit 1; }
echo "warm (--saved-cache-ttl ${SAVED_TTL:-5}): GET /saved of 100 entries (cards warm) vs warm /feed, $rounds alternating rounds of ${duration}s, $conns connections, ${IDENTITY:+identity}${IDENTITY:-gzip}"
enc=(-H 'Accept-Encoding: gzip'); [ -n "${IDENTITY:-}" ] && enc=(-H 'X-Identity: 1')
rps() { wrk -t1 -c"$conns" -d"${duration}s" "${enc[@]}" "$@" | awk '/Requests\/sec/ {print $2}'; }
rps -H 'X-Warm: 1' "http://127.0.0.1:$port/feed" >/dev/null
for r in $(seq 1 "$rounds"); do
  feed=$(rps "http://127.0.0.1:$port/feed")
  s50=$(rps -H "$auth" "http://127.0.0.1:$port/saved")
  s100=$(rps -H "$auth" "http://127.0.0.1:$port/saved?limit=100")
  python3 -c "print('round $r: feed %.0f req/s; saved limit=50 %.0f (%.2fx); saved limit=100 %.0f (%.2fx)' % ($feed, $s50, $s50/$feed, $s100, $s100/$feed))"
done
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

slow=18292
python3 Benchmarks/saved_upstream.py $slow --entries 100 --delay 1 &
pids+=($!)
sleep 0.5
for conc in ${CONCURRENCIES:-100 64 16}; do
  cport=$((18293 + conc % 7))
  "$bin" --host 127.0.0.1 --port $cport --access-log off --log-level warning --upstream "http://127.0.0.1:$slow/{lang}" --upstream-concurrency $conc --upstream-connections 128 --upstream-timeout 5 &
  cpid=$!
  for _ in $(seq 1 50); do "$bin" healthcheck --port $cport && break; sleep 0.1; done
  head=$(curl -s -o /dev/null -w '%{time_starttransfer}' -H "$auth" -H 'Accept: application/jsonl' "http://127.0.0.1:$cport/saved?limit=100")
  kill $cpid; wait $cpid 2>/dev/null || true
  "$bin" --host 127.0.0.1 --port $cport --access-log off --log-level warning --upstream "http://127.0.0.1:$slow/{lang}" --upstream-concurrency $conc --upstream-connections 128 --upstream-timeout 5 &
  cpid=$!
  for _ in $(seq 1 50); do "$bin" healthcheck --port $cport && break; sleep 0.1; done
  total=$(curl -s -o "$work/cold.json" -w '%{time_total}' -H "$auth" "http://127.0.0.1:$cport/saved?limit=100")
  cards=$(python3 -c "import json; d=json.load(open('$work/cold.json')); print(sum(1 for i in d['items'] if i['card']))")
  echo "cold, every summary 1 s, --upstream-concurrency $conc --upstream-connections 128 (one origin here): whole tab (100 cards) in ${total}s with $cards cards; streamed head after ${head}s"
  kill $cpid; wait $cpid 2>/dev/null || true
done
