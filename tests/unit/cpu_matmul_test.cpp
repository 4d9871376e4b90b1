// The matrix product of emitted CPU code (templates/cpu/scangen_cpu_matmul.h) against the
// interpreter's triple loop: bit for bit, for every dtype, over shapes on both sides of every block
// edge of the kernel, with -0.0, NaN, infinities, denormals and integer overflow. CMake builds
// this file twice: with the project's flags, and with the JIT's (-O3 -march=native
// -ffp-contract=off -fwrapv -DSCANGEN_FWRAPV), which picks other vector widths and integer code.
#define BOOST_TEST_MODULE cpu_matmul
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "scangen_scalar.h"
#include "scangen_cpu_matmul.h"

namespace {

namespace sc = scangen::scalar_v1;
namespace mm = scangen_rt_v1::matmul_v1;
using Strict = mm::StrictTile;

// The interpreter's loop (generator/src/interpreter/interpreter.cpp, visit_MatMul).
template <class T>
std::vector<T> reference(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t k, int64_t n) {
  std::vector<T> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T acc = T(0);
      for (int64_t p = 0; p < k; ++p) acc = sc::add(acc, sc::mul(a[size_t(i * k + p)], b[size_t(p * n + j)]));
      out[size_t(i * n + j)] = acc;
    }
  return out;
}

// Equal bits, or both NaN: which NaN payload an add of two NaNs keeps depends on the order of its
// operands, which compilers take as commutative; the interpreter promises only a NaN.
template <class T> bool same(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) && std::isnan(y)) return true;
  }
  return std::memcmp(&x, &y, sizeof x) == 0;
}

enum class Values { Ordinary, Special, NegativeZeros };

template <class T> T ordinary(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    // Mantissas that do not fit after a few adds, so every change of order changes bits.
    std::uniform_real_distribution<T> unit(T(-1), T(1));
    std::uniform_int_distribution<int> exponent(-6, 6);
    return std::ldexp(unit(rng), exponent(rng));
  } else {
    // The whole range: products and sums wrap.
    return static_cast<T>(rng());
  }
}

template <class T> T special(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    using lim = std::numeric_limits<T>;
    const T values[] = {T(-0.0), T(0.0), lim::quiet_NaN(), lim::infinity(), -lim::infinity(),
                        lim::denorm_min(), -lim::denorm_min() * T(3), lim::min() / T(4), lim::max(), -lim::max(),
                        lim::min(), T(1e-30)};
    std::uniform_int_distribution<size_t> pick(0, std::size(values) - 1);
    return values[pick(rng)];
  } else {
    const T values[] = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(-1), T(0), T(1)};
    std::uniform_int_distribution<size_t> pick(0, std::size(values) - 1);
    return values[pick(rng)];
  }
}

template <class T> std::vector<T> fill(size_t count, Values values, std::mt19937_64& rng, bool negative) {
  std::vector<T> v(count);
  std::bernoulli_distribution rare(0.02);
  for (T& x : v) {
    if (values == Values::NegativeZeros)
      x = negative ? T(-0.0) : T(1 + int(rng() % 3));
    else
      x = values == Values::Special && rare(rng) ? special<T>(rng) : ordinary<T>(rng);
  }
  return v;
}

// Runs the kernel into a buffer with guards on both sides, filled with junk beforehand.
template <class T> void check_shape(int64_t m, int64_t k, int64_t n, Values values, std::mt19937_64& rng) {
  std::vector<T> a = fill<T>(size_t(m * k), values, rng, true);
  std::vector<T> b = fill<T>(size_t(k * n), values, rng, false);
  std::vector<T> expected = reference(a, b, m, k, n);
  constexpr size_t kGuard = 64;
  const T junk = std::is_floating_point_v<T> ? T(12345.5) : T(77);
  std::vector<T> out(size_t(m * n) + 2 * kGuard, junk);
  scangen_rt_v1::matmul(out.data() + kGuard, a.data(), b.data(), m, k, n);
  for (size_t g = 0; g < kGuard; ++g) {
    if (!same(out[g], junk) || !same(out[kGuard + size_t(m * n) + g], junk)) {
      BOOST_ERROR("writes outside out: m=" << m << " k=" << k << " n=" << n);
      return;
    }
  }
  for (int64_t e = 0; e < m * n; ++e) {
    if (!same(out[kGuard + size_t(e)], expected[size_t(e)])) {
      BOOST_ERROR("m=" << m << " k=" << k << " n=" << n << " element (" << e / n << ", " << e % n
                       << "): " << out[kGuard + size_t(e)] << ", want " << expected[size_t(e)]);
      return;
    }
  }
}

// Sizes on both sides of every edge of the blocking, for type T.
template <class T> std::vector<int64_t> row_counts() {
  const int64_t r = Strict::kMaxRows, s = mm::kStreamRows<Strict>;
  return {0, 1, 2, 3, r - 1, r, r + 1, 2 * r + 3, s - 1, s, s + 1, s + r + 5, 100};
}
template <class T> std::vector<int64_t> column_counts() {
  const int64_t w = mm::kWidth<T>, p = mm::kPanelColumns<Strict, T>, c = mm::kBlockColumns<Strict, T>;
  // Tiles that read b in place: widest for one row, narrowest for kMaxRows rows.
  const int64_t one_row = Strict::stream_vectors(1) * w, full = Strict::stream_vectors(Strict::kMaxRows) * w;
  return {0,     1,     2,     w - 1, w,           w + 1,       3 * w + 5,    p - 1,        p,
          p + 1, c - 1, c,     c + 1, one_row - 1, one_row + 1, full + w + 3, 2 * c + p + 3};
}
template <class T> std::vector<int64_t> depths() {
  const int64_t d = mm::kDepthBlock;
  return {0, 1, 2, 7, 63, 64, 65, d - 1, d, d + 1, 2 * d + 3};
}

using Types = std::tuple<float, double, int32_t, int64_t>;

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(every_block_edge, T, Types) {
  std::mt19937_64 rng(15);
  // All combinations of the edges would take minutes with the naive reference: each dimension's
  // edges against a few values of the others, then a random sample of the rest.
  const std::vector<int64_t> ms = row_counts<T>(), ks = depths<T>(), ns = column_counts<T>();
  for (int64_t m : ms)
    for (int64_t n : ns) check_shape<T>(m, 70, n, Values::Ordinary, rng);
  for (int64_t k : ks)
    for (int64_t m : {int64_t(1), int64_t(Strict::kMaxRows), int64_t(mm::kStreamRows<Strict> + 3)})
      for (int64_t n : {int64_t(mm::kWidth<T> + 3), mm::kPanelColumns<Strict, T> * 2 + 1})
        check_shape<T>(m, k, n, Values::Ordinary, rng);
  std::uniform_int_distribution<size_t> pick_m(0, ms.size() - 1), pick_k(0, ks.size() - 1), pick_n(0, ns.size() - 1);
  for (int trial = 0; trial < 60; ++trial)
    check_shape<T>(ms[pick_m(rng)], ks[pick_k(rng)], ns[pick_n(rng)], Values::Ordinary, rng);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(special_values, T, Types) {
  std::mt19937_64 rng(16);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 300, 70}, {5, 40, 33}, {8, 257, 129},
                         {37, 260, 300}, {64, 64, 3}, {3, 5, 1}})
    check_shape<T>(m, k, n, Values::Special, rng);
}

// Sums of -0.0 products start from +0, so they are +0 (a kernel starting from the first product
// would give -0).
BOOST_AUTO_TEST_CASE_TEMPLATE(negative_zero_products_sum_to_positive_zero, T, Types) {
  std::mt19937_64 rng(17);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 3, 40}, {9, 2, 17}, {40, 300, 70}})
    check_shape<T>(m, k, n, Values::NegativeZeros, rng);
}

// More than kMaxRows rows (up to kStreamWideRows) times a b beyond kStreamWideBytes: one group of
// rows over b in place, with the narrower last tile at the right edge.
BOOST_AUTO_TEST_CASE_TEMPLATE(wide_streaming_rows, T, Types) {
  std::mt19937_64 rng(19);
  const int64_t k = 65;
  const int64_t n = mm::kStreamWideBytes / (k * int64_t(sizeof(T))) + mm::kWidth<T> + 3;
  for (int64_t m : {int64_t(Strict::kMaxRows + 1), int64_t(5), int64_t(Strict::kStreamWideRows)})
    check_shape<T>(m, k, n, Values::Ordinary, rng);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(large, T, Types) {
  std::mt19937_64 rng(18);
  check_shape<T>(300, 600, 550, Values::Ordinary, rng);
  check_shape<T>(4, 700, 1000, Values::Ordinary, rng);
}

// The integers wrap as the scalar operations do (checked against them above); here one case whose
// result is known without the reference: max * 2 + max * 2 wraps to -4.
BOOST_AUTO_TEST_CASE(integers_wrap) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> a(2 * 40, big), b(40 * 40, 2), out(2 * 40, 0);
  for (int p = 2; p < 40; ++p)
    for (int j = 0; j < 40; ++j) b[size_t(p * 40 + j)] = 0;
  scangen_rt_v1::matmul(out.data(), a.data(), b.data(), 2, 40, 40);
  for (int32_t x : out) BOOST_TEST(x == -4);
}
