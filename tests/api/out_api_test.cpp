// The generated C++ API's form that writes the results into the caller's tensors (tests/api/
// outs.scan, compiled by scangen_add_library): results bit for bit those of the allocating form,
// repeated calls into the same tensors, the located errors of wrong ranks, shapes and overlaps,
// no such form for functions whose result shapes are known only while they run; then the same
// form through the JIT API (Module::call_into) on every backend without a GPU.
#define BOOST_TEST_MODULE out_api_test
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "outs.h"
#include "scangen/scangen.h"

namespace {

template <class T> std::vector<T> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (T& x : v) x = T(u(rng) * 3);
  return v;
}

// Bit for bit: NaNs and signed zeros included.
template <class T> bool same_bits(const T* a, const T* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, size_t(n) * sizeof(T)) == 0;
}

template <class Call> std::string error_of(Call&& call) {
  try {
    call();
  } catch (const scangen::Error& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
  }
  return "(no error)";
}

// Whether the generated API has the form with `Outs` trailing result tensors.
template <class... Args> struct into_form {
  template <class F> static auto test(F f) -> decltype(f(std::declval<Args>()...), std::true_type{});
  static std::false_type test(...);
};

}  // namespace

BOOST_AUTO_TEST_CASE(results_equal_the_allocating_form_and_calls_reuse_the_tensors) {
  const int64_t T = 37, N = 19;
  std::vector<float> a = random_values<float>(size_t(T * N), 1), b = random_values<float>(size_t(T * N), 2),
                     h0 = random_values<float>(size_t(N), 3);
  for (float& x : a) x /= 3;
  scangen::Tensor<float> expected = outs::linear({a.data(), {T, N}}, {b.data(), {T, N}}, {h0.data(), {N}});
  std::vector<float> out(size_t(T * N), -1.0f);
  for (int call = 0; call < 3; ++call) {
    outs::linear({a.data(), {T, N}}, {b.data(), {T, N}}, {h0.data(), {N}}, {out.data(), {T, N}});
    BOOST_TEST(same_bits(out.data(), expected.data(), T * N));
  }

  std::vector<double> u = random_values<double>(1000, 4);
  scangen::Tensor<double> sums = outs::running({u.data(), {1000}});
  std::vector<double> sums_out(1000, 0.0);
  outs::running({u.data(), {1000}}, {sums_out.data(), {1000}});
  BOOST_TEST(same_bits(sums_out.data(), sums.data(), 1000));
  // Into the same tensor with other arguments: the new results, nothing of the old ones.
  std::vector<double> v = random_values<double>(1000, 5);
  outs::running({v.data(), {1000}}, {sums_out.data(), {1000}});
  scangen::Tensor<double> v_sums = outs::running({v.data(), {1000}});
  BOOST_TEST(same_bits(sums_out.data(), v_sums.data(), 1000));

  const int64_t B = 5;
  std::vector<float> x = random_values<float>(size_t(T * B), 6), w = random_values<float>(size_t(B * B), 7),
                     g0 = random_values<float>(size_t(B), 8);
  for (float& e : w) e /= 4;
  outs::iir_results r = outs::iir({x.data(), {T, B}}, {w.data(), {B, B}}, {g0.data(), {B}});
  std::vector<float> all(size_t(T * B)), last(static_cast<size_t>(B));
  float total = 0;
  outs::iir({x.data(), {T, B}}, {w.data(), {B, B}}, {g0.data(), {B}}, {all.data(), {T, B}}, {last.data(), {B}},
            {&total, {}});
  BOOST_TEST(same_bits(all.data(), r.all.data(), T * B));
  BOOST_TEST(same_bits(last.data(), r.last.data(), B));
  BOOST_TEST(same_bits(&total, &r.total, 1));

  std::vector<int32_t> m{1, 2, 3, 4, 5, 6};
  std::vector<int32_t> same(6), times(6);
  outs::scaled({m.data(), {2, 3}}, 7, {same.data(), {2, 3}}, {times.data(), {2, 3}});
  BOOST_TEST(same == m);
  BOOST_TEST(times == (std::vector<int32_t>{7, 14, 21, 28, 35, 42}));
  // Zero steps: an empty result, written nowhere.
  outs::linear({a.data(), {0, N}}, {b.data(), {0, N}}, {h0.data(), {N}}, {out.data(), {0, N}});
}

BOOST_AUTO_TEST_CASE(wrong_ranks_shapes_and_overlaps_are_located_errors) {
  std::vector<float> a(64, 0.5f), b(64, 0.25f), h0(8, 1.0f), out(64, 0.0f), last(8);
  float total = 0;
  BOOST_TEST(error_of([&] { outs::linear({a.data(), {4, 2}}, {b.data(), {4, 2}}, {h0.data(), {2}}, {out.data(), {8}}); }) ==
             "6:54: result 0 of 'linear' must have rank 2 (f32[T, N]), got rank 1");
  BOOST_TEST(error_of([&] { outs::linear({a.data(), {4, 2}}, {b.data(), {4, 2}}, {h0.data(), {2}}, {out.data(), {4, 3}}); }) ==
             "6:54: result 0 of 'linear': dimension 1 is 3 but N = 2 (dimension 1 of 'a')");
  BOOST_TEST(error_of([&] { outs::linear({a.data(), {4, 2}}, {b.data(), {4, 2}}, {h0.data(), {2}}, {out.data(), {-1, 2}}); }) ==
             "6:54: result 0 of 'linear': dimension 0 is -1; dimensions must be >= 0");
  // The arguments are checked first.
  BOOST_TEST(error_of([&] { outs::linear({a.data(), {4, 2}}, {b.data(), {3, 2}}, {h0.data(), {2}}, {out.data(), {5, 2}}); }) ==
             "6:25: argument 'b' of 'linear': dimension 0 is 3 but T = 4 (dimension 0 of 'a')");
  BOOST_TEST(error_of([&] {
               outs::iir({a.data(), {4, 2}}, {b.data(), {2, 2}}, {h0.data(), {2}}, {out.data(), {4, 2}},
                         {last.data(), {3}}, {&total, {}});
             }) == "22:68: result 1 ('last') of 'iir': dimension 0 is 3 but B = 2 (dimension 1 of 'x')");
  BOOST_TEST(error_of([&] {
               outs::iir({a.data(), {4, 2}}, {b.data(), {2, 2}}, {h0.data(), {2}}, {out.data(), {4, 2}},
                         {last.data(), {2}}, {&total, {1}});
             }) == "22:82: result 2 ('total') of 'iir' must have rank 0 (f32), got rank 1");
  // Overlaps: with an argument (which would be read after being overwritten), with another result.
  BOOST_TEST(error_of([&] { outs::linear({a.data(), {4, 2}}, {b.data(), {4, 2}}, {h0.data(), {2}}, {a.data() + 7, {4, 2}}); }) ==
             "6:54: result 0 of 'linear' overlaps argument 'a': a result must be written to memory of its own");
  BOOST_TEST(error_of([&] {
               outs::iir({a.data(), {4, 2}}, {b.data(), {2, 2}}, {h0.data(), {2}}, {out.data(), {4, 2}},
                         {out.data() + 6, {2}}, {&total, {}});
             }) == "22:68: result 1 ('last') of 'iir' overlaps result 0 ('all') of 'iir': a result must be written to "
                   "memory of its own");
  // Adjacent memory is not an overlap.
  outs::linear({a.data(), {4, 2}}, {b.data(), {4, 2}}, {h0.data(), {2}}, {a.data() + 8, {4, 2}});
}

BOOST_AUTO_TEST_CASE(only_functions_with_shapes_known_from_their_arguments_have_the_form) {
  using Ref = scangen::TensorRef<const float>;
  using Out = scangen::TensorRef<float>;
  auto linear = [](auto&&... x) -> decltype(outs::linear(x...)) { return outs::linear(x...); };
  auto until_positive = [](auto&&... x) -> decltype(outs::until_positive(x...)) { return outs::until_positive(x...); };
  auto head = [](auto&&... x) -> decltype(outs::head(x...)) { return outs::head(x...); };
  BOOST_TEST((decltype(into_form<Ref, Ref, Ref, Out>::test(linear))::value));
  BOOST_TEST(!(decltype(into_form<Ref, Out>::test(until_positive))::value));
  BOOST_TEST(!(decltype(into_form<Ref, int64_t, Out>::test(head))::value));
}

BOOST_AUTO_TEST_CASE(jit_call_into_on_every_backend_without_a_gpu) {
  const std::string scan = std::string(SCANGEN_SOURCE_DIR) + "/tests/api/outs.scan";
  const int64_t T = 23, N = 6;
  std::vector<float> a = random_values<float>(size_t(T * N), 11), b = random_values<float>(size_t(T * N), 12),
                     h0 = random_values<float>(size_t(N), 13);
  for (float& x : a) x /= 3;
  std::vector<scangen::HostTensor> args{scangen::view(a.data(), {T, N}), scangen::view(b.data(), {T, N}),
                                        scangen::view(h0.data(), {N})};
  for (scangen::Backend backend : {scangen::Backend::Interpreter, scangen::Backend::Cpu, scangen::Backend::CudaEmulation}) {
    scangen::JitOptions options;
    options.backend = backend;
    scangen::Module m = scangen::compile_file(scan, options);
    std::vector<scangen::HostTensor> expected = m.call("linear", args);
    std::vector<float> out(size_t(T * N), 7.0f);
    std::vector<scangen::HostTensor> outs{scangen::out_view(out.data(), {T, N})};
    for (int call = 0; call < 2; ++call) {
      m.call_into("linear", args, outs);
      BOOST_TEST(same_bits(out.data(), expected[0].data<float>(), T * N), scangen::backend_name(backend));
    }
    std::vector<scangen::HostTensor> wrong{scangen::out_view(out.data(), {T, N + 1})};
    try {
      m.call_into("linear", args, wrong);
      BOOST_ERROR("no error for a wrong shape");
    } catch (const scangen::RuntimeError& e) {
      BOOST_TEST(std::string(e.what()).find("result 0") != std::string::npos, e.what());
    }
    std::vector<scangen::HostTensor> overlapping{scangen::out_view(a.data(), {T, N})};
    try {
      m.call_into("linear", args, overlapping);
      BOOST_ERROR("no error for an out over an argument");
    } catch (const scangen::RuntimeError& e) {
      BOOST_TEST(std::string(e.what()).find("overlaps argument 'a'") != std::string::npos, e.what());
    }
  }
  // The CPU backend has no such form for a function whose result shapes are known only while it runs.
  scangen::Module cpu = scangen::compile_file(scan);
  std::vector<float> u{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, s(12);
  std::vector<scangen::HostTensor> outs{scangen::out_view(s.data(), {12})};
  try {
    cpu.call_into("until_positive", {scangen::view(u.data(), {12})}, outs);
    BOOST_ERROR("no error for a function without the form");
  } catch (const scangen::RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).find("its result shapes are known only while it runs") != std::string::npos,
               e.what());
  }
}
