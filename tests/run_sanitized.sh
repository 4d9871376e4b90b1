#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, with the libFuzzer
# smoke runs (docs/testing.md). Configures and builds BUILD_DIR (default build-sanitize) with
# clang-14 and -DSCANGEN_SANITIZE=address,undefined (the JIT then compiles emitted code under the
# same sanitizers), then runs ctest there. Any sanitizer report fails its test.
#   tests/run_sanitized.sh [BUILD_DIR] [ctest arguments...]
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build-sanitize}"
shift || true
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DSCANGEN_SANITIZE=address,undefined -DSCANGEN_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
cmake --build "$build"
# Tests allocate sizes that cannot be had on purpose (2^61 bytes): those must fail as user errors,
# so the allocator returns null instead of aborting. Every report stops the process with a failure.
# Leaks are checked by the fuzz targets (tests/fuzz sets detect_leaks=1 for them), not here: in the
# suite LeakSanitizer reports libstdc++'s emergency exception pool of the fake CUDA libraries that
# tests load and unload, and its tracer crashes in the tests' forked children.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Sanitized code runs several times slower: fewer random programs than the plain run (1000).
export SCANGEN_EQUIVALENCE_PROGRAMS="${SCANGEN_EQUIVALENCE_PROGRAMS:-200}"
export SCANGEN_EQUIVALENCE_CUDA_PROGRAMS="${SCANGEN_EQUIVALENCE_CUDA_PROGRAMS:-200}"
# The gradient checker's random programs (200 in the plain run): their gradients compiled by the
# sanitized JIT are most of their time.
export SCANGEN_GRADCHECK_PROGRAMS="${SCANGEN_GRADCHECK_PROGRAMS:-50}"
# The samples' gradients emitted at -O2 only (-O0 in the plain run): compiling their code under
# the sanitizers took 286 of gradcheck_samples' 290 s, half of it at -O0.
export SCANGEN_GRADCHECK_LEVELS="${SCANGEN_GRADCHECK_LEVELS:-2}"
# Not the tests labelled cuda_compiler (tests/cuda/CMakeLists.txt): nvcc and NVRTC, which take
# their time, are not instrumented (504 of the sanitized run's 1,924 test-seconds went to them).
# Nor those labelled install (tests/install/CMakeLists.txt): they build user projects against the
# installed scangen, whose sanitized libraries need the sanitizers' runtime in every program.
ctest --test-dir "$build" --output-on-failure -j2 -LE "cuda_compiler|install" "$@"
