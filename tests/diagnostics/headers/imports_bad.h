// A header with a function scangen cannot call and a C++ error.
#pragma once

namespace scangen_export {
inline double ok(double x) { return x; }
inline double by_pointer(const double* x) { return *x; }
inline double broken(double x) { return x + undeclared_name; }
}  // namespace scangen_export
