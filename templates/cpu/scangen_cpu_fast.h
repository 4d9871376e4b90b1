// The support code of the fast floating-point mode (`scangen compile --fp fast`): emitted CPU code
// embeds this text after scangen_cpu_matmul.h, whose blocking it reuses, when the loop IR's fast
// passes ran (generator/src/codegen/fast_math.h). It gives up the interpreter's bits for speed;
// docs/performance.md ("Fast floating-point mode") bounds the difference.
//
//  - fast_v1::exp, log, log1p, expm1, sin, cos, tanh, sigmoid: the C library's functions, declared
//    here with their SIMD variants (`#pragma omp declare simd`, what glibc's <bits/math-vector.h>
//    declares only under -ffast-math), so that a vectorized element loop calls glibc's libmvec on
//    whole vectors: _ZGVeN16v_tanhf with AVX-512, _ZGVdN8v_tanhf with AVX2, _ZGVbN4v_tanhf with
//    SSE, and the scalar function for the lanes left over. The compiler picks the variant for the
//    target it compiles for. Without glibc on x86-64 (or with SCANGEN_NO_LIBMVEC) they are the
//    plain scalar functions. Needs -fopenmp-simd -fno-math-errno and libmvec at link time
//    (cmake/ScangenFunctions.cmake: SCANGEN_FAST_FP_CXX_FLAGS, SCANGEN_FAST_FP_LIBS).
//  - matmul_fast: the blocking of scangen_cpu_matmul.h (b read in place for few rows, packed
//    panels and depth blocks for many) with the tile kernel FusedTile plugged in: each multiply
//    and add fused into one FMA, and b's row kept in registers. Every output is one sum of FMAs
//    in increasing p, so its error is that of a k-term dot product with FMA.
#ifndef SCANGEN_CPU_FAST_V1_H
#define SCANGEN_CPU_FAST_V1_H

#include <cmath>
#include <cstdint>
#include <cstring>

// ---- vectorizable math functions

#if defined(__GLIBC__) && defined(__x86_64__) && !defined(SCANGEN_NO_LIBMVEC) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
// The functions libmvec has since glibc 2.22 (exp, log, sin, cos) and 2.35 (tanh, log1p, expm1).
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) __THROW;
#pragma omp declare simd notinbranch
double exp(double) __THROW;
#pragma omp declare simd notinbranch
float logf(float) __THROW;
#pragma omp declare simd notinbranch
double log(double) __THROW;
#pragma omp declare simd notinbranch
float log1pf(float) __THROW;
#pragma omp declare simd notinbranch
double log1p(double) __THROW;
#pragma omp declare simd notinbranch
float expm1f(float) __THROW;
#pragma omp declare simd notinbranch
double expm1(double) __THROW;
#pragma omp declare simd notinbranch
float sinf(float) __THROW;
#pragma omp declare simd notinbranch
double sin(double) __THROW;
#pragma omp declare simd notinbranch
float cosf(float) __THROW;
#pragma omp declare simd notinbranch
double cos(double) __THROW;
#pragma omp declare simd notinbranch
float tanhf(float) __THROW;
#pragma omp declare simd notinbranch
double tanh(double) __THROW;
}
#endif

namespace scangen_rt_v1 {
namespace fast_v1 {

inline float exp(float x) { return ::expf(x); }
inline double exp(double x) { return ::exp(x); }
inline float log(float x) { return ::logf(x); }
inline double log(double x) { return ::log(x); }
inline float log1p(float x) { return ::log1pf(x); }
inline double log1p(double x) { return ::log1p(x); }
inline float expm1(float x) { return ::expm1f(x); }
inline double expm1(double x) { return ::expm1(x); }
inline float sin(float x) { return ::sinf(x); }
inline double sin(double x) { return ::sin(x); }
inline float cos(float x) { return ::cosf(x); }
inline double cos(double x) { return ::cos(x); }
inline float tanh(float x) { return ::tanhf(x); }
inline double tanh(double x) { return ::tanh(x); }
// 1 / (1 + e^-x), as the interpreter defines it, with the vectorized exp.
template <class T> inline T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }

}  // namespace fast_v1

// ---- the FMA product kernel

// a * b + c is contracted into an FMA in this region only (emitted code is compiled with
// -ffp-contract=off, which the strict kernel needs).
// The out-of-bounds warnings of scangen_cpu_matmul.h's tiles apply here too (code that never runs).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#if defined(__clang__)
#define SCANGEN_FAST_CONTRACT _Pragma("clang fp contract(fast)")
#else
#define SCANGEN_FAST_CONTRACT
#if defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif
#endif

namespace matmul_fast_v1 {

using matmul_v1::kAccumulators;
using matmul_v1::kVectorRegisters;
using matmul_v1::kWidth;
using matmul_v1::load;
using matmul_v1::store;
using matmul_v1::Vector;

// An empty asm that claims to change v: the compiler must keep v in a register from here on
// instead of folding a reload of b into every FMA.
template <class T> inline void pin(Vector<T>& v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+v"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  (void)v;
#endif
}

// c[r][0 .. kVectors*W) for r < kTileRows is (its partial sums when `resume`) plus a[r][p] *
// b[p][...] for p < depth, one FMA per output per p, in increasing p.
template <class T, int kTileRows, int kVectors>
__attribute__((noinline)) void fused_tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth, T* c,
                                          int64_t ldc, bool resume) {
  SCANGEN_FAST_CONTRACT
  constexpr int W = kWidth<T>;
  Vector<T> acc[kTileRows][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) acc[r][v] = resume ? load(c + r * ldc + v * W) : Vector<T>{};
  for (int64_t p = 0; p < depth; ++p) {
    Vector<T> b_p[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      b_p[v] = load(b + p * ldb + v * W);
      pin<T>(b_p[v]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) {
      const T a_rp = a[r * lda + p];
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) acc[r][v] = b_p[v] * a_rp + acc[r][v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) store(c + r * ldc + v * W, acc[r][v]);
}

}  // namespace matmul_fast_v1

#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC pop_options
#pragma GCC diagnostic pop
#endif
#undef SCANGEN_FAST_CONTRACT

namespace matmul_fast_v1 {

// The FMA tile, for matmul_v1's blocking (StrictTile says what each member is). Its row of b
// stays in registers too (kept there by `pin`), so that each load of b serves kMaxRows FMAs. The
// strict kernel's 3 x 8 tile leaves no register for b, and its FMA form then reloads b from
// memory in every FMA: one 512-bit load per FMA is the L1's limit on Zen 4. Measured on Zen 4,
// f32, the tile alone over 256 rows of b in L2: 3 x 8 from memory 66 GFLOP/s, 4 x 6 pinned 116
// (the FMA peak), 6 x 4 116, 8 x 3 115, 12 x 2 51.
struct FusedTile {
  static constexpr int kMaxRows = 4;
  // Over packed panels, 4 x 4 (AVX2: 4 x 2): panels of 64 f32 columns, which 128, 256 and 512
  // columns fill exactly, where 4 x 6's 96-column panels end in a padded one (m = 256,
  // k = n = 128: 114 GFLOP/s against 74).
  static constexpr int kPanelVectors = kAccumulators / 6;
  static constexpr int kStreamWideRows = kMaxRows;  // no taller groups of rows
  // The accumulators and b's row must fit in the registers with one more for the broadcast
  // a[r][p].
  static constexpr int stream_vectors(int rows) {
    int v = kAccumulators / rows;
    if (v > 8) v = 8;
    if (v > (kVectorRegisters - 1) / (rows + 1)) v = (kVectorRegisters - 1) / (rows + 1);
    return v < 1 ? 1 : v;
  }
  template <class T, int kRows, int kVectors>
  static void tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth, T* c, int64_t ldc,
                   bool resume) {
    fused_tile<T, kRows, kVectors>(a, lda, b, ldb, depth, c, ldc, resume);
  }
  template <class T> static T multiply_add(T sum, T x, T y) { return std::fma(x, y, sum); }
};

}  // namespace matmul_fast_v1

// out[m x n] = a[m x k] @ b[k x n] of floats with FMA (the header comment says in which order).
template <class T> inline void matmul_fast(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  static_assert(std::is_floating_point_v<T>, "the fast product is for floats; integers use matmul");
  matmul_v1::multiply<matmul_fast_v1::FusedTile>(out, a, b, m, k, n);
}

}  // namespace scangen_rt_v1

#endif  // SCANGEN_CPU_FAST_V1_H
