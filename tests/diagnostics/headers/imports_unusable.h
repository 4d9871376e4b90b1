// Functions scangen can call and functions it cannot (import_unusable_functions.scan).
#pragma once

namespace scangen_export {
inline double ok(double x) { return x; }
inline double by_pointer(const double* x) { return *x; }
inline unsigned count(unsigned n, short k) { return n + k; }
template <class T> T same(T x) { return x; }
inline double twice(double x) { return 2 * x; }
inline float twice(float x) { return 2 * x; }
inline double wave(double x) { return x; }
inline float wave_d0(float x) { return 1; }
inline double never_called(double* x) { return *x; }
inline double scale(double* x) { return *x; }
}  // namespace scangen_export
