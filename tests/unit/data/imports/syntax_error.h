namespace scangen_export {
inline float f(float x) { return x }
inline float g(float x) { return x; }
inline float h(undeclared_t x) { return x; }
}  // namespace scangen_export
