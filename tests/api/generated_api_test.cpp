// The generated C++ API (what scangen_add_library gives a user) called with fuzzed shapes: wrong
// ranks, size symbols bound to two values, negative, zero and huge dimensions, negative steps.
// Every call either returns (a valid shape that fits the buffers passed) or throws scangen::Error
// naming the argument or the value; never an out-of-bounds access (the sanitized build runs this
// test under ASan, docs/testing.md).
#define BOOST_TEST_MODULE generated_api_test
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/runtime_errors.h"
#include "shapes.h"

namespace {

constexpr int64_t kBufferElements = 64;
// Element counts and byte counts without overflow (GCC and clang's extension).
__extension__ using Wide = __int128;
constexpr Wide kMaxBytes = Wide(1) << 62;  // kMaxTensorBytes of the runtime

// Sizes drawn for a dimension: small ones fit the buffers; the rest are invalid or huge.
const int64_t kSizes[] = {0, 1, 2, 3, 4, -1, -7, int64_t(1) << 31, int64_t(1) << 32, int64_t(1) << 62,
                          std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};

struct Arg {
  std::vector<int64_t> shape;
  // Elements, or nullopt when the shape is invalid (a negative size, more than kMaxBytes).
  std::optional<Wide> elements(int element_bytes) const {
    Wide n = 1;
    for (int64_t d : shape)
      if (d < 0) return std::nullopt;
    // No elements: valid whatever the other dimensions are (the runtime's rule).
    for (int64_t d : shape)
      if (d == 0) return 0;
    for (int64_t d : shape) {
      n *= d;
      if (n * element_bytes > kMaxBytes) return std::nullopt;
    }
    return n;
  }
};

Arg random_arg(std::mt19937_64& rng) {
  Arg a;
  int rank = std::uniform_int_distribution<int>(0, 4)(rng);
  for (int i = 0; i < rank; ++i) {
    // Mostly small sizes, so that valid calls happen too.
    bool small = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
    size_t pick = std::uniform_int_distribution<size_t>(0, small ? 4 : std::size(kSizes) - 1)(rng);
    a.shape.push_back(kSizes[pick]);
  }
  return a;
}

std::string shape_text(const Arg& a) {
  std::string s = "[";
  for (size_t i = 0; i < a.shape.size(); ++i) s += (i ? "," : "") + std::to_string(a.shape[i]);
  return s + "]";
}

// Calls `call`; a valid call (`fits`) must return or say that its result cannot be allocated, an
// invalid one must throw an Error whose message contains one of `names`. A valid shape larger than the buffers is not called: the
// API cannot know a buffer's length, so that is the caller's contract.
template <class Call>
void expect_outcome(Call&& call, std::optional<bool> fits, const std::vector<std::string>& names,
                    const std::string& what) {
  if (fits && !*fits) return;
  try {
    call();
    BOOST_CHECK_MESSAGE(fits.has_value(), what << ": returned, but the shapes are invalid");
  } catch (const scangen::Error& e) {
    std::string message = e.what();
    bool named = false;
    for (const std::string& n : names) named = named || message.find(n) != std::string::npos;
    // Valid arguments may still ask for a result too large to allocate (a dimension of 2^62).
    if (fits.has_value()) {
      BOOST_CHECK_MESSAGE(message.find("cannot allocate") != std::string::npos,
                          what << ": valid shapes, yet threw: " << message);
      return;
    }
    BOOST_CHECK_MESSAGE(named, what << ": the message names none of the expected: " << message);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_class_of_bad_shape_names_the_argument) {
  std::vector<float> buffer(kBufferElements, 1.0f);
  const float* p = buffer.data();
  auto message_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const scangen::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  BOOST_TEST(message_of([&] { api::pair({p, {2}}, {p, {3}}, 1); }) ==
             "argument 'a' of 'pair' must have rank 2 (f32[n, m]), got rank 1");
  BOOST_TEST(message_of([&] { api::pair({p, {2, 3}}, {p, {4}}, 1); }) ==
             "argument 'b' of 'pair': dimension 0 is 4 but m = 3 (dimension 1 of 'a')");
  // The entries of the catalogue (generator/src/ir/runtime_errors.def) only typed entry points raise.
  using Arg = scangen::ir::ErrorArg<int64_t>;
  using scangen::ir::RuntimeErrorId;
  BOOST_TEST(message_of([&] { api::pair({p, {-1, 3}}, {p, {3}}, 1); }) ==
             scangen::ir::runtime_error_text(RuntimeErrorId::caller_dimension_negative,
                                             {Arg::text_of("argument 'a' of 'pair'"), Arg::text_of("0"), Arg::number(-1)}));
  BOOST_TEST(message_of([&] { api::pair({p, {-1, 3}}, {p, {3}}, 1); }) ==
             "argument 'a' of 'pair': dimension 0 is -1; dimensions must be >= 0");
  BOOST_TEST(message_of([&] { api::pair({p, {int64_t(1) << 40, int64_t(1) << 40}}, {p, {int64_t(1) << 40}}, 1); }) ==
             scangen::ir::runtime_error_text(RuntimeErrorId::caller_tensor_too_large,
                                             {Arg::text_of("argument 'a' of 'pair'"), Arg::text_of("f32"),
                                              Arg::shape({int64_t(1) << 40, int64_t(1) << 40}),
                                              Arg::text_of("4611686018427387904")}));
  BOOST_TEST(message_of([&] { api::pair({p, {2, 3}}, {p, {3}}, -1); }) == "steps is -1; it must be >= 0");
  BOOST_TEST(message_of([&] { api::make(int64_t(1) << 40, int64_t(1) << 40); }) ==
             "cannot allocate the value (f32[1099511627776, 1099511627776], more than 4611686018427387904 bytes)");
  BOOST_TEST(message_of([&] { api::make(-3, 2); }) == "dimension 0 of the result is -3; sizes must be >= 0");
}

BOOST_AUTO_TEST_CASE(zero_sizes_are_valid) {
  std::vector<float> buffer(kBufferElements, 1.0f);
  scangen::Tensor<float> h = api::pair({buffer.data(), {0, 3}}, {buffer.data(), {3}}, 2);
  BOOST_TEST(h.shape().size() == 1u);
  BOOST_TEST(h.shape()[0] == 0);
  h = api::pair({buffer.data(), {2, 0}}, {buffer.data(), {0}}, 2);
  BOOST_TEST(h.shape()[0] == 2);
  BOOST_TEST(h.data()[0] == 0.0f);
  scangen::Tensor<float> m = api::make(0, int64_t(1) << 62);
  BOOST_TEST(m.shape()[1] == int64_t(1) << 62);
}

BOOST_AUTO_TEST_CASE(random_shapes) {
  std::mt19937_64 rng(12);
  std::vector<float> f(kBufferElements, 0.5f);
  std::vector<double> d(kBufferElements, 0.25);
  std::vector<int32_t> i(kBufferElements, 3);
  // nullopt: some shape is invalid (the call must throw); true: all fit the buffers (the call must
  // return); false: valid but larger than the buffers (not called: the API cannot know a
  // buffer's length, reading it whole is the caller's contract, even before another error).
  auto fits = [](std::initializer_list<std::optional<Wide>> counts) -> std::optional<bool> {
    bool all = true;
    for (const auto& c : counts) {
      if (!c) return std::nullopt;
      all = all && *c <= kBufferElements;
    }
    return all;
  };
  for (int iteration = 0; iteration < 20000; ++iteration) {
    Arg a = random_arg(rng), b = random_arg(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(-3, 4)(rng);
    std::string what = "iteration " + std::to_string(iteration) + ": " + shape_text(a) + " " + shape_text(b);
    std::optional<bool> pair_fits = fits({a.elements(4), b.elements(4)});
    if (a.shape.size() != 2 || b.shape.size() != 1 || (pair_fits && a.shape[1] != b.shape[0]))
      pair_fits = std::nullopt;
    // The result has a.shape[0] rows; more than the buffers hold would fill gigabytes.
    if (pair_fits && a.shape[0] > kBufferElements) pair_fits = false;
    // Steps < 0 are an error, and so is h[-1] of no steps.
    if (pair_fits && *pair_fits && k <= 0) pair_fits = std::nullopt;
    expect_outcome([&] { api::pair({f.data(), a.shape.data(), int(a.shape.size())},
                                   {f.data(), b.shape.data(), int(b.shape.size())}, k); },
                   pair_fits, {"argument 'a'", "argument 'b'", "steps is", "index -1"}, "pair " + what);
    std::optional<bool> rows_fits = fits({a.elements(8), b.elements(8)});
    if (a.shape.size() != 2 || b.shape.size() != 1 || (rows_fits && (a.shape[1] != 3 || b.shape[0] != 3)))
      rows_fits = std::nullopt;
    expect_outcome([&] { api::rows({d.data(), a.shape.data(), int(a.shape.size())},
                                   {d.data(), b.shape.data(), int(b.shape.size())}); },
                   rows_fits, {"argument 'x'", "argument 'w'"}, "rows " + what);
    std::optional<bool> cube_fits = a.shape.size() == 3 ? fits({a.elements(4)}) : std::nullopt;
    expect_outcome([&] { api::cube({i.data(), a.shape.data(), int(a.shape.size())}, 1); }, cube_fits,
                   {"argument 'c'"}, "cube " + what);
  }
}
