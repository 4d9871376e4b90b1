// Everything in scangen_export here is usable (cxx_header_test.cpp).
#pragma once
#ifndef __CUDACC_RTC__  // NVRTC, and the CUDA check that reads the header as NVRTC does, has none
#include <cmath>
#include <cstdint>
#endif

#include "good_helpers.h"

#ifndef __CUDACC__
#define __host__
#define __device__
#endif

typedef float real;
using index_t = int64_t;

namespace scangen_export {

inline float scale(float x, const float factor) { return x * factor; }
inline double twice(double x) { return 2 * x; }
inline int32_t clamp_index(int i, int32_t n) { return i < n ? i : n - 1; }
inline long add_long(long a, long long b, index_t c) { return a + b + c; }
inline bool positive(real x, bool strict) { return strict ? x > 0 : x >= 0; }

inline float wave(float x, float y) { return x * sinf(y); }
inline float wave_d0(float, float y) { return sinf(y); }
inline float wave_d1(float x, float y) { return x * cosf(y); }

__host__ __device__ inline float hd_square(float x) { return x * x; }
__host__ __device__ inline double hd_half(double x) { return helpers::half(x); }
__host__ inline float host_only(float x) { return x; }
// constexpr makes a function implicitly __host__ __device__ in CUDA, not explicitly.
constexpr double third(double x) { return x / 3; }

inline float declared_first(float x);

// Helpers of the header: not offered, not problems.
struct Helper {
  float value(float x) const { return x; }
};
namespace detail {
inline float hidden(float x) { return x; }
}  // namespace detail

}  // namespace scangen_export

inline float scangen_export::declared_first(float x) { return x + 1; }
