#!/usr/bin/env bash
# Packs what `ctest -L gpu` and the GPU benchmarks need into .device/bundle.tar.xz, for a lent GPU
# machine that has the CUDA toolkit, g++, CMake and Python but none of scangen's own dependencies
# (LLVM/Clang 14, fmt, Boost.Test): stripped binaries and libraries of the build directory, the
# CTest files, the shared libraries they load from this machine (not glibc or libstdc++, which the
# GPU machine has in newer versions) and clang's resource headers. bench/gpu/device_check.sh
# unpacks it there. Run from the repository root after building `build/`.
set -euo pipefail
build=${BUILD_DIR:-build}
binaries=(scangen run_manifest equivalence_test runtime_cuda_gpu_test host_jit scangen_nvrtc_bench)
cmake --build "$build" --target "${binaries[@]}" > /dev/null
stage=.device/stage
rm -rf "$stage" && mkdir -p "$stage/$build/bin" "$stage/$build/lib" "$stage/deps" "$stage/clang-resource"
for b in "${binaries[@]}"; do strip --strip-debug -o "$stage/$build/bin/$b" "$build/bin/$b"; done
for l in "$build"/lib/libscangen_*.so*; do
  if [[ -L $l ]]; then cp -P "$l" "$stage/$build/lib/"; else strip --strip-debug -o "$stage/$l" "$l"; fi
done
# CTest's files name the tests; the working directories they run in must exist.
(cd "$build" && find . -name CTestTestfile.cmake -print0 | xargs -0 -I{} cp --parents {} "../$stage/$build/")
for d in tests/unit tests/e2e tests/equivalence tests/api tests/cuda; do mkdir -p "$stage/$build/$d"; done
# Shared libraries from this machine, except the C and C++ runtimes.
for b in "${binaries[@]}"; do ldd "$build/bin/$b"; done | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' |
  grep -v "/$build/lib/" | while read -r lib; do cp -L "$lib" "$stage/deps/"; done
resource=$(clang-14 -print-resource-dir)
cp -r "$resource/include" "$stage/clang-resource/"
echo "$resource" > "$stage/clang-resource/PATH"
tar -C "$stage" -cf - . | xz -T0 -6 > .device/bundle.tar.xz
rm -rf "$stage"
ls -la .device/bundle.tar.xz
