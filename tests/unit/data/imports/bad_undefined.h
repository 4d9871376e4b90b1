namespace scangen_export {
float f(float x);
inline float g(float x) { return x; }
}  // namespace scangen_export
