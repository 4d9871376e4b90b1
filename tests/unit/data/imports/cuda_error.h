// Fine as C++, an error as CUDA.
#ifdef __CUDACC__
#error "not for CUDA"
#endif
namespace scangen_export {
inline float f(float x) { return x; }
}  // namespace scangen_export
