#!/usr/bin/env bash
# The editor (issue 48): what opening and saving megabytes of wikitext costs the event loops. /healthz latency alone,
# then while two clients open a 2 MB section and two save 1.9 MB (a 2.6 MB JSON body) over and over, in the same run.
# The editor's answer is decoded, written and compressed on the workers; the save's body parsed and form-encoded there.
#   Benchmarks/editor.sh
# Needs python3. Not part of CI.
set -euo pipefail
# Every request of a benchmark comes from one address: no per-client limit unless the caller sets one.
export LEDE_CLIENT_RATE="${LEDE_CLIENT_RATE:-0}"
cd "$(dirname "$0")/.."
swift build -c release --product lede >/dev/null
bin="$(swift build -c release --show-bin-path)/lede"
up=18392; port=18393
python3 Benchmarks/editor_upstream.py $up &
upid=$!
"$bin" --host 127.0.0.1 --port $port --access-log off --log-level warning --upstream "http://127.0.0.1:$up/{lang}" &
pid=$!
trap 'kill $pid $upid 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do "$bin" healthcheck --port $port && break; sleep 0.1; done
python3 Benchmarks/editor_probe.py $port
