#!/usr/bin/env bash
# What a language variant and a translated problem cost (issue 59).
#   Benchmarks/variants.sh [seconds-per-round]   (default 5)
# 1. Warm /feed against the same feed read in a variant — ?lang=zh-tw, and Accept-Language: zh-TW (the variant chosen
#    by the header) — and the edition's default ?lang=zh, on one server, in alternating rounds: a variant is a key of
#    its own (prepared once, then answered like any warm feed), not work per request. Medians and ratios to /feed.
# 2. A problem (404 for a path no route serves) said in English, and in German (Accept-Language: de: the catalogue's
#    title and detail, the problem encoded again), the same way.
# Env: ROUNDS (5), WRK_CONNECTIONS (32), SERVER_THREADS (default: cores), LEDE_BIN (another build). Needs wrk, python3.
# Not part of CI. Raw output lands in Benchmarks/out/variants-*.txt.
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

port=18311
"$bin" --host 127.0.0.1 --port "$port" --loops "$server_threads" --access-log off --log-level warning --client-rate 0 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port "$port" && break; sleep 0.1; done

rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# name|path|header
cases_feed=("feed|/feed|" "zh|/feed?lang=zh|" "zh-tw|/feed?lang=zh-tw|" "header-zh-TW|/feed|Accept-Language: zh-TW")
cases_problem=("problem-en|/no/such/route|" "problem-de|/no/such/route|Accept-Language: de")

run_group() {  # name of the first (the reference), then cases
  local -a cases=("$@")
  declare -A results
  for c in "${cases[@]}"; do  # warm: prepared feeds, pools
    IFS='|' read -r name path header <<< "$c"
    h=(); [ -n "$header" ] && h=(-H "$header")
    wrk -t2 -c"$conns" -d1s "${h[@]}" "http://127.0.0.1:$port$path" >/dev/null
  done
  for r in $(seq 1 "$rounds"); do
    # Each round in another order, so drift on a shared machine falls on every case.
    local n=${#cases[@]}
    for i in $(seq 0 $((n - 1))); do
      c=${cases[$(( (i + r) % n ))]}
      IFS='|' read -r name path header <<< "$c"
      h=(); [ -n "$header" ] && h=(-H "$header")
      f="$out/variants-$name-$r.txt"
      wrk -t2 -c"$conns" -d"${duration}s" "${h[@]}" "http://127.0.0.1:$port$path" > "$f"
      results[$name]="${results[$name]:-} $(rps "$f")"
    done
  done
  IFS='|' read -r ref _ <<< "${cases[0]}"
  mref=$(median ${results[$ref]})
  for c in "${cases[@]}"; do
    IFS='|' read -r name _ <<< "$c"
    m=$(median ${results[$name]})
    python3 -c "print(f'$name: {$m:.0f} req/s (rounds:${results[$name]}); / $ref = {$m/$mref:.3f}')"
  done
}
run_group "${cases_feed[@]}"
run_group "${cases_problem[@]}"
