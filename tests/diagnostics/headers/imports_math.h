// Functions for the import_* diagnostics tests.
#pragma once
#ifndef __CUDACC__
#define __host__
#define __device__
#endif

namespace scangen_export {
__host__ __device__ inline double scale(double x, double k) { return x * k; }
__host__ __device__ inline double scale_d0(double x, double k) { return k + 0.0 * x; }
inline long halve(long n) { return n / 2; }
inline bool positive(double x) { return x > 0; }
}  // namespace scangen_export
