// Associative scans (the rewrite parallel-scan and the backends' helpers) against the sequential
// result of the reference interpreter, on random sizes and data: lanes 1 to 10^4, steps 0 to
// 10^5, invariant, per-lane and per-step coefficients, reverse, last row only.
//
// - Integers, max and min: the same bits, whatever the backend chunks.
// - Floats: below the cost model's thresholds (steps < 4096 or lanes > 16 on the CPU, steps < 1024
//   on the GPU) the helpers run the steps in order, so the same bits too; above, within the bound
//   of a reassociated recurrence: |y - y_ref| <= 4 (t + 2) u g[t], where u is the unit roundoff
//   and g the recurrence run on the absolute values (g[t] = |a| g[t-1] + |b[t]|): both orders are
//   within (t + 2) u g[t] of the exact value, to first order (Higham, ch. 4, for sums; a product
//   a * h adds one rounding per step to the same terms).
// - The gradient of a parallel affine recurrence (its adjoint is marked add_mul) within the same
//   kind of bound, computed backwards.
#define BOOST_TEST_MODULE parallel_scan
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scangen/scangen.h"

using namespace scangen;

namespace {

// One module, so each backend compiles once; the functions cover the operators, dtypes, operand
// kinds (per step, per lane, scalar), reverse and the last row.
const char* const kProgram = R"(
fn affine_steps(u: f32[T, L], a: f32[T, L], h0: f32[L]) -> f32[T, L] {
    let h = scan(parallel) {
        init h = h0
        h[t] = a[t] * h[t-1] + u[t]
    }
    return h
}
fn affine_scalar_reverse(u: f64[T, L], a: f64, h0: f64[L]) -> f64[T, L] {
    let h = scan(parallel, reverse) {
        init h = h0
        h[t] = u[t] + h[t-1] * a
    }
    return h
}
fn affine_lanes_last(u: f32[T, L], a: f32[L], h0: f32[L]) -> f32[L] {
    let h = scan(parallel) {
        init h = h0
        h[t] = a * h[t-1] + u[t]
    }
    return h[-1]
}
fn float_sum(x: f32[T, L]) -> f32[T, L] {
    let s = scan(parallel) {
        init s = sum(zeros_like(x), axis = 0)
        s[t] = s[t-1] + x[t]
    }
    return s
}
fn int_sum_reverse(x: i64[T, L]) -> i64[T, L] {
    let s = scan(reverse) {
        init s = sum(zeros_like(x), axis = 0)
        s[t] = x[t] + s[t-1]
    }
    return s
}
fn int_affine(u: i32[T, L], a: i32[L], h0: i32[L]) -> i32[T, L] {
    let h = scan {
        init h = h0
        h[t] = h[t-1] * a + u[t]
    }
    return h
}
fn running_max(x: f32[T, L]) -> f32[T, L] {
    let m = scan {
        init m = x[0]
        m[t] = max(m[t-1], x[t])
    }
    return m
}
fn running_min_new_first(x: f64[T, L], m0: f64[L]) -> f64[T, L] {
    let m = scan {
        init m = m0
        m[t] = min(x[t], m[t-1])
    }
    return m
}
fn affine_grad(u: f32[T, L], a: f32, w: f32[T, L]) -> f32[T, L] {
    return grad(sum(scan(parallel) {
        init h = sum(zeros_like(u), axis = 0)
        h[t] = a * h[t-1] + u[t]
    } * w), u)
}
)";

struct Size {
  int64_t steps, lanes;
};

// Sizes around the thresholds, long and narrow, short and wide.
const Size kShapes[] = {{0, 3},    {1, 1},    {5, 2},    {4095, 1}, {4096, 1}, {4097, 3},   {6000, 16},
                         {6000, 17}, {1000, 40}, {20000, 2}, {100000, 1}, {3, 10000}, {70, 1500}};

std::mt19937_64& rng() {
  static std::mt19937_64 r(20261126);
  return r;
}

template <class T> std::vector<T> uniform(int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = T(d(rng()));
  return v;
}

template <class T> std::vector<T> integers(int64_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = T(d(rng()));
  return v;
}

// A few NaNs and signed zeros, where max and min differ by operand order.
template <class T> std::vector<T> with_ties(std::vector<T> v) {
  for (size_t i = 0; i < v.size(); i += 7) v[i] = (i / 7) % 2 ? T(0.0) : T(-0.0);
  for (size_t i = 5; i < v.size(); i += 1009) v[i] = std::numeric_limits<T>::quiet_NaN();
  return v;
}

Module compile(Backend backend, int threads) {
  JitOptions o;
  o.backend = backend;
  o.threads = threads;
  return compile_source("parallel_scan.scan", kProgram, o);
}

const Module& interpreter() {
  static Module m = compile(Backend::Interpreter, 1);
  return m;
}

struct Config {
  const char* name;
  Backend backend;
  int threads;
  int64_t chunk_steps;  // the cost model's thresholds: below them, steps run in order
  int64_t chunk_lanes;
  int64_t max_elements;  // the emulation runs a thread per lane and step in turn: smaller sizes
};

const Config kConfigs[] = {{"cpu", Backend::Cpu, 1, 4096, 16, int64_t(1) << 62},
                           {"cpu-3-threads", Backend::Cpu, 3, 4096, 16, int64_t(1) << 62},
                           {"cuda-emulation", Backend::CudaEmulation, 1, 1024, 65536, 30000}};

bool chunked(const Config& c, const Size& s) { return s.steps >= c.chunk_steps && s.lanes <= c.chunk_lanes; }

// Same bits, NaN equal to NaN.
template <class T> void expect_same(const HostTensor& got, const HostTensor& want, const std::string& what) {
  BOOST_TEST_REQUIRE(got.shape() == want.shape(), what);
  const T* g = got.data<T>();
  const T* w = want.data<T>();
  for (int64_t i = 0; i < got.numel(); ++i) {
    const bool same = (g[i] != g[i] && w[i] != w[i]) || std::memcmp(&g[i], &w[i], sizeof(T)) == 0;
    if (!same) BOOST_TEST_REQUIRE(same, what << ": element " << i << " is " << g[i] << ", want " << w[i]);
  }
}

// Within 4 (n + 2) u g, element by element: g[i] is the recurrence on magnitudes at element i and
// steps[i] = n the number of steps that lead to it.
template <class T>
void expect_close(const HostTensor& got, const HostTensor& want, const std::vector<long double>& g,
                  const std::vector<int64_t>& steps, const std::string& what) {
  BOOST_TEST_REQUIRE(got.shape() == want.shape(), what);
  const long double u = std::numeric_limits<T>::epsilon() / 2;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const long double allowed = 4 * (long double)(steps[size_t(i)] + 2) * u * g[size_t(i)] + std::numeric_limits<T>::denorm_min();
    const long double err = std::fabs((long double)got.data<T>()[i] - (long double)want.data<T>()[i]);
    if (!(err <= allowed))
      BOOST_TEST_REQUIRE(err <= allowed, what << ": element " << i << " differs by " << (double)err << " > "
                                              << (double)allowed);
  }
}

// g[t] = |a(t, l)| g[t-1] + |b(t, l)| from |init|, row by row in iteration order.
template <class A, class B>
std::vector<long double> magnitudes(int64_t steps, int64_t lanes, const std::vector<long double>& init, A&& a, B&& b) {
  std::vector<long double> g(size_t(steps * lanes));
  for (int64_t l = 0; l < lanes; ++l) {
    long double prev = std::fabs(init[size_t(l)]);
    for (int64_t t = 0; t < steps; ++t) prev = g[size_t(t * lanes + l)] = std::fabs(a(t, l)) * prev + std::fabs(b(t, l));
  }
  return g;
}

// Rows in iteration order: row t is reached by t + 1 steps.
std::vector<int64_t> forward_steps(int64_t steps, int64_t lanes) {
  std::vector<int64_t> n(size_t(steps * lanes));
  for (size_t i = 0; i < n.size(); ++i) n[i] = int64_t(i) / lanes + 1;
  return n;
}

struct Case {
  const Config& config;
  const Module& module;
  Size shape;
  std::string what(const char* fn) const {
    return std::string(fn) + " on " + config.name + " (" + std::to_string(shape.steps) + " steps, " +
           std::to_string(shape.lanes) + " lanes)";
  }
};

void check_affine_steps(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto u = uniform<float>(T * L, -1, 1), a = uniform<float>(T * L, -1.02, 1.02), h0 = uniform<float>(L, -1, 1);
  std::vector<HostTensor> args{view(u.data(), {T, L}), view(a.data(), {T, L}), view(h0.data(), {L})};
  HostTensor want = interpreter().call("affine_steps", args)[0], got = c.module.call("affine_steps", args)[0];
  if (!chunked(c.config, c.shape)) return expect_same<float>(got, want, c.what("affine_steps"));
  std::vector<long double> init(h0.begin(), h0.end());
  auto g = magnitudes(T, L, init, [&](int64_t t, int64_t l) { return (long double)a[size_t(t * L + l)]; },
                      [&](int64_t t, int64_t l) { return (long double)u[size_t(t * L + l)]; });
  expect_close<float>(got, want, g, forward_steps(T, L), c.what("affine_steps"));
}

void check_affine_scalar_reverse(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto u = uniform<double>(T * L, -1, 1), h0 = uniform<double>(L, -1, 1);
  const double a = 0.999;
  std::vector<HostTensor> args{view(u.data(), {T, L}), HostTensor::scalar(a), view(h0.data(), {L})};
  HostTensor want = interpreter().call("affine_scalar_reverse", args)[0];
  HostTensor got = c.module.call("affine_scalar_reverse", args)[0];
  if (!chunked(c.config, c.shape)) return expect_same<double>(got, want, c.what("affine_scalar_reverse"));
  std::vector<long double> init(h0.begin(), h0.end());
  auto g = magnitudes(T, L, init, [&](int64_t, int64_t) { return (long double)a; },
                      [&](int64_t t, int64_t l) { return (long double)u[size_t((T - 1 - t) * L + l)]; });
  expect_close<double>(got, want, g, forward_steps(T, L), c.what("affine_scalar_reverse"));
}

void check_affine_lanes_last(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto u = uniform<float>(T * L, -1, 1), a = uniform<float>(L, -1, 1), h0 = uniform<float>(L, -1, 1);
  std::vector<HostTensor> args{view(u.data(), {T, L}), view(a.data(), {L}), view(h0.data(), {L})};
  if (T == 0) {
    auto fails = [&](const Module& m) {
      try {
        m.call("affine_lanes_last", args);
      } catch (const ProgramError& e) {
        return e.message();
      }
      return std::string("(no error)");
    };
    BOOST_TEST(fails(c.module) == fails(interpreter()));
    return;
  }
  HostTensor want = interpreter().call("affine_lanes_last", args)[0];
  HostTensor got = c.module.call("affine_lanes_last", args)[0];
  if (!chunked(c.config, c.shape)) return expect_same<float>(got, want, c.what("affine_lanes_last"));
  std::vector<long double> init(h0.begin(), h0.end());
  auto g = magnitudes(T, L, init, [&](int64_t, int64_t l) { return (long double)a[size_t(l)]; },
                      [&](int64_t t, int64_t l) { return (long double)u[size_t(t * L + l)]; });
  std::vector<long double> last(g.end() - L, g.end());
  expect_close<float>(got, want, last, std::vector<int64_t>(size_t(L), T), c.what("affine_lanes_last"));
}

void check_float_sum(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto x = uniform<float>(T * L, -1, 1);
  std::vector<HostTensor> args{view(x.data(), {T, L})};
  HostTensor want = interpreter().call("float_sum", args)[0], got = c.module.call("float_sum", args)[0];
  if (!chunked(c.config, c.shape)) return expect_same<float>(got, want, c.what("float_sum"));
  auto g = magnitudes(T, L, std::vector<long double>(size_t(L), 0), [](int64_t, int64_t) { return 1.0L; },
                      [&](int64_t t, int64_t l) { return (long double)x[size_t(t * L + l)]; });
  expect_close<float>(got, want, g, forward_steps(T, L), c.what("float_sum"));
}

// Integers, max and min: the same bits in every case.
void check_exact(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto xi = integers<int64_t>(T * L, -(int64_t(1) << 62), int64_t(1) << 62);
  auto ui = integers<int32_t>(T * L, -100000, 100000), ai = integers<int32_t>(L, -3, 3), hi = integers<int32_t>(L, -9, 9);
  auto xf = with_ties(uniform<float>(T * L, -1, 1));
  auto xd = with_ties(uniform<double>(T * L, -1, 1)), m0 = uniform<double>(L, -1, 1);
  const std::vector<std::pair<const char*, std::vector<HostTensor>>> calls = {
      {"int_sum_reverse", {view(xi.data(), {T, L})}},
      {"int_affine", {view(ui.data(), {T, L}), view(ai.data(), {L}), view(hi.data(), {L})}},
      {"running_max", {view(xf.data(), {T, L})}},
      {"running_min_new_first", {view(xd.data(), {T, L}), view(m0.data(), {L})}}};
  for (const auto& [fn, args] : calls) {
    if (T == 0 && std::string(fn) == "running_max") continue;  // its init is x[0]
    HostTensor want = interpreter().call(fn, args)[0], got = c.module.call(fn, args)[0];
    switch (want.dtype()) {
      case DType::I64: expect_same<int64_t>(got, want, c.what(fn)); break;
      case DType::I32: expect_same<int32_t>(got, want, c.what(fn)); break;
      case DType::F32: expect_same<float>(got, want, c.what(fn)); break;
      case DType::F64: expect_same<double>(got, want, c.what(fn)); break;
      case DType::Bool: BOOST_FAIL("no bool scan here"); break;
    }
  }
}

// d sum(h * w) / du[t] = w[t] + a w[t+1] + a^2 w[t+2] + ...: an affine recurrence run backwards.
void check_gradient(const Case& c) {
  const int64_t T = c.shape.steps, L = c.shape.lanes;
  auto u = uniform<float>(T * L, -1, 1), w = uniform<float>(T * L, -1, 1);
  const float a = 0.97f;
  std::vector<HostTensor> args{view(u.data(), {T, L}), HostTensor::scalar(a), view(w.data(), {T, L})};
  HostTensor want = interpreter().call("affine_grad", args)[0], got = c.module.call("affine_grad", args)[0];
  if (!chunked(c.config, c.shape)) return expect_same<float>(got, want, c.what("affine_grad"));
  // Backwards: g[t] = |a| g[t+1] + |w[t]|, reached by T - t steps.
  std::vector<long double> g(size_t(T * L));
  std::vector<int64_t> steps(size_t(T * L));
  for (int64_t l = 0; l < L; ++l) {
    long double next = 0;
    for (int64_t t = T - 1; t >= 0; --t) {
      next = g[size_t(t * L + l)] = std::fabs(a) * next + std::fabs(w[size_t(t * L + l)]);
      steps[size_t(t * L + l)] = T - t;
    }
  }
  expect_close<float>(got, want, g, steps, c.what("affine_grad"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(rewrite_marks_every_function) {
  JitOptions o;
  o.backend = Backend::Interpreter;
  Module m = compile_source("parallel_scan.scan", kProgram, o);
  // One scan in each of the 8 functions without a gradient; the gradient's forward scan and its
  // backward scan's cotangent (split out, add_mul).
  BOOST_TEST(m.pass_stats().at("parallel-scan") == 10);
  for (const std::string& note : m.pass_notes()) BOOST_TEST(note.find("stays sequential") == std::string::npos, note);
}

BOOST_AUTO_TEST_CASE(random_sizes_against_the_interpreter) {
  for (const Config& config : kConfigs) {
    Module module = compile(config.backend, config.threads);
    for (const Size& shape : kShapes) {
      if (shape.steps * shape.lanes > config.max_elements) continue;
      const Case c{config, module, shape};
      check_affine_steps(c);
      check_affine_scalar_reverse(c);
      check_affine_lanes_last(c);
      check_float_sum(c);
      check_exact(c);
      if (shape.steps * shape.lanes <= 200000) check_gradient(c);
    }
  }
}
