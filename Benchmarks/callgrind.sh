#!/usr/bin/env bash
# Instructions per request for one route, user space only, counted by callgrind (repeatable whatever else the
# machine is doing).
#   Benchmarks/callgrind.sh PATH [wrk options…]     e.g.  Benchmarks/callgrind.sh /feed -H 'Accept-Encoding: gzip'
# One event loop under valgrind; the counters are zeroed once the server is up, wrk -c8 runs for 6 s, and the
# total is divided by the requests wrk reports; malloc calls per request are counted the same way. Needs valgrind and
# wrk. Not part of CI. LEDE_ARGS adds flags to lede (e.g. LEDE_ARGS="--upstream http://127.0.0.1:18281/{lang}" for
# the badge route against Benchmarks/fanout.sh's upstream).
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
path=${1:-/_bench/json}; shift || true
port=18190
out=Benchmarks/out; mkdir -p "$out"
# LEDE_BIN: another build of lede to count (an earlier commit's, for a before/after).
# Built with its own scratch path and DWARF 4 for the C targets: valgrind 3.19 cannot read clang's DWARF 5 (the image
# codecs' objects), gives up on the binary's debug info, and then charges every instruction to start_thread.
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede --scratch-path .build/callgrind -Xcc -gdwarf-4 >/dev/null
  bin="$(swift build -c release --scratch-path .build/callgrind -Xcc -gdwarf-4 --show-bin-path)/lede"
fi
profile="$out/callgrind.out"
rm -f "$profile"
valgrind --tool=callgrind --callgrind-out-file="$profile" "$bin" --host 127.0.0.1 --port $port --loops 1 \
  --access-log off --log-level warning --bench-routes on ${LEDE_ARGS:-} > "$out/callgrind.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
curl -s -o /dev/null "$@" "http://127.0.0.1:$port$path"
callgrind_control -z >/dev/null 2>&1
wrk -t1 -c8 -d6s "$@" "http://127.0.0.1:$port$path" > "$out/callgrind-wrk.txt"
requests=$(awk '/requests in/ {print $1}' "$out/callgrind-wrk.txt")
# A route that failed (an upstream not running, say) answers fast and counts nothing worth counting.
if grep -q 'Non-2xx' "$out/callgrind-wrk.txt"; then
  echo "warning: $(awk '/Non-2xx/ {print $NF}' "$out/callgrind-wrk.txt") of $requests answers were not 2xx/3xx: the figures below are not the route's" >&2
fi
pkill -INT -f "callgrind.*--port $port" || true
for _ in $(seq 1 50); do pgrep -f "callgrind.*--port $port" >/dev/null || break; sleep 0.2; done
total=$(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
calls=$(callgrind_annotate --auto=no --threshold=100 --tree=caller "$profile" 2>/dev/null | python3 -c '
import re, sys
block, calls = [], 0
for line in sys.stdin.read().splitlines():
    if not line.strip(): block = []; continue
    if not calls and re.search(r"\*  .*malloc\.c:malloc \[", line):
        calls = sum(int(m.group(1).replace(",", "")) for l in block for m in [re.search(r"\(([\d,]+)x\)", l)] if m)
    block.append(line)
print(calls)
')
echo "$path: $requests requests, $((total / requests)) instructions/request, $(python3 -c "print(f'{${calls:-0}/$requests:.2f}')") malloc calls/request (profile: $profile; callgrind_annotate --inclusive=yes $profile)"
