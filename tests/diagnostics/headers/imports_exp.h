// Offers a function named like a builtin, one named like a function of the importing file, and
// one that imports_math.h offers too.
#pragma once

namespace scangen_export {
inline double exp(double x) { return x; }
inline double area(double x) { return x * x; }
inline double scale(double x, double k) { return x + k; }
}  // namespace scangen_export
