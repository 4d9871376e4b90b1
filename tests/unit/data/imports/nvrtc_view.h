// The CUDA parse sees what NVRTC shows a header in scangen's kernels (cxx_header_test.cpp).
#pragma once
#ifndef __CUDACC__
#include <cmath>
#include <cstdint>
#define __host__
#define __device__
#elif !defined(__CUDACC_RTC__) || __CUDACC__ != 1 || __CUDACC_RTC__ != 1
#error "NVRTC defines __CUDACC__ and __CUDACC_RTC__ as 1"
#elif defined(__CUDA_ARCH__)
#error "the check reads the host side, like the CUDA emulation"
#endif

namespace scangen_export {
// CUDA's math functions without an #include, its float overloads, and scangen's int64_t.
__host__ __device__ inline double root(double x) { return sqrt(x); }
__host__ __device__ inline float squash(float x) { return tanhf(x) * fabs(x); }
__host__ __device__ inline int64_t widen(int32_t x) { return x; }
}  // namespace scangen_export
