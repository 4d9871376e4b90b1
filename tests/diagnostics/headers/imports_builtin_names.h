// Offers functions named like builtins that came after the first ones (selection and layout).
#pragma once

namespace scangen_export {
inline double top_k(double x, double k) { return x * k; }
inline double argmax(double x) { return x; }
}  // namespace scangen_export
