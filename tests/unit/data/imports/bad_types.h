typedef unsigned int count_t;
namespace scangen_export {
struct Vec {
  float x, y;
};
inline float f(unsigned x) { return x; }
inline float g(short a, char b, long double c) { return a + b + c; }
inline float h(Vec v, count_t n) { return v.x * n; }
inline void k(float x) {}
inline unsigned long m(float x) { return x; }
}  // namespace scangen_export
