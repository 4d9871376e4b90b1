// The catalogue of run-time errors (generator/src/ir/runtime_errors.def): every entry that a
// program or its signature raises has a case here, a function that raises it, and each case runs
// on the interpreter, the CPU backend and the CUDA emulation through the JIT API, which must all
// fail with the catalogue's format applied to the case's values, at the same line and column (the
// CUDA emulation adds why the arena could not grow to a failed allocation).
// The entries only emitted code's typed entry points raise are raised by tests/api.
#define BOOST_TEST_MODULE runtime_errors
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/runtime_errors.h"
#include "scangen/scangen.h"

using namespace scangen;
using ir::RuntimeErrorId;
using Arg = ir::ErrorArg<int64_t>;

namespace {

HostTensor f32s(Shape shape) { return HostTensor(DType::F32, std::move(shape)); }
HostTensor i64(int64_t v) { return HostTensor::scalar<int64_t>(v); }
Arg text(std::string t) { return Arg::text_of(std::move(t)); }
Arg number(int64_t v) { return Arg::number(v); }
Arg shape(Shape s) { return Arg::shape(std::move(s)); }

// A function that raises `id` when called with `args`, with the values the message must show.
struct Case {
  RuntimeErrorId id;
  std::string function;  // its name; the source starts with "fn <function>"
  std::string source;
  std::function<std::vector<HostTensor>()> args;
  std::vector<Arg> expected;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {RuntimeErrorId::argument_count, "argument_count", "fn argument_count(x: f32[n]) -> f32[n] { return x }",
       [] { return std::vector<HostTensor>{}; }, {text("argument_count"), text("1"), text(""), number(0)}},
      {RuntimeErrorId::argument_dtype, "argument_dtype", "fn argument_dtype(x: f32[n]) -> f32[n] { return x }",
       [] { return std::vector<HostTensor>{HostTensor(DType::I64, {2})}; },
       {text("argument 'x' of 'argument_dtype'"), text("f32"), text("i64")}},
      {RuntimeErrorId::argument_rank, "argument_rank", "fn argument_rank(x: f32[n]) -> f32[n] { return x }",
       [] { return std::vector<HostTensor>{f32s({2, 2})}; },
       {text("argument 'x' of 'argument_rank'"), text("1"), text("f32[n]"), number(2)}},
      {RuntimeErrorId::dimension_mismatch, "dimension_mismatch", "fn dimension_mismatch(x: f32[3]) -> f32[3] { return x }",
       [] { return std::vector<HostTensor>{f32s({2})}; },
       {text("argument 'x' of 'dimension_mismatch'"), text("0"), number(2), number(3)}},
      {RuntimeErrorId::dimension_mismatch, "result_mismatch", "fn result_mismatch(x: f32[n]) -> f32[3] { return x }",
       [] { return std::vector<HostTensor>{f32s({2})}; },
       {text("the result of 'result_mismatch'"), text("0"), number(2), number(3)}},
      {RuntimeErrorId::dimension_mismatch, "concat_pieces",
       "fn concat_pieces(a: f32[m, n], b: f32[k, j]) -> f32[?, n] { return concat((a, b)) }",
       [] { return std::vector<HostTensor>{f32s({1, 3}), f32s({1, 2})}; },
       {text("concat: piece 1"), text("1"), number(2), number(3)}},
      {RuntimeErrorId::dimension_mismatch_symbol, "dimension_mismatch_symbol",
       "fn dimension_mismatch_symbol(a: f32[m], b: f32[k]) -> f32[m] { return axpy(a, b) }\n"
       "fn axpy(x: f32[n], y: f32[n]) -> f32[n] { return x + y }",
       [] { return std::vector<HostTensor>{f32s({2}), f32s({3})}; },
       {text("argument 'y' of 'axpy'"), text("0"), number(3), text("n"), number(2)}},
      {RuntimeErrorId::dimension_mismatch_bound, "dimension_mismatch_bound",
       "fn dimension_mismatch_bound(a: f32[n], b: f32[n]) -> f32[n] { return a + b }",
       [] { return std::vector<HostTensor>{f32s({2}), f32s({3})}; },
       {text("argument 'b' of 'dimension_mismatch_bound'"), text("0"), number(3), text("n"), number(2),
        text("dimension 0 of 'a'")}},
      {RuntimeErrorId::broadcast, "broadcast", "fn broadcast(a: f32[n], b: f32[m]) -> f32[?] { return a + b }",
       [] { return std::vector<HostTensor>{f32s({2}), f32s({3})}; }, {shape({2}), shape({3})}},
      {RuntimeErrorId::fill_size_negative, "fill_size_negative",
       "fn fill_size_negative(n: i64) -> f32[?] { return zeros(f32, n) }", [] { return std::vector<HostTensor>{i64(-1)}; },
       {text("0"), number(-1)}},
      {RuntimeErrorId::arange_too_large, "arange_too_large",
       "fn arange_too_large(a: i64, b: i64) -> i64[?] { return arange(a, b) }",
       [] { return std::vector<HostTensor>{i64(-INT64_MAX), i64(INT64_MAX)}; }, {}},
      {RuntimeErrorId::reshape_count, "reshape_count", "fn reshape_count(x: f32[n]) -> f32[?, ?] { return reshape(x, 2, 3) }",
       [] { return std::vector<HostTensor>{f32s({5})}; }, {number(5), shape({2, 3})}},
      {RuntimeErrorId::matmul_inner, "matmul_inner",
       "fn matmul_inner(a: f32[m, k], b: f32[j, n]) -> f32[m, n] { return a @ b }",
       [] { return std::vector<HostTensor>{f32s({2, 3}), f32s({2, 2})}; },
       {text("f32"), shape({2, 3}), text("f32"), shape({2, 2}), number(3), number(2)}},
      {RuntimeErrorId::update_shape, "update_shape",
       "fn update_shape(x: f32[n], v: f32[m]) -> f32[n] { return set(x[0:2], v) }",
       [] { return std::vector<HostTensor>{f32s({4}), f32s({3})}; }, {text("set"), shape({3}), shape({2})}},
      {RuntimeErrorId::index_out_of_range, "index_out_of_range",
       "fn index_out_of_range(x: f32[n], i: i64) -> f32 { return x[i] }",
       [] { return std::vector<HostTensor>{f32s({3}), i64(5)}; }, {number(5), text("0"), number(3)}},
      {RuntimeErrorId::index_out_of_range, "gather_out_of_range",
       "fn gather_out_of_range(x: f32[n, m], i: i64[k]) -> f32[k, m] { return x[i] }",
       [] {
         HostTensor idx(DType::I64, {2});
         idx.data<int64_t>()[1] = -4;
         return std::vector<HostTensor>{f32s({3, 2}), idx};
       },
       {number(-4), text("0"), number(3)}},
      {RuntimeErrorId::integer_division_by_zero, "integer_division_by_zero",
       "fn integer_division_by_zero(a: i64, b: i64) -> i64 { return a / b }",
       [] { return std::vector<HostTensor>{i64(1), i64(0)}; }, {}},
      {RuntimeErrorId::negative_exponent, "negative_exponent", "fn negative_exponent(a: i64, b: i64) -> i64 { return a ** b }",
       [] { return std::vector<HostTensor>{i64(2), i64(-3)}; }, {number(-3)}},
      {RuntimeErrorId::reduce_empty, "reduce_empty", "fn reduce_empty(x: f32[n]) -> f32 { return max(x) }",
       [] { return std::vector<HostTensor>{f32s({0})}; }, {text("max")}},
      {RuntimeErrorId::reduce_empty, "argmax_empty", "fn argmax_empty(x: f32[n]) -> i64 { return argmax(x) }",
       [] { return std::vector<HostTensor>{f32s({0})}; }, {text("argmax")}},
      {RuntimeErrorId::reduce_empty_axis, "reduce_empty_axis",
       "fn reduce_empty_axis(x: f32[m, n]) -> f32[n] { return min(x, axis = 0) }",
       [] { return std::vector<HostTensor>{f32s({0, 3})}; }, {text("min")}},
      {RuntimeErrorId::reduce_empty_axis, "argmin_empty_axis",
       "fn argmin_empty_axis(x: f32[m, n]) -> i64[n] { return argmin(x, axis = 0) }",
       [] { return std::vector<HostTensor>{f32s({0, 3})}; }, {text("argmin")}},
      {RuntimeErrorId::top_k_out_of_range, "top_k_out_of_range",
       "fn top_k_out_of_range(x: f32[n], k: i64) -> i64[?] {\n  let (v, i) = top_k(x, k)\n  return i\n}",
       [] { return std::vector<HostTensor>{f32s({3}), i64(4)}; }, {number(4), number(3)}},
      {RuntimeErrorId::steps_negative, "steps_negative",
       "fn steps_negative(a: f32, k: i64) -> f32[?] {\n  let s = scan(steps = k) {\n    init s = a\n"
       "    s[t] = s[t-1] + 1\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{HostTensor::scalar<float>(1), i64(-1)}; }, {number(-1)}},
      {RuntimeErrorId::lengths_out_of_range, "lengths_out_of_range",
       "fn lengths_out_of_range(u: f32[n, b], L: i64[b]) -> f32[b] {\n  let s = scan(lengths = L) {\n"
       "    init s = zeros(f32, len(L))\n    s[t] = s[t-1] + u[t]\n  }\n  return s[-1]\n}",
       [] { return std::vector<HostTensor>{HostTensor(DType::F32, {2, 2}), HostTensor::from_vector<int64_t>({1, 3}, {2})}; },
       {number(1), number(3), number(2)}},
      {RuntimeErrorId::reverse_sequence_length, "reverse_sequence_length",
       "fn reverse_sequence_length(u: f32[n, b], L: i64[b]) -> f32[n, b] {\n  return reverse_sequence(u, L)\n}",
       [] { return std::vector<HostTensor>{HostTensor(DType::F32, {2, 2}), HostTensor::from_vector<int64_t>({1, 3}, {2})}; },
       {number(1), number(3), number(2)}},
      {RuntimeErrorId::offsets_empty, "offsets_empty",
       "fn offsets_empty(u: f32[n], O: i64[p]) -> f32[?, ?] {\n  let s = scan(offsets = O) {\n"
       "    init s = zeros(f32, len(O) - 1)\n    s[t] = s[t-1] + u[t]\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{f32s({3}), HostTensor::from_vector<int64_t>({}, {0})}; },
       {}},
      {RuntimeErrorId::offsets_start, "offsets_start",
       "fn offsets_start(u: f32[n], O: i64[p]) -> f32[?, ?] {\n  let s = scan(offsets = O) {\n"
       "    init s = zeros(f32, len(O) - 1)\n    s[t] = s[t-1] + u[t]\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{f32s({3}), HostTensor::from_vector<int64_t>({1, 2}, {2})}; },
       {number(1)}},
      {RuntimeErrorId::offsets_decrease, "offsets_decrease",
       "fn offsets_decrease(u: f32[n], O: i64[p]) -> f32[?, ?] {\n  let s = scan(offsets = O) {\n"
       "    init s = zeros(f32, len(O) - 1)\n    s[t] = s[t-1] + u[t]\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{f32s({3}), HostTensor::from_vector<int64_t>({0, 2, 1, 3}, {4})}; },
       {number(2), number(1), number(1), number(2)}},
      {RuntimeErrorId::offsets_end, "offsets_end",
       "fn offsets_end(u: f32[n], O: i64[p]) -> f32[?, ?] {\n  let s = scan(offsets = O) {\n"
       "    init s = zeros(f32, len(O) - 1)\n    s[t] = s[t-1] + u[t]\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{f32s({3}), HostTensor::from_vector<int64_t>({0, 1, 2}, {3})}; },
       {number(2), number(2), number(3)}},
      {RuntimeErrorId::sequence_too_short, "sequence_too_short",
       "fn sequence_too_short(u: f32[n], k: i64) -> f32[?] {\n  let s = scan(steps = k) {\n    init s = f32(0)\n"
       "    s[t] = s[t-1] + u[t+1]\n  }\n  return s\n}",
       [] { return std::vector<HostTensor>{f32s({3}), i64(3)}; },
       {text("u"), number(3), text("1"), number(3), number(2)}},
      {RuntimeErrorId::cannot_allocate, "cannot_allocate",
       "fn cannot_allocate(n: i64) -> f32[?, ?] { return zeros(f32, n, n) }",
       [] { return std::vector<HostTensor>{i64(int64_t(1) << 29)}; },
       {text("the value"), text("f32"), shape({int64_t(1) << 29, int64_t(1) << 29}), number(int64_t(1) << 60)}},
      {RuntimeErrorId::cannot_allocate_over_limit, "cannot_allocate_over_limit",
       "fn cannot_allocate_over_limit(n: i64) -> f32[?, ?] { return zeros(f32, n, n) }",
       [] { return std::vector<HostTensor>{i64(int64_t(1) << 31)}; },
       {text("the value"), text("f32"), shape({int64_t(1) << 31, int64_t(1) << 31}), text(std::to_string(kMaxTensorBytes))}},
  };
  return all;
}

std::string program() {
  std::string text;
  for (const Case& c : cases()) text += c.source + "\n";
  return text;
}

JitOptions on(Backend backend) {
  JitOptions options;
  options.backend = backend;
  return options;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_entry_a_program_or_its_signature_raises_has_a_case) {
  std::map<RuntimeErrorId, int> count;
  for (const Case& c : cases()) ++count[c.id];
  for (int i = 0; i < ir::kRuntimeErrorCount; ++i) {
    const auto id = static_cast<RuntimeErrorId>(i);
    BOOST_TEST_CONTEXT(ir::runtime_error_name(id)) {
      if (ir::runtime_error_raised_by(id) == ir::RaisedBy::TypedApi)
        BOOST_TEST(count[id] == 0, "raised only by the typed API: tests/api raises it");
      else
        BOOST_TEST(count[id] > 0, "no case raises it");
    }
  }
}

BOOST_AUTO_TEST_CASE(the_formats_are_well_formed) {
  for (int i = 0; i < ir::kRuntimeErrorCount; ++i) {
    const auto id = static_cast<RuntimeErrorId>(i);
    BOOST_TEST_CONTEXT(ir::runtime_error_name(id)) {
      const std::string format = ir::runtime_error_format(id);
      BOOST_TEST(!format.empty());
      BOOST_TEST(format.back() != '.');
      BOOST_CHECK_NO_THROW(ir::runtime_error_pieces(id));
    }
  }
  // A shape is its sizes in brackets; arguments of the wrong kind are a scangen bug.
  BOOST_TEST(ir::runtime_error_text(RuntimeErrorId::broadcast, {shape({2, 3}), shape({})}) ==
             "shapes [2, 3] and [] cannot be broadcast together");
  BOOST_CHECK_THROW(ir::runtime_error_text(RuntimeErrorId::broadcast, {number(2), shape({})}), InternalError);
  BOOST_CHECK_THROW(ir::runtime_error_text(RuntimeErrorId::integer_division_by_zero, {number(2)}), InternalError);
}

BOOST_AUTO_TEST_CASE(every_backend_raises_every_case_in_the_catalogue_words) {
  std::map<std::string, std::pair<int, int>> places;  // the interpreter's line and column per case
  for (Backend backend : {Backend::Interpreter, Backend::Cpu, Backend::CudaEmulation}) {
    Module m = compile_source("runtime_errors.scan", program(), on(backend));
    for (const Case& c : cases()) {
      BOOST_TEST_CONTEXT(backend_name(backend) << ": " << c.function) {
        const std::string expected = ir::runtime_error_text(c.id, c.expected);
        try {
          m.call(c.function, c.args());
          BOOST_ERROR("no error; expected: " << expected);
        } catch (const ProgramError& e) {
          // The CUDA backends say why the device's memory could not be had after the message.
          if (backend == Backend::CudaEmulation && c.id == RuntimeErrorId::cannot_allocate)
            BOOST_TEST(e.message().rfind(expected + ": ", 0) == 0u, e.message());
          else
            BOOST_TEST(e.message() == expected);
          BOOST_TEST(e.line() > 0);
          auto [it, first] = places.emplace(c.function, std::make_pair(e.line(), e.column()));
          if (!first) BOOST_TEST((it->second == std::make_pair(e.line(), e.column())), "the interpreter's place");
        }
      }
    }
  }
}
