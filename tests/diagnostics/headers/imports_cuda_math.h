// The common idiom (import_cuda_math.scan): outside CUDA, the host's <cmath> and std::; under
// CUDA, the math functions NVRTC declares without any #include, called unqualified.
#pragma once
#ifndef __CUDACC__
#include <cmath>
#define __host__
#define __device__
#define SCAN_MATH(f) std::f
#else
#define SCAN_MATH(f) f
#endif

namespace scangen_export {
__host__ __device__ inline double norm2(double x, double y) { return SCAN_MATH(sqrt)(x * x + y * y); }
__host__ __device__ inline float squash(float x) { return tanhf(x) * expf(-fabsf(x)); }
#ifdef __CUDACC_RTC__
__host__ __device__ inline long steps(double x) { return lround(sqrt(x)); }
#else
inline long steps(double x) { return std::lround(std::sqrt(x)); }
#endif
}  // namespace scangen_export
