// Semantic analysis: the dtype rules, scan classification (sequences, states, taps), static shapes,
// function inlining, binding of scan outputs by name, and representative error messages.
#define BOOST_TEST_MODULE sema
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "generator_test_support.h"
#include "frontend/spelling.h"
#include "ir/printer.h"

using namespace scangen;
using namespace scangen::testing;

namespace {

// The type of the value `fn f(PARAMS) -> DECL { return EXPR }` returns, as built by sema (the
// declared type DECL must accept it; a mismatch fails the test with sema's message).
std::string return_type(const std::string& params, const std::string& decl, const std::string& expr) {
  std::string text = "fn f(" + params + ") -> " + decl + " {\n  return " + expr + "\n}\n";
  BOOST_TEST_INFO("program: " << text);
  ir::Program p = compile(text);
  if (p.functions.empty()) return "(does not compile)";
  return p.functions[0].graph.results.at(0).type().str();
}

// The ScanInfo of the (first) scan in the program's first function.
ir::ScanInfo scan_info(const std::string& text) {
  ir::Program p = compile(text);
  BOOST_TEST_REQUIRE(!p.functions.empty());
  const ir::ScanNode* s = first_scan(p.functions[0].graph);
  BOOST_TEST_REQUIRE(s != nullptr);
  return s->info();
}

std::string taps_str(const std::vector<int64_t>& taps) {
  std::string s = "[";
  for (size_t i = 0; i < taps.size(); ++i) s += (i ? ", " : "") + std::to_string(taps[i]);
  return s + "]";
}

// "label taps [..]; label taps [..]"
std::string sequences_str(const ir::ScanInfo& info) {
  std::string s;
  for (const ir::ScanSequence& q : info.sequences) s += (s.empty() ? "" : "; ") + q.label + " taps " + taps_str(q.taps);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dtype_rules)

BOOST_AUTO_TEST_CASE(weak_int_literal_takes_the_other_operands_dtype) {
  BOOST_TEST(return_type("x: i32", "i32", "x + 1") == "i32");
  BOOST_TEST(return_type("x: i32", "i32", "2 * x") == "i32");
  BOOST_TEST(return_type("x: f32", "f32", "x * 2") == "f32");
  BOOST_TEST(return_type("x: f64[3]", "f64[3]", "x - 1") == "f64[3]");
  BOOST_TEST(return_type("x: i32", "bool", "x < 3") == "bool");
  // Literals folded together stay weak: (2 * 3) still takes i32.
  BOOST_TEST(return_type("x: i32", "i32", "x + 2 * 3") == "i32");
}

BOOST_AUTO_TEST_CASE(weak_float_literal_takes_a_float_dtype) {
  BOOST_TEST(return_type("x: f32", "f32", "x * 0.5") == "f32");
  BOOST_TEST(return_type("x: f64", "f64", "0.5 * x") == "f64");
  // With an integer value a float literal gives f64.
  BOOST_TEST(return_type("x: i32", "f64", "x + 1.5") == "f64");
  BOOST_TEST(return_type("x: i64[2]", "f64[2]", "x * 0.5") == "f64[2]");
  BOOST_TEST(first_error("fn f(x: i32) -> f32 {\n  return x + 1.5\n}\n") ==
             "2:10: error: the result of 'f' has type f64 but is declared f32");
}

BOOST_AUTO_TEST_CASE(strong_operands_promote) {
  BOOST_TEST(return_type("a: i64, b: f32", "f32", "a + b") == "f32");
  BOOST_TEST(return_type("a: i32, b: f32", "f32", "a * b") == "f32");
  BOOST_TEST(return_type("a: f32, b: f64", "f64", "a + b") == "f64");
  BOOST_TEST(return_type("a: i32, b: i64", "i64", "a - b") == "i64");
  BOOST_TEST(return_type("a: i32, b: f64", "f64", "a / b") == "f64");
  BOOST_TEST(return_type("a: i32[3], b: i64", "i64[3]", "a % b") == "i64[3]");
  BOOST_TEST(return_type("a: i32, b: f32", "bool", "a < b") == "bool");
}

BOOST_AUTO_TEST_CASE(no_implicit_downcast) {
  BOOST_TEST(diagnostics("fn f(x: f64) -> f32 {\n  return x\n}\n") ==
             (std::vector<std::string>{"2:10: error: the result of 'f' has type f64 but is declared f32",
                                       "1:17: note: declared here"}));
  BOOST_TEST(first_error("fn f(x: i64, y: i32) -> i32 {\n  return x + y\n}\n") ==
             "2:10: error: the result of 'f' has type i64 but is declared i32");
  BOOST_TEST(first_error("fn f(x: i32) -> i32 {\n  return x + 3000000000\n}\n") ==
             "2:14: error: integer literal 3000000000 does not fit in i32");
}

BOOST_AUTO_TEST_CASE(math_functions) {
  BOOST_TEST(return_type("x: i32", "f64", "exp(x)") == "f64");
  BOOST_TEST(return_type("x: i64[4]", "f64[4]", "sqrt(x)") == "f64[4]");
  BOOST_TEST(return_type("x: f32", "f32", "tanh(x)") == "f32");
  BOOST_TEST(return_type("x: f64", "f64", "sigmoid(x)") == "f64");
  // abs, sign, floor, ceil keep integers.
  BOOST_TEST(return_type("x: i32", "i32", "abs(x)") == "i32");
  BOOST_TEST(return_type("x: i32", "i32", "floor(x)") == "i32");
  BOOST_TEST(return_type("x: i32, y: f32", "f32", "pow(x, y)") == "f32");
  BOOST_TEST(return_type("x: i32", "i32", "max(x, 0)") == "i32");
  BOOST_TEST(return_type("x: i32", "i32", "relu(x)") == "i32");
}

BOOST_AUTO_TEST_CASE(reductions) {
  BOOST_TEST(return_type("x: i32[n]", "i32", "sum(x)") == "i32");
  BOOST_TEST(return_type("x: i32[n]", "i32", "prod(x)") == "i32");
  BOOST_TEST(return_type("x: i32[n]", "f64", "mean(x)") == "f64");
  BOOST_TEST(return_type("x: i64[2, 3]", "f64[2]", "mean(x, axis = 1)") == "f64[2]");
  BOOST_TEST(return_type("x: f32[n]", "f32", "mean(x)") == "f32");
  BOOST_TEST(return_type("x: f32[2, n]", "f32[n]", "max(x, axis = 0)") == "f32[n]");
  BOOST_TEST(return_type("x: f32[2, n, 4]", "f32[2, n]", "min(x, axis = -1)") == "f32[2, n]");
}

BOOST_AUTO_TEST_CASE(bare_literals_default_to_i64_f32_bool) {
  // Per-step outputs computed from literals only: nothing else gives them a dtype.
  BOOST_TEST(return_type("k: i64", "i64[k]", "scan(steps = k) {\n y[t] = 2\n }") == "i64[k]");
  BOOST_TEST(return_type("k: i64", "f32[k]", "scan(steps = k) {\n y[t] = 2.5\n }") == "f32[k]");
  BOOST_TEST(return_type("k: i64", "bool[k]", "scan(steps = k) {\n y[t] = true\n }") == "bool[k]");
  BOOST_TEST(return_type("k: i64", "f32[k]", "scan(steps = k) {\n y[t] = 2 * 0.5\n }") == "f32[k]");
  // A state with a literal init and a step from literals.
  BOOST_TEST(return_type("k: i64", "i64[k]", "scan(steps = k) {\n init s = 0\n s[t] = s[t-1] + 1\n }") == "i64[k]");
  // zeros_like of a literal: the literal's default dtype.
  BOOST_TEST(return_type("", "i64", "sum(zeros_like(3))") == "i64");
  // An integer literal returned as a float takes the declared dtype.
  BOOST_TEST(return_type("", "f64", "2") == "f64");
}

BOOST_AUTO_TEST_CASE(literal_init_takes_the_step_dtype) {
  BOOST_TEST(return_type("x: f64, k: i64", "f64[k]", "scan(steps = k) {\n init s = 0\n s[t] = s[t-1] + x\n }") ==
             "f64[k]");
  BOOST_TEST(return_type("x: i32, k: i64", "i32[k]", "scan(steps = k) {\n init s = 1\n s[t] = x\n }") == "i32[k]");
}

// A literal init read at a lag stays weak until the step value gives it a dtype.
BOOST_AUTO_TEST_CASE(literal_init_read_at_a_lag_takes_the_step_dtype) {
  // A running sum of an i32 sequence stays i32, and s[t-1] * x with x: i32 too.
  BOOST_TEST(first_error("fn f(u: i32[L]) -> i32[L] {\n  let y = scan {\n    init y = 0\n"
                         "    y[t] = y[t-1] + u[t]\n  }\n  return y\n}\n") == "");
  BOOST_TEST(first_error("fn f(x: i32, k: i64) -> i32[k] {\n  let s = scan(steps = k) {\n    init s = 1\n"
                         "    s[t] = s[t-1] * x\n  }\n  return s\n}\n") == "");
  // Made only of literals with a float among them: f32, the default float.
  BOOST_TEST(first_error("fn f(k: i64) -> f32[k] {\n  let s = scan(steps = k) {\n    init s = 0\n"
                         "    s[t] = s[t-1] + 0.5\n  }\n  return s\n}\n") == "");
  // A float literal with an integer value: f64.
  BOOST_TEST(first_error("fn f(k: i64) -> f64[k] {\n  let y = scan(steps = k) {\n    init y = 0.0\n"
                         "    y[t] = y[t-1] + t\n  }\n  return y\n}\n") == "");
  // Indexing further into the lag read is unaffected.
  BOOST_TEST(first_error("fn f(x0: f32[2], k: i64) -> f32[k, 2] {\n  let y = scan(steps = k) {\n    init y = x0\n"
                         "    y[t] = y[t-1] * y[t-1][0]\n  }\n  return y\n}\n") == "");
}

BOOST_AUTO_TEST_CASE(printed_ir_shows_the_conversions) {
  ir::Program p = compile("fn f(x: i32) -> f64 {\n  return x + 1.5\n}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  BOOST_TEST(ir::print_function(p.functions[0]) ==
             "fn f(%x: i32) -> f64 {\n"
             "  %0: f64 = cast %x\n"
             "  %1: f64 = const 1.5\n"
             "  %2: f64 = add %0, %1\n"
             "  return %2\n"
             "}\n");
}

BOOST_AUTO_TEST_CASE(bool_rules) {
  BOOST_TEST(first_error("fn f(b: bool) -> bool {\n  return b + 1\n}\n") ==
             "2:12: error: '+' is not defined on bool; bool takes part only in comparisons, logic, where, ?: and casts");
  BOOST_TEST(first_error("fn f(x: f32) -> bool {\n  return x && true\n}\n") ==
             "2:12: error: '&&' needs bool operands, got f32");
  BOOST_TEST(first_error("fn f(b: bool, x: f32) -> bool {\n  return b == x\n}\n") ==
             "2:12: error: cannot compare bool with f32");
  BOOST_TEST(return_type("b: bool, x: f32", "f32", "b ? x : 0") == "f32");
  BOOST_TEST(return_type("b: bool", "i32", "i32(b)") == "i32");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(scans)

BOOST_AUTO_TEST_CASE(sequences_states_and_outputs) {
  ir::ScanInfo info = scan_info(
      "fn f(u: f32[L], x0: f32[2], w: f32) -> f32[?] {\n"
      "  let (x, y) = scan {\n"
      "    init x = x0\n"
      "    x[t] = 2 * u[t-2] + 3 * x[t-1] + x[t-2]\n"
      "    y[t] = x[t] * w\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST(sequences_str(info) == "u taps [-2]");
  BOOST_TEST_REQUIRE(info.states.size() == 1u);
  BOOST_TEST(info.states[0].name == "x");
  BOOST_TEST(taps_str(info.states[0].lags) == "[1, 2]");
  BOOST_TEST(info.states[0].init_has_rows());
  BOOST_TEST(info.outputs == std::vector<std::string>{"y"});
  BOOST_TEST(info.num_params == 1);  // w
  BOOST_TEST(!info.has_steps);
  BOOST_TEST(!info.reverse);
  BOOST_TEST(!info.has_until);
  BOOST_TEST(info.index_name == "t");
}

BOOST_AUTO_TEST_CASE(taps_come_from_the_text) {
  // Every read counts: one in a let nothing uses, and one in the options of a nested scan.
  ir::ScanInfo info = scan_info(
      "fn f(u: f32[L], k: i64[L]) -> f32[?] {\n"
      "  let y = scan {\n"
      "    let unused = u[t + 3]\n"
      "    let inner = scan(steps = k[t + 1], index = s) {\n"
      "      z[s] = u[t]\n"
      "    }\n"
      "    y[t] = u[t - 2] + sum(inner)\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST(sequences_str(info) == "u taps [-2, 0, 3]; k taps [1]");
  ir::ScanSequence u = info.sequences[0];
  BOOST_TEST(u.min_tap() == -2);
  BOOST_TEST(u.max_tap() == 3);
  BOOST_TEST(u.span() == 5);
}

BOOST_AUTO_TEST_CASE(sequences_written_the_same_are_one) {
  ir::ScanInfo info = scan_info(
      "fn f(n: i64) -> i64[?] {\n"
      "  let s = scan {\n"
      "    s[t] = arange(n)[t] + arange(n)[t - 1] + arange(n + 1)[t]\n"
      "  }\n"
      "  return s\n"
      "}\n");
  BOOST_TEST(sequences_str(info) == "arange(n) taps [-1, 0]; arange(n + 1) taps [0]");
}

BOOST_AUTO_TEST_CASE(only_positive_taps_and_the_contract_formula_for_steps) {
  // m = min(min taps, 0) = 0 and M = 2: a sequence of length L allows L - 2 steps.
  ir::Program p = compile(
      "fn f(u: f32[L]) -> f32[?] {\n"
      "  let y = scan {\n"
      "    y[t] = u[t + 1] + u[t + 2]\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST_REQUIRE(!p.functions.empty());
  const ir::ScanNode* s = first_scan(p.functions[0].graph);
  BOOST_TEST_REQUIRE(s);
  BOOST_TEST(sequences_str(s->info()) == "u taps [1, 2]");
  BOOST_TEST(s->info().sequences[0].min_tap() == 0);
  BOOST_TEST(s->output_types()[0].str() == "f32[L - 2]");
}

BOOST_AUTO_TEST_CASE(set_position_never_makes_a_sequence) {
  ir::ScanInfo info = scan_info(
      "fn f(x: f32[n], u: f32[m]) -> f32[?, n] {\n"
      "  let y = scan {\n"
      "    y[t] = set(x[t], u[t])\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST(sequences_str(info) == "u taps [0]");
  BOOST_TEST(info.num_params == 1);  // x, used whole
  // The contract's example 4: the indices inside the position are sequences themselves.
  ir::ScanInfo place = scan_info(
      "fn place(location: i32[N, 2], values: f32[N], model: f32[r, c]) -> f32[N, r, c] {\n"
      "  let out = scan {\n"
      "    out[t] = set(zeros_like(model)[location[t, 0], location[t, 1]], values[t])\n"
      "  }\n"
      "  return out\n"
      "}\n");
  BOOST_TEST(sequences_str(place) == "location taps [0]; values taps [0]");
}

BOOST_AUTO_TEST_CASE(options) {
  ir::ScanInfo info = scan_info(
      "fn f(u: f32[n], k: i64) -> f32[?] {\n"
      "  let y = scan(steps = k, reverse, index = i, truncate_gradient = 5) {\n"
      "    y[i] = u[i]\n"
      "    until y[i] > 1\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST(info.has_steps);
  BOOST_TEST(info.reverse);
  BOOST_TEST(info.has_until);
  BOOST_TEST(info.truncate_gradient == 5);
  BOOST_TEST(info.index_name == "i");
  BOOST_TEST(sequences_str(info) == "u taps [0]");
}

// A per-step output whose shape changes from step to step is a compile error (ir/analysis.h).
BOOST_AUTO_TEST_CASE(output_shape_that_varies_with_the_step_is_rejected) {
  BOOST_TEST(!errors("fn f(x: f32[n], k: i64) -> f32[?, ?] {\n  let y = scan(steps = k) {\n    y[t] = x[0:t]\n"
                     "  }\n  return y\n}\n")
                  .empty());
  // An inner scan whose until depends on the outer index.
  BOOST_TEST(!errors("fn f(lim: f32, k: i64) -> f32[?, ?] {\n  let y = scan(steps = k) {\n"
                     "    y[t] = scan(steps = 5, index = s) {\n      init p = 1.0\n      p[s] = p[s-1] * 2\n"
                     "      until p[s] > lim + f32(t)\n    }\n  }\n  return y\n}\n")
                  .empty());
  // Not every slice varies: x[0:2] has the same shape at every step.
  BOOST_TEST(errors("fn f(x: f32[n], k: i64) -> f32[?, ?] {\n  let y = scan(steps = k) {\n    y[t] = x[0:2] * f32(t)\n"
                    "  }\n  return y\n}\n")
                 .empty());
}

BOOST_AUTO_TEST_CASE(static_shapes) {
  BOOST_TEST(return_type("x: f32[n], k: i64", "f32[?, n]", "scan(steps = k) {\n y[t] = x * 2\n }") == "f32[k, n]");
  BOOST_TEST(return_type("x: f32[n]", "f32[?, n]", "scan(steps = 4) {\n y[t] = x\n }") == "f32[4, n]");
  BOOST_TEST(return_type("u: f32[L]", "f32[?]", "scan {\n y[t] = u[t - 2]\n }") == "f32[L - 2]");
  BOOST_TEST(return_type("u: f32[L, 3]", "f32[?, 3]", "scan {\n y[t] = u[t] + u[t + 1]\n }") == "f32[L - 1, 3]");
  BOOST_TEST(return_type("u: f32[5]", "f32[?]", "scan {\n y[t] = u[t - 2] + u[t + 1]\n }") == "f32[2]");
  // Two sequences of the same length: that length.
  BOOST_TEST(return_type("u: f32[L], v: f32[L]", "f32[?]", "scan {\n y[t] = u[t] + v[t]\n }") == "f32[L]");
  // With until, the number of steps is known only at run time.
  BOOST_TEST(return_type("k: i64", "f32[?]", "scan(steps = k) {\n init p = 1.0\n p[t] = p[t-1] * 2\n until p[t] > 10\n }") ==
             "f32[?]");
  // arange and zeros of a parameter.
  BOOST_TEST(return_type("n: i64", "i64[n]", "arange(n)") == "i64[n]");
  BOOST_TEST(return_type("n: i32", "f32[n, 3]", "zeros(f32, n, 3)") == "f32[n, 3]");
  BOOST_TEST(return_type("x: f32[m]", "i64[m]", "arange(len(x))") == "i64[m]");
  BOOST_TEST(return_type("x: f32[m]", "f32[?]", "x[1:3]") == "f32[?]");
  BOOST_TEST(return_type("x: f32[6]", "f32[?]", "x[1:-2]") == "f32[3]");
}

BOOST_AUTO_TEST_CASE(outputs_bind_by_name_in_any_order) {
  std::string text =
      "fn f(k: i64) -> (a: i64[k], b: i64[k]) {\n"
      "  let (b, a) = scan(steps = k) {\n"
      "    a[t] = t\n"
      "    b[t] = t * 10\n"
      "  }\n"
      "  return (a, b)\n"
      "}\n";
  std::vector<HostTensor> r = run(text, {scalar<int64_t>(3)});
  BOOST_TEST_REQUIRE(r.size() == 2u);
  BOOST_TEST(values<int64_t>(r[0]) == (std::vector<int64_t>{0, 1, 2}));
  BOOST_TEST(values<int64_t>(r[1]) == (std::vector<int64_t>{0, 10, 20}));
  // A single name binds the output of that name...
  std::vector<HostTensor> one = run(
      "fn f(k: i64) -> i64[k] {\n"
      "  let b = scan(steps = k) {\n"
      "    a[t] = t\n"
      "    b[t] = t * 10\n"
      "  }\n"
      "  return b\n"
      "}\n",
      {scalar<int64_t>(2)});
  BOOST_TEST(values<int64_t>(one[0]) == (std::vector<int64_t>{0, 10}));
  // ... or the only one.
  std::vector<HostTensor> only = run(
      "fn f(k: i64) -> i64[k] {\n"
      "  let r = scan(steps = k) {\n"
      "    a[t] = t + 1\n"
      "  }\n"
      "  return r\n"
      "}\n",
      {scalar<int64_t>(2)});
  BOOST_TEST(values<int64_t>(only[0]) == (std::vector<int64_t>{1, 2}));
  BOOST_TEST(diagnostics("fn f(k: i64) -> i64[k] {\n"
                         "  let c = scan(steps = k) {\n"
                         "    a[t] = t\n"
                         "    b[t] = t\n"
                         "  }\n"
                         "  return c\n"
                         "}\n") == (std::vector<std::string>{"2:7: error: this scan has no output named 'c'",
                                                             "2:11: note: its outputs are: a, b"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(functions)

BOOST_AUTO_TEST_CASE(calls_are_inlined) {
  ir::Program p = compile(
      "fn sq(x: f32) -> f32 {\n  return x * x\n}\n"
      "fn f(a: f32) -> f32 {\n  return sq(a) + sq(2)\n}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 2u);
  const ir::Function* f = p.find("f");
  BOOST_TEST_REQUIRE(f);
  BOOST_TEST(f->signature() == "(a: f32) -> f32");
  BOOST_TEST(ir::print_function(*f) ==
             "fn f(%a: f32) -> f32 {\n"
             "  %0: f32 = mul %a, %a\n"
             "  %1: f32 = const 2.0\n"
             "  %2: f32 = mul %1, %1\n"
             "  %3: f32 = add %0, %2\n"
             "  return %3\n"
             "}\n");
  std::vector<HostTensor> r = interp::Interpreter().run(*f, {scalar<float>(3)});
  BOOST_TEST(values<float>(r[0]) == std::vector<float>{13});
}

BOOST_AUTO_TEST_CASE(calls_check_symbols_and_return_tuples) {
  std::vector<HostTensor> r = run(
      "fn split(x: f32[n]) -> (lo: f32, hi: f32) {\n  return (x[0], x[-1])\n}\n"
      "fn main(v: f32[4]) -> f32 {\n  let (a, b) = split(v)\n  return b - a\n}\n",
      {vec<float>({1, 2, 3, 7})}, "main");
  BOOST_TEST(values<float>(r[0]) == std::vector<float>{6});
  BOOST_TEST(first_error("fn g(a: f32[n], b: f32[n]) -> f32[n] {\n  return a + b\n}\n"
                         "fn f(x: f32[3], y: f32[4]) -> f32[3] {\n  return g(x, y)\n}\n") ==
             "5:15: error: argument 'b' of 'g': dimension 0 is 4 but must be 3");
}

BOOST_AUTO_TEST_CASE(recursion_is_an_error) {
  BOOST_TEST(diagnostics("fn f(x: f32) -> f32 {\n  return g(x)\n}\n"
                         "fn g(x: f32) -> f32 {\n  return f(x) * 2\n}\n") ==
             (std::vector<std::string>{"5:10: error: function 'f' calls itself (recursion is not supported)",
                                       "2:10: note: called from here"}));
  BOOST_TEST(diagnostics("fn k(x: f32) -> f32 {\n  return k(x) + 1\n}\n") ==
             (std::vector<std::string>{"2:10: error: function 'k' calls itself (recursion is not supported)"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(error_messages)

BOOST_AUTO_TEST_CASE(names) {
  BOOST_TEST(diagnostics("fn f(value: f32) -> f32 {\n  return valu + 1\n}\n") ==
             (std::vector<std::string>{"2:10: error: unknown name 'valu'", "1:6: note: did you mean 'value'?"}));
  BOOST_TEST(diagnostics("fn f(x: f32) -> f32 {\n  let a = b\n  let b = x\n  return a\n}\n") ==
             (std::vector<std::string>{"2:11: error: 'b' is used before its definition", "3:7: note: 'b' is defined here"}));
  BOOST_TEST(diagnostics("fn f(x: f32[n]) -> i64 {\n  return n\n}\n") ==
             (std::vector<std::string>{
                 "2:10: error: 'n' is a dimension symbol, not a value; use len() of an argument that has it",
                 "1:13: note: 'n' is a dimension of this parameter"}));
  BOOST_TEST(first_error("fn f(x: f32) -> f32 {\n  return foo(x)\n}\n") == "2:10: error: unknown function 'foo'");
  BOOST_TEST(first_error("fn f(x: f32) -> f32 {\n  let x = 1.0\n  return x\n}\n") == "2:7: error: 'x' is already defined");
}

BOOST_AUTO_TEST_CASE(shapes_and_calls) {
  BOOST_TEST(first_error("fn f(a: f32[3], b: f32[4]) -> f32[3] {\n  return a + b\n}\n") ==
             "2:12: error: shapes [3] and [4] cannot be broadcast together");
  BOOST_TEST(first_error("fn f(a: f32[2, 3], b: f32[4]) -> f32[2] {\n  return a @ b\n}\n") ==
             "2:12: error: '@' of f32[2, 3] and f32[4]: inner dimensions differ (3 and 4)");
  BOOST_TEST(first_error("fn f(x: f32[3]) -> f32 {\n  return x[3]\n}\n") ==
             "2:12: error: index 3 is out of range for dimension 0 of size 3");
  BOOST_TEST(first_error("fn f(x: f32[3]) -> f32 {\n  return exp(x, x)\n}\n") ==
             "2:10: error: 'exp' takes 1 argument, got 2");
  BOOST_TEST(first_error("fn f(x: f32[3]) -> f32 {\n  return x[0, 1]\n}\n") ==
             "2:10: error: 2 indices for a value of rank 1");
  BOOST_TEST(first_error("fn f(x: f32[3]) -> f32 {\n  return x[1.5]\n}\n") ==
             "2:12: error: an index must be an integer, got a float literal");
}

BOOST_AUTO_TEST_CASE(scan_errors) {
  BOOST_TEST(first_error("fn f(x: f32[n]) -> f32[?] {\n  let y = scan {\n    init y = x[0]\n    y[t] = y[t+1] + x[t]\n"
                         "  }\n  return y\n}\n") ==
             "4:12: error: 'y[t + 1]' reads a future step; a state can only read its past ('y[t - k]', k >= 1) or "
             "the current step ('y[t]')");
  BOOST_TEST(first_error("fn f(x: f32[n]) -> f32[?] {\n  let y = scan {\n    y[t] = y[t-1] + x[t]\n  }\n  return y\n}\n") ==
             "3:12: error: 'y' is a per-step output; reading 'y[t - 1]' needs an 'init y = ...' to make it a state");
  BOOST_TEST(first_error("fn f(x: f32) -> f32[?] {\n  let y = scan {\n    y[t] = x\n  }\n  return y\n}\n") ==
             "2:11: error: this scan has no sequences and no 'steps'; it would not know how many steps to take");
  BOOST_TEST(diagnostics("fn f(x: f32[n]) -> f32[?] {\n  let (a, b) = scan {\n    a[t] = b[t] + x[t]\n    b[t] = a[t]\n"
                         "  }\n  return a\n}\n") ==
             (std::vector<std::string>{"4:12: error: 'a' depends on itself within one step",
                                       "3:12: note: through 'b' here"}));
  BOOST_TEST(diagnostics("fn f(x0: f32, u: f32[n]) -> f32[?] {\n  let x = scan {\n    init x = x0\n"
                         "    x[t] = x[t-1] + x[t-2] + u[t]\n  }\n  return x\n}\n") ==
             (std::vector<std::string>{"3:14: error: the init of state 'x' must have shape [2], got []",
                                       "4:5: note: 'x' reads 2 earlier steps, so its init holds one row per step read"}));
  BOOST_TEST(diagnostics("fn f(x0: f32, u: f64[n]) -> f32[?] {\n  let x = scan {\n    init x = x0\n"
                         "    x[t] = x[t-1] + u[t]\n  }\n  return x\n}\n") ==
             (std::vector<std::string>{"4:12: error: state 'x' is f64 at each step but its init is f32",
                                       "3:14: note: init of 'x' is here"}));
  BOOST_TEST(first_error("fn f(u: f32[n]) -> f32 {\n  return sum(scan {\n    a[t] = u[t]\n    b[t] = u[t]\n  })\n}\n") ==
             "2:14: error: a scan used inside an expression must have exactly one output, this one has 2");
  BOOST_TEST(first_error("fn f(u: f32[n]) -> f32[?] {\n  let y = scan(step = 3) {\n    y[t] = u[t]\n  }\n  return y\n}\n") ==
             "2:16: error: unknown scan option 'step' (expected steps, reverse, index, truncate_gradient, checkpoint, parallel, lengths or offsets)");
  BOOST_TEST(first_error("fn f(u: f32[n]) -> f32[?] {\n  let y = scan {\n    y[t] = u[t]\n    until y[t]\n  }\n  return y\n}\n") ==
             "4:11: error: the until condition must be a bool scalar, got f32");
  BOOST_TEST(first_error("fn f(u: f32) -> f32[?] {\n  let y = scan {\n    y[t] = u[t]\n  }\n  return y\n}\n") ==
             "3:12: error: 'u' is a scalar and cannot be iterated over as a sequence");
}

BOOST_AUTO_TEST_CASE(function_level_errors) {
  BOOST_TEST(first_error("fn f(x: f32) -> f32 {\n  let y = x\n}\n") == "3:1: error: function 'f' has no 'return'");
  BOOST_TEST(first_error("fn f(x: f32) -> (f32, f32) {\n  return x\n}\n") ==
             "2:3: error: function 'f' returns 1 value but declares 2");
  BOOST_TEST(first_error("fn f(x: f32) -> f32[m] {\n  return x\n}\n") ==
             "1:21: error: dimension symbol 'm' is not bound by any argument");
  BOOST_TEST(diagnostics("fn f(x: f32) -> f32 {\n  return x\n}\nfn f(y: f32) -> f32 {\n  return y\n}\n") ==
             (std::vector<std::string>{"4:4: error: function 'f' is defined more than once",
                                       "1:4: note: 'f' was first defined here"}));
}

BOOST_AUTO_TEST_SUITE_END()

// "Did you mean": optimal string alignment distance (a swap of neighbours costs 1), and a
// suggestion keeps some of what was written.
BOOST_AUTO_TEST_CASE(spelling_suggestions) {
  BOOST_TEST(spelling_distance("alpah", "alpha") == 1u);
  BOOST_TEST(spelling_distance("mena", "mean") == 1u);
  BOOST_TEST(spelling_distance("sigmod", "sigmoid") == 1u);
  BOOST_TEST(spelling_distance("ab", "ba") == 1u);
  BOOST_TEST(spelling_distance("abc", "ca") == 3u);  // no edit of a swapped pair
  auto best = [](const std::string& written, std::vector<std::string> candidates) {
    Spelling s(written);
    for (const std::string& c : candidates) s.consider(c);
    return s.best().value_or("");
  };
  BOOST_TEST(best("retrun", {"let", "return", "init", "until"}) == "return");
  BOOST_TEST(best("z", {"t", "x"}) == "");            // every letter would change
  BOOST_TEST(best("seqs", {"sums"}) == "");           // two of four letters: too far
  BOOST_TEST(best("lerning_rtae", {"learning_rate"}) == "learning_rate");
  BOOST_TEST(best("ab", {"ac", "aa"}) == "aa");       // as close: the first alphabetically
  BOOST_TEST(best("x", {"x"}) == "");                 // the same word is no suggestion
}
