#!/usr/bin/env bash
# Fan-out: one user-bound upstream call per request. Lede's GET /notifications/badge against nginx as a plain
# reverse proxy (keep-alive upstream) making the same call, both in front of the same upstream: a second nginx
# answering as Echo does on loopback, keep-alive. Same wrk settings, alternating rounds, medians.
# The call is the badge's: `meta=notifications&notprop=count`, which Echo answers with the counts alone (~75 bytes).
# UPSTREAM_ANSWER=list makes the upstream send a ~570-byte answer with one notification whatever is asked, as the
# badge's earlier call (`notprop=list|count&notlimit=1`) got: for comparisons with builds and passes before a04c2db.
#   Benchmarks/fanout.sh [duration-seconds]   (default 5)
# Env: ROUNDS (3), WRK_CONNECTIONS (32), TLS=1 (the upstream speaks TLS with a certificate from a CA made here;
# Lede gets it through --upstream-ca, nginx through proxy_ssl_trusted_certificate). Needs wrk, nginx, openssl,
# python3. Not part of CI.
# Server CPU per request: utime+stime of the server's processes (/proc) over the run, divided by the requests; the
# kernel's share of it (stime/(utime+stime)): the syscalls, the socket copies and the wake-ups, against the user-space work.
# LEDE_FLAGS (default "--upstream-concurrency 1024 --upstream-connections 64"): nginx's proxy bounds nothing (its
# `keepalive 64` caps idle connections kept, not connections made), so Lede's per-origin bound on calls in flight (16:
# Wikimedia's etiquette) and on connections per origin per loop (8) are lifted for a like-for-like run. With only the
# first lifted, wrk's 16 connections per loop queued for 8 upstream connections (28% of calls waited a round trip).
# LEDE_FLAGS="" measures the bounds (BENCHMARKS.md has both).
# Where a request waits: each run also reads /proc/<pid>/task/*/schedstat (time on a CPU, time runnable but waiting for
# one) for the server's threads, the upstream's worker and wrk, over the same window, per request ("run/wait µs").
# On these 2 cores four busy threads share the CPUs, and time spent runnable-but-waiting is most of a tail.
# SESSIONS: where the two servers sit among the kernel's scheduling groups. With autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled) each session is a group, and the CPU is shared between groups first.
#   mixed  (default) Lede in the script's session, with wrk; the proxy nginx daemonizes into a session of its own.
#   own    Lede too in a session of its own (setsid), as the proxy is, and as a container or a service manager starts it.
#   shared the proxy nginx in the foreground (daemon off), in the script's session with wrk, as Lede is.
# OWN_SESSION=1 is SESSIONS=own. The upstream nginx daemonizes in every arrangement (both servers call it).
# WORKERS (2): Lede's loops (--loops) and the proxy's worker processes alike; WORKERS=1 compares one of each.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
duration=${1:-5}
rounds=${ROUNDS:-3}
nworkers=${WORKERS:-2}
conns=${WRK_CONNECTIONS:-32}
tls=${TLS:-0}
out=Benchmarks/out
mkdir -p "$out"
for tool in wrk nginx python3 openssl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk nginx-light openssl)" >&2; exit 1; }
done

# LEDE_BIN: another build of lede to measure (e.g. an earlier commit's, for a before/after in one sitting).
# LEDE_BIN_B: a second build run beside the first in the same alternating rounds (before/after without the drift of
# two sittings): its row is "lede-b", and the ratio lede/lede-b is printed.
if [ -n "${LEDE_BIN:-}" ]; then bin=$LEDE_BIN; else
  swift build -c release --product lede >/dev/null
  bin="$(swift build -c release --show-bin-path)/lede"
fi
up_port=18281; proxy_port=18282; lede_port=18283; b_port=18284
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for f in "$dir"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
}
trap cleanup EXIT

# The upstream's answers: to any call but the badge's (and to every call with UPSTREAM_ANSWER=list), one unread Echo
# notification as meta=notifications&notprop=list|count sends it (~570 bytes); to the badge's, the counts alone.
python3 - > "$dir/echo.json" <<'PY'
import json
n = {"wiki": "enwiki", "id": 31, "type": "edit-user-talk", "category": "edit-user-talk", "section": "alert",
     "timestamp": {"utciso8601": "2026-11-20T09:12:44Z", "utcunix": 1763629964, "unix": "1763629964", "date": "20 November"},
     "title": {"full": "User talk:Bob", "namespace": "User_talk", "namespace-key": 3, "text": "Bob"},
     "agent": {"id": 7, "name": "Alice"}, "read": None, "targetpages": [], "revid": 1234567,
     "*": {"header": "<strong>Alice</strong> left a message on your talk page.", "compactHeader": "Alice left a message.",
           "links": {"primary": {"url": "https://en.wikipedia.org/wiki/User_talk:Bob#Hello", "label": "View message"}}}}
print(json.dumps({"batchcomplete": True, "query": {"notifications": {"list": [n], "count": "1", "rawcount": 1, "continue": None}}}, separators=(",", ":")))
PY
printf '{"batchcomplete":true,"query":{"notifications":{"rawcount":1,"count":"1"}}}' > "$dir/count.json"
answer=${UPSTREAM_ANSWER:-asked}
case $answer in
  asked) answer_map="count count.json; default echo.json;" ;;
  list) answer_map="default echo.json;" ;;
  *) echo "UPSTREAM_ANSWER is asked or list" >&2; exit 2 ;;
esac
echo "upstream answer ($answer): the badge's call $( [ "$answer" = list ] && wc -c < "$dir/echo.json" || wc -c < "$dir/count.json") bytes"

scheme=http; lede_tls=(); proxy_tls=""; up_listen="listen 127.0.0.1:$up_port;"
if [ "$tls" = 1 ]; then
  (cd "$dir" && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=Bench CA" 2>/dev/null \
    && openssl req -newkey rsa:2048 -nodes -keyout up.key -out up.csr -subj "/CN=localhost" 2>/dev/null \
    && printf 'subjectAltName=DNS:localhost\n' > up.ext \
    && openssl x509 -req -in up.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out up.pem -days 2 -extfile up.ext 2>/dev/null)
  scheme=https; lede_tls=(--upstream-ca "$dir/ca.pem")
  up_listen="listen 127.0.0.1:$up_port ssl; ssl_certificate $dir/up.pem; ssl_certificate_key $dir/up.key; ssl_session_cache shared:S:1m;"
  proxy_tls="proxy_ssl_trusted_certificate $dir/ca.pem; proxy_ssl_verify on; proxy_ssl_name localhost; proxy_ssl_server_name on; proxy_ssl_session_reuse on;"
fi

common="pid PIDFILE; error_log $dir/ERR warn; events { worker_connections 16384; }"
cat > "$dir/upstream.conf" <<CONF
worker_processes 1;
${common//PIDFILE/$dir/upstream.pid}
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 60s; tcp_nodelay on;
  map \$arg_notprop \$answer { $answer_map }
  server {
    $up_listen
    location /en/w/api.php { default_type application/json; root $dir; try_files /\$answer =404; }
  }
}
CONF
sed -i "s|ERR|upstream.err|" "$dir/upstream.conf"
cat > "$dir/proxy.conf" <<CONF
worker_processes $nworkers;
${common//PIDFILE/$dir/proxy.pid}
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 60s; tcp_nodelay on;
  add_header X-Content-Type-Options nosniff;   # as Lede's every answer
  upstream echo { server 127.0.0.1:$up_port; keepalive 64; keepalive_requests 10000000; }
  server {
    listen 127.0.0.1:$proxy_port reuseport;
    location = /notifications/badge {
      proxy_pass $scheme://echo/en/w/api.php?action=query&format=json&formatversion=2&meta=notifications&notprop=count;
      proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host localhost;
      $proxy_tls
    }
  }
}
CONF
sed -i "s|ERR|proxy.err|" "$dir/proxy.conf"
chmod -R a+rX "$dir"
nginx -c "$dir/upstream.conf" -p "$dir"
sessions=${SESSIONS:-mixed}; [ "${OWN_SESSION:-0}" = 1 ] && sessions=own
own_session=""
case $sessions in
  mixed) nginx -c "$dir/proxy.conf" -p "$dir" ;;
  own) nginx -c "$dir/proxy.conf" -p "$dir"; own_session=setsid ;;
  shared) nginx -c "$dir/proxy.conf" -p "$dir" -g 'daemon off;' & pids+=("$!")
    for _ in $(seq 1 50); do [ -s "$dir/proxy.pid" ] && break; sleep 0.1; done ;;
  *) echo "SESSIONS is mixed, own or shared" >&2; exit 2 ;;
esac
lede_flags=${LEDE_FLAGS---upstream-concurrency 1024 --upstream-connections 64}
start_lede() { # binary port -> pid in $started
  ${own_session} "$1" --host 127.0.0.1 --port "$2" --loops "$nworkers" --access-log off --log-level warning \
    --upstream "$scheme://localhost:$up_port/{lang}" "${lede_tls[@]}" $lede_flags &
  started=$!; pids+=("$started")
  for _ in $(seq 1 50); do "$bin" healthcheck --port "$2" && break; sleep 0.1; done
}
start_lede "$bin" $lede_port; lede_pid=$started
if [ -n "${LEDE_BIN_B:-}" ]; then start_lede "$LEDE_BIN_B" $b_port; b_pid=$started; fi
sleep 0.3
auth=(-H 'Authorization: Bearer bench-user')
curl -sf "${auth[@]}" "http://127.0.0.1:$lede_port/notifications/badge"; echo "  <- Lede"
curl -sf "${auth[@]}" "http://127.0.0.1:$proxy_port/notifications/badge" | head -c 120; echo "…  <- nginx proxy"

# CPU ticks (utime+stime) of a set of processes; KERNEL=1: the kernel's part alone (stime).
ticks() { local t=0 f='$14 + $15'; [ -n "${KERNEL:-}" ] && f='$15'
  for p in "$@"; do t=$((t + $(awk "{print $f}" "/proc/$p/stat"))); done; echo "$t"; }
workers() { pgrep -P "$(cat "$dir/$1.pid")" | tr '\n' ' '; }   # an nginx (proxy or upstream) by its pid file: its workers
hz=$(getconf CLK_TCK)
# Nanoseconds on a CPU and runnable-but-waiting, summed over the threads of a set of processes (/proc schedstat).
sched() { local r=0 w=0 a b; for p in "$@"; do for f in /proc/"$p"/task/*/schedstat; do
  read -r a b _ < "$f" 2>/dev/null || continue; r=$((r + a)); w=$((w + b)); done; done; echo "$r $w"; }
run() { # name url pids… -> "rps p50_ms p99_ms non2xx cpu_us_per_request server_run/wait upstream_run/wait wrk_run/wait kernel_share"
  local name=$1 url=$2; shift 2
  local before kbefore; before=$(ticks "$@"); kbefore=$(KERNEL=1 ticks "$@")
  wrk -t1 -c"$conns" -d"${duration}s" --latency "${auth[@]}" "$url" > "$out/$name.txt" &
  local wrk_pid=$! ups; ups=$(workers upstream)
  # The scheduler's counters over the middle of the run (wrk's threads are gone once it ends): from 0.5 s in to 0.5 s
  # before its end, scaled to the run's requests by the window's share of the duration.
  sleep 0.5
  # shellcheck disable=SC2086
  local s0 u0 w0; s0=$(sched "$@"); u0=$(sched $ups); w0=$(sched "$wrk_pid")
  sleep "$(python3 -c "print(max(0.1, $duration - 1))")"
  # shellcheck disable=SC2086
  local s1 u1 w1; s1=$(sched "$@"); u1=$(sched $ups); w1=$(sched "$wrk_pid")
  wait "$wrk_pid"
  local after kafter; after=$(ticks "$@"); kafter=$(KERNEL=1 ticks "$@")
  python3 - "$out/$name.txt" $((after - before)) "$hz" "$duration" "$s0" "$s1" "$u0" "$u1" "$w0" "$w1" $((kafter - kbefore)) <<'PY'
import re, sys
t = open(sys.argv[1]).read(); ticks = int(sys.argv[2]); hz = int(sys.argv[3]); duration = float(sys.argv[4])
def ms(v):
    n, u = float(re.match(r'([\d.]+)', v).group(1)), re.sub(r'[\d.]', '', v)
    return n * {'us': 0.001, 'ms': 1, 's': 1000}[u]
rps = float(re.search(r'Requests/sec:\s+([\d.]+)', t).group(1))
total = int(re.search(r'(\d+) requests in', t).group(1))
p50 = ms(re.search(r'\s50%\s+(\S+)', t).group(1)); p99 = ms(re.search(r'\s99%\s+(\S+)', t).group(1))
errors = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
window = max(0.1, duration - 1) / duration * max(total, 1)
def per(a, b):   # "run/wait" in µs a request
    (r0, w0), (r1, w1) = map(int, a.split()), map(int, b.split())
    return f"{(r1 - r0) / window / 1000:.1f}/{(w1 - w0) / window / 1000:.1f}"
a = sys.argv[5:11]; kernel = int(sys.argv[11])
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {errors.group(1) if errors else 0} {ticks / hz / max(total, 1) * 1e6:.1f} "
      f"{per(a[0], a[1])} {per(a[2], a[3])} {per(a[4], a[5])} {kernel / max(ticks, 1) * 100:.0f}")
PY
}
median() { python3 -c "import statistics,sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.3f}')" "$@"; }

echo "fan-out ($scheme upstream): wrk -t1 -c$conns -d${duration}s, $(nproc) cores, $(date -u +%F); $rounds rounds alternating, medians; sessions: $sessions; workers: $nworkers; Lede flags: $lede_flags"
wrk -t1 -c"$conns" -d2s "${auth[@]}" "http://127.0.0.1:$lede_port/notifications/badge" >/dev/null
wrk -t1 -c"$conns" -d2s "${auth[@]}" "http://127.0.0.1:$proxy_port/notifications/badge" >/dev/null
[ -n "${LEDE_BIN_B:-}" ] && wrk -t1 -c"$conns" -d2s "${auth[@]}" "http://127.0.0.1:$b_port/notifications/badge" >/dev/null
l_r=(); l_5=(); l_9=(); l_c=(); n_r=(); n_5=(); n_9=(); n_c=(); l_e=0; n_e=0; b_r=(); b_5=(); b_9=(); b_c=(); b_e=0
l_s=(); n_s=(); b_s=()   # "server upstream wrk" run/wait a round
l_k=(); n_k=(); b_k=()   # the kernel's share of the server's CPU time (stime of utime+stime, %) a round
for i in $(seq 1 "$rounds"); do
  read -r a b c d e f g h k < <(run "fanout-lede-$i" "http://127.0.0.1:$lede_port/notifications/badge" "$lede_pid")
  l_r+=("$a"); l_5+=("$b"); l_9+=("$c"); l_e=$((l_e + d)); l_c+=("$e"); l_s+=("$f,$g,$h"); l_k+=("$k")
  # shellcheck disable=SC2046
  read -r a b c d e f g h k < <(run "fanout-nginx-$i" "http://127.0.0.1:$proxy_port/notifications/badge" $(workers proxy))
  n_r+=("$a"); n_5+=("$b"); n_9+=("$c"); n_e=$((n_e + d)); n_c+=("$e"); n_s+=("$f,$g,$h"); n_k+=("$k")
  if [ -n "${LEDE_BIN_B:-}" ]; then
    read -r a b c d e f g h k < <(run "fanout-lede-b-$i" "http://127.0.0.1:$b_port/notifications/badge" "$b_pid")
    b_r+=("$a"); b_5+=("$b"); b_9+=("$c"); b_e=$((b_e + d)); b_c+=("$e"); b_s+=("$f,$g,$h"); b_k+=("$k")
  fi
done
# Medians of each thread set's run and wait (µs a request), from "srun/swait,urun/uwait,wrun/wwait" per round.
sched_medians() { python3 -c '
import statistics, sys
rows = [[tuple(map(float, part.split("/"))) for part in r.split(",")] for r in sys.argv[1:]]
print("   ".join(f"{n} {statistics.median(x[k][0] for x in rows):.1f}/{statistics.median(x[k][1] for x in rows):.1f}"
                  for k, n in enumerate(["server", "upstream", "wrk"])))' "$@"; }
printf '%-12s %10s %9s %9s %7s %12s   %s\n' server req/s p50_ms p99_ms non2xx cpu_us/req "req/s per round"
printf '%-12s %10.0f %9s %9s %7s %12s   %s\n' lede "$(median "${l_r[@]}")" "$(median "${l_5[@]}")" "$(median "${l_9[@]}")" "$l_e" "$(median "${l_c[@]}")" "${l_r[*]}"
printf '%-12s %10.0f %9s %9s %7s %12s   %s\n' nginx-proxy "$(median "${n_r[@]}")" "$(median "${n_5[@]}")" "$(median "${n_9[@]}")" "$n_e" "$(median "${n_c[@]}")" "${n_r[*]}"
if [ -n "${LEDE_BIN_B:-}" ]; then
  printf '%-12s %10.0f %9s %9s %7s %12s   %s\n' lede-b "$(median "${b_r[@]}")" "$(median "${b_5[@]}")" "$(median "${b_9[@]}")" "$b_e" "$(median "${b_c[@]}")" "${b_r[*]}"
fi
echo "p99 ms per round: lede ${l_9[*]} | nginx-proxy ${n_9[*]}${LEDE_BIN_B:+ | lede-b ${b_9[*]}}"
echo "on a CPU / runnable but waiting, µs a request (medians):"
echo "  behind lede:        $(sched_medians "${l_s[@]}")"
echo "  behind nginx-proxy: $(sched_medians "${n_s[@]}")"
[ -n "${LEDE_BIN_B:-}" ] && echo "  behind lede-b:      $(sched_medians "${b_s[@]}")"
pct() { printf '%.0f%%' "$(median "$@")"; }
echo "the kernel's share of the server's CPU time (stime/(utime+stime), median of rounds): lede $(pct "${l_k[@]}"), nginx-proxy $(pct "${n_k[@]}")${LEDE_BIN_B:+, lede-b $(pct "${b_k[@]}")}"
# Each round's p99 against the proxy's in the same round, then their median: drift between rounds cancels.
paired() { python3 -c '
import statistics, sys
n = (len(sys.argv) - 1) // 2; a, b = sys.argv[1:1 + n], sys.argv[1 + n:]
r = sorted(float(x) / float(y) for x, y in zip(a, b))
print(f"{statistics.median(r):.2f}x (rounds {r[0]:.2f}-{r[-1]:.2f}, {sum(x <= 1 for x in r)} of {n} at or below 1)")' "$@"; }
if [ -n "${LEDE_BIN_B:-}" ]; then
  python3 -c "print(f'ratio req/s lede-b/nginx-proxy = {$(median "${b_r[@]}")/$(median "${n_r[@]}"):.2f}x   lede/lede-b = {$(median "${l_r[@]}")/$(median "${b_r[@]}"):.2f}x   p99 lede-b/nginx-proxy = {$(median "${b_9[@]}")/$(median "${n_9[@]}"):.2f}x')"
  echo "p99 lede-b/nginx-proxy round by round: $(paired "${b_9[@]}" "${n_9[@]}")"
fi
python3 -c "print(f'ratio req/s lede/nginx-proxy = {$(median "${l_r[@]}")/$(median "${n_r[@]}"):.2f}x (target >= 0.8x)   p99 lede/nginx-proxy = {$(median "${l_9[@]}")/$(median "${n_9[@]}"):.2f}x (target <= 1)')"
echo "p99 lede/nginx-proxy round by round: $(paired "${l_9[@]}" "${n_9[@]}")"
echo "Lede's upstream pool after the run:"
curl -s "http://127.0.0.1:$lede_port/metrics" | grep -E '^lede_upstream_(connections|requests|tls|pool|retries)' || true

# The list against the badge on Lede (the same one Echo call each; the list decodes and writes every notification).
b_r=(); s_r=()
for i in $(seq 1 "$rounds"); do
  read -r a _ < <(run "fanout-badge-$i" "http://127.0.0.1:$lede_port/notifications/badge" "$lede_pid"); b_r+=("$a")
  read -r a _ < <(run "fanout-list-$i" "http://127.0.0.1:$lede_port/notifications?filter=unread&limit=20" "$lede_pid"); s_r+=("$a")
done
python3 -c "print(f'/notifications list {$(median "${s_r[@]}"):.0f} req/s against the badge {$(median "${b_r[@]}"):.0f}: {$(median "${s_r[@]}")/$(median "${b_r[@]}"):.2f}x (target >= 0.5x)')"
