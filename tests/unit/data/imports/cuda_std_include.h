// Includes a standard header for CUDA too: NVRTC has none (cxx_header_test.cpp).
#pragma once
#include <cstdint>

namespace scangen_export {
inline int64_t widen(int32_t x) { return x; }
}  // namespace scangen_export
