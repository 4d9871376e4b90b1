// The fast floating-point mode's support code (templates/cpu/scangen_cpu_fast.h) against
// references in higher precision, with the error bounds docs/performance.md states:
//  - matmul_fast: |out - exact| <= gamma_k * sum_p |a[i][p] * b[p][j]| per output, gamma_k =
//    k u / (1 - k u) (u: the unit roundoff), the bound of a k-term dot product with FMA in any
//    order; over shapes on both sides of the kernel's tile and block edges, f32 and f64;
//  - the vectorizable math functions, called in loops the compiler vectorizes with libmvec: at
//    most 4 ulp from the correctly rounded result (glibc's documented bound for libmvec), sigmoid
//    6 ulp (its exp, one add and one divide);
//  - NaN and infinities where the strict result has them.
// Built with the JIT's flags and the fast mode's (tests/unit/CMakeLists.txt).
#define BOOST_TEST_MODULE cpu_fast
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "scangen_scalar.h"
#include "scangen_cpu_matmul.h"
#include "scangen_cpu_fast.h"

namespace {

namespace fast = scangen_rt_v1::fast_v1;

// A wider type for the references: long double (64-bit mantissa on x86-64) for both.
using Wide = long double;

template <class T> std::vector<T> random_values(size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<T> unit(T(-1), T(1));
  std::uniform_int_distribution<int> exponent(-4, 4);
  std::vector<T> v(count);
  for (T& x : v) x = std::ldexp(unit(rng), exponent(rng));
  return v;
}

template <class T> void check_product(int64_t m, int64_t k, int64_t n, std::mt19937_64& rng) {
  const std::vector<T> a = random_values<T>(size_t(m * k), rng), b = random_values<T>(size_t(k * n), rng);
  std::vector<T> out(size_t(m * n), std::numeric_limits<T>::quiet_NaN());
  scangen_rt_v1::matmul_fast(out.data(), a.data(), b.data(), m, k, n);
  const Wide u = Wide(std::numeric_limits<T>::epsilon()) / 2;
  const Wide gamma = Wide(k) * u / (1 - Wide(k) * u);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Wide exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const Wide term = Wide(a[size_t(i * k + p)]) * Wide(b[size_t(p * n + j)]);
        exact += term;
        magnitude += std::fabs(term);
      }
      const Wide got = out[size_t(i * n + j)];
      // The bound, plus the final rounding of the exact sum to T.
      const Wide bound = gamma * magnitude + u * std::fabs(exact);
      if (!(std::fabs(got - exact) <= bound) && bad++ < 5)
        BOOST_ERROR("m=" << m << " k=" << k << " n=" << n << " out[" << i << "][" << j << "] = " << double(got)
                         << ", exact " << double(exact) << ", bound " << double(bound));
    }
  BOOST_TEST(bad == 0, "m=" << m << " k=" << k << " n=" << n << ": " << bad << " outputs outside the bound");
}

template <class T> void check_products() {
  std::mt19937_64 rng(15);
  const int64_t W = scangen_rt_v1::matmul_v1::kWidth<T>;
  // Rows: matrix-vector, the in-place path's edges, the packed path; columns: narrow (scalar),
  // one vector, tiles with a remainder, more than one packed block; depth: more than one block.
  for (int64_t m : {int64_t(1), int64_t(2), int64_t(3), int64_t(4), int64_t(13), int64_t(70)})
    for (int64_t n : {int64_t(1), W - 1, W, 3 * W + 5, int64_t(300)})
      for (int64_t k : {int64_t(1), int64_t(17), int64_t(300)}) check_product<T>(m, k, n, rng);
}

BOOST_AUTO_TEST_CASE(product_f32) { check_products<float>(); }
BOOST_AUTO_TEST_CASE(product_f64) { check_products<double>(); }

BOOST_AUTO_TEST_CASE(product_special_values) {
  // A NaN or an infinity in a row of a reaches every output of that row, as in strict mode.
  const int64_t m = 4, k = 40, n = 40;
  std::vector<float> a(size_t(m * k), 1.0f), b(size_t(k * n), 0.5f), out(size_t(m * n));
  a[size_t(1 * k + 7)] = std::numeric_limits<float>::quiet_NaN();
  a[size_t(2 * k + 3)] = std::numeric_limits<float>::infinity();
  scangen_rt_v1::matmul_fast(out.data(), a.data(), b.data(), m, k, n);
  for (int64_t j = 0; j < n; ++j) {
    BOOST_TEST(out[size_t(j)] == 20.0f);
    BOOST_TEST(std::isnan(out[size_t(n + j)]));
    BOOST_TEST(out[size_t(2 * n + j)] == std::numeric_limits<float>::infinity());
  }
}

// ulps between x and the correctly rounded y (in units of T's spacing at y).
template <class T> Wide ulps(T x, Wide y) {
  const Wide spacing = std::nextafter(T(std::fabs(y)), std::numeric_limits<T>::infinity()) - T(std::fabs(y));
  return std::fabs(Wide(x) - y) / spacing;
}

// The functions on arrays (a loop the compiler vectorizes), against long double references.
template <class T, class Fast, class Reference>
void check_function(const char* name, Fast fast_fn, Reference reference, T lo, T hi, double max_ulps) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<T> pick(lo, hi);
  const size_t count = 4099;  // whole vectors and a scalar tail
  std::vector<T> x(count), y(count);
  for (T& v : x) v = pick(rng);
  x[0] = T(0);
  for (size_t i = 0; i < count; ++i) y[i] = fast_fn(x[i]);
  double worst = 0;
  for (size_t i = 0; i < count; ++i) worst = std::max(worst, double(ulps<T>(y[i], reference(Wide(x[i])))));
  BOOST_TEST_MESSAGE(name << (sizeof(T) == 4 ? " f32" : " f64") << ": at most " << worst << " ulp");
  BOOST_TEST(worst <= max_ulps, name << ": " << worst << " ulp");
}

template <class T> void check_functions() {
  check_function<T>("exp", [](T v) { return fast::exp(v); }, [](Wide v) { return std::exp(v); }, T(-80), T(80), 4);
  check_function<T>("log", [](T v) { return fast::log(v); }, [](Wide v) { return std::log(v); }, T(1e-3), T(1e3), 4);
  check_function<T>("log1p", [](T v) { return fast::log1p(v); }, [](Wide v) { return std::log1p(v); }, T(-0.9), T(10), 4);
  check_function<T>("expm1", [](T v) { return fast::expm1(v); }, [](Wide v) { return std::expm1(v); }, T(-10), T(10), 4);
  check_function<T>("sin", [](T v) { return fast::sin(v); }, [](Wide v) { return std::sin(v); }, T(-100), T(100), 4);
  check_function<T>("cos", [](T v) { return fast::cos(v); }, [](Wide v) { return std::cos(v); }, T(-100), T(100), 4);
  check_function<T>("tanh", [](T v) { return fast::tanh(v); }, [](Wide v) { return std::tanh(v); }, T(-10), T(10), 4);
  check_function<T>("sigmoid", [](T v) { return fast::sigmoid(v); },
                    [](Wide v) { return 1 / (1 + std::exp(-v)); }, T(-20), T(20), 6);
}

BOOST_AUTO_TEST_CASE(functions_f32) { check_functions<float>(); }
BOOST_AUTO_TEST_CASE(functions_f64) { check_functions<double>(); }

BOOST_AUTO_TEST_CASE(function_special_values) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, inf, -inf, 0.0f, -0.0f, 100.0f, -100.0f, 1e-30f};
  std::vector<float> t(x.size()), e(x.size()), s(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    t[i] = fast::tanh(x[i]);
    e[i] = fast::exp(x[i]);
    s[i] = fast::sigmoid(x[i]);
  }
  BOOST_TEST(std::isnan(t[0]));
  BOOST_TEST(std::isnan(e[0]));
  BOOST_TEST(std::isnan(s[0]));
  BOOST_TEST(t[1] == 1.0f);
  BOOST_TEST(t[2] == -1.0f);
  BOOST_TEST(e[1] == inf);
  BOOST_TEST(e[2] == 0.0f);
  BOOST_TEST(s[1] == 1.0f);
  BOOST_TEST(s[2] == 0.0f);
  BOOST_TEST(e[5] == inf);
  BOOST_TEST(t[6] == -1.0f);
}

}  // namespace
