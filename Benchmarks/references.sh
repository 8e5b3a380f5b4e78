#!/usr/bin/env bash
# The citation drawer (issue 47): what scanning 2 MB Parsoid pages costs the event loops. /healthz latency (wrk -c1
# --latency) alone, then while GET /article/{title}/references keeps 8 pages of about 2 MB being fetched and scanned
# at once (a new title each time: nothing cached), in the same run. The scan's own time and growth: Benchmarks/readers.sh
# with --only ReferenceScanner at 256 KB, 1 MB, 2 MB and 4 MB.
#   Benchmarks/references.sh [seconds]   (default 10)
# Needs wrk, python3, curl. Not part of CI.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
duration=${1:-10}
for tool in wrk python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
up=18390; port=18391
python3 Benchmarks/references_upstream.py $up --bytes $((2 << 20)) &
upid=$!
"$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning --upstream "http://127.0.0.1:$up/{lang}" --upstream-timeout 10 &
pid=$!
trap 'kill $pid $upid 2>/dev/null || true; pkill -P $$ curl 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
curl -s -o /dev/null -w "one 2 MB page, cold (fetch + scan + encode): %{time_total}s\n" "http://127.0.0.1:$port/article/Warm_up/references"
latency() { wrk -t1 -c1 -d"${duration}s" --latency "http://127.0.0.1:$port/healthz" | awk '/50%|99%/ {printf "%s %s  ", $1, $2} /Requests\/sec/ {print "(" $2 " req/s)"}'; }
echo "healthz alone:              $(latency)"
# 8 at once, each a new title, for the whole measurement.
load() { i=0; while true; do i=$((i + 1)); seq 1 8 | xargs -P8 -I{} curl -s -o /dev/null "http://127.0.0.1:$port/article/Page_${i}_{}/references"; done; }
load & lpid=$!
sleep 1
echo "healthz while 8 scan:       $(latency)"
kill $lpid 2>/dev/null || true
done_pages=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^lede_upstream_calls_total\{kind="html"/ {s += $2} END {print s + 0}')
echo "pages fetched and scanned: $done_pages"
