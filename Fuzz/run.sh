#!/usr/bin/env bash
# Lede's fuzz targets (Fuzz/README.md) under libFuzzer + AddressSanitizer.
#   Fuzz/run.sh TARGET [SECONDS]   one target for SECONDS (default 600); new inputs land in Fuzz/corpus-work/TARGET,
#                                  a finding in Fuzz/out/TARGET-crash-… (copy it to Fuzz/findings/TARGET/ once fixed)
#   Fuzz/run.sh --ci [RUNS]        every target: its corpus and every past finding replayed (-runs=0), then a short
#                                  run with a fixed seed (RUNS inputs, default 20000). Deterministic; CI runs this.
#   Fuzz/run.sh --list             the targets
set -euo pipefail
cd "$(dirname "$0")/.."

# Coverage asked of the compiler explicitly: --sanitize fuzzer alone did not always reach the frontend (SwiftPM 6.3
# here: some builds, clean or incremental, compiled every module without counters — 36 in all instead of 53,000 —
# and a fuzzer without coverage finds nothing). The check below refuses such a binary whatever the cause.
# LEDE_FUZZ_BIN=path reuses a binary built before (long runs of several targets).
build() {
  if [ -n "${LEDE_FUZZ_BIN:-}" ]; then bin=$LEDE_FUZZ_BIN; else
    # LEDE_PGO=off: a fuzzing build is instrumented for coverage, not laid out for the benchmarks' paths.
    LEDE_PGO=off swift build -c release --product lede-fuzz --build-path .build-fuzz --sanitize fuzzer --sanitize address \
      -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
      -Xswiftc -enable-testing -Xswiftc -DLEDE_FUZZ_TESTABLE -Xswiftc -DFUZZING > /tmp/lede-fuzz-build.txt 2>&1 \
      || { tail -30 /tmp/lede-fuzz-build.txt >&2; exit 1; }
    bin=.build-fuzz/release/lede-fuzz
  fi
  local counters
  counters=$(LEDE_FUZZ_TARGET=json "$bin" -runs=0 2>&1 | grep -oE '\(([0-9]+) inline 8-bit counters' | grep -oE '[0-9]+' | head -1)
  if [ "${counters:-0}" -lt 10000 ]; then echo "lede-fuzz has ${counters:-no} coverage counters: not instrumented" >&2; exit 1; fi
}

targets="request response json text inflate decoders deeplink sse jsonl references image"

# The corpus folders of a target: its own seeds, its past findings, and the test fixtures of its reader (Wikimedia's
# recorded answers for the JSON readers, the Parsoid page for the reference scanner).
corpora() {
  local t=$1 dirs="Fuzz/corpus/$t"
  [ -d "Fuzz/findings/$t" ] && dirs="$dirs Fuzz/findings/$t"
  case $t in
    json|decoders) dirs="$dirs Tests/Fixtures/wikimedia" ;;
    references) dirs="$dirs Tests/Fixtures/parsoid" ;;
    image) dirs="$dirs Tests/Fixtures/media" ;;
  esac
  echo "$dirs"
}

# Per-input limits: the largest upstream bodies the readers meet in a test are a few tens of KB; -timeout bounds the
# time of one input (a reader that holds a loop for seconds is a finding), -rss_limit_mb a memory bomb.
opts() {
  local dict=""
  [ "$1" = request ] || [ "$1" = response ] && dict="-dict=Fuzz/http.dict"
  echo "-max_len=65536 -timeout=5 -rss_limit_mb=2048 $dict"
}

case "${1:-}" in
  --list) for t in $targets; do echo "$t"; done ;;
  --ci)
    runs=${2:-20000}
    build
    for t in $targets; do
      # shellcheck disable=SC2046
      LEDE_FUZZ_TARGET=$t "$bin" $(opts "$t") -runs=0 -artifact_prefix=/tmp/lede-fuzz-$t- $(corpora "$t") > /tmp/lede-fuzz-$t.txt 2>&1 \
        || { tail -40 /tmp/lede-fuzz-$t.txt >&2; echo "fuzz target $t: a corpus input or past finding fails" >&2; exit 1; }
      replayed=$(grep -oE 'seed corpus: files: [0-9]+' /tmp/lede-fuzz-$t.txt | grep -oE '[0-9]+$' || echo 0)
      # A fixed-seed run from an empty working folder (the corpus read only), so every CI run explores the same inputs.
      work=$(mktemp -d)
      # shellcheck disable=SC2046
      LEDE_FUZZ_TARGET=$t "$bin" $(opts "$t") -seed=1 -runs="$runs" -artifact_prefix=/tmp/lede-fuzz-$t- "$work" $(corpora "$t") > /tmp/lede-fuzz-$t.txt 2>&1 \
        || { tail -40 /tmp/lede-fuzz-$t.txt >&2; echo "fuzz target $t: a finding in the fixed-seed run" >&2; exit 1; }
      rm -rf "$work"
      echo "fuzz $t: $replayed corpus inputs replayed, $runs fixed-seed inputs, no finding"
    done ;;
  ""|-*) echo "usage: Fuzz/run.sh TARGET [SECONDS] | --ci [RUNS] | --list" >&2; exit 2 ;;
  *)
    t=$1; seconds=${2:-600}
    case " $targets " in *" $t "*) ;; *) echo "unknown target $t (Fuzz/run.sh --list)" >&2; exit 2 ;; esac
    build
    mkdir -p "Fuzz/corpus-work/$t" Fuzz/out
    # shellcheck disable=SC2046
    LEDE_FUZZ_TARGET=$t exec "$bin" $(opts "$t") -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="Fuzz/out/$t-" \
      "Fuzz/corpus-work/$t" $(corpora "$t") ;;
esac
