// Imported by this directory's imported-*.scan cases.
#pragma once
#include <cmath>

namespace scangen_export {
inline double softplus(double x) { return std::log1p(std::exp(x)); }
}  // namespace scangen_export
