#!/usr/bin/env bash
# Every public GET route of Lede, warm, with and without Accept-Encoding: gzip, as a ratio of the warm shared
# /feed measured in the same round (issue 14's target: every route >= 0.5x).
#   Benchmarks/routes.sh [seconds-per-measurement]   (default 2)
# Env: ROUNDS (3), WRK_CONNECTIONS (32), SERVER_THREADS (Lede --loops; default: cores), LEDE_BIN (another build of
# lede to measure, e.g. an earlier commit's, for a before/after), ROUTES (a regex of route names to measure besides the
# reference, e.g. '^feed-' for the personal feeds). Needs wrk, python3.
# Not part of CI. Raw wrk output lands in Benchmarks/out/routes-*.txt.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
duration=${1:-2}
rounds=${ROUNDS:-3}
conns=${WRK_CONNECTIONS:-32}
server_threads=${SERVER_THREADS:-$(nproc)}
out=Benchmarks/out
mkdir -p "$out"
for tool in wrk python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk)" >&2; exit 1; }; done

if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
port=18191
"$bin" --host 127.0.0.1 --port $port --loops "$server_threads" --access-log off --log-level warning &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done

old="backgroundedAt=2026-01-01T00:00:00Z"
# name|path|extra header (one wrk -H), in the order of openapi.yaml
routes=(
  "root|/|"
  "languages|/languages|"
  "feed|/feed|"
  "feed-because|/feed?because=Albert_Einstein|"
  "feed-nearby|/feed?lat=52.3547498&lon=4.8339215|"
  "feed-continue|/feed?continue=Rijksmuseum&$old|"
  "feed-personal|/feed?because=Albert_Einstein&lat=52.3547498&lon=4.8339215&continue=Rijksmuseum&$old|"
  "badge|/notifications/badge|Authorization: Bearer demo-alice"
  "notifications|/notifications?filter=unread&limit=10|Authorization: Bearer demo-bob"
  "deeplink|/places/deeplink?lat=52.3547498&lon=4.8339215&name=Amsterdam|"
  "locations|/places/locations|"
  "animals|/animals|"
  "animals-tags|/animals?tags=bird|"
  "animal-tags|/animals/tags|"
  "animal|/animals/5?favorites=5|"
  "animal-svg|/animals/1/image.svg|"
  "images|/images?q=cats|"
  "image|/images/1gq2c04?q=cats|"
  "summary|/summary/Albert_Einstein|"
  "article|/article/Albert_Einstein|"
  "related|/related/Amsterdam|"
  "random|/random|"
  "nearby|/nearby?lat=52.3547498&lon=4.8339215|"
  "search|/search?q=Amst|"
  "healthz|/healthz|"
  "readyz|/readyz|"
)
if [ -n "${ROUTES:-}" ]; then
  chosen=()
  for r in "${routes[@]}"; do name=${r%%|*}; if [ "$name" = feed ] || [[ $name =~ $ROUTES ]]; then chosen+=("$r"); fi; done
  routes=("${chosen[@]}")
fi

measure() { # name url header encoding -> rps
  local name=$1 url=$2 header=$3 enc=$4 args=(-t1 "-c$conns" "-d${duration}s" -H "Accept-Encoding: $enc")
  [ -n "$header" ] && args+=(-H "$header")
  wrk "${args[@]}" "$url" > "$out/routes-$name-$enc.txt"
  python3 -c "
import re,sys
t=open(sys.argv[1]).read()
bad=re.search(r'Non-2xx or 3xx responses: (\d+)',t)
if bad: print('non-2xx', bad.group(1), file=sys.stderr)
print(re.search(r'Requests/sec:\s+([\d.]+)',t).group(1))" "$out/routes-$name-$enc.txt"
}

# Warm every route (twice: some answers are prepared on the second request) and check it answers 2xx.
for r in "${routes[@]}"; do
  IFS='|' read -r name path header <<<"$r"
  for _ in 1 2; do
    code=$(curl -s -o /dev/null -w '%{http_code}' ${header:+-H "$header"} "http://127.0.0.1:$port$path")
  done
  [ "${code:0:1}" = 2 ] || { echo "$path answered $code" >&2; exit 1; }
done
wrk -t1 -c16 -d1s "http://127.0.0.1:$port/feed" >/dev/null

declare -A results
for i in $(seq 1 "$rounds"); do
  for r in "${routes[@]}"; do
    IFS='|' read -r name path header <<<"$r"
    for enc in identity gzip; do
      results["$name,$enc"]+="$(measure "$name-$i" "http://127.0.0.1:$port$path" "$header" "$enc") "
    done
  done
  # The reference again at the end of the round, so a drift during the round shows.
  for enc in identity gzip; do results["feed-end,$enc"]+="$(measure "feed-end-$i" "http://127.0.0.1:$port/feed" "" "$enc") "; done
done

echo "wrk -t1 -c$conns -d${duration}s per measurement, $(nproc) cores, $server_threads server loop(s), $(date -u +%F), $rounds rounds; medians; x = route / warm shared /feed (same encoding, same run)"
{
  for r in "${routes[@]}" "feed-end|/feed (again, end of each round)|"; do
    IFS='|' read -r name path _ <<<"$r"
    echo "$name|$path|${results[$name,identity]}|${results[$name,gzip]}"
  done
} | python3 -c "
import statistics, sys
rows = [l.rstrip('\n').split('|') for l in sys.stdin if l.strip()]
med = lambda s: statistics.median(float(x) for x in s.split())
ref = {enc: statistics.median([med(r[2 if enc == 'identity' else 3]) for r in rows if r[0] in ('feed', 'feed-end')]) for enc in ('identity', 'gzip')}
print(f\"{'route':<92} {'identity':>10} {'x':>6} {'gzip':>10} {'x':>6}\")
worst, worst_user, worst_feed = 9, 9, 9
user_bound = ('badge', 'notifications')   # every request goes upstream with the user's token, by design
for name, path, ident, gz in rows:
    i, g = med(ident), med(gz)
    xi, xg = i / ref['identity'], g / ref['gzip']
    if name in user_bound: worst_user = min(worst_user, xi, xg)
    elif name not in ('feed', 'feed-end'): worst = min(worst, xi, xg)
    if name.startswith('feed-') and name != 'feed-end': worst_feed = min(worst_feed, xi, xg)
    print(f'{path:<92} {i:>10.0f} {xi:>6.2f} {g:>10.0f} {xg:>6.2f}')
print(f'lowest ratio, public routes: {worst:.2f} (target >= 0.5)')
if worst_feed < 9: print(f'lowest ratio, personal feeds: {worst_feed:.2f} (target >= 0.8)')
if worst_user < 9: print(f'lowest ratio, user-bound routes (an upstream call per request): {worst_user:.2f}')
"
