#!/usr/bin/env bash
# The share card (issue 49): render time per card at scale 2 for Latin, Arabic and CJK text (uncached: a new text each
# request), /healthz latency while 16 cards render at once, and a cached card's requests per second against warm
# /summary in the same run (wrk, alternating rounds).
#   Benchmarks/share.sh [rounds] [seconds]   (default 3 rounds of 10 s)
# Needs wrk, python3. Not part of CI.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
rounds=${1:-3}; duration=${2:-10}
for tool in wrk python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
port=18394
"$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
python3 Benchmarks/share_probe.py $port
curl -s -o /dev/null "http://127.0.0.1:$port/share/Rijksmuseum.png"; curl -s -o /dev/null "http://127.0.0.1:$port/summary/Rijksmuseum"
# nginx serving the same card's bytes as a static file (sendfile), as a peer for the large body.
peer=""
if command -v nginx >/dev/null; then
  ngx=$(mktemp -d /tmp/lede-share-nginx-XXXXXX); mkdir -p "$ngx/html"
  curl -s -o "$ngx/html/card.png" "http://127.0.0.1:$port/share/Rijksmuseum.png"
  cat > "$ngx/nginx.conf" <<CONF
worker_processes 2; pid $ngx/nginx.pid; error_log $ngx/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; client_body_temp_path $ngx; proxy_temp_path $ngx; fastcgi_temp_path $ngx;
  uwsgi_temp_path $ngx; scgi_temp_path $ngx; server { listen 127.0.0.1:18397; root $ngx/html; } }
CONF
  nginx -c "$ngx/nginx.conf" && peer=1
  trap 'kill $pid 2>/dev/null || true; nginx -c "$ngx/nginx.conf" -s stop 2>/dev/null || true' EXIT
fi
rps() { wrk -t2 -c32 -d"${duration}s" "$1" | awk '/Requests\/sec/ {print $2}'; }
for r in $(seq 1 "$rounds"); do
  card=$(rps "http://127.0.0.1:$port/share/Rijksmuseum.png"); summary=$(rps "http://127.0.0.1:$port/summary/Rijksmuseum")
  line="round $r: cached card $card req/s, warm /summary $summary req/s, ratio $(python3 -c "print(round($card / $summary, 2))")"
  if [ -n "$peer" ]; then static=$(rps "http://127.0.0.1:18397/card.png"); line="$line; nginx, the same bytes as a file: $static req/s"; fi
  echo "$line"
done
