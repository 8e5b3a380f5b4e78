#!/usr/bin/env bash
# Profile-guided optimisation of the release build (issue 60): builds an instrumented lede, runs the benchmarks'
# hot paths through it, and merges what it counted into Benchmarks/out/lede.profdata, which a release build then uses:
#   swift build -c release -Xswiftc -profile-use=$PWD/Benchmarks/out/lede.profdata
#   Benchmarks/pgo.sh [seconds-per-route]   (default 5)
# The workload: the 13-byte and 10 KB bench answers, warm /feed (shared and personal), a summary, the article screen,
# related, search, the badge and the notification list of the embedded default's demo user, and a 404 — keep-alive,
# wrk -c32. Needs wrk and llvm-profdata (the Swift toolchain's). Not part of CI. A profile of older sources still
# applies where functions did not change; remake it after a change to the hot paths.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
profdata=$(dirname "$(command -v swift)")/llvm-profdata
[ -x "$profdata" ] || profdata=$(command -v llvm-profdata)
for tool in wrk "$profdata"; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
scratch=${PGO_SCRATCH:-/tmp/lede-pgo-build}
swift build -c release --product lede --scratch-path "$scratch" -Xswiftc -profile-generate >/dev/null
bin="$scratch/release/lede"
raw=$(mktemp -d)
port=18399
LEDE_CLIENT_RATE=0 LLVM_PROFILE_FILE="$raw/lede-%p.profraw" "$bin" --host 127.0.0.1 --port $port --access-log off \
  --log-level warning --bench-routes on &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$raw"' EXIT
for _ in $(seq 1 100); do "$bin" healthcheck --port $port 2>/dev/null && break; sleep 0.1; done
auth=(-H "Authorization: Bearer demo-alice")
for path in /_bench/plaintext /_bench/json /feed "/feed?because=Albert_Einstein&lat=52.3547498&lon=4.8339215" \
            /summary/Albert_Einstein /article/Albert_Einstein /related/Amsterdam "/search?q=Amst" /no/such/route; do
  wrk -t1 -c32 -d"${secs}s" "http://127.0.0.1:$port$path" | awk -v p="$path" '/Requests\/sec/ {print p": "$2" req/s (instrumented)"}'
done
for path in /notifications/badge /notifications; do
  wrk -t1 -c32 -d"${secs}s" "${auth[@]}" "http://127.0.0.1:$port$path" | awk -v p="$path" '/Requests\/sec/ {print p": "$2" req/s (instrumented)"}'
done
kill -TERM "$pid"; wait "$pid" || true
"$profdata" merge -o Benchmarks/out/lede.profdata "$raw"/*.profraw
ls -l Benchmarks/out/lede.profdata
