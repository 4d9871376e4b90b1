// How far a float computed on a GPU may be from the interpreter's and still count as the same
// result, for the tests that run on a real device (label gpu). Arithmetic is the same on both
// (IEEE operations, no FMA contraction), but the transcendental functions (tanh, exp, log, sin,
// pow, ...) come from CUDA's math library on the device and from the host's libm in the
// interpreter, and CUDA documents errors of up to 1-2 ulp for them (docs/cuda.md). A recurrence
// carries such a difference forward, so the bound is relative, with an absolute floor for
// results near zero. One definition, shared by the equivalence test and the e2e runner.
#ifndef SCANGEN_TESTS_COMMON_GPU_FLOAT_TOLERANCE_H
#define SCANGEN_TESTS_COMMON_GPU_FLOAT_TOLERANCE_H

#include <cmath>

namespace scangen::testing {

inline constexpr double kGpuRelativeTolerance = 1e-5;
inline constexpr double kGpuAbsoluteTolerance = 1e-6;

// Whether `actual` (GPU) is close enough to `expected` (interpreter); NaN matches NaN, an
// infinity only the same infinity.
inline bool within_gpu_tolerance(double expected, double actual) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (expected == actual) return true;
  if (std::isinf(expected) || std::isinf(actual)) return false;
  return std::fabs(expected - actual) <= kGpuAbsoluteTolerance + kGpuRelativeTolerance * std::fabs(expected);
}

}  // namespace scangen::testing

#endif
