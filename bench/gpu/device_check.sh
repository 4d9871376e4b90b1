#!/usr/bin/env bash
# On a lent GPU machine (repository root, bundle from bench/gpu/device_bundle.sh in .device/):
# unpacks the bundle where the CTest files expect it, runs `ctest -L gpu` (only the tests matching
# $CTEST_REGEX when set), then bench/gpu/run.sh (not with SKIP_BENCH=1). Logs go to $OUT (or
# .device/out). The CTest files hold this machine's absolute paths, so the
# checkout is linked there first.
set -uo pipefail
out=${OUT:-.device/out}
mkdir -p "$out"
origin=${SCANGEN_ORIGIN:-/work/main}
if [[ $(pwd -P) != "$origin" ]]; then mkdir -p "$(dirname "$origin")" && ln -sfn "$(pwd -P)" "$origin"; fi
cd "$origin"
tar -xJf .device/bundle.tar.xz -C .
mv -f deps .device/deps
resource=$(cat clang-resource/PATH)
mkdir -p "$resource" && rm -rf "$resource/include" && mv clang-resource/include "$resource/include"
export LD_LIBRARY_PATH=$origin/.device/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi; g++ --version | head -1; nvcc --version | tail -2; } 2>&1 | tee "$out/machine.txt"
timeout "${CTEST_SECONDS:-300}" ctest --test-dir build -L gpu -E '^(install|cuda\.cmake_project)' \
  ${CTEST_REGEX:+-R "$CTEST_REGEX"} --output-on-failure -j "${CTEST_JOBS:-8}" --timeout 200 2>&1 | tee "$out/ctest.log"
echo "ctest exit ${PIPESTATUS[0]}"
[[ ${SKIP_BENCH:-0} == 1 ]] && exit 0
SCANGEN_PREBUILT=1 BUILD_DIR=build timeout "${BENCH_SECONDS:-200}" bench/gpu/run.sh 2>&1 | tee "$out/bench.log"
echo "bench exit ${PIPESTATUS[0]}"
cp build/bench-gpu/gpu_bench.json build/Testing/Temporary/LastTest.log "$out/" 2> /dev/null || true
