// The reference interpreter, through whole programs: element semantics (scangen_scalar.h),
// broadcasting, reductions, matmul, indexing, set/inc, scans, and the checks of arguments and
// results with their exact messages.
#define BOOST_TEST_MODULE interpreter
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generator_test_support.h"

using namespace scangen;
using namespace scangen::testing;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// The only result of `fn f(PARAMS) -> RESULT { return EXPR }` for the given arguments.
HostTensor eval(const std::string& params, const std::string& result, const std::string& expr,
                const std::vector<HostTensor>& args) {
  std::string text = "fn f(" + params + ") -> " + result + " {\n  return " + expr + "\n}\n";
  BOOST_TEST_INFO("program: " << text);
  std::vector<HostTensor> r = run(text, args);
  BOOST_TEST_REQUIRE(r.size() == 1u);
  return r[0];
}

std::string eval_error(const std::string& params, const std::string& result, const std::string& expr,
                       const std::vector<HostTensor>& args) {
  return run_error("fn f(" + params + ") -> " + result + " {\n  return " + expr + "\n}\n", args);
}

template <class T> T one(const HostTensor& t) {
  std::vector<T> v = values<T>(t);
  BOOST_TEST_REQUIRE(v.size() == 1u);
  return v[0];
}

}  // namespace

BOOST_AUTO_TEST_SUITE(elements)

BOOST_AUTO_TEST_CASE(integer_division_truncates_like_cpp) {
  auto div = [](int64_t a, int64_t b) { return one<int64_t>(eval("a: i64, b: i64", "i64", "a / b", {scalar(a), scalar(b)})); };
  auto mod = [](int64_t a, int64_t b) { return one<int64_t>(eval("a: i64, b: i64", "i64", "a % b", {scalar(a), scalar(b)})); };
  BOOST_TEST(div(-7, 2) == -3);
  BOOST_TEST(div(7, -2) == -3);
  BOOST_TEST(div(7, 2) == 3);
  BOOST_TEST(mod(-7, 2) == -1);
  BOOST_TEST(mod(7, -2) == 1);
  BOOST_TEST(mod(-7, -2) == -1);
  // The one overflowing case wraps, with no trap.
  BOOST_TEST(div(INT64_MIN, -1) == INT64_MIN);
  BOOST_TEST(mod(INT64_MIN, -1) == 0);
  BOOST_TEST(values<int32_t>(eval("a: i32[3]", "i32[3]", "a / 3", {vec<int32_t>({-8, 8, -2})})) ==
             (std::vector<int32_t>{-2, 2, 0}));
}

BOOST_AUTO_TEST_CASE(integer_division_by_zero_is_an_error_with_its_location) {
  BOOST_TEST(eval_error("a: i64, b: i64", "i64", "a / b", {scalar<int64_t>(1), scalar<int64_t>(0)}) ==
             "2:12: integer division by zero");
  BOOST_TEST(eval_error("a: i32, b: i32", "i32", "a + a % b", {scalar<int32_t>(1), scalar<int32_t>(0)}) ==
             "2:16: integer division by zero");
  // Floats divide by zero quietly.
  BOOST_TEST(one<float>(eval("a: f32, b: f32", "f32", "a / b", {scalar(1.0f), scalar(0.0f)})) == kInf);
}

BOOST_AUTO_TEST_CASE(float_remainder_is_fmod) {
  BOOST_TEST(one<float>(eval("a: f32, b: f32", "f32", "a % b", {scalar(-7.5f), scalar(2.0f)})) == -1.5f);
  BOOST_TEST(one<double>(eval("a: f64, b: f64", "f64", "a % b", {scalar(7.5), scalar(-2.0)})) == 1.5);
  BOOST_TEST(std::isnan(one<float>(eval("a: f32, b: f32", "f32", "a % b", {scalar(1.0f), scalar(0.0f)}))));
}

BOOST_AUTO_TEST_CASE(integer_power) {
  auto pw = [](int64_t a, int64_t b) { return one<int64_t>(eval("a: i64, b: i64", "i64", "a ** b", {scalar(a), scalar(b)})); };
  BOOST_TEST(pw(3, 4) == 81);
  BOOST_TEST(pw(-2, 3) == -8);
  BOOST_TEST(pw(2, 62) == int64_t(1) << 62);
  BOOST_TEST(pw(7, 0) == 1);
  BOOST_TEST(pw(0, 0) == 1);
  BOOST_TEST(pw(2, 64) == 0);  // wraps
  BOOST_TEST(one<int32_t>(eval("a: i32", "i32", "a ** 31", {scalar<int32_t>(2)})) == INT32_MIN);
  BOOST_TEST(eval_error("a: i64, b: i64", "i64", "a ** b", {scalar<int64_t>(2), scalar<int64_t>(-1)}) ==
             "2:12: negative integer exponent -1");
  // A float power is std::pow.
  BOOST_TEST(one<float>(eval("a: f32", "f32", "a ** -1", {scalar(4.0f)})) == 0.25f);
}

BOOST_AUTO_TEST_CASE(integer_overflow_wraps) {
  BOOST_TEST(one<int32_t>(eval("a: i32", "i32", "a + 1", {scalar<int32_t>(INT32_MAX)})) == INT32_MIN);
  BOOST_TEST(one<int32_t>(eval("a: i32", "i32", "a * 2", {scalar<int32_t>(0x40000000)})) == INT32_MIN);
  BOOST_TEST(one<int32_t>(eval("a: i32", "i32", "-a", {scalar<int32_t>(INT32_MIN)})) == INT32_MIN);
  BOOST_TEST(one<int32_t>(eval("a: i32", "i32", "abs(a)", {scalar<int32_t>(INT32_MIN)})) == INT32_MIN);
  BOOST_TEST(one<int64_t>(eval("a: i64", "i64", "a - 1", {scalar<int64_t>(INT64_MIN)})) == INT64_MAX);
  // Narrowing casts between integers wrap too.
  BOOST_TEST(one<int32_t>(eval("a: i64", "i32", "i32(a)", {scalar<int64_t>(0x100000005LL)})) == 5);
}

BOOST_AUTO_TEST_CASE(float_to_int_casts_truncate_and_saturate) {
  HostTensor x = vec<float>({1e10f, -1e10f, kNaN, -2.7f, 2.7f, kInf});
  BOOST_TEST(values<int32_t>(eval("x: f32[6]", "i32[6]", "i32(x)", {x})) ==
             (std::vector<int32_t>{INT32_MAX, INT32_MIN, 0, -2, 2, INT32_MAX}));
  BOOST_TEST(values<int64_t>(eval("x: f32[6]", "i64[6]", "i64(x)", {x})) ==
             (std::vector<int64_t>{10000000000LL, -10000000000LL, 0, -2, 2, INT64_MAX}));
  BOOST_TEST(values<bool>(eval("x: f32[3]", "bool[3]", "bool(x)", {vec<float>({0.0f, -0.5f, kNaN})})) ==
             (std::vector<bool>{false, true, true}));
  BOOST_TEST(values<float>(eval("x: i32[2]", "f32[2]", "f32(x)", {vec<int32_t>({-3, 16777217})})) ==
             (std::vector<float>{-3.0f, 16777216.0f}));
}

BOOST_AUTO_TEST_CASE(min_and_max_propagate_nan) {
  HostTensor a = vec<float>({1, kNaN, 3, kNaN});
  HostTensor b = vec<float>({kNaN, 2, 1, kNaN});
  std::vector<float> mn = values<float>(eval("a: f32[4], b: f32[4]", "f32[4]", "min(a, b)", {a, b}));
  std::vector<float> mx = values<float>(eval("a: f32[4], b: f32[4]", "f32[4]", "max(a, b)", {a, b}));
  BOOST_TEST(std::isnan(mn[0]));
  BOOST_TEST(std::isnan(mn[1]));
  BOOST_TEST(mn[2] == 1.0f);
  BOOST_TEST(std::isnan(mn[3]));
  BOOST_TEST(std::isnan(mx[0]));
  BOOST_TEST(std::isnan(mx[1]));
  BOOST_TEST(mx[2] == 3.0f);
  // Reductions too.
  BOOST_TEST(std::isnan(one<float>(eval("a: f32[3]", "f32", "max(a)", {vec<float>({1, kNaN, 3})}))));
  BOOST_TEST(std::isnan(one<float>(eval("a: f32[3]", "f32", "min(a)", {vec<float>({kNaN, 0, 3})}))));
  // relu and clip are max/min too.
  BOOST_TEST(values<float>(eval("a: f32[3]", "f32[3]", "relu(a)", {vec<float>({-1, 0, 2})})) == (std::vector<float>{0, 0, 2}));
  BOOST_TEST(values<float>(eval("a: f32[3]", "f32[3]", "clip(a, -1, 1)", {vec<float>({-5, 0.5, 9})})) ==
             (std::vector<float>{-1, 0.5, 1}));
}

BOOST_AUTO_TEST_CASE(other_element_functions) {
  BOOST_TEST(values<float>(eval("a: f32[4]", "f32[4]", "sign(a)", {vec<float>({-2, 0, 3, -0.0f})})) ==
             (std::vector<float>{-1, 0, 1, 0}));
  BOOST_TEST(values<int32_t>(eval("a: i32[3]", "i32[3]", "sign(a)", {vec<int32_t>({-7, 0, 9})})) ==
             (std::vector<int32_t>{-1, 0, 1}));
  BOOST_TEST(values<float>(eval("a: f32[2]", "f32[2]", "floor(a) + ceil(a)", {vec<float>({-1.5f, 2.25f})})) ==
             (std::vector<float>{-3, 5}));
  BOOST_TEST(one<double>(eval("a: i32", "f64", "sqrt(a)", {scalar<int32_t>(9)})) == 3.0);
  BOOST_TEST(one<double>(eval("a: i32", "f64", "exp(a)", {scalar<int32_t>(0)})) == 1.0);
  BOOST_TEST(one<float>(eval("a: f32", "f32", "sigmoid(a)", {scalar(0.0f)})) == 0.5f);
  BOOST_TEST(values<int64_t>(eval("c: bool[3], a: i64[3]", "i64[3]", "where(c, a, -a)",
                                  {vec<bool>({true, false, true}), vec<int64_t>({1, 2, 3})})) ==
             (std::vector<int64_t>{1, -2, 3}));
  BOOST_TEST(one<float>(eval("c: bool, a: f32", "f32", "c ? a : a * 2", {scalar(false), scalar(1.5f)})) == 3.0f);
  BOOST_TEST(values<bool>(eval("a: i32[3], b: i32[3]", "bool[3]", "a < b && !(a == 0) || b > 5",
                               {vec<int32_t>({1, 0, 9}), vec<int32_t>({2, 1, 6})})) ==
             (std::vector<bool>{true, false, true}));
}

BOOST_AUTO_TEST_CASE(broadcasting) {
  HostTensor col = mat<float>({1, 2}, 2, 1);
  HostTensor row = vec<float>({10, 20, 30});
  BOOST_TEST(values<float>(eval("a: f32[2, 1], b: f32[3]", "f32[2, 3]", "a + b", {col, row})) ==
             (std::vector<float>{11, 21, 31, 12, 22, 32}));
  BOOST_TEST(values<float>(eval("a: f32[2, 1], b: f32", "f32[2, 1]", "a * b", {col, scalar(3.0f)})) ==
             (std::vector<float>{3, 6}));
  // Checked at run time when the static shapes cannot tell.
  BOOST_TEST(eval_error("a: f32[n], b: f32[m]", "f32[?]", "a + b", {vec<float>({1, 2}), vec<float>({1, 2, 3})}) ==
             "2:12: shapes [2] and [3] cannot be broadcast together");
  BOOST_TEST(values<float>(eval("a: f32[n], b: f32[m]", "f32[?]", "a + b", {vec<float>({1, 2}), vec<float>({5})})) ==
             (std::vector<float>{6, 7}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reductions_and_matmul)

BOOST_AUTO_TEST_CASE(reductions_with_and_without_axis) {
  HostTensor m = mat<int32_t>({1, 2, 3, 4, 5, 6}, 2, 3);
  BOOST_TEST(one<int32_t>(eval("m: i32[2, 3]", "i32", "sum(m)", {m})) == 21);
  BOOST_TEST(values<int32_t>(eval("m: i32[2, 3]", "i32[3]", "sum(m, axis = 0)", {m})) == (std::vector<int32_t>{5, 7, 9}));
  BOOST_TEST(values<int32_t>(eval("m: i32[2, 3]", "i32[2]", "sum(m, axis = 1)", {m})) == (std::vector<int32_t>{6, 15}));
  BOOST_TEST(values<int32_t>(eval("m: i32[2, 3]", "i32[2]", "max(m, axis = -1)", {m})) == (std::vector<int32_t>{3, 6}));
  BOOST_TEST(values<int32_t>(eval("m: i32[2, 3]", "i32[3]", "min(m, axis = 0)", {m})) == (std::vector<int32_t>{1, 2, 3}));
  BOOST_TEST(one<int32_t>(eval("m: i32[2, 3]", "i32", "prod(m)", {m})) == 720);
  BOOST_TEST(values<double>(eval("m: i32[2, 3]", "f64[2]", "mean(m, axis = 1)", {m})) == (std::vector<double>{2, 5}));
  BOOST_TEST(one<double>(eval("m: i32[2, 3]", "f64", "mean(m)", {m})) == 3.5);
  BOOST_TEST(one<float>(eval("v: f32[4]", "f32", "mean(v)", {vec<float>({1, 2, 3, 5})})) == 2.75f);
  // The sum keeps the dtype, and wraps.
  BOOST_TEST(one<int32_t>(eval("v: i32[2]", "i32", "sum(v)", {vec<int32_t>({INT32_MAX, 1})})) == INT32_MIN);
}

BOOST_AUTO_TEST_CASE(reductions_of_empty_arrays) {
  HostTensor empty = HostTensor::from_vector<float>({}, {0});
  BOOST_TEST(one<float>(eval("v: f32[n]", "f32", "sum(v)", {empty})) == 0.0f);
  BOOST_TEST(one<float>(eval("v: f32[n]", "f32", "prod(v)", {empty})) == 1.0f);
  BOOST_TEST(std::isnan(one<float>(eval("v: f32[n]", "f32", "mean(v)", {empty}))));
  BOOST_TEST(eval_error("v: f32[n]", "f32", "max(v)", {empty}) == "2:10: max of an empty array");
  BOOST_TEST(eval_error("v: f32[n]", "f32", "min(v)", {empty}) == "2:10: min of an empty array");
  HostTensor rows0 = HostTensor::from_vector<float>({}, {0, 2});
  BOOST_TEST(eval_error("m: f32[n, 2]", "f32[2]", "max(m, axis = 0)", {rows0}) == "2:10: max over an axis of size 0");
  // Reducing the other axis of a [0, 2] array gives an empty result, no error.
  BOOST_TEST(eval("m: f32[n, 2]", "f32[?]", "max(m, axis = 1)", {rows0}).shape() == (Shape{0}));
}

BOOST_AUTO_TEST_CASE(matmul_of_every_shape_combination) {
  HostTensor v2 = vec<float>({1, 2});
  HostTensor m23 = mat<float>({1, 2, 3, 4, 5, 6}, 2, 3);
  HostTensor v3 = vec<float>({1, 0, -1});
  HostTensor m32 = mat<float>({1, 0, 0, 1, 1, 1}, 3, 2);
  BOOST_TEST(one<float>(eval("a: f32[2], b: f32[2]", "f32", "a @ b", {v2, v2})) == 5.0f);
  BOOST_TEST(values<float>(eval("a: f32[2], b: f32[2, 3]", "f32[3]", "a @ b", {v2, m23})) == (std::vector<float>{9, 12, 15}));
  BOOST_TEST(values<float>(eval("a: f32[2, 3], b: f32[3]", "f32[2]", "a @ b", {m23, v3})) == (std::vector<float>{-2, -2}));
  HostTensor mm = eval("a: f32[2, 3], b: f32[3, 2]", "f32[2, 2]", "a @ b", {m23, m32});
  BOOST_TEST(mm.shape() == (Shape{2, 2}));
  BOOST_TEST(values<float>(mm) == (std::vector<float>{4, 5, 10, 11}));
  BOOST_TEST(values<int64_t>(eval("a: i64[2], b: i64[2]", "i64", "a @ b", {vec<int64_t>({3, 4}), vec<int64_t>({5, 6})})) ==
             std::vector<int64_t>{39});
}

BOOST_AUTO_TEST_CASE(matmul_with_an_empty_inner_dimension_is_zeros) {
  HostTensor r = eval("a: f32[r, k], b: f32[j, c]", "f32[?, ?]", "a @ b", {HostTensor(DType::F32, {2, 0}), HostTensor(DType::F32, {0, 3})});
  BOOST_TEST(r.shape() == (Shape{2, 3}));
  BOOST_TEST(values<float>(r) == std::vector<float>(6, 0.0f));
}

BOOST_AUTO_TEST_CASE(matmul_inner_dimension_error) {
  BOOST_TEST(eval_error("a: f32[n], b: f32[m]", "f32", "a @ b", {vec<float>({1, 2, 3}), vec<float>({1, 2, 3, 4})}) ==
             "2:12: '@' of f32[3] and f32[4]: inner dimensions differ (3 and 4)");
  BOOST_TEST(eval_error("a: f32[r, c], b: f32[m]", "f32[?]", "a @ b", {mat<float>({1, 2, 3, 4, 5, 6}, 2, 3), vec<float>({1, 2})}) ==
             "2:12: '@' of f32[2, 3] and f32[2]: inner dimensions differ (3 and 2)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(indexing_and_updates)

BOOST_AUTO_TEST_CASE(negative_indices_count_from_the_end) {
  HostTensor v = vec<float>({10, 20, 30});
  BOOST_TEST(one<float>(eval("x: f32[n]", "f32", "x[-1]", {v})) == 30.0f);
  BOOST_TEST(one<float>(eval("x: f32[n]", "f32", "x[-3]", {v})) == 10.0f);
  BOOST_TEST(one<float>(eval("x: f32[n], i: i64", "f32", "x[i]", {v, scalar<int64_t>(-2)})) == 20.0f);
  HostTensor m = mat<int32_t>({1, 2, 3, 4, 5, 6}, 2, 3);
  BOOST_TEST(one<int32_t>(eval("m: i32[r, c]", "i32", "m[1, -1]", {m})) == 6);
  BOOST_TEST(one<int32_t>(eval("m: i32[r, c]", "i32", "m[-2][1]", {m})) == 2);
  BOOST_TEST(values<int32_t>(eval("m: i32[r, c]", "i32[?]", "m[1]", {m})) == (std::vector<int32_t>{4, 5, 6}));
  BOOST_TEST(values<int32_t>(eval("m: i32[r, c]", "i32[?]", "m[:, 1]", {m})) == (std::vector<int32_t>{2, 5}));
}

BOOST_AUTO_TEST_CASE(out_of_range_indices_are_errors) {
  HostTensor v = vec<float>({10, 20, 30});
  BOOST_TEST(eval_error("x: f32[n], i: i64", "f32", "x[i]", {v, scalar<int64_t>(3)}) ==
             "2:10: index 3 is out of range for dimension 0 of size 3");
  BOOST_TEST(eval_error("x: f32[n], i: i64", "f32", "x[i]", {v, scalar<int64_t>(-4)}) ==
             "2:10: index -4 is out of range for dimension 0 of size 3");
  BOOST_TEST(eval_error("m: f32[r, c], i: i64", "f32", "m[0, i]", {mat<float>({1, 2, 3, 4}, 2, 2), scalar<int64_t>(2)}) ==
             "2:10: index 2 is out of range for dimension 1 of size 2");
  BOOST_TEST(eval_error("x: f32[n]", "f32", "x[0]", {HostTensor::from_vector<float>({}, {0})}) ==
             "2:10: index 0 is out of range for dimension 0 of size 0");
}

BOOST_AUTO_TEST_CASE(slices_are_clamped_like_python) {
  HostTensor v = vec<int64_t>({0, 1, 2, 3, 4});
  auto slice = [&](const std::string& s) { return values<int64_t>(eval("x: i64[n]", "i64[?]", "x[" + s + "]", {v})); };
  BOOST_TEST(slice("1:3") == (std::vector<int64_t>{1, 2}));
  BOOST_TEST(slice("1:100") == (std::vector<int64_t>{1, 2, 3, 4}));
  BOOST_TEST(slice("-100:2") == (std::vector<int64_t>{0, 1}));
  BOOST_TEST(slice("3:1").empty());
  BOOST_TEST(slice(":-1") == (std::vector<int64_t>{0, 1, 2, 3}));
  BOOST_TEST(slice("-2:") == (std::vector<int64_t>{3, 4}));
  BOOST_TEST(slice(":") == (std::vector<int64_t>{0, 1, 2, 3, 4}));
  BOOST_TEST(slice("7:") == (std::vector<int64_t>{}));
  HostTensor m = mat<int64_t>({1, 2, 3, 4, 5, 6}, 2, 3);
  HostTensor s = eval("m: i64[r, c]", "i64[?, ?]", "m[-1:, 1:]", {m});
  BOOST_TEST(s.shape() == (Shape{1, 2}));
  BOOST_TEST(values<int64_t>(s) == (std::vector<int64_t>{5, 6}));
  // Bounds from arguments.
  BOOST_TEST(values<int64_t>(eval("x: i64[n], a: i64, b: i64", "i64[?]", "x[a:b]", {v, scalar<int64_t>(-3), scalar<int64_t>(9)})) ==
             (std::vector<int64_t>{2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(set_and_inc_with_broadcasting) {
  HostTensor m = mat<float>({1, 2, 3, 4, 5, 6}, 3, 2);
  BOOST_TEST(values<float>(eval("m: f32[3, 2]", "f32[3, 2]", "set(m[1], 0)", {m})) == (std::vector<float>{1, 2, 0, 0, 5, 6}));
  BOOST_TEST(values<float>(eval("m: f32[3, 2], v: f32[2]", "f32[3, 2]", "set(m[0:2], v)", {m, vec<float>({7, 8})})) ==
             (std::vector<float>{7, 8, 7, 8, 5, 6}));
  BOOST_TEST(values<float>(eval("m: f32[3, 2], v: f32[3]", "f32[3, 2]", "inc(m[:, 0], v)", {m, vec<float>({10, 20, 30})})) ==
             (std::vector<float>{11, 2, 23, 4, 35, 6}));
  BOOST_TEST(values<float>(eval("m: f32[3, 2]", "f32[3, 2]", "inc(m[-1, -1], 0.5)", {m})) ==
             (std::vector<float>{1, 2, 3, 4, 5, 6.5}));
  // The argument itself is not changed.
  BOOST_TEST(values<float>(m) == (std::vector<float>{1, 2, 3, 4, 5, 6}));
  BOOST_TEST(eval_error("m: f32[r, c], i: i64", "f32[?, ?]", "set(m[i], 0)", {m, scalar<int64_t>(3)}) ==
             "2:10: index 3 is out of range for dimension 0 of size 3");
  BOOST_TEST(eval_error("m: f32[r, c], v: f32[k]", "f32[?, ?]", "set(m[0], v)", {m, vec<float>({1, 2, 3})}) ==
             "2:10: set: a value of shape [3] cannot be stored into a region of shape [2]");
}

BOOST_AUTO_TEST_CASE(construction) {
  BOOST_TEST(values<int64_t>(eval("n: i64", "i64[n]", "arange(n)", {scalar<int64_t>(4)})) == (std::vector<int64_t>{0, 1, 2, 3}));
  BOOST_TEST(values<int64_t>(eval("a: i64, b: i64", "i64[?]", "arange(a, b)", {scalar<int64_t>(-2), scalar<int64_t>(1)})) ==
             (std::vector<int64_t>{-2, -1, 0}));
  BOOST_TEST(eval("a: i64, b: i64", "i64[?]", "arange(a, b)", {scalar<int64_t>(3), scalar<int64_t>(1)}).numel() == 0);
  HostTensor z = eval("n: i32", "f32[n, 2]", "ones(f32, n, 2) * 3", {scalar<int32_t>(2)});
  BOOST_TEST(z.shape() == (Shape{2, 2}));
  BOOST_TEST(values<float>(z) == (std::vector<float>{3, 3, 3, 3}));
  BOOST_TEST(values<int32_t>(eval("x: i32[2]", "i32[2]", "full_like(x, 7) - zeros_like(x)", {vec<int32_t>({1, 2})})) ==
             (std::vector<int32_t>{7, 7}));
  BOOST_TEST(one<int64_t>(eval("m: f32[r, c]", "i64", "len(m)", {mat<float>({1, 2, 3, 4, 5, 6}, 3, 2)})) == 3);
  BOOST_TEST(eval_error("n: i64", "f32[?]", "zeros(f32, n)", {scalar<int64_t>(-1)}) ==
             "2:10: dimension 0 of the result is -1; sizes must be >= 0");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(scans)

BOOST_AUTO_TEST_CASE(contract_example_taps) {
  std::vector<HostTensor> r = run(
      "fn taps(u: f32[L], x0: f32[2]) -> f32[?] {\n"
      "    let x = scan {\n"
      "        init x = x0\n"
      "        x[t] = 2 * u[t-2] + 3 * x[t-1] + x[t-2]\n"
      "    }\n"
      "    return x\n"
      "}\n",
      {vec<float>({1, 2, 3, 4}), vec<float>({0.5f, -1})});
  BOOST_TEST(values<float>(r[0]) == (std::vector<float>{-0.5f, 1.5f}));
}

BOOST_AUTO_TEST_CASE(taps_on_both_sides) {
  // m = -1, M = 1: tap k reads U[t + k + 1], and 5 elements allow 3 steps.
  HostTensor r = eval("u: f32[L]", "f32[?]", "scan {\n    y[t] = u[t+1] - u[t-1]\n  }", {vec<float>({1, 2, 4, 8, 16})});
  BOOST_TEST(values<float>(r) == (std::vector<float>{3, 6, 12}));
  // Only positive taps: m = 0.
  HostTensor p = eval("u: f32[L]", "f32[?]", "scan {\n    y[t] = u[t+2] * 10 + u[t]\n  }", {vec<float>({1, 2, 3, 4})});
  BOOST_TEST(values<float>(p) == (std::vector<float>{31, 42}));
  // Sequences are truncated to the shortest.
  HostTensor s = eval("u: f32[L], v: f32[M]", "f32[?]", "scan {\n    y[t] = u[t] + v[t]\n  }",
                      {vec<float>({1, 2, 3}), vec<float>({10, 20})});
  BOOST_TEST(values<float>(s) == (std::vector<float>{11, 22}));
  // Any outside expression may be a sequence.
  HostTensor a = eval("n: i64", "i64[?]", "scan {\n    y[t] = arange(n)[t] * arange(n)[t-1]\n  }", {scalar<int64_t>(4)});
  BOOST_TEST(values<int64_t>(a) == (std::vector<int64_t>{0, 2, 6}));
}

BOOST_AUTO_TEST_CASE(reverse) {
  std::vector<HostTensor> r = run(
      "fn backwards(u: f32[L], x0: f32) -> f32[L] {\n"
      "    let x = scan(reverse) {\n"
      "        init x = x0\n"
      "        x[t] = 2 * u[t] + 0.5 * x[t-1]\n"
      "    }\n"
      "    return x\n"
      "}\n",
      {vec<float>({1, 2, 3, 4}), scalar(0.5f)});
  BOOST_TEST(values<float>(r[0]) == (std::vector<float>{8.25f, 10.125f, 9.0625f, 6.53125f}));
  // With taps: at step t tap k reads U[len - 1 - M + k - t].
  HostTensor back = eval("u: f32[L]", "f32[?]", "scan(reverse) {\n    y[t] = u[t-1] * 10 + u[t]\n  }", {vec<float>({1, 2, 3, 4})});
  BOOST_TEST(values<float>(back) == (std::vector<float>{34, 23, 12}));
  HostTensor fwd = eval("u: f32[L]", "f32[?]", "scan(reverse) {\n    y[t] = u[t+1] * 10 + u[t]\n  }", {vec<float>({1, 2, 3, 4})});
  BOOST_TEST(values<float>(fwd) == (std::vector<float>{43, 32, 21}));
  // With fewer steps than the sequence allows, reverse starts at its end.
  HostTensor two = eval("u: f32[L], k: i64", "f32[?]", "scan(reverse, steps = k) {\n    y[t] = u[t]\n  }",
                        {vec<float>({1, 2, 3, 4}), scalar<int64_t>(2)});
  BOOST_TEST(values<float>(two) == (std::vector<float>{4, 3}));
  // ... and until stops the walk from the end.
  std::vector<HostTensor> stop = run(
      "fn f(u: f32[L]) -> f32[?] {\n  let y = scan(reverse) {\n    init s = 0.0\n    s[t] = s[t-1] + u[t]\n"
      "    y[t] = s[t]\n    until s[t] > 6\n  }\n  return y\n}\n",
      {vec<float>({1, 2, 3, 4})});
  BOOST_TEST(values<float>(stop[0]) == (std::vector<float>{4, 7}));
  // The index still counts 0, 1, 2, ... in iteration order.
  HostTensor idx = eval("u: f32[L]", "i64[?]", "scan(reverse) {\n    y[t] = t * 10 + i64(u[t])\n  }", {vec<float>({1, 2, 3})});
  BOOST_TEST(values<int64_t>(idx) == (std::vector<int64_t>{3, 12, 21}));
}

BOOST_AUTO_TEST_CASE(until_keeps_the_stopping_step) {
  std::vector<HostTensor> r = run(
      "fn powers_of_two(max_value: f32) -> f32[?] {\n"
      "    let p = scan(steps = 1024) {\n"
      "        init p = f32(1)\n"
      "        p[t] = p[t-1] * 2\n"
      "        until p[t] > max_value\n"
      "    }\n"
      "    return p\n"
      "}\n",
      {scalar(45.0f)});
  BOOST_TEST(values<float>(r[0]) == (std::vector<float>{2, 4, 8, 16, 32, 64}));
  // Stopping at the first step keeps it; never stopping takes every step allowed.
  HostTensor first = eval("u: f32[L]", "f32[?]", "scan {\n    y[t] = u[t]\n    until true\n  }", {vec<float>({5, 6})});
  BOOST_TEST(values<float>(first) == std::vector<float>{5});
  HostTensor all = eval("u: f32[L]", "f32[?]", "scan {\n    y[t] = u[t]\n    until y[t] > 100\n  }", {vec<float>({5, 6})});
  BOOST_TEST(values<float>(all) == (std::vector<float>{5, 6}));
}

BOOST_AUTO_TEST_CASE(zero_steps_give_empty_results_with_the_step_shape) {
  HostTensor r = eval("x: f32[n], k: i64", "f32[?, ?]", "scan(steps = k) {\n    y[t] = x * 2\n  }",
                      {vec<float>({1, 2, 3}), scalar<int64_t>(0)});
  BOOST_TEST((r.dtype() == DType::F32));
  BOOST_TEST(r.shape() == (Shape{0, 3}));
  // The step shape may depend on values computed before the loop.
  HostTensor z = eval("k: i64, n: i64", "i64[?, ?]", "scan(steps = k) {\n    y[t] = arange(n) + t\n  }",
                      {scalar<int64_t>(0), scalar<int64_t>(4)});
  BOOST_TEST(z.shape() == (Shape{0, 4}));
  // The step shape of a state comes from its init.
  HostTensor st = eval("x0: f32[n], k: i64", "f32[?, ?]", "scan(steps = k) {\n    init s = x0\n    s[t] = s[t-1] * 2\n  }",
                       {vec<float>({1, 2, 3}), scalar<int64_t>(0)});
  BOOST_TEST(st.shape() == (Shape{0, 3}));
  // ... and of an until scan too.
  HostTensor u = eval("x0: f32[2], k: i64", "f32[?, 2]",
                      "scan(steps = k) {\n    init s = x0\n    s[t] = s[t-1] * 2\n    until s[t][0] > 10\n  }",
                      {vec<float>({1, 2}), scalar<int64_t>(0)});
  BOOST_TEST(u.shape() == (Shape{0, 2}));
  // ... of a nested scan, with its number of steps from an argument.
  HostTensor nested = eval("x: f32[n], k: i64, j: i64", "f32[?, ?, ?]",
                           "scan(steps = k) {\n    y[t] = scan(steps = j, index = s) {\n      z[s] = x * f32(s)\n    }\n  }",
                           {vec<float>({1, 2}), scalar<int64_t>(0), scalar<int64_t>(3)});
  BOOST_TEST(nested.shape() == (Shape{0, 3, 2}));
  // ... of a nested scan that stops on until (its rows do not depend on the outer step).
  HostTensor until_rows = eval("lim: f32, k: i64", "f32[?, ?]",
                               "scan(steps = k) {\n    y[t] = scan(steps = 5, index = s) {\n      init p = 1.0\n"
                               "      p[s] = p[s-1] * 2\n      until p[s] > lim\n    }\n  }",
                               {scalar(4.0f), scalar<int64_t>(0)});
  BOOST_TEST(until_rows.shape() == (Shape{0, 3}));
  // ... and of a sequence's rows.
  HostTensor rows = eval("u: f32[L, 3]", "f32[?, 3]", "scan {\n    y[t] = u[t] * 2\n  }", {HostTensor(DType::F32, {0, 3})});
  BOOST_TEST(rows.shape() == (Shape{0, 3}));
  // A sequence too short for any step.
  HostTensor s = eval("u: f32[L, 2]", "f32[?, 2]", "scan {\n    y[t] = u[t-3]\n  }", {mat<float>({1, 2, 3, 4}, 2, 2)});
  BOOST_TEST(s.shape() == (Shape{0, 2}));
}

// y[t] = x[0:t] has a different shape at every step: never an internal error (the frontend rejects
// it; if a program got through, the interpreter must still report a user error). The same with an
// inner scan whose `until` depends on the outer index.
BOOST_AUTO_TEST_CASE(varying_output_shape_is_never_an_internal_error) {
  const std::vector<std::pair<std::string, HostTensor>> cases = {
      {"fn f(x: f32[n], k: i64) -> f32[?, ?] {\n  let y = scan(steps = k) {\n    y[t] = x[0:t]\n  }\n  return y\n}\n",
       vec<float>({1, 2, 3})},
      {"fn f(lim: f32, k: i64) -> f32[?, ?] {\n  let y = scan(steps = k) {\n    y[t] = scan(steps = 5, index = s) {\n"
       "      init p = 1.0\n      p[s] = p[s-1] * 2\n      until p[s] > lim + f32(t)\n    }\n  }\n  return y\n}\n",
       scalar(4.0f)},
  };
  for (const auto& [text, first_arg] : cases) {
    driver::Compilation c = driver::Compilation::of_text("test.scan", text, driver::Options());
    if (!c.reach(driver::Stage::Rewritten)) continue;  // rejected at compile time: fine
    const ir::Program* p = &c.program();
    for (int64_t k : {2, 0}) {
      try {
        interp::Interpreter().run(p->functions[0], {first_arg, scalar<int64_t>(k)});
      } catch (const RuntimeError&) {
        // a user error: fine
      } catch (const InternalError& e) {
        BOOST_ERROR("steps = " << k << ": internal error: " << e.what() << "\nprogram:\n" << text);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(steps_errors) {
  BOOST_TEST(eval_error("x: f32, k: i64", "f32[?]", "scan(steps = k) {\n    y[t] = x\n  }", {scalar(1.0f), scalar<int64_t>(-1)}) ==
             "2:10: steps is -1; it must be >= 0");
  BOOST_TEST(eval_error("u: f32[L], k: i64", "f32[?]", "scan(steps = k) {\n    y[t] = u[t] + u[t-1]\n  }",
                        {vec<float>({1, 2, 3}), scalar<int64_t>(5)}) ==
             "2:10: sequence 'u' has length 3 and taps [-1, 0]: too short for steps = 5 (it allows 2)");
  // Also with an until that would stop early.
  BOOST_TEST(eval_error("u: f32[L], k: i64", "f32[?]", "scan(steps = k) {\n    y[t] = u[t]\n    until true\n  }",
                        {vec<float>({1, 2, 3}), scalar<int64_t>(4)}) ==
             "2:10: sequence 'u' has length 3 and taps [0]: too short for steps = 4 (it allows 3)");
  // Exactly enough is fine, and steps below what the sequences allow takes that many.
  BOOST_TEST(values<float>(eval("u: f32[L], k: i64", "f32[?]", "scan(steps = k) {\n    y[t] = u[t]\n  }",
                                {vec<float>({1, 2, 3}), scalar<int64_t>(2)})) == (std::vector<float>{1, 2}));
}

BOOST_AUTO_TEST_CASE(states_with_several_lags) {
  // Scalar state reading two steps back: the init holds [x[t-2], x[t-1]].
  HostTensor fib = eval("x0: i64[2], k: i64", "i64[?]", "scan(steps = k) {\n    init f = x0\n    f[t] = f[t-1] + f[t-2]\n  }",
                        {vec<int64_t>({0, 1}), scalar<int64_t>(6)});
  BOOST_TEST(values<int64_t>(fib) == (std::vector<int64_t>{1, 2, 3, 5, 8, 13}));
  // Vector state reading lags 1 and 3 (not 2): the init has 3 rows, oldest first.
  HostTensor v = eval("v0: f32[3, 2], k: i64", "f32[?, 2]", "scan(steps = k) {\n    init v = v0\n    v[t] = v[t-1] + v[t-3]\n  }",
                      {mat<float>({1, 0, 0, 1, 1, 1}, 3, 2), scalar<int64_t>(4)});
  BOOST_TEST(v.shape() == (Shape{4, 2}));
  BOOST_TEST(values<float>(v) == (std::vector<float>{2, 1, 2, 2, 3, 3, 5, 4}));
  // A state whose past is never read: its init has the shape of one step.
  HostTensor once = eval("x0: f32[2], k: i64", "f32[?, 2]", "scan(steps = k) {\n    init s = x0\n    s[t] = x0 * f32(t)\n  }",
                         {vec<float>({1, 2}), scalar<int64_t>(2)});
  BOOST_TEST(values<float>(once) == (std::vector<float>{0, 0, 1, 2}));
  // The init's leading dimension must be the number of steps read.
  BOOST_TEST(eval_error("x0: f32[m], k: i64", "f32[?]", "scan(steps = k) {\n    init f = x0\n    f[t] = f[t-1] + f[t-2]\n  }",
                        {vec<float>({1, 2, 3}), scalar<int64_t>(1)}) ==
             "3:14: the init of state 'f': dimension 0 is 3 but must be 2");
}

BOOST_AUTO_TEST_CASE(several_states_and_current_step_reads) {
  std::vector<HostTensor> r = run(
      "fn f(u: f32[L]) -> (s: f32[?], m: f32[?], d: f32[?]) {\n"
      "  let (d, s, m) = scan {\n"
      "    d[t] = s[t] - m[t]\n"
      "    init s = 0.0\n"
      "    s[t] = s[t-1] + u[t]\n"
      "    init m = u[0]\n"
      "    m[t] = max(m[t-1], u[t])\n"
      "  }\n"
      "  return (s, m, d)\n"
      "}\n",
      {vec<float>({3, 1, 4, 1, 5})});
  BOOST_TEST_REQUIRE(r.size() == 3u);
  BOOST_TEST(values<float>(r[0]) == (std::vector<float>{3, 4, 8, 9, 14}));
  BOOST_TEST(values<float>(r[1]) == (std::vector<float>{3, 3, 4, 4, 5}));
  BOOST_TEST(values<float>(r[2]) == (std::vector<float>{0, 1, 4, 5, 9}));
}

BOOST_AUTO_TEST_CASE(nested_scans) {
  // Row sums through an inner cumulative sum that reads the outer index too.
  std::vector<HostTensor> r = run(
      "fn f(m: f32[r, c]) -> f32[r] {\n"
      "  let out = scan {\n"
      "    let cs = scan(index = s) {\n"
      "      init acc = 0.0\n"
      "      acc[s] = acc[s-1] + m[t][s] * f32(t + 1)\n"
      "    }\n"
      "    out[t] = cs[-1]\n"
      "  }\n"
      "  return out\n"
      "}\n",
      {mat<float>({1, 2, 3, 4, 5, 6}, 2, 3)});
  BOOST_TEST(values<float>(r[0]) == (std::vector<float>{6, 30}));
  // An inner scan reading the outer state's past, and a let and another output's current step.
  HostTensor grow = eval("k: i64", "f32[?]",
                         "scan(steps = k) {\n    init x = 1.0\n    x[t] = x[t-1] + sum(scan(steps = 3, index = s) {\n"
                         "      z[s] = x[t-1] * f32(s)\n    })\n  }",
                         {scalar<int64_t>(3)});
  BOOST_TEST(values<float>(grow) == (std::vector<float>{4, 16, 64}));
  std::vector<HostTensor> cur = run(
      "fn f(u: f32[L]) -> f32[?] {\n  let y = scan {\n    let h = u[t] * 2\n    y[t] = sum(scan(steps = 2, index = s) {\n"
      "      z[s] = h + y2[t]\n    })\n    y2[t] = u[t] + 100\n  }\n  return y\n}\n",
      {vec<float>({1, 2})});
  BOOST_TEST(values<float>(cur[0]) == (std::vector<float>{206, 212}));
  // An inner scan whose number of steps is the outer index.
  HostTensor tri = eval("k: i64", "i64[k]", "scan(steps = k) {\n    y[t] = sum(scan(steps = t, index = s) {\n      z[s] = s\n    })\n  }",
                        {scalar<int64_t>(5)});
  BOOST_TEST(values<int64_t>(tri) == (std::vector<int64_t>{0, 0, 1, 3, 6}));
}

BOOST_AUTO_TEST_CASE(values_nothing_returned_depends_on_are_not_computed) {
  // Their run-time errors do not occur, in a function body or in a step.
  BOOST_TEST(values<float>(run("fn f(x: f32[n], i: i64) -> f32[n] {\n  let bad = x[i]\n  return x * 2\n}\n",
                               {vec<float>({1, 2}), scalar<int64_t>(10)})[0]) == (std::vector<float>{2, 4}));
  BOOST_TEST(values<float>(run("fn f(x: f32[n], i: i64) -> f32[?] {\n  let y = scan {\n    let bad = x[i]\n    y[t] = x[t]\n"
                               "  }\n  return y\n}\n",
                               {vec<float>({1, 2}), scalar<int64_t>(10)})[0]) == (std::vector<float>{1, 2}));
  // But a used one reports its error with its location.
  BOOST_TEST(run_error("fn f(x: f32[n], i: i64) -> f32[?] {\n  let y = scan {\n    let bad = x[i]\n    y[t] = x[t] + bad\n"
                       "  }\n  return y\n}\n",
                       {vec<float>({1, 2}), scalar<int64_t>(10)}) == "3:15: index 10 is out of range for dimension 0 of size 2");
}

BOOST_AUTO_TEST_CASE(set_at_the_loop_index) {
  // The position of a set never makes x a sequence: each step writes row t of the whole x.
  HostTensor r = eval("x: f32[n], u: f32[L]", "f32[?, n]", "scan {\n    y[t] = set(x[t], u[t])\n  }",
                      {vec<float>({0, 0, 0}), vec<float>({1, 2, 3})});
  BOOST_TEST(r.shape() == (Shape{3, 3}));
  BOOST_TEST(values<float>(r) == (std::vector<float>{1, 0, 0, 0, 2, 0, 0, 0, 3}));
  // With an index past x's end, the error names the dimension.
  BOOST_TEST(eval_error("x: f32[n], u: f32[L]", "f32[?, n]", "scan {\n    y[t] = set(x[t], u[t])\n  }",
                        {vec<float>({0, 0}), vec<float>({1, 2, 3})}) ==
             "3:12: index 2 is out of range for dimension 0 of size 2");
}

BOOST_AUTO_TEST_CASE(contract_examples_power_poly_triangular_place) {
  const std::string power =
      "fn power(A: f32[n], k: i32) -> f32[n] {\n"
      "    let acc = scan(steps = k) {\n"
      "        init acc = ones_like(A)\n"
      "        acc[t] = acc[t-1] * A\n"
      "    }\n"
      "    return acc[-1]\n"
      "}\n";
  HostTensor a = vec<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  BOOST_TEST(values<float>(run(power, {a, scalar<int32_t>(2)})[0]) == (std::vector<float>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));
  BOOST_TEST(values<float>(run(power, {a, scalar<int32_t>(4)})[0]) ==
             (std::vector<float>{0, 1, 16, 81, 256, 625, 1296, 2401, 4096, 6561}));
  const std::string poly =
      "fn poly(coefficients: f32[K], x: f32) -> f32 {\n"
      "    let powers = arange(10000)\n"
      "    let terms = scan {\n"
      "        terms[t] = coefficients[t] * x ** f32(powers[t])\n"
      "    }\n"
      "    return sum(terms)\n"
      "}\n";
  BOOST_TEST(values<float>(run(poly, {vec<float>({1, 0, 2}), scalar(3.0f)})[0]) == std::vector<float>{19});
  const std::string triangular =
      "fn triangular(up_to: i32) -> i64[up_to] {\n"
      "    let s = scan {\n"
      "        init s = i64(0)\n"
      "        s[t] = s[t-1] + arange(up_to)[t]\n"
      "    }\n"
      "    return s\n"
      "}\n";
  BOOST_TEST(values<int64_t>(run(triangular, {scalar<int32_t>(6)})[0]) == (std::vector<int64_t>{0, 1, 3, 6, 10, 15}));
  const std::string place =
      "fn place(location: i32[N, 2], values: f32[N], model: f32[r, c]) -> f32[N, r, c] {\n"
      "    let out = scan {\n"
      "        out[t] = set(zeros_like(model)[location[t, 0], location[t, 1]], values[t])\n"
      "    }\n"
      "    return out\n"
      "}\n";
  HostTensor out = run(place, {mat<int32_t>({1, 1, 0, 2}, 2, 2), vec<float>({42, 50}), HostTensor(DType::F32, {2, 3})})[0];
  BOOST_TEST(out.shape() == (Shape{2, 2, 3}));
  BOOST_TEST(values<float>(out) == (std::vector<float>{0, 0, 0, 0, 42, 0, 0, 0, 50, 0, 0, 0}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(signatures)

const char* const kTwoVectors = "fn f(a: f32[n], b: f32[n]) -> f32[n] {\n  return a + b\n}\n";

BOOST_AUTO_TEST_CASE(argument_dtype_rank_and_count) {
  BOOST_TEST(run_error(kTwoVectors, {vec<int64_t>({1}), vec<float>({1})}) == "1:6: argument 'a' of 'f' must be f32, got i64");
  BOOST_TEST(run_error(kTwoVectors, {vec<float>({1}), scalar(1.0f)}) ==
             "1:17: argument 'b' of 'f' must have rank 1 (f32[n]), got rank 0");
  BOOST_TEST(run_error(kTwoVectors, {vec<float>({1})}) == "1:4: 'f' takes 2 arguments, got 1");
}

BOOST_AUTO_TEST_CASE(constant_dimensions_and_symbols) {
  BOOST_TEST(run_error("fn f(a: f32[2, 3]) -> f32 {\n  return sum(a)\n}\n", {mat<float>({1, 2, 3, 4}, 2, 2)}) ==
             "1:6: argument 'a' of 'f': dimension 1 is 2 but must be 3");
  BOOST_TEST(run_error(kTwoVectors, {vec<float>({1, 2, 3}), vec<float>({1, 2, 3, 4})}) ==
             "1:17: argument 'b' of 'f': dimension 0 is 4 but n = 3 (dimension 0 of 'a')");
  BOOST_TEST(run_error("fn f(m: f32[n, n]) -> f32 {\n  return sum(m)\n}\n", {HostTensor(DType::F32, {2, 3})}) ==
             "1:6: argument 'm' of 'f': dimension 1 is 3 but n = 2 (dimension 0 of 'm')");
  // A scalar integer parameter binds the symbol of its name.
  BOOST_TEST(run_error("fn f(n: i64, x: f32[n]) -> f32 {\n  return sum(x)\n}\n", {scalar<int64_t>(2), vec<float>({1, 2, 3})}) ==
             "1:14: argument 'x' of 'f': dimension 0 is 3 but n = 2 (parameter 'n')");
  BOOST_TEST(values<float>(run(kTwoVectors, {vec<float>({1, 2}), vec<float>({3, 4})})[0]) == (std::vector<float>{4, 6}));
}

BOOST_AUTO_TEST_CASE(results_are_checked_against_their_declaration) {
  BOOST_TEST(run_error("fn f(x: f32[n]) -> f32[n] {\n  return x[1:]\n}\n", {vec<float>({1, 2, 3})}) ==
             "1:20: the result of 'f': dimension 0 is 2 but n = 3 (dimension 0 of 'x')");
  BOOST_TEST(run_error("fn f(x: f32[n]) -> (a: f32[2], b: f32[n]) {\n  return (x, x)\n}\n", {vec<float>({1, 2, 3})}) ==
             "1:21: result 'a' of 'f': dimension 0 is 3 but must be 2");
}

BOOST_AUTO_TEST_CASE(inlined_calls_check_their_arguments_at_run_time) {
  std::string text =
      "fn g(a: f32[n], b: f32[n]) -> f32[n] {\n  return a * b\n}\n"
      "fn f(x: f32[p], y: f32[q]) -> f32[p] {\n  return g(x, y)\n}\n";
  BOOST_TEST(run_error(text, {vec<float>({1, 2}), vec<float>({1, 2, 3})}, "f") ==
             "5:15: argument 'b' of 'g': dimension 0 is 3 but must be n = 2");
  BOOST_TEST(values<float>(run(text, {vec<float>({1, 2}), vec<float>({3, 4})}, "f")[0]) == (std::vector<float>{3, 8}));
}

BOOST_AUTO_TEST_SUITE_END()
