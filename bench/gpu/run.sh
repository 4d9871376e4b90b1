#!/usr/bin/env bash
# The GPU benchmarks in one call, on a machine with an NVIDIA GPU and nvcc (run from the
# repository root): builds scangen, checks and times the CUDA kernels (gpu_bench.cu: linear
# recurrences against the copy bandwidth, the tiny body; scan_bench.cu: the associative scan
# helper against the copy bandwidth), times NVRTC cold and cached, and runs
# the PyTorch / JAX comparisons when those are installed. Results go into docs/performance.md.
set -euo pipefail
build=${BUILD_DIR:-build-gpu}
arch=${CUDA_ARCH:-90}
# SCANGEN_PREBUILT=1: use the binaries already in $build (bench/gpu/device_check.sh unpacks them).
if [[ ${SCANGEN_PREBUILT:-0} != 1 ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$build" --target scangen scangen_nvrtc_bench > /dev/null
fi
out="$build/bench-gpu"
rm -rf "$out" && mkdir -p "$out"
"$build/bin/scangen" compile --target cuda bench/gpu/gpu_bench.scan -o "$out"
nvcc -std=c++17 -O3 --fmad=false -arch="sm_$arch" -I"$out" bench/gpu/gpu_bench.cu "$out/gpu_bench.cu" -o "$out/gpu_bench"
# The associative scan helper called by hand (issue 16): the templates themselves, no generated code.
nvcc -std=c++17 -O3 --fmad=false -arch="sm_$arch" -Itemplates/common -Itemplates/cuda bench/gpu/scan_bench.cu \
  -o "$out/scan_bench"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$out/gpu_bench" "$out/gpu_bench.json"
"$out/scan_bench" "$out/scan_bench.json"
"$build/bin/scangen_nvrtc_bench" bench/gpu/gpu_bench.scan "$arch"
if python3 -c "import torch, jax" 2> /dev/null; then
  python3 bench/gpu/compare.py "$out/gpu_bench.json" "$out/scan_bench.json"
else
  echo "compare.py skipped: PyTorch and JAX are not both installed"
fi
