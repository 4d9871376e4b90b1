// The matrix product of emitted CPU code: out[m x n] = a[m x k] @ b[k x n], all row-major and
// dense, for float, double, int32_t and int64_t. Every generated source embeds this text after
// scangen_scalar.h; it needs nothing else.
//
// What it computes. Each out[i][j] is the sum, in increasing p from +0, of a[i][p] * b[p][j], with
// every product and every sum rounded to T on its own (integers wrap): exactly the triple loop of
// the interpreter (generator/src/interpreter/interpreter.cpp, visit_MatMul), so every backend agrees bit for
// bit. That order forbids splitting one sum into partial sums or fusing multiply and add (FMA):
// both would change the rounding. What it leaves free is everything across output elements, so
// the kernel vectorizes over output columns and keeps a tile of outputs in registers.
//
// How it is blocked. The blocking (multiply<Tile>) takes the tile kernel as a template parameter:
// StrictTile here, the FMA tile of scangen_cpu_fast.h for the fast floating-point mode.
//  - Micro-kernel (multiply_tile): a tile of kRows x (kVectors * W) outputs lives in registers as
//    vectors of W columns. For each p it loads kVectors vectors of row p of b, multiplies each by
//    a[r][p] (a scalar broadcast) and adds the product to the accumulator: one multiply and one add
//    per output per p, in order. The tile is big enough that the adds of one accumulator are far
//    apart (the latency of an add hides behind the others) and each loaded b vector serves kRows
//    multiplies.
//  - Many rows (m > kStreamRows): b is packed, kDepthBlock rows and kBlockColumns columns at a
//    time (kPackedBytes, sized to stay in L2), into panels of kPanelVectors * W columns stored
//    contiguously (zero-padded at the right edge); each group of kMaxRows rows of a then runs
//    over every panel, its slice of a staying in L1. A depth block after the first resumes
//    from the partial sums stored in out, which are T values: storing and reloading them rounds
//    nothing, so the order of each sum is unchanged.
//  - Few rows (m <= kStreamRows, e.g. h @ W_hh for a small batch; a few more when b is small
//    enough to stay in L2): packing b would cost about as much as the product, so b is read where
//    it is, once per group of rows; the tile is widened when the rows are few so that there are
//    still enough accumulators.
//  - Fewer columns than one vector (n = 1: a matrix times a vector): scalar sums, a few rows at a
//    time.
//  - Columns left over: in place, one last tile ending at column n, overlapping columns already
//    done (computed again in the same order: the same bits); packed, the last panel is
//    zero-padded and its tile goes through memory. No load reads past b, no store past out.
// The packing buffer is a fixed-size thread_local array: a product in a time loop allocates
// nothing. `out` must not overlap `a` or `b` (the lowering always gives the product its own
// buffer).
#ifndef SCANGEN_CPU_MATMUL_V1_H
#define SCANGEN_CPU_MATMUL_V1_H

#include <cstdint>
#include <cstring>
#include <type_traits>

// GCC warns of out-of-bounds accesses in the tiles of more rows than a call with constant shapes
// has: code that never runs (with_rows picks the tile of the actual row count).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

namespace scangen_rt_v1 {
namespace matmul_v1 {

// Vector width and register count of the target, from the compiler's predefined macros; the
// vectors are GCC/Clang vector extensions, so the same code compiles for any target.
#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
inline constexpr int kVectorRegisters = 32;
#elif defined(__AVX__)
inline constexpr int kVectorBytes = 32;
inline constexpr int kVectorRegisters = 16;
#elif defined(__aarch64__)
inline constexpr int kVectorBytes = 16;
inline constexpr int kVectorRegisters = 32;
#else
inline constexpr int kVectorBytes = 16;
inline constexpr int kVectorRegisters = 16;
#endif

// Accumulators a register tile may hold, leaving registers for the row of b and a broadcast.
inline constexpr int kAccumulators = kVectorRegisters >= 32 ? 24 : 12;
// The depth of one packed block of b.
inline constexpr int64_t kDepthBlock = 256;
// Bytes of packed b: a block that stays in L2 (1 MiB per core on current x86 server cores) next
// to the rows of a and out passing through.
inline constexpr int64_t kPackedBytes = 256 * 1024;
// b is read in place rather than packed up to kStreamRows<Tile> rows (4 groups of rows), and up
// to kStreamCachedRows rows when it fits in kPackedBytes (it then stays in L2 from one group of
// rows to the next). Measured with bench/matmul_bench.cpp on Zen 4: packing wins at 32 rows when
// b is 1 MiB, loses when it is 256 KiB.
template <class Tile> inline constexpr int64_t kStreamRows = 4 * Tile::kMaxRows;
inline constexpr int64_t kStreamCachedRows = 64;
// Up to Tile::kStreamWideRows rows times a b larger than kStreamWideBytes (beyond the caches: a
// beam's hidden states times an output projection of 32,000 columns) form one group, so that b
// comes from memory once rather than once per kMaxRows rows.
inline constexpr int64_t kStreamWideBytes = 8 * 1024 * 1024;

// Integers compute in the unsigned type of the same width: the same bits as wrapping signed
// arithmetic, without signed overflow.
template <class T, bool = std::is_integral_v<T>> struct LaneOf { using type = T; };
template <class T> struct LaneOf<T, true> { using type = std::make_unsigned_t<T>; };
template <class T> using Lane = typename LaneOf<T>::type;
template <class T> struct VectorOf {
  typedef Lane<T> type __attribute__((vector_size(kVectorBytes)));
};
template <class T> using Vector = typename VectorOf<T>::type;
template <class T> inline constexpr int kWidth = kVectorBytes / int(sizeof(T));

template <class T> inline Vector<T> load(const T* p) {
  Vector<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> inline void store(T* p, const Vector<T>& v) { std::memcpy(p, &v, sizeof v); }

// ---- the strict tile kernel

// The micro-kernel: c[r][0 .. kVectors*W) for r < kRows, summed over p < depth in increasing p,
// starting from +0 or, when `resume`, from the partial sums already in c. a[r][p] is at
// a[r * lda + p], b[p][j] at b[p * ldb + j]; every column of the tile must be readable in b and
// writable in c.
// Not inlined: one copy of each tile shape serves every caller (both paths, clipped tiles), which
// keeps emitted code quick to compile; one call per tile is nothing next to its `depth` steps.
template <class T, int kRows, int kVectors>
__attribute__((noinline)) void multiply_tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth,
                                             T* c, int64_t ldc, bool resume) {
  constexpr int W = kWidth<T>;
  Vector<T> acc[kRows][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) acc[r][v] = resume ? load(c + r * ldc + v * W) : Vector<T>{};
  for (int64_t p = 0; p < depth; ++p) {
    // Row p of b, then each a[r][p] times all of it. (Loading each b vector once for all rows
    // instead was slower: GCC then reloads b from memory in every multiply anyway.)
    Vector<T> b_p[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) b_p[v] = load(b + p * ldb + v * W);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const Lane<T> a_rp = static_cast<Lane<T>>(a[r * lda + p]);
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) {
        const Vector<T> product = b_p[v] * a_rp;
        acc[r][v] = acc[r][v] + product;
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) store(c + r * ldc + v * W, acc[r][v]);
}

// A tile kernel and its shapes, what the blocking below needs of it:
//   kMaxRows            rows of a register tile
//   kPanelVectors       vectors per row of a tile over packed panels
//   kStreamWideRows     the most rows of one group over a b beyond kStreamWideBytes (kMaxRows: none)
//   stream_vectors(R)   vectors per row of an R-row tile that reads b in place
//   tile<T, R, V>       the micro-kernel (multiply_tile's contract)
//   multiply_add(s, x, y)  s + x * y for the scalar sums of a matrix times a vector
// The strict kernel's: 3 rows of 8 vectors with 32 registers, 3 of 4 with 16. Few rows and wide
// tiles: each a[r][p] is broadcast to a whole vector, which seems to cost a slot of a
// floating-point pipe on Zen 4, so the fewer broadcasts per multiply the better. Measured on
// Zen 4 (bench/matmul_bench.cpp), f32, 256 x 256 x 256: 3 x 8 vectors 94 GFLOP/s, 6 x 4 87,
// 4 x 4 85, 8 x 2 77; with AVX2 only, 3 x 4 79, 4 x 2 71.
struct StrictTile {
  static constexpr int kMaxRows = 3;
  static constexpr int kPanelVectors = kAccumulators / kMaxRows;
  // Measured with bench/decode_bench.cpp on Zen 4: 8 x 512 @ 512 x 32,000 (65 MB) in 3 groups,
  // 21.7 ms; in one, see docs/performance.md.
  static constexpr int kStreamWideRows = 8;
  // As many as keep kAccumulators busy, at most 8.
  static constexpr int stream_vectors(int rows) {
    return kAccumulators / rows < 1 ? 1 : (kAccumulators / rows > 8 ? 8 : kAccumulators / rows);
  }
  template <class T, int kRows, int kVectors>
  static void tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth, T* c, int64_t ldc,
                   bool resume) {
    multiply_tile<T, kRows, kVectors>(a, lda, b, ldb, depth, c, ldc, resume);
  }
  template <class T> static Lane<T> multiply_add(Lane<T> sum, T x, T y) {
    using L = Lane<T>;
    return L(sum + L(static_cast<L>(x) * static_cast<L>(y)));
  }
};

// ---- the blocking, for any tile kernel

// The micro-kernel for a tile of which only the first `columns` columns exist in c: it runs on a
// copy of the tile in memory. b must still be readable over the whole tile (a padded copy).
template <class Tile, class T, int kRows, int kVectors>
inline void multiply_clipped_tile(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t depth, T* c,
                                  int64_t ldc, int64_t columns, bool resume) {
  constexpr int64_t kColumns = int64_t(kVectors) * kWidth<T>;
  alignas(64) T tile[kRows * kColumns] = {};
  if (resume)
    for (int r = 0; r < kRows; ++r) std::memcpy(tile + r * kColumns, c + r * ldc, size_t(columns) * sizeof(T));
  Tile::template tile<T, kRows, kVectors>(a, lda, b, ldb, depth, tile, kColumns, resume);
  for (int r = 0; r < kRows; ++r) std::memcpy(c + r * ldc, tile + r * kColumns, size_t(columns) * sizeof(T));
}

// Calls Kernel::run<R>(args...) with R = rows, for kRows <= rows <= kLast: a tile's row count is a
// compile-time constant, so the last, shorter group of rows gets a kernel of its own size.
template <class Kernel, int kRows, int kLast, class... Args>
inline void with_rows(int64_t rows, Args... args) {
  if constexpr (kRows < kLast) {
    if (rows != kRows) return with_rows<Kernel, kRows + 1, kLast>(rows, args...);
  }
  Kernel::template run<kRows>(args...);
}

// ---- few rows: b read in place

// All n (>= W) columns of a group of kRows rows, reading b in place, in tiles of kVectors vectors
// and, for the columns left over, one narrower tile that ends at column n. That last tile may
// overlap columns already done: it computes them again in the same order, so it writes the same
// bits, and no load reads past b nor store writes past out.
template <class Tile, class T> struct StreamRows {
  template <int kRows>
  static void run(const T* a, const T* b, T* out, int64_t k, int64_t n) {
    constexpr int64_t W = kWidth<T>;
    constexpr int kVectors = Tile::stream_vectors(kRows);
    // A tile of fewer than four accumulators waits on the latency of its adds.
    constexpr int kMinVectors = 4 / kRows < 1 ? 1 : (4 / kRows > kVectors ? kVectors : 4 / kRows);
    for (int64_t j = 0; j < n;) {
      // kVectors, halved while half still covers the rest (and keeps kMinVectors), and while the
      // tile is wider than all n columns.
      int vectors = kVectors;
      while (vectors / 2 >= kMinVectors && (vectors / 2) * W >= n - j) vectors /= 2;
      while (vectors * W > n) vectors /= 2;
      const int64_t start = j + vectors * W <= n ? j : n - vectors * W;
      multiply_tile_of_width<kRows, kVectors>(vectors, a, k, b + start, n, out + start, n);
      j = start + vectors * W;
    }
  }

  // The tile with `vectors` (kVectors halved 0 or more times) vectors per row.
  template <int kRows, int kVectors>
  static void multiply_tile_of_width(int vectors, const T* a, int64_t k, const T* b, int64_t ldb, T* out,
                                     int64_t ldo) {
    if constexpr (kVectors > 1) {
      if (vectors < kVectors) return multiply_tile_of_width<kRows, kVectors / 2>(vectors, a, k, b, ldb, out, ldo);
    }
    Tile::template tile<T, kRows, kVectors>(a, k, b, ldb, k, out, ldo, false);
  }
};

template <class Tile, class T>
inline void multiply_streaming(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  constexpr int kMaxRows = Tile::kMaxRows;
  if constexpr (Tile::kStreamWideRows > kMaxRows) {
    if (m > kMaxRows && m <= Tile::kStreamWideRows && k * n * int64_t(sizeof(T)) > kStreamWideBytes)
      return with_rows<StreamRows<Tile, T>, kMaxRows + 1, Tile::kStreamWideRows>(m, a, b, out, k, n);
  }
  for (int64_t i = 0; i < m; i += kMaxRows) {
    const int64_t rows = m - i < kMaxRows ? m - i : kMaxRows;
    with_rows<StreamRows<Tile, T>, 1, kMaxRows>(rows, a + i * k, b, out + i * n, k, n);
  }
}

// ---- many rows: b packed

template <class Tile, class T> inline constexpr int64_t kPanelColumns = int64_t(Tile::kPanelVectors) * kWidth<T>;
// Columns of b per packed block: as many whole panels as kPackedBytes holds at full depth.
template <class Tile, class T> inline constexpr int64_t kBlockColumns =
    kPackedBytes / (kDepthBlock * int64_t(sizeof(T))) / kPanelColumns<Tile, T> * kPanelColumns<Tile, T>;

// Copies b[0 .. depth)[0 .. columns) (rows ldb apart) into panels of kColumns columns, each
// panel depth x kColumns contiguous, the last one zero-padded.
template <int64_t kColumns, class T>
inline void pack_panels(const T* b, int64_t ldb, int64_t depth, int64_t columns, T* packed) {
  for (int64_t j0 = 0; j0 < columns; j0 += kColumns) {
    const int64_t width = columns - j0 < kColumns ? columns - j0 : kColumns;
    T* panel = packed + j0 * depth;
    for (int64_t p = 0; p < depth; ++p) {
      std::memcpy(panel + p * kColumns, b + p * ldb + j0, size_t(width) * sizeof(T));
      for (int64_t j = width; j < kColumns; ++j) panel[p * kColumns + j] = T(0);
    }
  }
}

// A group of kRows rows of a (depth columns, rows lda apart) times every packed panel of a block.
template <class Tile, class T> struct PanelRows {
  template <int kRows>
  static void run(const T* a, int64_t lda, const T* packed, int64_t depth, T* out, int64_t ldo, int64_t columns,
                  bool resume) {
    constexpr int64_t kColumns = kPanelColumns<Tile, T>;
    for (int64_t j0 = 0; j0 < columns; j0 += kColumns) {
      const T* panel = packed + j0 * depth;
      if (columns - j0 >= kColumns)
        Tile::template tile<T, kRows, Tile::kPanelVectors>(a, lda, panel, kColumns, depth, out + j0, ldo, resume);
      else
        multiply_clipped_tile<Tile, T, kRows, Tile::kPanelVectors>(a, lda, panel, kColumns, depth, out + j0,
                                                                   ldo, columns - j0, resume);
    }
  }
};

template <class Tile, class T>
inline void multiply_packed(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  constexpr int kMaxRows = Tile::kMaxRows;
  constexpr int64_t kColumns = kBlockColumns<Tile, T>;
  alignas(64) static thread_local T packed[kDepthBlock * kColumns];
  for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
    const int64_t columns = n - j0 < kColumns ? n - j0 : kColumns;
    for (int64_t p0 = 0; p0 < k; p0 += kDepthBlock) {
      const int64_t depth = k - p0 < kDepthBlock ? k - p0 : kDepthBlock;
      pack_panels<kPanelColumns<Tile, T>>(b + p0 * n + j0, n, depth, columns, packed);
      for (int64_t i = 0; i < m; i += kMaxRows) {
        const int64_t rows = m - i < kMaxRows ? m - i : kMaxRows;
        with_rows<PanelRows<Tile, T>, 1, kMaxRows>(rows, a + i * k + p0, k, static_cast<const T*>(packed), depth,
                                                   out + i * n + j0, n, columns, p0 > 0);
      }
    }
  }
}

// ---- fewer columns than a vector (a matrix times a vector): vectors over columns would be
// mostly padding, so each output is one scalar sum, four rows at a time so that four sums overlap.

template <class Tile, class T>
inline void multiply_narrow(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  using L = Lane<T>;
  constexpr int64_t kRows = 4;
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = 0;
    for (; i + kRows <= m; i += kRows) {
      L acc[kRows] = {};
      for (int64_t p = 0; p < k; ++p) {
        const T b_pj = b[p * n + j];
        for (int64_t r = 0; r < kRows; ++r) acc[r] = Tile::multiply_add(acc[r], a[(i + r) * k + p], b_pj);
      }
      for (int64_t r = 0; r < kRows; ++r) out[(i + r) * n + j] = static_cast<T>(acc[r]);
    }
    for (; i < m; ++i) {
      L acc = L(0);
      for (int64_t p = 0; p < k; ++p) acc = Tile::multiply_add(acc, a[i * k + p], b[p * n + j]);
      out[i * n + j] = static_cast<T>(acc);
    }
  }
}

// out[m x n] = a[m x k] @ b[k x n] with the tile kernel `Tile`: the path for the shape.
template <class Tile, class T>
inline void multiply(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m * n; ++i) out[i] = T(0);
  } else if (n < kWidth<T>) {
    multiply_narrow<Tile>(out, a, b, m, k, n);
  } else if (m <= kStreamRows<Tile> ||
             (m <= kStreamCachedRows && k * n * int64_t(sizeof(T)) <= kPackedBytes)) {
    multiply_streaming<Tile>(out, a, b, m, k, n);
  } else {
    multiply_packed<Tile>(out, a, b, m, k, n);
  }
}

}  // namespace matmul_v1

// out[m x n] = a[m x k] @ b[k x n] (the header comment above says in which order and how).
template <class T> inline void matmul(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "matmul of numbers");
  matmul_v1::multiply<matmul_v1::StrictTile>(out, a, b, m, k, n);
}

}  // namespace scangen_rt_v1

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // SCANGEN_CPU_MATMUL_V1_H
