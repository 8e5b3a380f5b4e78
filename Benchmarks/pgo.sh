#!/usr/bin/env bash
# Profile-guided optimisation of the release build (issue 60): builds an instrumented lede, runs the benchmarks' hot
# paths through it, and merges what it counted into Benchmarks/lede.profdata (checked in), which Package.swift applies
# to every release build (`swift build -c release`, `swift run -c release lede`, the Dockerfile, CI):
#   Benchmarks/pgo.sh [seconds-per-route]   (default 5)
# The workload, keep-alive, wrk -c32 (-c4 against the Python fake):
#   - the embedded default: the 13-byte and 10 KB bench answers, warm /feed (shared and personal), a summary, the
#     article screen, related, search, the badge and the notification list of the demo user, a 404;
#   - the live client as production runs it: the badge through an Echo answered by nginx, over plain HTTP and over
#     TLS (a CA made here), and the list's call — what Benchmarks/fanout.sh measures;
#   - the live decoders on Wikimedia's recorded answers: /feed, summaries, search and notifications against
#     .ci/fake-wikimedia.py (Tests/Fixtures/wikimedia).
# Code no workload reaches is counted as never run and laid out as cold: add a workload for a path that matters.
# Needs wrk, nginx, openssl, python3 and llvm-profdata (the Swift toolchain's). Not part of CI. A profile of older
# sources still applies where functions did not change (the rest builds as without one); remake it after a change to
# the hot paths.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
profdata=$(dirname "$(command -v swift)")/llvm-profdata
[ -x "$profdata" ] || profdata=$(command -v llvm-profdata)
for tool in wrk nginx openssl python3 "$profdata"; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
scratch=${PGO_SCRATCH:-/tmp/lede-pgo-build}
# IR-level instrumentation (LLVM's, after the SIL optimiser). Swift 6.3's -profile-use (SIL-level) crashes the compiler
# (swiftlang/swift#84432); its driver lists -ir-profile-generate but neither hands it to the frontend nor links the
# profile runtime, so both are asked for by hand.
runtime=$(dirname "$(command -v swift)")/../lib/swift/clang/lib/linux/libclang_rt.profile-$(uname -m).a
# LEDE_PGO=off: the instrumented build uses no profile of its own (Package.swift applies one otherwise).
LEDE_PGO=off swift build -c release --product lede --scratch-path "$scratch" -Xswiftc -Xfrontend -Xswiftc -ir-profile-generate \
  -Xlinker -u__llvm_profile_runtime -Xlinker "$runtime" >/dev/null
bin="$scratch/release/lede"
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
export LEDE_CLIENT_RATE=0 LLVM_PROFILE_FILE="$dir/raw/lede-%p.profraw"
mkdir -p "$dir/raw"
start() { # port, flags… -> the server's pid appended to pids
  local port=$1; shift
  "$bin" --host 127.0.0.1 --port "$port" --access-log off --log-level error "$@" &
  pids+=("$!")
  for _ in $(seq 1 100); do "$bin" healthcheck --port "$port" 2>/dev/null && return; sleep 0.1; done
  echo "lede on $port did not start" >&2; exit 1
}
load() { # connections port path [wrk options…]
  local c=$1 port=$2 path=$3; shift 3
  wrk -t1 -c"$c" -d"${secs}s" "$@" "http://127.0.0.1:$port$path" | awk -v p="$port$path" '/Requests\/sec/ {print p": "$2" req/s (instrumented)"}'
}

# Echo as fanout.sh answers it: the badge's counts, and one notification to any other call; plain and TLS.
(cd "$dir" && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=PGO CA" 2>/dev/null \
  && openssl req -newkey rsa:2048 -nodes -keyout up.key -out up.csr -subj "/CN=localhost" 2>/dev/null \
  && printf 'subjectAltName=DNS:localhost\n' > up.ext \
  && openssl x509 -req -in up.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out up.pem -days 2 -extfile up.ext 2>/dev/null)
printf '{"batchcomplete":true,"query":{"notifications":{"rawcount":1,"count":"1"}}}' > "$dir/count.json"
cp Tests/Fixtures/wikimedia/notifications__ios_mentions.json "$dir/list.json"
cat > "$dir/nginx.conf" <<CONF
worker_processes 1; pid $dir/nginx.pid; error_log $dir/nginx.err warn; events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 60s; tcp_nodelay on;
  map \$arg_notprop \$answer { count count.json; default list.json; }
  server {
    listen 127.0.0.1:18391; listen 127.0.0.1:18392 ssl; ssl_certificate $dir/up.pem; ssl_certificate_key $dir/up.key;
    location /en/w/api.php { default_type application/json; root $dir; try_files /\$answer =404; }
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir"
python3 .ci/fake-wikimedia.py 18393 Tests/Fixtures/wikimedia > "$dir/fake.log" 2>&1 & pids+=("$!")

embedded=18399 plain=18398 tls=18397 fake=18396
start $embedded --bench-routes on
start $plain --upstream "http://localhost:18391/{lang}" --upstream-concurrency 1024 --upstream-connections 64
start $tls --upstream "https://localhost:18392/{lang}" --upstream-ca "$dir/ca.pem" --upstream-concurrency 1024 \
  --upstream-connections 64
start $fake --upstream "http://127.0.0.1:18393/{lang}" --media-upstream "http://127.0.0.1:18393"

alice=(-H "Authorization: Bearer demo-alice"); bench=(-H "Authorization: Bearer bench-user")
for path in /_bench/plaintext /_bench/json /feed "/feed?because=Albert_Einstein&lat=52.3547498&lon=4.8339215" \
            /summary/Albert_Einstein /article/Albert_Einstein /related/Amsterdam "/search?q=Amst" /no/such/route; do
  load 32 $embedded "$path"
done
load 32 $embedded /notifications/badge "${alice[@]}"
load 32 $embedded /notifications "${alice[@]}"
load 32 $plain /notifications/badge "${bench[@]}"
load 32 $plain /notifications "${bench[@]}"
load 32 $tls /notifications/badge "${bench[@]}"
for path in /feed /summary/Dog "/search?q=Amst" /notifications; do load 4 $fake "$path" "${alice[@]}"; done

for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
"$profdata" merge -o Benchmarks/lede.profdata "$dir"/raw/*.profraw
# What the profile was made from: CI checks the request path has not changed since (Benchmarks/profile-fresh.sh).
Benchmarks/profile-fresh.sh --list > Benchmarks/lede.profdata.sources
ls -l Benchmarks/lede.profdata Benchmarks/lede.profdata.sources
# SwiftPM does not know a compiler flag names a file: release objects already built here would keep the old profile's
# layout until their sources change. The profiled modules' sources are touched (their contents stay), so the next build
# of any kind recompiles them, the release builds with the new profile.
find Sources/EventLoops Sources/HTTPCore Sources/HTTPServer Sources/HTTPClient Sources/LedeBasics Sources/Upstream Sources/Wikimedia \
  Sources/WikimediaEmbedded Sources/Lede Sources/LedeCommand -name '*.swift' -exec touch {} +
echo "touched the profiled modules' sources: the next release build compiles them with the new profile"
