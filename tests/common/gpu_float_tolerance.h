// How far a float may be from the interpreter's and still count as the same result, where a
// backend is allowed to differ from it:
//  - on a GPU (the tests that run on a real device, label gpu): arithmetic is the same on both
//    (IEEE operations, no FMA contraction), but the transcendental functions (tanh, exp, log, sin,
//    pow, ...) come from CUDA's math library on the device and from the host's libm in the
//    interpreter, and CUDA documents errors of up to 1-2 ulp for them (docs/cuda.md);
//  - in the CPU backend's fast floating-point mode (`--fp fast`): FMA contraction, reassociated
//    sums and products, libmvec's functions (at most 4 ulp); docs/performance.md ("Fast
//    floating-point mode") derives the bound.
// A recurrence carries such a difference forward, so the bound is relative, with an absolute floor
// for results near zero. One definition, shared by the equivalence test and the e2e runner.
#ifndef SCANGEN_TESTS_COMMON_GPU_FLOAT_TOLERANCE_H
#define SCANGEN_TESTS_COMMON_GPU_FLOAT_TOLERANCE_H

#include <cmath>

namespace scangen::testing {

struct FloatTolerance {
  double relative;
  double absolute;
};

inline constexpr double kGpuRelativeTolerance = 1e-5;
inline constexpr double kGpuAbsoluteTolerance = 1e-6;
inline constexpr FloatTolerance kGpuTolerance = {kGpuRelativeTolerance, kGpuAbsoluteTolerance};
// Fast mode: a result of f32 arithmetic within about 2^10 ulp (relative 2^-23 * 2^10 = 1.2e-4):
// room for sums of hundreds of terms reordered and a few steps of a recurrence carrying them.
inline constexpr FloatTolerance kFastTolerance = {1e-4, 1e-5};

// Whether `actual` is close enough to `expected` (the interpreter's); NaN matches NaN, an infinity
// only the same infinity.
inline bool within_tolerance(double expected, double actual, FloatTolerance tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (expected == actual) return true;
  if (std::isinf(expected) || std::isinf(actual)) return false;
  return std::fabs(expected - actual) <= tolerance.absolute + tolerance.relative * std::fabs(expected);
}

inline bool within_gpu_tolerance(double expected, double actual) {
  return within_tolerance(expected, actual, kGpuTolerance);
}

}  // namespace scangen::testing

#endif
