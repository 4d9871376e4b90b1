namespace scangen_export {
inline float f(float& x) { return x; }
inline float g(float x, const double& y) { return x + y; }
inline const float& h(const float& x) { return x; }
}  // namespace scangen_export
