#!/usr/bin/env bash
# Open server-sent-event streams: Lede against nginx + nchan (Debian's libnginx-mod-nchan) in the same run,
# alternating, then the same streams through deploy/'s nginx load balancer.
#   Benchmarks/streams.sh [streams] [rounds] [idle-seconds]      (defaults 10000, 3, 20)
# Needs: nginx-light, libnginx-mod-nchan, cc (apt-get install -y nginx-light libnginx-mod-nchan gcc). Not part of CI.
# Env: ALTERNATIONS (2): how many times each server is measured; HEARTBEAT (5): seconds between heartbeats while idle
# (both servers); PROXIED (1000): streams opened through deploy/'s nginx.
# For each server: resident memory with no stream and with every stream open, CPU while the streams sit idle with
# heartbeats, then `rounds` broadcasts of one event to every stream — the time from the publish until each stream has
# it (p50, p99, max). The client is one epoll loop in C (Benchmarks/sse_bench.c), the same for both servers.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
streams=${1:-10000}
rounds=${2:-3}
idle=${3:-20}
alternations=${ALTERNATIONS:-2}
heartbeat=${HEARTBEAT:-5}
proxied=${PROXIED:-1000}
out=Benchmarks/out
mkdir -p "$out"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# The client and each server are processes of their own: each needs a descriptor per stream.
[ "$(ulimit -n)" -gt $((streams + 100)) ] || { echo "ulimit -n $(ulimit -n) is too low for $streams streams" >&2; exit 1; }
[ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || { echo "missing nchan (apt-get install -y nginx-light libnginx-mod-nchan)" >&2; exit 1; }

swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
cc -O2 -o "$out/sse_bench" Benchmarks/sse_bench.c
port=18191
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; [ -f "$work/lb.pid" ] && kill "$(cat "$work/lb.pid")" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Resident kB and CPU ticks (utime + stime) of a process and its children (nginx's workers).
tree() { echo "$1" $(pgrep -P "$1" || true); }
rss_kb() { local t=0; for p in $(tree "$1"); do t=$((t + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done; echo "$t"; }
pss_kb() { local t=0; for p in $(tree "$1"); do t=$((t + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0))); done; echo "$t"; }
cpu_ticks() { local t=0; for p in $(tree "$1"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
hz=$(getconf CLK_TCK)

start_lede() {
  "$bin" --host 127.0.0.1 --port "$port" --access-log off --log-level warning --bench-routes on \
    --max-connections $((streams * 2 + 100)) --max-streams $((streams + 100)) --stream-heartbeat "$heartbeat" &
  server_pid=$!; pids+=("$server_pid")
  for _ in $(seq 1 100); do "$bin" healthcheck --port "$port" && return; sleep 0.1; done
  echo "lede did not start" >&2; exit 1
}

start_nchan() {
  cat > "$work/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_nchan_module.so;
worker_processes $(nproc);
worker_rlimit_nofile $(ulimit -n);
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections $((streams * 2 + 100)); }
http {
  access_log off;
  client_body_temp_path $work/tmp;
  server {
    listen 127.0.0.1:$port reuseport;
    location = /_bench/events { nchan_subscriber eventsource; nchan_channel_id bench; nchan_eventsource_ping_interval $heartbeat; }
    location = /_bench/broadcast { nchan_publisher; nchan_channel_id bench; }
  }
}
CONF
  nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
  server_pid=$!; pids+=("$server_pid")
  for _ in $(seq 1 100); do [ -f "$work/nginx.pid" ] && curl -s -o /dev/null "http://127.0.0.1:$port/_bench/broadcast" && return; sleep 0.1; done
  echo "nginx did not start" >&2; cat "$work/error.log" >&2; exit 1
}

measure() {   # name
  local name=$1 log="$out/streams-$1.txt"
  sleep 0.5
  local base; base=$(rss_kb "$server_pid"); local base_pss; base_pss=$(pss_kb "$server_pid")
  "$out/sse_bench" "$port" /_bench/events /_bench/broadcast "$streams" "$rounds" "$idle" > "$log" 2>&1 &
  local client=$!
  for _ in $(seq 1 1200); do grep -q '^ready' "$log" && break; kill -0 "$client" 2>/dev/null || break; sleep 0.1; done
  grep -q '^ready' "$log" || { echo "$name: streams did not open:" >&2; cat "$log" >&2; exit 1; }
  sleep 1
  local rss; rss=$(rss_kb "$server_pid"); local pss; pss=$(pss_kb "$server_pid")
  local t0; t0=$(cpu_ticks "$server_pid")
  sleep $((idle - 2))
  local t1; t1=$(cpu_ticks "$server_pid")
  wait "$client" || { echo "$name: client failed:" >&2; cat "$log" >&2; exit 1; }
  local cpu; cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s=$((idle - 2)) 'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
  printf '%-6s rss no streams %6.1f MB, %d streams %6.1f MB (%.1f KB/stream); pss %6.1f -> %6.1f MB (%.1f KB/stream); idle cpu %s%% of a core (heartbeat %ss)\n' \
    "$name" "$(echo "$base/1024" | bc -l)" "$streams" "$(echo "$rss/1024" | bc -l)" "$(echo "($rss-$base)/$streams" | bc -l)" \
    "$(echo "$base_pss/1024" | bc -l)" "$(echo "$pss/1024" | bc -l)" "$(echo "($pss-$base_pss)/$streams" | bc -l)" "$cpu" "$heartbeat"
  grep '^round' "$log" | sed "s/^/$name   /"
}

for a in $(seq 1 "$alternations"); do
  for server in lede nchan; do
    if [ "$server" = lede ]; then start_lede; else rm -f "$work/nginx.pid"; mkdir -p "$work/tmp"; start_nchan; fi
    measure "$server"
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
    sleep 1
  done
done

# Through deploy/'s load balancer: the same streams must arrive unbuffered (a buffered proxy would hold them).
start_lede
lb_port=18192
mkdir -p "$work/cache"
chmod -R a+rwx "$work"   # nginx's workers run as another user when it starts as root
python3 deploy/render-nginx.py "127.0.0.1:$lb_port" "$work/cache" "$work/lb.pid" "127.0.0.1:$port" > "$work/lb.conf"
nginx -c "$work/lb.conf" -p "$work" -g 'daemon off;' &
pids+=("$!")
for _ in $(seq 1 50); do curl -sf -o /dev/null "http://127.0.0.1:$lb_port/healthz" && break; sleep 0.1; done
"$out/sse_bench" "$lb_port" /_bench/events /_bench/broadcast "$proxied" "$rounds" 3 > "$out/streams-proxied.txt" 2>&1 \
  || { cat "$out/streams-proxied.txt" >&2; exit 1; }
grep '^round' "$out/streams-proxied.txt" | sed "s/^/via deploy nginx ($proxied streams)   /"
