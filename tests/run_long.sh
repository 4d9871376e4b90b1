#!/usr/bin/env bash
# The long runs (docs/testing.md, "What runs where"): the tests that CI runs at a reduced size, at
# their full size (SCANGEN_LONG_TESTS=1): 2000 random programs on the CPU backend against the
# interpreter (400 in CI), 600 in the fast mode (200), 1000 through the CUDA emulation twice (300),
# 600 at 2 and 3 threads (150), 400 random programs' gradients (100), the samples' gradients at -O0
# and -O2 (-O2), NVRTC for every architecture
# it lists (the oldest and newest in CI), nvcc on every sample (those at the top of samples/, the
# contract's and the imports' in CI), 200 random programs with lengths (20), the tagger staggered
# on the CUDA emulation (skipped in CI). Needs build/ built (the README's test command builds it).
#   tests/run_long.sh [ctest arguments...]
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
source "$source_dir/tests/timing.sh"
export SCANGEN_LONG_TESTS=1
timed "long runs" ctest --test-dir "$source_dir/build" --output-on-failure -j2 \
  -R '^(equivalence_(test|fast|threads|cuda_emulation|cuda_emulation_staggered)|gradcheck_(samples|random_programs)|cuda\.nvrtc_sources|cuda\.offline_nvcc|cuda_scan_nvrtc_test|lengths_programs_test|e2e\.tagger\.cuda-emulation-staggered)$' "$@"
