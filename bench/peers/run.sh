#!/usr/bin/env bash
# scangen and its peers side by side, on the same shapes in one run on this machine (issue 15):
# scangen's generated C++ (strict: -O2, no FMA contraction, bit for bit the interpreter; and fast:
# `--fp fast`), the
# hand-written OpenBLAS loops (Debian's libopenblas), torch.nn.RNN / torch.nn.LSTM (PyTorch CPU)
# and jax.jit of lax.scan (JAX CPU); each at 1 thread and at all cores. Prints per workload and
# thread count the time, GFLOP/s and ratio to the OpenBLAS loop (docs/performance.md, "Peers").
#
#   bench/peers/run.sh            # everything: about 15 minutes on a 2-core machine
#   bench/peers/run.sh --quick    # H = 256, B = 1 and 32 only: a few minutes
#   bench/peers/run.sh --no-python  # scangen and OpenBLAS only (no PyTorch, no JAX)
#
# Needs: OpenBLAS (apt-get install libopenblas-dev), python3 with venv and pip. PyTorch and JAX
# are benchmark peers only, never dependencies of scangen, its tests or CI: they are installed
# with pip into a virtual environment of their own, $SCANGEN_PEERS_VENV (default
# <build>/peers-venv; the first run downloads about 3 GB, 6 GB installed: PyPI's Linux torch wheel needs the
# CUDA runtime libraries as packages even on a CPU, because libtorch_cpu.so itself links
# libcudart and libcupti; they are loaded but unused here).
# The build directory is $SCANGEN_BUILD_DIR (default <repo>/build), configured if it is not.
# Raw measurements and the tables are kept in <build>/peers/.
#
# scangen fast is samples/elman.scan and samples/lstm.scan compiled a second time with
# `scangen_add_library(... FP_MODE fast)`, and scangen at all cores the same programs compiled with
# THREADS 0 (bench/peers/CMakeLists.txt), run on as many threads as the others (SCANGEN_NUM_THREADS).
set -euo pipefail

quick=()
python_peers=1
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    --no-python) python_peers=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${SCANGEN_BUILD_DIR:-$root/build}
venv=${SCANGEN_PEERS_VENV:-$build/peers-venv}
out=$build/peers
cores=$(nproc)
thread_counts=(1)
[ "$cores" -gt 1 ] && thread_counts+=("$cores")

fail() { echo "run.sh: $*" >&2; exit 1; }

build_cpp_side() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo || fail "cmake could not configure $build"
  fi
  # The target itself says what is missing when OpenBLAS is not installed.
  cmake --build "$build" --target scangen_peers_bench ||
    fail "could not build scangen_peers_bench (OpenBLAS missing? apt-get install libopenblas-dev, then re-run)"
}

# The venv with torch, jax and numpy, created and filled on first use.
python_side_ready() {
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, jax, numpy' 2>/dev/null; then
    return 0
  fi
  command -v python3 >/dev/null || fail "python3 not found: install it, or run with --no-python"
  if [ ! -x "$venv/bin/pip" ]; then
    python3 -m venv "$venv" ||
      fail "python3 -m venv $venv failed (apt-get install python3-venv), or run with --no-python"
  fi
  echo "run.sh: installing torch, jax and numpy into $venv (first run: about 3 GB to download)" >&2
  "$venv/bin/pip" install --quiet --upgrade pip &&
    "$venv/bin/pip" install --quiet torch jax numpy ||
    fail "pip could not install torch, jax and numpy into $venv (is PyPI reachable?); run with --no-python to skip them"
  "$venv/bin/python" -c 'import torch, jax, numpy' || fail "torch or jax installed but does not import"
}

main() {
  command -v python3 >/dev/null || fail "python3 not found: it prints the tables (bench/peers/report.py)"
  build_cpp_side
  [ "$python_peers" = 1 ] && python_side_ready
  mkdir -p "$out"
  local raw=$out/measurements.tsv
  : >"$raw"
  echo "run.sh: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores; results in $out" >&2
  for threads in "${thread_counts[@]}"; do
    echo "run.sh: scangen and OpenBLAS, $threads thread(s)" >&2
    "$build/bin/scangen_peers_bench" --threads "$threads" "${quick[@]}" | tee -a "$raw"
    if [ "$python_peers" = 1 ]; then
      echo "run.sh: PyTorch and JAX, $threads thread(s)" >&2
      "$venv/bin/python" "$here/peers.py" --threads "$threads" "${quick[@]}" | tee -a "$raw"
    fi
  done
  python3 "$here/report.py" "$raw" | tee "$out/report.md"
}

main
