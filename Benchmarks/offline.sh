#!/usr/bin/env bash
# Saved articles offline (issue 70): a sync of N saved articles through Lede, cold and with nothing changed, and after
# K articles were edited — upstream calls, bytes to the phone, wall time — beside what the apps do for the same list
# (the iOS app's article cache: mobile-html, mobile-html-offline-resources and media-list for every saved article on
# the first sync; offline-resources and media-list again for every one to bring it up to date), counted against the
# same fake Wikimedia (Benchmarks/offline_upstream.py, every answer after DELAY seconds).
#   Benchmarks/offline.sh [entries]   (default 300)
# Env: DELAY (0.05: a round trip to Wikimedia), IMAGES (12 an article), EDITED (3), ROUNDS (3), LEDE_BIN (another build).
# Needs python3, curl. Not part of CI. Raw output lands in Benchmarks/out/offline-*.txt.
set -euo pipefail
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
entries=${1:-300}
delay=${DELAY:-0.05}
images=${IMAGES:-12}
edited=${EDITED:-3}
rounds=${ROUNDS:-3}
out=Benchmarks/out
mkdir -p "$out"
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
up=18391; port=18392
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
report="$out/offline-$(date +%Y%m%d-%H%M%S).txt"
calls() { curl -s "127.0.0.1:$up/_calls"; }
total() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(sum(d['calls'].values()))" "$1"; }
delta() {  # before after -> "calls by kind"
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
kinds = sorted(set(a["calls"]) | set(b["calls"]))
d = {k: b["calls"].get(k, 0) - a["calls"].get(k, 0) for k in kinds}
print(sum(d.values()), " ".join("%s=%d" % (k, v) for k, v in d.items() if v))
PY
}
sync() {  # token-or-empty -> prints "seconds bytes token"
  local url="127.0.0.1:$port/offline" t0 t1
  [ -n "$1" ] && url="$url?since=$1"
  t0=$(date +%s.%N)
  curl -s -H 'Authorization: Bearer bench' -H 'Accept-Encoding: gzip' -o "$out/offline-body.gz" "$url"
  t1=$(date +%s.%N)
  local bytes; bytes=$(stat -c %s "$out/offline-body.gz")
  local token; token=$(gunzip -c "$out/offline-body.gz" 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['sync'])" 2>/dev/null \
    || python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['sync'])" "$out/offline-body.gz")
  echo "$(python3 -c "print(round($t1-$t0,3))") $bytes $token"
}
{
echo "offline sync, $entries saved articles, $images images each, upstream delay ${delay}s, $(date -u +%FT%TZ), $(nproc) cores"
for r in $(seq 1 "$rounds"); do
  python3 Benchmarks/offline_upstream.py $up --entries "$entries" --images "$images" --delay "$delay" & pids+=("$!")
  "$bin" --host 127.0.0.1 --port $port --loops 2 --access-log off --log-level warning --upstream "http://127.0.0.1:$up/{lang}" \
    --upstream-timeout 10 --wiki-variants off & pids+=("$!"); lede=$!
  for _ in $(seq 1 50); do "$bin" healthcheck --port $port 2>/dev/null && break; sleep 0.1; done
  for _ in $(seq 1 50); do curl -s "127.0.0.1:$up/_calls" >/dev/null && break; sleep 0.1; done
  rss0=$(awk '/VmRSS/ {print $2}' /proc/$lede/status)
  a=$(calls); read -r s1 b1 tok < <(sync ""); b=$(calls)
  peak=$(awk '/VmHWM/ {print $2}' /proc/$lede/status)
  echo "round $r cold:      ${s1}s, $b1 bytes (gzip) to the phone, upstream calls: $(delta "$a" "$b"); Lede's RSS ${rss0} kB before, peak ${peak} kB"
  read -r s2 b2 tok2 < <(sync "$tok"); c=$(calls)
  echo "round $r unchanged: ${s2}s, $b2 bytes, upstream calls: $(delta "$b" "$c")"
  curl -s -X POST "127.0.0.1:$up/_edit?n=$edited" >/dev/null; sleep 1
  read -r s3 b3 tok3 < <(sync "$tok2"); d=$(calls)
  echo "round $r $edited edited:  ${s3}s, $b3 bytes, upstream calls: $(delta "$c" "$d")"
  kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=()
done
# The apps' way, against the same fake: every call the iOS article cache makes, 8 at once (URLSession's per-host limit
# on HTTP/1.1 is 6; PCS is HTTP/2 in production, so this is generous to the apps).
python3 Benchmarks/offline_upstream.py $up --entries "$entries" --images "$images" --delay "$delay" & pids+=("$!")
for _ in $(seq 1 50); do curl -s "127.0.0.1:$up/_calls" >/dev/null && break; sleep 0.1; done
python3 - "$up" "$entries" <<'PY'
import json, sys, time, urllib.request
from concurrent.futures import ThreadPoolExecutor
up, n = sys.argv[1], int(sys.argv[2])
base = "http://127.0.0.1:%s/en" % up
def get(path):
    with urllib.request.urlopen(base + path) as r:
        return len(r.read())
def run(paths):
    t0 = time.time()
    with ThreadPoolExecutor(8) as pool:
        total = sum(pool.map(get, paths))
    return time.time() - t0, total
lists = ["/w/rest.php/readinglists/v0/lists", "/w/rest.php/readinglists/v0/lists/7/entries?limit=100"] + \
        ["/w/rest.php/readinglists/v0/lists/7/entries?limit=100&next=%d" % k for k in range(100, n, 100)]
titles = ["Saved_article_%d" % i for i in range(n)]
first = lists + [p + t for t in titles for p in ("/api/rest_v1/page/mobile-html/", "/api/rest_v1/page/mobile-html-offline-resources/", "/api/rest_v1/page/media-list/")]
again = lists + [p + t for t in titles for p in ("/api/rest_v1/page/mobile-html-offline-resources/", "/api/rest_v1/page/media-list/")]
s, b = run(first)
print("apps first sync:   %.3fs, %d bytes of JSON and HTML to the phone, %d calls (before any image)" % (s, b, len(first)))
s, b = run(again)
print("apps resync:       %.3fs, %d bytes to the phone, %d calls (nothing changed, and nothing says so)" % (s, b, len(again)))
PY
} | tee "$report"
echo "report: $report"
