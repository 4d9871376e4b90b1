#!/usr/bin/env bash
# Long runs of the libFuzzer targets (docs/testing.md). Usage:
#   tests/fuzz/run_long.sh BUILD_DIR [TARGET RUNS]...
# e.g. tests/fuzz/run_long.sh build-asan frontend 10000000 compile 1000000
# Without TARGET RUNS pairs: frontend 10^7, compile 10^6, npy 10^6, cli_values 10^6, one after the
# other. BUILD_DIR is a clang build with -DSCANGEN_SANITIZE=address,undefined (SCANGEN_FUZZ on).
# Each target keeps its corpus in BUILD_DIR/tests/fuzz/corpus/TARGET (grown from run to run) and
# writes crashes, hangs and leaks to BUILD_DIR/tests/fuzz/artifacts/TARGET/; the log, with
# libFuzzer's final stats (number of executions, time), goes to BUILD_DIR/tests/fuzz/TARGET.log.
# Exit status: 0 when every target finished its runs without a finding.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: run_long.sh BUILD_DIR [TARGET RUNS]...}" && pwd)"
shift
if [ $# -eq 0 ]; then set -- frontend 10000000 compile 1000000 npy 1000000 cli_values 1000000; fi
source="$here/../.."
# Leaks are findings; a size that cannot be allocated must be a user error, not an abort.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:halt_on_error=1}"
status=0
while [ $# -ge 2 ]; do
  target="$1" runs="$2"
  shift 2
  fuzzer="$build/bin/fuzz_$target"
  [ -x "$fuzzer" ] || { echo "run_long.sh: $fuzzer not built (configure $build with clang and SCANGEN_SANITIZE)" >&2; exit 2; }
  case "$target" in
    frontend|compile) seeds=("$build/tests/fuzz/seeds/scan"); dict=(-dict="$here/scan.dict") ;;
    npy) seeds=("$source/tests/unit/data" "$source/samples/data"); dict=() ;;
    cli_values) seeds=("$here/seeds/cli_values"); dict=() ;;
    *) echo "run_long.sh: unknown target '$target' (frontend, compile, npy, cli_values)" >&2; exit 2 ;;
  esac
  corpus="$build/tests/fuzz/corpus/$target" artifacts="$build/tests/fuzz/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz_$target: $runs runs, log in $build/tests/fuzz/$target.log"
  start=$(date +%s)
  if ! "$fuzzer" -runs="$runs" -max_len=8192 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 "${dict[@]}" \
       -artifact_prefix="$artifacts/" "$corpus" "$here/regressions/$target" "${seeds[@]}" \
       > "$build/tests/fuzz/$target.log" 2>&1; then
    status=1
    echo "fuzz_$target: FOUND A PROBLEM; see the log and $artifacts/" >&2
  fi
  echo "fuzz_$target: $(grep -m1 'stat::number_of_executed_units' "$build/tests/fuzz/$target.log" || echo 'no stats'), $(( $(date +%s) - start )) s"
done
exit $status
