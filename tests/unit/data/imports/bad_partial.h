namespace scangen_export {
inline float f(float x, float y) { return x * y; }
inline float f_d0(float x, double y) { return y; }
inline double f_d1(float x, float y) { return x; }
inline float f_d2(float x, float y) { return 0; }
inline float g_d0(float x) { return x; }
}  // namespace scangen_export
