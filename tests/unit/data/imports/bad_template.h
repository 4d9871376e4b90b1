namespace scangen_export {
template <class T>
T f(T x) { return x; }
inline float g(float x) { return x; }
}  // namespace scangen_export
