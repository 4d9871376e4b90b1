// Fine as C++, but not as CUDA: the CUDA backend cannot use it.
#pragma once
#ifdef __CUDACC__
#error "this header is not ready for CUDA"
#endif

namespace scangen_export {
__attribute__((unused)) inline double twice(double x) { return 2 * x; }
}  // namespace scangen_export
