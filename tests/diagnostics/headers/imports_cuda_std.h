// Includes <cmath> for CUDA too, where NVRTC has no standard header (import_cuda_std_header.scan).
#pragma once
#ifndef __CUDACC__
#define __host__
#define __device__
#endif
#include <cmath>

namespace scangen_export {
__host__ __device__ inline double softplus(double x) { return std::log1p(std::exp(x)); }
}  // namespace scangen_export
