#!/usr/bin/env bash
# The whole test suite, as the README's test command and CI run it (docs/testing.md): configure and
# build build/ (g++, every target: the program, the libraries, the tests, the benchmarks), run every
# test there (ctest -j2; GPU tests skip without a device), then the sanitized half
# (tests/run_sanitized.sh). Prints each part's time and the slowest tests at the end, also when a
# part fails (the run then fails). CI's budget is 30 minutes on a 2-core machine from a clean
# clone.
#   tests/run_suite.sh
set -uo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
cd "$source_dir"
source tests/timing.sh
export SCANGEN_TIMINGS
SCANGEN_TIMINGS="$(mktemp)"
logs="$(mktemp -d)"
run_start=$(date +%s)
status=0

summary() {
  echo
  echo "== test suite: each part's time"
  awk -F'\t' '{ printf "   %-28s %5d s%s\n", $1, $2, ($3 == 0 ? "" : "   FAILED") }' "$SCANGEN_TIMINGS"
  echo "   total                        $(( $(date +%s) - run_start )) s"
  for log in plain sanitized; do
    if [ -s "$logs/$log.log" ]; then
      echo "== the slowest tests of the ${log} half"
      slowest "$logs/$log.log" 8
    fi
  done
  rm -f "$SCANGEN_TIMINGS"
}

step() {  # step NAME COMMAND...: timed, stops the run (after the summary) when it fails
  timed "$@" || { status=$?; summary; exit "$status"; }
}

step "configure build/" cmake -S . -B build -G Ninja
step "build build/" cmake --build build
step "plain tests" bash -c 'ctest --test-dir build --output-on-failure -j2 2>&1 | tee "$0"; exit "${PIPESTATUS[0]}"' "$logs/plain.log"
step "sanitized half, in all" bash -c 'tests/run_sanitized.sh 2>&1 | tee "$0"; exit "${PIPESTATUS[0]}"' "$logs/sanitized.log"
summary
