#!/usr/bin/env bash
# Fuzz the HTTP request parser with libFuzzer + AddressSanitizer.
#   Fuzz/run.sh [seconds]      (default 600)
# The parser sources are pure Swift with no system dependencies, so they compile on their own here.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
mkdir -p Fuzz/out Fuzz/corpus-work
swiftc -sanitize=fuzzer,address -parse-as-library -O \
  Sources/HTTPServer/RequestParser.swift Sources/HTTPServer/HTTPRequest.swift Sources/HTTPServer/HTTPHeaders.swift \
  Fuzz/FuzzRequestParser.swift -o Fuzz/out/fuzz-request-parser
cp -n Fuzz/corpus/* Fuzz/corpus-work/ 2>/dev/null || true
exec Fuzz/out/fuzz-request-parser Fuzz/corpus-work -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -dict=Fuzz/http.dict -print_final_stats=1 -artifact_prefix=Fuzz/out/
