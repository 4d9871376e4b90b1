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
//  - matmul_fast: the blocking of scangen_cpu_matmul.h's kernel (b read in place for few rows,
//    packed panels and depth blocks for many) with each multiply and add fused into one FMA and a
//    tile that keeps b's row in registers. Every output is one sum of FMAs in increasing p, so
//    its error is that of a k-term dot product with FMA.
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

using matmul_v1::kDepthBlock;
using matmul_v1::kStreamCachedRows;
using matmul_v1::kVectorRegisters;
using matmul_v1::kWidth;
using matmul_v1::load;
using matmul_v1::store;
using matmul_v1::Vector;

// The tile: kRows rows x up to kAccumulators / kRows vectors of accumulators, and the row of b of
// the tile in registers too (kept there by `pin`), so that each load of b serves kRows FMAs. The strict
// kernel's 3 x 8 tile leaves no register for b, and its FMA form then reloads b from memory in
// every FMA: one 512-bit load per FMA is the L1's limit on Zen 4. Measured on Zen 4, f32, the
// tile alone over 256 rows of b in L2: 3 x 8 from memory 66 GFLOP/s, 4 x 6 pinned 116 (the FMA
// peak), 6 x 4 116, 8 x 3 115, 12 x 2 51.
inline constexpr int kRows = 4;
inline constexpr int kAccumulators = kVectorRegisters >= 32 ? 24 : 12;
// Over packed panels, 4 x 4 (AVX2: 4 x 2): panels of 64 f32 columns, which 128, 256 and 512
// columns fill exactly, where 4 x 6's 96-column panels end in a padded one (m = 256, k = n = 128:
// 114 GFLOP/s against 74).
inline constexpr int kPanelVectors = kAccumulators / 6;
inline constexpr int64_t kStreamRows = 4 * kRows;
template <class T> inline constexpr int64_t kPanelColumns = int64_t(kPanelVectors) * kWidth<T>;
template <class T> inline constexpr int64_t kBlockColumns =
    matmul_v1::kPackedBytes / (kDepthBlock * int64_t(sizeof(T))) / kPanelColumns<T> * kPanelColumns<T>;
// Vectors per row of a tile that reads b in place: the accumulators and b's row must fit in the
// registers with one more for the broadcast a[r][p].
template <int kTileRows> inline constexpr int kStreamVectors = [] {
  int v = kAccumulators / kTileRows;
  if (v > 8) v = 8;
  if (v > (kVectorRegisters - 1) / (kTileRows + 1)) v = (kVectorRegisters - 1) / (kTileRows + 1);
  return v < 1 ? 1 : v;
}();

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

// fused_tile on a copy of a tile of which only the first `columns` columns exist in c.
template <class T, int kTileRows, int kVectors>
inline void fused_clipped_tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth, T* c, int64_t ldc,
                               int64_t columns, bool resume) {
  constexpr int64_t kColumns = int64_t(kVectors) * kWidth<T>;
  alignas(64) T tile[kTileRows * kColumns] = {};
  if (resume)
    for (int r = 0; r < kTileRows; ++r) std::memcpy(tile + r * kColumns, c + r * ldc, size_t(columns) * sizeof(T));
  fused_tile<T, kTileRows, kVectors>(a, lda, b, ldb, depth, tile, kColumns, resume);
  for (int r = 0; r < kTileRows; ++r) std::memcpy(c + r * ldc, tile + r * kColumns, size_t(columns) * sizeof(T));
}

// Calls Kernel::run<R>(args...) with R = rows, 1 <= rows <= kRows (matmul_v1::with_rows for this
// kernel's tile).
template <class Kernel, int kTileRows = 1, class... Args> inline void with_rows(int64_t rows, Args... args) {
  if constexpr (kTileRows < kRows) {
    if (rows != kTileRows) return with_rows<Kernel, kTileRows + 1>(rows, args...);
  }
  Kernel::template run<kTileRows>(args...);
}

// matmul_v1::StreamRows with the fused tile: b read in place, the last tile overlapping.
template <class T> struct StreamRows {
  template <int kTileRows>
  static void run(const T* a, const T* b, T* out, int64_t k, int64_t n) {
    constexpr int64_t W = kWidth<T>;
    constexpr int kVectors = kStreamVectors<kTileRows>;
    constexpr int kMinVectors = 4 / kTileRows < 1 ? 1 : (4 / kTileRows > kVectors ? kVectors : 4 / kTileRows);
    for (int64_t j = 0; j < n;) {
      int vectors = kVectors;
      while (vectors / 2 >= kMinVectors && (vectors / 2) * W >= n - j) vectors /= 2;
      while (vectors * W > n) vectors /= 2;
      const int64_t start = j + vectors * W <= n ? j : n - vectors * W;
      tile_of_width<kTileRows, kVectors>(vectors, a, k, b + start, n, out + start, n);
      j = start + vectors * W;
    }
  }

  template <int kTileRows, int kVectors>
  static void tile_of_width(int vectors, const T* a, int64_t k, const T* b, int64_t ldb, T* out, int64_t ldo) {
    if constexpr (kVectors > 1) {
      if (vectors < kVectors) return tile_of_width<kTileRows, kVectors / 2>(vectors, a, k, b, ldb, out, ldo);
    }
    fused_tile<T, kTileRows, kVectors>(a, k, b, ldb, k, out, ldo, false);
  }
};

// Copies b[0 .. depth)[0 .. columns) into panels of kPanelColumns columns (matmul_v1::pack_panels
// for this kernel's panel width), the last one zero-padded.
template <class T> inline void pack_panels(const T* b, int64_t ldb, int64_t depth, int64_t columns, T* packed) {
  constexpr int64_t kColumns = kPanelColumns<T>;
  for (int64_t j0 = 0; j0 < columns; j0 += kColumns) {
    const int64_t width = columns - j0 < kColumns ? columns - j0 : kColumns;
    T* panel = packed + j0 * depth;
    for (int64_t p = 0; p < depth; ++p) {
      std::memcpy(panel + p * kColumns, b + p * ldb + j0, size_t(width) * sizeof(T));
      for (int64_t j = width; j < kColumns; ++j) panel[p * kColumns + j] = T(0);
    }
  }
}

// A group of rows of a times every packed panel of a block.
template <class T> struct PanelRows {
  template <int kTileRows>
  static void run(const T* a, int64_t lda, const T* packed, int64_t depth, T* out, int64_t ldo, int64_t columns,
                  bool resume) {
    constexpr int64_t kColumns = kPanelColumns<T>;
    for (int64_t j0 = 0; j0 < columns; j0 += kColumns) {
      const T* panel = packed + j0 * depth;
      if (columns - j0 >= kColumns)
        fused_tile<T, kTileRows, kPanelVectors>(a, lda, panel, kColumns, depth, out + j0, ldo, resume);
      else
        fused_clipped_tile<T, kTileRows, kPanelVectors>(a, lda, panel, kColumns, depth, out + j0, ldo,
                                                        columns - j0, resume);
    }
  }
};

template <class T> inline void multiply_streaming(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i += kRows) {
    const int64_t rows = m - i < kRows ? m - i : kRows;
    with_rows<StreamRows<T>>(rows, a + i * k, b, out + i * n, k, n);
  }
}

// b packed kDepthBlock rows and kBlockColumns columns at a time (a static thread_local buffer: no
// allocation); a depth block after the first resumes from the partial sums in out.
template <class T> inline void multiply_packed(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  alignas(64) static thread_local T packed[kDepthBlock * kBlockColumns<T>];
  for (int64_t j0 = 0; j0 < n; j0 += kBlockColumns<T>) {
    const int64_t columns = n - j0 < kBlockColumns<T> ? n - j0 : kBlockColumns<T>;
    for (int64_t p0 = 0; p0 < k; p0 += kDepthBlock) {
      const int64_t depth = k - p0 < kDepthBlock ? k - p0 : kDepthBlock;
      pack_panels(b + p0 * n + j0, n, depth, columns, packed);
      for (int64_t i = 0; i < m; i += kRows) {
        const int64_t rows = m - i < kRows ? m - i : kRows;
        with_rows<PanelRows<T>>(rows, a + i * k + p0, k, static_cast<const T*>(packed), depth, out + i * n + j0, n,
                                columns, p0 > 0);
      }
    }
  }
}

// Fewer columns than a vector: each output one sum of FMAs, four rows at a time.
template <class T> inline void multiply_narrow(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kNarrowRows = 4;
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = 0;
    for (; i + kNarrowRows <= m; i += kNarrowRows) {
      T acc[kNarrowRows] = {};
      for (int64_t p = 0; p < k; ++p)
        for (int64_t r = 0; r < kNarrowRows; ++r) acc[r] = std::fma(a[(i + r) * k + p], b[p * n + j], acc[r]);
      for (int64_t r = 0; r < kNarrowRows; ++r) out[(i + r) * n + j] = acc[r];
    }
    for (; i < m; ++i) {
      T acc = T(0);
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[p * n + j], acc);
      out[i * n + j] = acc;
    }
  }
}

}  // namespace matmul_fast_v1

#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC pop_options
#pragma GCC diagnostic pop
#endif
#undef SCANGEN_FAST_CONTRACT

// out[m x n] = a[m x k] @ b[k x n] of floats with FMA (the header comment says in which order).
template <class T> inline void matmul_fast(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  static_assert(std::is_floating_point_v<T>, "the fast product is for floats; integers use matmul");
  namespace mf = matmul_fast_v1;
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m * n; ++i) out[i] = T(0);
  } else if (n < mf::kWidth<T>) {
    mf::multiply_narrow(out, a, b, m, k, n);
  } else if (m <= mf::kStreamRows ||
             (m <= mf::kStreamCachedRows && k * n * int64_t(sizeof(T)) <= matmul_v1::kPackedBytes)) {
    mf::multiply_streaming(out, a, b, m, k, n);
  } else {
    mf::multiply_packed(out, a, b, m, k, n);
  }
}

}  // namespace scangen_rt_v1

#endif  // SCANGEN_CPU_FAST_V1_H
