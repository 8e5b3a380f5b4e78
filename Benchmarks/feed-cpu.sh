#!/usr/bin/env bash
# Where a warm personal feed's time goes, against the warm shared /feed: requests/s, the server's user and system CPU per
# request (from /proc/<pid>/stat around each run), wrk's own CPU per request, and how much of the machine sat idle or
# in softirq (loopback TCP delivery, charged to no process) during each run (/proc/stat), alternating the two routes.
#   Benchmarks/feed-cpu.sh [rounds] [seconds]        (defaults 3 and 4)
# Env: LEDE_BIN (another build, e.g. an earlier commit's, for a before/after in one sitting), LOOPS (2), PERSONAL (the
# personal URL's path), LEDE_ARGS (more flags for lede: with "--bench-routes on", PERSONAL=/_bench/json compares a prepared
# body). Needs wrk. Not part of CI. Run it for two builds one after the other, twice, and compare the
# ratios: the machine's speed drifts between runs, the two routes of one round see the same machine.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
rounds=${1:-3}; seconds=${2:-4}
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
port=18195
old="backgroundedAt=2026-01-01T00:00:00Z"
personal=${PERSONAL:-"/feed?because=Albert_Einstein&lat=52.3547498&lon=4.8339215&continue=Rijksmuseum&$old"}
"$bin" --host 127.0.0.1 --port $port --loops "${LOOPS:-2}" --access-log off --log-level warning ${LEDE_ARGS:-} &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
for u in /feed "$personal"; do curl -s -o /dev/null "http://127.0.0.1:$port$u"; curl -s -o /dev/null "http://127.0.0.1:$port$u"; done
ticks() { awk '{print $14, $15}' "/proc/$pid/stat"; }
machine() { awk '/^cpu / {print $5 + $6, $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }   # idle+iowait, softirq, all
echo "route      req/s   server user  server sys   wrk user   wrk sys   (µs a request)   idle  softirq (% of the machine)"
for _ in $(seq 1 "$rounds"); do
  for u in /feed "$personal"; do
    read -r u0 s0 < <(ticks)
    read -r i0 q0 t0 < <(machine)
    /usr/bin/time -f "%U %S" -o Benchmarks/out/feed-cpu-time.txt wrk -t1 -c32 "-d${seconds}s" "http://127.0.0.1:$port$u" > Benchmarks/out/feed-cpu-wrk.txt
    read -r u1 s1 < <(ticks)
    read -r i1 q1 t1 < <(machine)
    read -r wu ws < Benchmarks/out/feed-cpu-time.txt
    n=$(awk '/requests in/ {print $1}' Benchmarks/out/feed-cpu-wrk.txt)
    hz=$(getconf CLK_TCK)
    python3 -c "
n=$n; hz=$hz
name='/feed' if '$u' == '/feed' else 'personal'
print(f'{name:9s} {n/$seconds:7.0f}   {($u1-$u0)/hz*1e6/n:9.2f}  {($s1-$s0)/hz*1e6/n:10.2f}  {$wu*1e6/n:9.2f}  {$ws*1e6/n:8.2f}'
      f'                  {($i1-$i0)/($t1-$t0)*100:4.0f}  {($q1-$q0)/($t1-$t0)*100:7.0f}')"
  done
done
