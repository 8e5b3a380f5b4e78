#!/usr/bin/env bash
# Cost as a property: every reader of upstream (and client) bytes and every text rule on adversarial shapes at
# 4 KB, 32 KB and 256 KB (or the sizes given, in bytes). Linear work grows about 8x per step; the last column is the
# time of the largest input, which runs on an event loop in the server (the upstream body cap is 8 MB, the largest
# real extracts are a few KB).
#   Benchmarks/readers.sh [BYTES...]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product lede-fuzz --build-path .build-readers -Xswiftc -enable-testing -Xswiftc -DLEDE_FUZZ_TESTABLE \
  > /tmp/lede-readers-build.txt 2>&1 || { tail -30 /tmp/lede-readers-build.txt >&2; exit 1; }
.build-readers/release/lede-fuzz cost "$@"
