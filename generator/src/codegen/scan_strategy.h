// The cost model of associative scans (loop-IR passes `scan-strategy` and `cuda-scan-strategy`,
// lir_passes.def): when the runtime helper of a scan marked by parallel-scan may run as a chunked
// prefix scan (chunk-local scans, a scan of the chunks' carries, a fix-up) rather than one step
// after the other. The decision depends on the number of steps and of lanes, known at run time,
// so the pass records thresholds in the call, and the helper compares them with the run's sizes.
#pragma once

#include <cstdint>

namespace scangen::lir {
struct Function;
}

namespace scangen::codegen {

// Thresholds of one target: chunked when steps >= chunk_min_steps and lanes <= chunk_max_lanes.
struct ScanCostModel {
  const char* target;
  int64_t chunk_min_steps;
  int64_t chunk_max_lanes;
};

// The CPU: serial steps are vectorized over the lanes, so chunking pays only while the lanes do
// not fill a SIMD register (16 f32 of AVX-512) and the chain of steps is long enough for the
// chunked scan's second pass over a cache-sized block and its fork-join to pay.
inline constexpr ScanCostModel kCpuScanCosts{"cpu", 4096, 16};
// A GPU: one thread per lane runs the steps in order; with fewer lanes than a quarter of an H100's
// resident threads (270,336) most threads would idle, so the steps are split into chunks too.
inline constexpr ScanCostModel kCudaScanCosts{"cuda", 1024, 65536};
// The threads a chunked scan of one lane keeps busy at once on a GPU (the helper's
// scan_detail::Limits::kMaxChunksInFlight, which tests/unit/cuda_scan_test.cpp checks is the same): what
// `parallel-width` counts a scan as worth, times its lanes.
inline constexpr int64_t kCudaScanChunksPerLane = 64;

// Writes the target's thresholds into every associative scan call of f; returns how many.
int plan_cpu_scans(lir::Function& f);
int plan_cuda_scans(lir::Function& f);

}  // namespace scangen::codegen
