#!/usr/bin/env bash
# Whether Benchmarks/lede.profdata was made from today's request path (issue 71). LLVM reads a profile whose
# functions have since changed without a word (swiftc passes on none of its hash-mismatch warnings) and builds those
# functions as if no profile were there: the fast build would quietly stop being fast where it matters. So
# Benchmarks/pgo.sh records, beside the profile, a digest of every Swift file of the modules the workload runs
# (Benchmarks/lede.profdata.sources); this compares them with the files as they are.
#   Benchmarks/profile-fresh.sh            exit 0 when fresh; else the files changed since, and exit 1
#   Benchmarks/profile-fresh.sh --list     the files the profile stands for, with their digests (what pgo.sh records)
# CI runs it (.ci/run). Remake the profile with Benchmarks/pgo.sh after changing any of them.
set -euo pipefail
cd "$(dirname "$0")/.."
hot=(Sources/EventLoops Sources/HTTPCore Sources/HTTPServer Sources/HTTPClient Sources/LedeBasics Sources/Upstream Sources/Wikimedia
     Sources/Lede Sources/LedeCommand)
list() { find "${hot[@]}" -name '*.swift' | LC_ALL=C sort | xargs sha256sum; }
if [ "${1:-}" = "--list" ]; then list; exit 0; fi
recorded=Benchmarks/lede.profdata.sources
[ -f "$recorded" ] || { echo "no $recorded: make the profile with Benchmarks/pgo.sh" >&2; exit 1; }
if ! diff <(list) "$recorded" > /tmp/lede-profile-fresh.diff; then
  echo "Benchmarks/lede.profdata is stale: these request-path files changed since it was made:" >&2
  grep -E '^[<>]' /tmp/lede-profile-fresh.diff | awk '{print "  " $3}' | sort -u >&2
  echo "remake it (about 5 minutes, needs wrk and nginx): Benchmarks/pgo.sh" >&2
  exit 1
fi
echo "Benchmarks/lede.profdata is fresh: made from the $(wc -l < "$recorded") request-path files as they are"
