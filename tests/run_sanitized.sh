#!/usr/bin/env bash
# The sanitized half of the suite (docs/testing.md, "What runs where"): configures and builds
# BUILD_DIR (default build-sanitize) with clang-14 and -DSCANGEN_SANITIZE=address,undefined (the
# JIT then compiles emitted code under the same sanitizers, and the libFuzzer targets are built),
# only the targets of the tests labelled `sanitized` (the target sanitized-tests), then runs those
# tests: the runtime's and the generator's unit tests, every diagnostics test, the samples on the
# interpreter, the cpu backend and the CUDA emulation, the command line's errors, the differential
# test, random programs and the fuzzers' smoke runs. Any sanitizer report fails its test.
#   tests/run_sanitized.sh [BUILD_DIR] [ctest arguments...]
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build-sanitize}"
shift || true
source "$source_dir/tests/timing.sh"
timed "configure $build/" cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DSCANGEN_SANITIZE=address,undefined -DSCANGEN_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
timed "build $build/ (sanitized)" cmake --build "$build" --target sanitized-tests
# Tests allocate sizes that cannot be had on purpose (2^61 bytes): those must fail as user errors,
# so the allocator returns null instead of aborting. Every report stops the process with a failure.
# Leaks are checked by the fuzz targets (tests/fuzz sets detect_leaks=1 for them), not here: in the
# suite LeakSanitizer reports libstdc++'s emergency exception pool of the fake CUDA libraries that
# tests load and unload, and its tracer crashes in the tests' forked children.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Sanitized emitted code compiles and runs several times slower: fewer random programs than the
# plain half's 400, and the JIT's C++ at -O1 (half the compile time of -O3; the sanitizers see
# the same faults).
export SCANGEN_EQUIVALENCE_PROGRAMS="${SCANGEN_EQUIVALENCE_PROGRAMS:-100}"
export SCANGEN_CXXFLAGS="${SCANGEN_CXXFLAGS:--O1}"
timed "sanitized tests" ctest --test-dir "$build" --output-on-failure -j2 -L sanitized "$@"
