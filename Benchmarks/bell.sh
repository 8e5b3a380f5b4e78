#!/usr/bin/env bash
# The live bell at scale: 10,000 open /notifications/stream connections of 2,500 users against a fake Echo.
#   Benchmarks/bell.sh [streams] [users] [poll-seconds] [rounds]      (defaults 10000, 2500, 5, 3)
# Needs: nginx-light, cc. Not part of CI.
# The fake Echo is nginx serving one static meta=notifications answer (the same for every token, so a poll costs it
# nothing); a notification is "created" by swapping that file for one with a newer notification (Benchmarks/sse_bench.c
# does it and starts its clock). Reports Lede's RSS with the streams open, its CPU and Echo calls per poll round while
# idle (calls must equal the users: one poll per user however many streams), and the time from a notification's
# creation to its event on every stream (p50, p99, max; bounded below by the poll interval), and how long opening every
# stream took (the client comes back after a refusal's Retry-After, as an app does).
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
streams=${1:-10000}
users=${2:-2500}
poll=${3:-5}
rounds=${4:-3}
out=Benchmarks/out
mkdir -p "$out"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# LEDE_BIN: another build of lede to measure (an earlier commit's, for a before/after).
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
cc -O2 -o "$out/sse_bench" Benchmarks/sse_bench.c
work=$(mktemp -d); chmod a+rwx "$work"
echo_port=18393; port=18394
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

cat > "$work/template.json" <<'JSON'
{"batchcomplete":true,"query":{"notifications":{"count":"%N%","list":[{"wiki":"enwiki","id":%ID%,"type":"edit-user-talk","category":"edit-user-talk","timestamp":{"utciso8601":"2026-11-20T10:00:00Z","utcunix":1763632800},"title":{"full":"User talk:Reader"},"agent":{"id":2,"name":"Bob"},"*":{"header":"bcast-%ROUND% Bob left you a message."}}],"rawcount":%N%}}}
JSON
sed -e 's/%ROUND%/init/; s/%ID%/999/; s/%N%/0/g' "$work/template.json" > "$work/echo.json"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 4096; }
http {
  access_log $work/access.log;
  client_body_temp_path $work/tmp;
  keepalive_requests 10000000;
  server {
    listen 127.0.0.1:$echo_port;
    location = /en/w/api.php { default_type application/json; alias $work/echo.json; }
  }
}
CONF
mkdir -p "$work/tmp"
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' & pids+=("$!")
"$bin" --host 127.0.0.1 --port "$port" --access-log off --log-level warning --upstream "http://127.0.0.1:$echo_port/{lang}" \
  --notifications-poll "$poll" --max-connections $((streams + 100)) --max-streams $((streams + 100)) &
lede=$!; pids+=("$lede")
for _ in $(seq 1 100); do "$bin" healthcheck --port "$port" && break; sleep 0.1; done
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup"; }
base=$(awk '/^VmRSS/ {print $2}' /proc/$lede/status); base_pss=$(pss $lede)
idle=$((poll * 4))
SSE_USERS=$users SSE_PUBLISH_FILE="$work/echo.json" SSE_PUBLISH_TEMPLATE="$work/template.json" \
  "$out/sse_bench" "$port" /notifications/stream unused "$streams" "$rounds" "$idle" > "$out/bell.txt" 2>&1 &
client=$!; pids+=("$client")
for _ in $(seq 1 1200); do grep -q '^ready' "$out/bell.txt" && break; kill -0 "$client" 2>/dev/null || break; sleep 0.1; done
grep -q '^ready' "$out/bell.txt" || { cat "$out/bell.txt" >&2; exit 1; }
sleep 1
rss=$(awk '/^VmRSS/ {print $2}' /proc/$lede/status); rss_pss=$(pss $lede)
t0=$(awk '{print $14 + $15}' /proc/$lede/stat); c0=$(wc -l < "$work/access.log")
sleep $((idle - 3))
t1=$(awk '{print $14 + $15}' /proc/$lede/stat); c1=$(wc -l < "$work/access.log")
wait "$client" || { cat "$out/bell.txt" >&2; exit 1; }
hz=$(getconf CLK_TCK)
python3 - "$streams" "$users" "$poll" "$base" "$rss" "$t0" "$t1" "$c0" "$c1" "$hz" "$((idle - 3))" "$base_pss" "$rss_pss" <<'PY'
import sys
streams, users, poll, base, rss, t0, t1, c0, c1, hz, secs, base_pss, pss = (float(x) for x in sys.argv[1:])
rounds = secs / poll
print(f"{int(streams)} streams of {int(users)} users, --notifications-poll {poll:g}: RSS {base/1024:.1f} MB before, {rss/1024:.1f} MB with the streams open "
      f"({(rss-base)/streams:.1f} KB a stream); PSS {base_pss/1024:.1f} MB before, {pss/1024:.1f} MB with them ({pss/streams:.1f} KB a stream all in, "
      f"{(pss-base_pss)/streams:.1f} KB above the idle process); idle: {(c1-c0)/rounds:,.0f} Echo calls per poll round (users: {int(users)}), "
      f"{(t1-t0)/hz/rounds*1000:.0f} ms of CPU per round ({(t1-t0)/hz/secs*100:.1f} % of a core)")
PY
# Opening: every stream admitted (a refused one comes back after its Retry-After, as an app does), against the first
# polls Echo was asked for — one per user, the budget the storm admission protects (16 at once by default).
awk -v users="$users" '/^ready/ { ms = $4; printf "opening: %d streams in %.1f s, %d refusals first (each a 503 with Retry-After, then admitted); %d first polls of Echo, %.0f a second\n", $2, ms / 1000, $6, users, users / (ms / 1000) }' "$out/bell.txt"
grep '^round' "$out/bell.txt" | sed 's/^/creation to event, /'
