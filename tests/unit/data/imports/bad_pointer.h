typedef const float* real_ptr;
namespace scangen_export {
inline float f(float* x) { return *x; }
inline float g(real_ptr p) { return *p; }
inline float* h(float x) { return nullptr; }
}  // namespace scangen_export
