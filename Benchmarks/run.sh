#!/usr/bin/env bash
# Lede vs nginx on loopback, same bytes, same wrk settings.
#   Benchmarks/run.sh [duration-seconds]   (default 15)
# Needs: wrk and nginx (apt-get install -y wrk nginx-light), python3. Not part of CI.
# Env: ROUNDS (3), SERVER_THREADS (Lede --loops = nginx worker_processes; default: cores), WRK_CONNECTIONS (64).
# LEDE_BIN: the build to measure; LEDE_BIN_B: a second build run beside it in the same alternating rounds of the two
# core routes (a before/after without the drift of two sittings): its row is "lede-b", and lede/lede-b is printed.
# Prints requests/s, p50/p99 latency and Lede/nginx and Lede/loop ratios for a plaintext and a ~10 KB JSON route —
# "loop" is Benchmarks/epoll_loop.c, a bare epoll loop answering Lede's own response bytes without parsing (the
# limit) — then warm /feed, cold /feed and the resident memory of Lede holding 10,000 idle keep-alive connections.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
duration=${1:-15}
threads=${WRK_THREADS:-1}
# Server threads: Lede's --loops and nginx's worker_processes, the same for both (default: number of cores).
server_threads=${SERVER_THREADS:-$(nproc)}
conns=${WRK_CONNECTIONS:-64}
out=Benchmarks/out
mkdir -p "$out"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

for tool in wrk nginx python3 cc; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk nginx-light)" >&2; exit 1; }
done

# LEDE_BIN: another build of lede to measure (e.g. an earlier commit's, for a before/after in one sitting).
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
lede_port=18181; nginx_port=18182

"$bin" --host 127.0.0.1 --port $lede_port --loops "$server_threads" --access-log off --log-level warning --bench-routes on &
lede_pid=$!
servers="lede nginx loop"
lede_b_port=18183; lede_b_pid=
if [ -n "${LEDE_BIN_B:-}" ]; then
  "$LEDE_BIN_B" --host 127.0.0.1 --port $lede_b_port --loops "$server_threads" --access-log off --log-level warning --bench-routes on &
  lede_b_pid=$!
  servers="lede lede_b nginx loop"
fi
nginx_dir=$(mktemp -d)
loop_pids=()
cleanup() { kill "$lede_pid" $lede_b_pid "${loop_pids[@]}" 2>/dev/null || true; [ -f "$nginx_dir/nginx.pid" ] && kill "$(cat "$nginx_dir/nginx.pid")" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $lede_port && break; sleep 0.1; done

# nginx serves the very bytes Lede serves.
mkdir -p "$nginx_dir/www"
curl -sf "http://127.0.0.1:$lede_port/_bench/plaintext" -o "$nginx_dir/www/plaintext"
curl -sf "http://127.0.0.1:$lede_port/_bench/json" -o "$nginx_dir/www/json"
cat > "$nginx_dir/nginx.conf" <<CONF
worker_processes $server_threads;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 60s;
  tcp_nodelay on;
  sendfile on;
  open_file_cache max=100;
  add_header X-Content-Type-Options nosniff;   # Lede sends it on every answer: the same header bytes
  server {
    listen 127.0.0.1:$nginx_port reuseport;
    root $nginx_dir/www;
    location = /_bench/plaintext { default_type text/plain; alias $nginx_dir/www/plaintext; }
    location = /_bench/json { default_type application/json; alias $nginx_dir/www/json; }
  }
}
CONF
chmod -R a+rX "$nginx_dir"   # nginx workers drop to an unprivileged user
nginx -c "$nginx_dir/nginx.conf" -p "$nginx_dir"
sleep 0.5
cmp <(curl -sf "http://127.0.0.1:$nginx_port/_bench/json") "$nginx_dir/www/json"

# The bare loop answers each route with Lede's whole response to it (head and body, as one fixed string).
cc -O2 -pthread -o "$out/epoll_loop" Benchmarks/epoll_loop.c
loop_port=18185
for route in plaintext json; do
  python3 - "$lede_port" "/_bench/$route" "$nginx_dir/$route.response" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(f"GET {sys.argv[2]} HTTP/1.1\r\nHost: b\r\n\r\n".encode())
data = b""
while b"\r\n\r\n" not in data: data += s.recv(65536)
head, body = data.split(b"\r\n\r\n", 1)
length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
while len(body) < length: body += s.recv(65536)
open(sys.argv[3], "wb").write(head + b"\r\n\r\n" + body)
PY
  "$out/epoll_loop" "$loop_port" "$server_threads" "$nginx_dir/$route.response" &
  loop_pids+=($!)
  eval "loop_port_$route=$loop_port"
  loop_port=$((loop_port + 1))
done
sleep 0.3

run() { # name url [wrk args…] -> "rps p50_ms p99_ms non2xx"
  local name=$1 url=$2; shift 2
  wrk -t"$threads" -c"$conns" -d"${duration}s" --latency "$@" "$url" > "$out/$name.txt"
  python3 - "$out/$name.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def ms(v):
    n, u = float(re.match(r'([\d.]+)', v).group(1)), re.sub(r'[\d.]', '', v)
    return n * {'us': 0.001, 'ms': 1, 's': 1000}[u]
rps = float(re.search(r'Requests/sec:\s+([\d.]+)', t).group(1))
p50 = ms(re.search(r'\s50%\s+(\S+)', t).group(1)); p99 = ms(re.search(r'\s99%\s+(\S+)', t).group(1))
errors = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {errors.group(1) if errors else 0}")
PY
}

rounds=${ROUNDS:-3}
echo "wrk -t$threads -c$conns -d${duration}s --latency, $(nproc) cores, $server_threads server thread(s) each, $(date -u +%F); $rounds rounds alternating Lede, nginx and the bare loop, medians"
median() { python3 -c "import statistics,sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.3f}')" "$@"; }
printf '%-10s %-6s %12s %10s %10s %8s   %s\n' route server req/s p50_ms p99_ms non2xx "req/s per round"
for route in plaintext json; do
  lp=$(eval echo "\$loop_port_$route")
  # Warm all three, then measure in alternating rounds so drifts in machine load hit every server alike.
  [ -n "$lede_b_pid" ] && wrk -t1 -c16 -d2s "http://127.0.0.1:$lede_b_port/_bench/$route" >/dev/null
  for p in $lede_port $nginx_port $lp; do wrk -t1 -c16 -d2s "http://127.0.0.1:$p/_bench/$route" >/dev/null; done
  for server in $servers; do eval "${server}_r=(); ${server}_5=(); ${server}_9=(); ${server}_e=0"; done
  for i in $(seq 1 "$rounds"); do
    for server in $servers; do
      case $server in lede) p=$lede_port ;; lede_b) p=$lede_b_port ;; nginx) p=$nginx_port ;; loop) p=$lp ;; esac
      read -r a b c d < <(run "$server-$route-$i" "http://127.0.0.1:$p/_bench/$route")
      eval "${server}_r+=($a); ${server}_5+=($b); ${server}_9+=($c); ${server}_e=\$((${server}_e + d))"
    done
  done
  for server in $servers; do
    eval "rr=(\"\${${server}_r[@]}\"); r5=(\"\${${server}_5[@]}\"); r9=(\"\${${server}_9[@]}\"); re=\$${server}_e"
    eval "${server}_rps=$(median "${rr[@]}"); ${server}_p99=$(median "${r9[@]}")"
    printf '%-10s %-6s %12.0f %10s %10s %8s   %s\n' "$route" "$server" "$(median "${rr[@]}")" "$(median "${r5[@]}")" "$(median "${r9[@]}")" "$re" "${rr[*]}"
  done
  python3 -c "print(f'{\"$route\":<10} ratio  req/s lede/nginx = {$lede_rps/$nginx_rps:.2f}x   lede/loop = {$lede_rps/$loop_rps:.2f}x   p99 lede/nginx = {$lede_p99/$nginx_p99:.2f}x   p99 lede/loop = {$lede_p99/$loop_p99:.2f}x')"
  if [ -n "$lede_b_pid" ]; then
    python3 -c "print(f'{\"$route\":<10} ratio  req/s lede-b/loop = {$lede_b_rps/$loop_rps:.2f}x   lede/lede-b = {$lede_rps/$lede_b_rps:.2f}x   p99 lede-b/nginx = {$lede_b_p99/$nginx_p99:.2f}x')"
  fi
done

# ONLY=core stops here (the two routes against nginx and the loop).
[ "${ONLY:-}" = core ] && exit 0

echo
echo "Warm /feed (embedded default, no personal parameters) beside plaintext, $rounds alternating rounds, medians:"
curl -sf "http://127.0.0.1:$lede_port/feed" -o /dev/null
wrk -t1 -c16 -d2s "http://127.0.0.1:$lede_port/feed" >/dev/null
f_r=(); f_9=(); g_r=(); g_9=(); p_r=(); p_9=()
for i in $(seq 1 "$rounds"); do
  read -r a _ c _ < <(run "lede-feed-$i" "http://127.0.0.1:$lede_port/feed"); f_r+=("$a"); f_9+=("$c")
  read -r a _ c _ < <(run "lede-feed-gzip-$i" "http://127.0.0.1:$lede_port/feed" -H 'Accept-Encoding: gzip'); g_r+=("$a"); g_9+=("$c")
  read -r a _ c _ < <(run "lede-plaintext-again-$i" "http://127.0.0.1:$lede_port/_bench/plaintext"); p_r+=("$a"); p_9+=("$c")
done
f_rps=$(median "${f_r[@]}"); g_rps=$(median "${g_r[@]}"); p_rps=$(median "${p_r[@]}")
printf '%-22s %12s %10s   %s\n' route req/s p99_ms "req/s per round"
printf '%-22s %12.0f %10s   %s\n' "/feed identity" "$f_rps" "$(median "${f_9[@]}")" "${f_r[*]}"
printf '%-22s %12.0f %10s   %s\n' "/feed gzip" "$g_rps" "$(median "${g_9[@]}")" "${g_r[*]}"
printf '%-22s %12.0f %10s   %s\n' "plaintext (same run)" "$p_rps" "$(median "${p_9[@]}")" "${p_r[*]}"
python3 -c "print(f'warm /feed / plaintext = {$f_rps/$p_rps:.2f} (identity), {$g_rps/$p_rps:.2f} (gzip); target >= 0.85')"

echo
echo "Cold /feed with an upstream that adds 100 ms to every call (each date is a new shared part):"
slow_port=18193; cold_port=18194   # clear of lede-b (18183) and the loops (18185…)
python3 Benchmarks/slow_upstream.py $slow_port --delay 0.1 &
slow_pid=$!
"$bin" --host 127.0.0.1 --port $cold_port --access-log off --log-level warning --upstream "http://127.0.0.1:$slow_port/{lang}" &
cold_pid=$!
trap 'cleanup; kill $slow_pid $cold_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $cold_port && break; sleep 0.1; done
sleep 0.3
times=()
for d in $(seq 1 20); do
  day=$(printf '2026-10-%02d' "$d")
  times+=("$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$cold_port/feed?date=$day")")
done
python3 -c "
import statistics, sys
t = sorted(float(x) * 1000 for x in sys.argv[1:])
print(f'  20 cold requests: p50 {statistics.median(t):.1f} ms, max {t[-1]:.1f} ms (target < 150 ms)')
" "${times[@]}"
kill $slow_pid $cold_pid 2>/dev/null || true

echo
echo "Resident memory with 10,000 idle keep-alive connections:"
rss() { awk '/VmRSS/ {print $2}' /proc/"$lede_pid"/status; }
before=$(rss)
python3 - "$lede_port" "$lede_pid" "$before" <<'PY'
import socket, sys, time
port, pid, before = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
socks = []
req = b"GET /healthz HTTP/1.1\r\nHost: b\r\n\r\n"
for i in range(10000):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    socks.append(s)
ok = 0
for s in socks:
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    ok += data.startswith(b"HTTP/1.1 200")
time.sleep(1)
rss = int([l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1])
print(f"  {ok} connections answered and held open; RSS {before/1024:.1f} MB before, {rss/1024:.1f} MB with 10,000 open")
for s in socks: s.close()
PY
