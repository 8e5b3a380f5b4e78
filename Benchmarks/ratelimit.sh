#!/usr/bin/env bash
# What the per-client rate limiter costs (issues 58 and 68).
#   Benchmarks/ratelimit.sh [seconds-per-round]   (default 5)
# 1. The warm shared /feed, anonymous (the limiter keys by address) and with a token Wikimedia (the embedded default)
#    accepted (the token's digest is looked up among the remembered tokens, then its own budget), on two servers of the
#    same build run side by side in alternating rounds: one with --client-rate 0 (off), one with budgets no benchmark
#    reaches (every request pays the lookups and the update, none is refused). Medians and the ratio on/off.
# 2. Memory for a million clients: one server with the limiter on and --trusted-proxies 127.0.0.1, fed a million
#    requests each forwarded for a different address (a wrk script), its resident and proportional set size before
#    and after.
# 3. Memory for a million remembered tokens: the same server fed a million requests each with a new made-up token
#    (each checked once by the embedded default's meta=userinfo, refused, and remembered as refused).
# Env: ROUNDS (5), WRK_CONNECTIONS (32), SERVER_THREADS (default: cores), LEDE_BIN (another build). Needs wrk, python3.
# Not part of CI. Raw output lands in Benchmarks/out/ratelimit-*.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-5}
rounds=${ROUNDS:-5}
conns=${WRK_CONNECTIONS:-32}
server_threads=${SERVER_THREADS:-$(nproc)}
out=Benchmarks/out
mkdir -p "$out"
for tool in wrk python3; do command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk)" >&2; exit 1; }; done
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi

off_port=18301; on_port=18302; mem_port=18303
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
start() {  # port, extra flags...
  local port=$1; shift
  "$bin" --host 127.0.0.1 --port "$port" --loops "$server_threads" --access-log off --log-level warning "$@" &
  pids+=("$!")
  for _ in $(seq 1 50); do "$bin" healthcheck --port "$port" && return 0; sleep 0.1; done
  echo "lede did not start on $port" >&2; exit 1
}
start $off_port --client-rate 0
unlimited=(--client-rate 1000000 --client-burst 10000000 --address-rate 1000000 --address-burst 10000000)
start $on_port "${unlimited[@]}"

rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for who in anonymous user; do
  header=(); [ "$who" = user ] && header=(-H "Authorization: Bearer demo-alice")
  for p in $off_port $on_port; do wrk -t2 -c"$conns" -d1s "${header[@]}" "http://127.0.0.1:$p/feed" >/dev/null; done  # warm
  offs=(); ons=()
  for r in $(seq 1 "$rounds"); do
    # Alternate which goes first, so drift on a shared machine falls on both.
    order=($off_port $on_port); [ $((r % 2)) -eq 0 ] && order=($on_port $off_port)
    for p in "${order[@]}"; do
      f="$out/ratelimit-$who-$p-$r.txt"
      wrk -t2 -c"$conns" -d"${duration}s" "${header[@]}" "http://127.0.0.1:$p/feed" > "$f"
      if [ "$p" = $off_port ]; then offs+=("$(rps "$f")"); else ons+=("$(rps "$f")"); fi
    done
  done
  moff=$(median "${offs[@]}"); mon=$(median "${ons[@]}")
  echo "warm /feed, $who: off ${offs[*]} | on ${ons[*]} req/s"
  python3 -c "print(f'  medians: off $moff, on $mon req/s; on/off = {$mon/$moff:.3f}')"
done

# Memory for a million clients.
start $mem_port "${unlimited[@]}" --trusted-proxies 127.0.0.1
mem_pid=${pids[-1]}
mem() { python3 - "$1" <<'EOF'
import sys
rss = pss = 0
for line in open(f"/proc/{sys.argv[1]}/smaps_rollup"):
    if line.startswith("Rss:"): rss = int(line.split()[1])
    if line.startswith("Pss:"): pss = int(line.split()[1])
print(f"{rss/1024:.1f} {pss/1024:.1f}")
EOF
}
cat > "$out/ratelimit-clients.lua" <<'EOF'
-- Each request forwarded for another address: 10.a.b.c, counting up (one thread, so no two requests share one).
local n = 0
request = function()
  n = n + 1
  local a, b, c = math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256
  return wrk.format("GET", "/languages", { ["X-Forwarded-For"] = "10." .. a .. "." .. b .. "." .. c })
end
EOF
# Feeds the server a wrk script for some seconds and prints what its resident and proportional sizes grew by.
grow() {  # name, seconds, what
  local before after requests
  before=$(mem "$mem_pid")
  wrk -t1 -c16 -d"$2s" -s "$out/ratelimit-$1.lua" "http://127.0.0.1:$mem_port/languages" > "$out/ratelimit-$1.txt"
  sleep 2   # the last checks answer
  after=$(mem "$mem_pid")
  requests=$(awk '/requests in/ {print $1}' "$out/ratelimit-$1.txt")
  echo "a million $1: $requests requests, $3"
  python3 -c "
b, a = [float(x) for x in '$before'.split()], [float(x) for x in '$after'.split()]
print(f'  RSS {b[0]:.1f} -> {a[0]:.1f} MiB (+{a[0]-b[0]:.1f}); PSS {b[1]:.1f} -> {a[1]:.1f} MiB (+{a[1]-b[1]:.1f})')"
}
wrk -t1 -c8 -d1s "http://127.0.0.1:$mem_port/languages" >/dev/null
# A million requests at ~40-60k/s: 25 s is enough on this machine; the count is read from wrk's output.
grow clients 25 "each forwarded for another address"

# Memory for a million remembered tokens.
cat > "$out/ratelimit-tokens.lua" <<'EOF'
-- Each request with a new made-up bearer token (one thread, so no two requests share one).
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/languages", { ["Authorization"] = "Bearer made-up-" .. n })
end
EOF
grow tokens 30 "each with a new made-up token (checked once, remembered as refused)"
