namespace scangen_export {
inline float f(float x, ...) { return x; }
}  // namespace scangen_export
