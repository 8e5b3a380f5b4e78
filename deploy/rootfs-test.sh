#!/usr/bin/env bash
# The container without an engine: the binary built the way the Dockerfile's build stage builds it
# (--static-swift-stdlib), run inside a minimal root filesystem made like the runtime stage
# (debootstrap --variant=minbase of the same Debian release + exactly the packages that stage installs), as uid
# 10001 under chroot. A runtime library the image lacks shows up here, not in production.
#   deploy/rootfs-test.sh path/to/static/lede
# Needs root, debootstrap, openssl and python3. The root filesystem is cached in $LEDE_ROOTFS_CACHE
# (default /var/cache/lede-rootfs), keyed by release and package list — never in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: deploy/rootfs-test.sh path/to/lede}

# What the Dockerfile's runtime stage is made of, read from the Dockerfile itself.
release=$(sed -nE 's/^FROM debian:([a-z]+)-slim.*/\1/p' Dockerfile)
packages=$(awk '/^FROM debian:/{rt=1} rt && /apt-get install/{for(i=1;i<=NF;i++) if ($i !~ /^-/ && $i != "apt-get" && $i != "install" && $i != "&&" && $i != "\\") print $i}' Dockerfile | sort | tr '\n' ',' | sed 's/,$//')
[ -n "$release" ] && [ -n "$packages" ] || { echo "cannot read the runtime stage from the Dockerfile" >&2; exit 1; }
cache=${LEDE_ROOTFS_CACHE:-/var/cache/lede-rootfs}
base="$cache/$release-$(echo "$packages" | tr ',' '-')"
if [ ! -x "$base/bin/sh" ]; then
  echo "debootstrap --variant=minbase --include=$packages $release → $base"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase --include="$packages" "$release" "$base.tmp" http://deb.debian.org/debian > /tmp/lede-debootstrap.log 2>&1 \
    || { tail -20 /tmp/lede-debootstrap.log >&2; exit 1; }
  mv "$base.tmp" "$base"
fi

work=$(mktemp -d /tmp/lede-rootfs-XXXXXX)
root="$work/root"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cp -a "$base" "$root"
install -m 0755 "$bin" "$root/usr/local/bin/lede"

# A loopback "Wikimedia" over TLS with a CA of the test's own (the image trusts it through --upstream-ca).
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Lede test CA" -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$work/leaf.key" -out "$work/leaf.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$work/ext"
openssl x509 -req -in "$work/leaf.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 -extfile "$work/ext" -out "$work/leaf.pem" 2>/dev/null
mkdir -p "$root/etc/lede" && cp "$work/ca.pem" "$root/etc/lede/ca.pem"
tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$tls_port" "$work/leaf.pem" "$work/leaf.key" <<'PY' &
import http.server, json, ssl, sys
port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        title = self.path.rsplit("/", 1)[-1]
        body = json.dumps({"type": "standard", "title": title.replace("_", " "), "displaytitle": title, "extract": "Served over TLS to the chroot.",
                           "extract_html": "<p>Served over TLS to the chroot.</p>", "lang": "en", "dir": "ltr",
                           "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/" + title}}}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
pids+=($!)

mount -t proc proc "$root/proc"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
chroot --userspec=10001:10001 "$root" /usr/local/bin/lede --host 127.0.0.1 --port "$port" --access-log off --log-level warning \
  --upstream "https://127.0.0.1:$tls_port/{lang}" --upstream-ca /etc/lede/ca.pem > "$work/lede.log" 2>&1 &
lede=$!
pids+=($lede)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.05; done

fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
check "/healthz 200 from the chroot (uid 10001)" '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/healthz")" = 200 ]'
check "lede healthcheck exits 0 inside the image" 'chroot --userspec=10001:10001 "$root" /usr/local/bin/lede healthcheck --port "$port"'
check "a live upstream call over TLS, verified against the image's CA file" \
  'curl -s "http://127.0.0.1:$port/summary/Albert_Einstein" | grep -q "Served over TLS to the chroot"'
check "a share card drawn inside the image (FreeType, HarfBuzz, the Noto fonts)" \
  '[ "$(curl -s -o /dev/null -w "%{http_code} %{content_type}" "http://127.0.0.1:$port/share/Albert_Einstein.png")" = "200 image/png" ]'
check "runs as uid 10001" '[ "$(awk "/^Uid:/{print \$2}" /proc/$lede/status)" = 10001 ]'
kill -TERM "$lede"
code=0; wait "$lede" || code=$?
check "SIGTERM → exit 0" '[ "$code" = 0 ]'
if [ "$fail" -ne 0 ]; then echo "--- lede's log"; cat "$work/lede.log"; exit 1; fi
