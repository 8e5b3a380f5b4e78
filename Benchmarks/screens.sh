#!/usr/bin/env bash
# Progressive screens: /feed streamed (Accept: application/jsonl) against the classic answer, under a slow upstream.
#   Benchmarks/screens.sh [rounds]        (default 3)
# Needs: wrk (apt-get install -y wrk), python3. Not part of CI.
# Cold: 20 requests, each for a new date (a new shared part, a new upstream call), with every upstream call taking
# 50 ms and then 1 s (Benchmarks/slow_upstream.py): time to the head line, the first section and the last line
# (streamed), and to the whole answer with its placeholders (classic). Warm: the same date again. Then warm throughput:
# wrk -t1 -c64 -d5s on the streamed and the classic /feed, alternating rounds, medians.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
rounds=${1:-3}
swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
up=18291; port=18292
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
dates() { local from=$1 out=""; for d in $(seq "$from" $((from + 19))); do out+="${out:+,}/feed?date=$(date -u -d "2026-01-01 + $d days" +%F)"; done; echo "$out"; }

for delay in 0.05 1.0; do
  python3 Benchmarks/slow_upstream.py $up --delay "$delay" & pids+=("$!")
  "$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning --upstream "http://127.0.0.1:$up/{lang}" & pids+=("$!")
  for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
  sleep 0.3
  echo "upstream +${delay}s per call, cold (20 new dates each):"
  python3 Benchmarks/stream_timing.py $port "$(dates 0)"
  python3 Benchmarks/stream_timing.py $port "$(dates 100)" --classic
  echo "  then warm (the same dates again):"
  python3 Benchmarks/stream_timing.py $port "$(dates 0)"
  # The issue's scenario: the first classic feed of a new day, then the same feed 1.5 s later.
  day=$(date -u -d "2026-01-01 + 300 days" +%F)
  first=$(curl -s -D - "http://127.0.0.1:$port/feed?date=$day" -w '\n%{http_code} %{time_total}')
  sleep 1.5
  second=$(curl -s "http://127.0.0.1:$port/feed?date=$day")
  python3 - "$first" "$second" <<'PY'
import json, sys
first, second = sys.argv[1], sys.argv[2]
head, _, rest = first.partition("\r\n\r\n")
body, _, tail = rest.rpartition("\n")
code, took = tail.split()
cc = next((l.split(":", 1)[1].strip() for l in head.split("\r\n") if l.lower().startswith("cache-control:")), "-")
def summary(text):
    try: doc = json.loads(text)
    except ValueError: return "not a feed"
    s = doc.get("sections", [])
    ph = [x for x in s if x.get("status") == "placeholder"]
    return f"{len(s)} sections, {len(ph)} placeholders" + (f" (retryAfterSeconds {sorted(set(x.get('retryAfterSeconds') for x in ph))})" if ph else "")
print(f"  scenario: first classic /feed {code} after {float(took) * 1000:.0f} ms, {summary(body)}, Cache-Control {cc}; 1.5 s later: {summary(second)}")
PY
  kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=()
done

"$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning & pids+=("$!")
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/feed" -o /dev/null
rps() { wrk -t1 -c64 -d5s "$@" | awk '/Requests\/sec/ {print $2}'; }
s=(); c=()
for _ in $(seq 1 "$rounds"); do
  s+=("$(rps -H 'Accept: application/jsonl' "http://127.0.0.1:$port/feed")")
  c+=("$(rps "http://127.0.0.1:$port/feed")")
done
python3 - "${s[*]}" "${c[*]}" <<'PY'
import statistics, sys
s = [float(x) for x in sys.argv[1].split()]; c = [float(x) for x in sys.argv[2].split()]
print(f"warm throughput, wrk -t1 -c64 -d5s, {len(s)} alternating rounds: streamed {statistics.median(s):,.0f} req/s {s}, "
      f"classic {statistics.median(c):,.0f} req/s {c}; streamed / classic = {statistics.median(s) / statistics.median(c):.2f} (target >= 0.5)")
PY
