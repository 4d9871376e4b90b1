namespace scangen_export {
inline float f(float x) { return x; }
inline double f(double x) { return x; }
inline float g(float x) { return x; }
}  // namespace scangen_export
namespace scangen_export {
inline float f(int x) { return x; }
}  // namespace scangen_export
