// The program IR: the builder's type rules and checks, the verifier, the printer, pruning of dead
// scan outputs, step variance, and the mutator.
#define BOOST_TEST_MODULE ir
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "generator_test_support.h"
#include "ir/analysis.h"
#include "ir/builder.h"
#include "ir/fold.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/prune.h"
#include "ir/verifier.h"

using namespace scangen;
using namespace scangen::ir;
using scangen::testing::compile;
using scangen::testing::first_scan;

namespace {

Type f32(std::vector<Dim> shape = {}) { return Type(DType::F32, std::move(shape)); }
Dim c(int64_t v) { return Dim::constant(v); }
Dim sym(const std::string& s) { return Dim::symbol(s); }

// True when `f` throws an InternalError whose message contains `part`.
template <class F> bool internal_error_containing(F&& f, const std::string& part) {
  try {
    f();
  } catch (const InternalError& e) {
    std::string what = e.what();
    if (what.find(part) != std::string::npos) return true;
    BOOST_TEST_MESSAGE("InternalError without '" << part << "': " << what);
    return false;
  }
  BOOST_TEST_MESSAGE("no InternalError");
  return false;
}

bool throws_internal(const std::function<void()>& f) { return internal_error_containing(f, ""); }

std::string info_str(const ScanInfo& info) {
  std::string s = "states(";
  for (size_t i = 0; i < info.states.size(); ++i) s += (i ? ", " : "") + info.states[i].name;
  s += ") outputs(";
  for (size_t i = 0; i < info.outputs.size(); ++i) s += (i ? ", " : "") + info.outputs[i];
  return s + ")";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder)

BOOST_AUTO_TEST_CASE(dims_and_types) {
  BOOST_TEST(sym("L").plus(-2).str() == "L - 2");
  BOOST_TEST(sym("L").plus(3).str() == "L + 3");
  BOOST_TEST(c(4).plus(-1).str() == "3");
  BOOST_TEST(Dim::fresh_unknown().str() == "?");
  BOOST_TEST(sym("n").same_as(sym("n")));
  BOOST_TEST(!sym("n").same_as(sym("m")));
  BOOST_TEST(!sym("n").provably_different(sym("m")));  // may be equal at run time
  BOOST_TEST(sym("n").provably_different(sym("n").plus(1)));
  BOOST_TEST(c(2).provably_different(c(3)));
  Dim u = Dim::fresh_unknown();
  BOOST_TEST(u.same_as(u));
  BOOST_TEST(!u.same_as(Dim::fresh_unknown()));
  BOOST_TEST(f32({sym("n"), c(3)}).str() == "f32[n, 3]");
  BOOST_TEST(f32({sym("n"), c(3)}).row().str() == "f32[3]");
  BOOST_TEST(f32({c(3)}).stacked(sym("k")).str() == "f32[k, 3]");
  BOOST_TEST(Type(DType::I64).str() == "i64");
}

BOOST_AUTO_TEST_CASE(binary_broadcasts_static_dims) {
  Builder b;
  auto bin = [&](Type x, Type y, BinaryOp op = BinaryOp::Add) {
    return b.binary(op, b.param(x, 0, "x", {}), b.param(y, 1, "y", {}), {}).type().str();
  };
  BOOST_TEST(bin(f32({c(3)}), f32({c(1)})) == "f32[3]");
  BOOST_TEST(bin(f32({c(2), c(1)}), f32({c(3)})) == "f32[2, 3]");
  BOOST_TEST(bin(f32({sym("n")}), f32()) == "f32[n]");
  BOOST_TEST(bin(f32({sym("n")}), f32({sym("n")})) == "f32[n]");
  BOOST_TEST(bin(f32({sym("n")}), f32({c(3)})) == "f32[3]");  // if they broadcast, n is 3 (or 1)
  BOOST_TEST(bin(f32({sym("n")}), f32({sym("m")})) == "f32[?]");
  BOOST_TEST(bin(f32({c(1), sym("n")}), f32({c(4), c(1)})) == "f32[4, n]");
  // Comparisons give bool, arithmetic keeps the dtype, logic needs bool.
  BOOST_TEST(bin(f32({c(3)}), f32(), BinaryOp::Lt) == "bool[3]");
  BOOST_TEST(bin(Type(DType::I32, {c(2)}), Type(DType::I32), BinaryOp::Mod) == "i32[2]");
  BOOST_TEST(bin(Type(DType::Bool), Type(DType::Bool, {c(2)}), BinaryOp::And) == "bool[2]");
}

BOOST_AUTO_TEST_CASE(binary_and_unary_misuse_throws) {
  Builder b;
  Value x3 = b.param(f32({c(3)}), 0, "x", {});
  Value x4 = b.param(f32({c(4)}), 1, "y", {});
  Value d = b.param(Type(DType::F64), 2, "d", {});
  Value i = b.param(Type(DType::I32), 3, "i", {});
  Value t = b.param(Type(DType::Bool), 4, "t", {});
  BOOST_TEST(internal_error_containing([&] { b.binary(BinaryOp::Add, x3, x4, {}); }, "shapes [3] and [4] do not broadcast"));
  BOOST_TEST(internal_error_containing([&] { b.binary(BinaryOp::Add, x3, d, {}); }, "operands differ in dtype"));
  BOOST_TEST(throws_internal([&] { b.binary(BinaryOp::Add, t, t, {}); }));
  BOOST_TEST(throws_internal([&] { b.binary(BinaryOp::And, x3, x3, {}); }));
  BOOST_TEST(throws_internal([&] { b.unary(UnaryOp::Exp, i, {}); }));
  BOOST_TEST(throws_internal([&] { b.unary(UnaryOp::Not, d, {}); }));
  BOOST_TEST(throws_internal([&] { b.unary(UnaryOp::Neg, t, {}); }));
  BOOST_TEST(throws_internal([&] { b.select(x3, x3, x3, {}); }));
  // Allowed: abs and neg of integers, not of bool.
  BOOST_TEST(b.unary(UnaryOp::Abs, i, {}).type().str() == "i32");
  BOOST_TEST(b.unary(UnaryOp::Not, t, {}).type().str() == "bool");
  BOOST_TEST(b.select(t, x3, b.param(f32({c(1)}), 5, "z", {}), {}).type().str() == "f32[3]");
}

BOOST_AUTO_TEST_CASE(matmul_shapes) {
  Builder b;
  auto mm = [&](Type x, Type y) { return b.matmul(b.param(x, 0, "a", {}), b.param(y, 1, "b", {}), {}).type().str(); };
  BOOST_TEST(mm(f32({c(3)}), f32({c(3)})) == "f32");
  BOOST_TEST(mm(f32({c(3)}), f32({c(3), c(4)})) == "f32[4]");
  BOOST_TEST(mm(f32({c(2), c(3)}), f32({c(3)})) == "f32[2]");
  BOOST_TEST(mm(f32({sym("m"), sym("k")}), f32({sym("k"), sym("n")})) == "f32[m, n]");
  BOOST_TEST(mm(f32({sym("m"), sym("k")}), f32({sym("j"), c(5)})) == "f32[m, 5]");  // checked at run time
  BOOST_TEST(throws_internal([&] { mm(f32({c(2), c(3)}), f32({c(4), c(5)})); }));
  BOOST_TEST(throws_internal([&] { mm(f32(), f32({c(3)})); }));
  BOOST_TEST(throws_internal([&] { mm(f32({c(1), c(2), c(3)}), f32({c(3)})); }));
  BOOST_TEST(throws_internal([&] { b.matmul(b.param(f32({c(3)}), 0, "a", {}), b.param(Type(DType::F64, {c(3)}), 1, "b", {}), {}); }));
  BOOST_TEST(!matmul_result_shape(f32({sym("n")}), f32({sym("n").plus(1)})).has_value());
}

BOOST_AUTO_TEST_CASE(index_and_slice_shapes) {
  Builder b;
  Value x = b.param(f32({c(5), sym("n")}), 0, "x", {});
  Value k = b.param(Type(DType::I64), 1, "k", {});
  auto i = [&](int64_t v) { return b.int_constant(v); };
  using K = IndexSpec::Kind;
  IndexSpec scalar{K::Scalar, false, false};
  IndexSpec lo_hi{K::Slice, true, true}, lo_only{K::Slice, true, false}, hi_only{K::Slice, false, true}, all{K::Slice, false, false};
  auto idx = [&](std::vector<IndexSpec> specs, std::vector<Value> ops) {
    return b.index(x, std::move(specs), std::move(ops), {}).type().str();
  };
  BOOST_TEST(idx({scalar}, {i(1)}) == "f32[n]");
  BOOST_TEST(idx({scalar, scalar}, {i(1), k}) == "f32");
  BOOST_TEST(idx({lo_hi}, {i(1), i(3)}) == "f32[2, n]");
  BOOST_TEST(idx({lo_only}, {i(-2)}) == "f32[2, n]");
  BOOST_TEST(idx({hi_only}, {i(-1)}) == "f32[4, n]");
  BOOST_TEST(idx({hi_only}, {i(10)}) == "f32[5, n]");     // clamped
  BOOST_TEST(idx({lo_only}, {i(-10)}) == "f32[5, n]");    // clamped
  BOOST_TEST(idx({lo_hi}, {i(3), i(1)}) == "f32[0, n]");  // empty
  BOOST_TEST(idx({lo_only}, {k}) == "f32[?, n]");          // not a constant
  BOOST_TEST(idx({all, all}, {}) == "f32[5, n]");
  BOOST_TEST(idx({scalar, lo_only}, {k, i(1)}) == "f32[?]");  // n is not a constant
  BOOST_TEST(internal_error_containing([&] { idx({scalar, scalar, scalar}, {i(0), i(0), i(0)}); }, "more indices than dimensions"));
  BOOST_TEST(internal_error_containing([&] { idx({scalar}, {}); }, "index operand count"));
  BOOST_TEST(throws_internal([&] { idx({scalar}, {b.param(f32(), 2, "f", {})}); }));
}

BOOST_AUTO_TEST_CASE(reductions_construction_and_casts) {
  Builder b;
  Value m = b.param(Type(DType::I32, {c(2), c(3)}), 0, "m", {});
  BOOST_TEST(b.reduce(ReduceOp::Sum, m, 1, {}).type().str() == "i32[2]");
  BOOST_TEST(b.reduce(ReduceOp::Max, m, 0, {}).type().str() == "i32[3]");
  BOOST_TEST(b.reduce(ReduceOp::Prod, m, std::nullopt, {}).type().str() == "i32");
  BOOST_TEST(throws_internal([&] { b.reduce(ReduceOp::Sum, m, 2, {}); }));
  BOOST_TEST(throws_internal([&] { b.reduce(ReduceOp::Mean, m, std::nullopt, {}); }));
  BOOST_TEST(throws_internal([&] { b.reduce(ReduceOp::Sum, b.param(Type(DType::Bool, {c(2)}), 1, "t", {}), std::nullopt, {}); }));
  BOOST_TEST(b.cast(m, DType::F64, {}).type().str() == "f64[2, 3]");
  BOOST_TEST(b.arange(b.int_constant(2), b.int_constant(6), std::nullopt, {}).type().str() == "i64[4]");
  BOOST_TEST(b.arange(b.int_constant(6), b.int_constant(2), std::nullopt, {}).type().str() == "i64[0]");
  Value n = b.param(Type(DType::I64), 1, "n", {});
  BOOST_TEST(b.arange(b.int_constant(0), n, sym("n"), {}).type().str() == "i64[n]");
  BOOST_TEST(b.arange(b.int_constant(0), n, std::nullopt, {}).type().str() == "i64[?]");
  BOOST_TEST(throws_internal([&] { b.arange(b.int_constant(0), m, std::nullopt, {}); }));
  Value one = b.constant(Scalar::of_float(DType::F32, 1.0));
  BOOST_TEST(b.fill(one, {b.int_constant(2), n}, {Dim::fresh_unknown(), sym("n")}, {}).type().str() == "f32[2, n]");
  BOOST_TEST(throws_internal([&] { b.fill(m, {}, {}, {}); }));
  BOOST_TEST(b.dim_size(m, 1, {}).type().str() == "i64");
  BOOST_TEST(throws_internal([&] { b.dim_size(m, 2, {}); }));
}

BOOST_AUTO_TEST_CASE(update_checks_the_region) {
  Builder b;
  Value x = b.param(f32({c(3), c(2)}), 0, "x", {});
  IndexSpec scalar{IndexSpec::Kind::Scalar, false, false};
  Value row = b.param(f32({c(2)}), 1, "row", {});
  BOOST_TEST(b.update(x, row, {scalar}, {b.int_constant(1)}, false, {}).type().str() == "f32[3, 2]");
  BOOST_TEST(b.update(x, b.constant(Scalar::of_float(DType::F32, 1)), {scalar}, {b.int_constant(1)}, true, {}).type().str() ==
             "f32[3, 2]");
  BOOST_TEST(throws_internal([&] { b.update(x, x, {scalar}, {b.int_constant(1)}, false, {}); }));
  BOOST_TEST(throws_internal([&] { b.update(x, b.param(f32({c(3)}), 2, "v", {}), {scalar}, {b.int_constant(1)}, false, {}); }));
}

BOOST_AUTO_TEST_CASE(scan_factory_checks_the_body) {
  Builder b;
  ScanInfo info;
  info.has_steps = true;
  info.outputs = {"y"};
  Value steps = b.param(Type(DType::I64), 0, "k", {});
  auto body = std::make_shared<Graph>();
  Value t = b.param(Type(DType::I64), 0, "t", {});
  body->params = {t};
  body->results = {b.cast(t, DType::F32, {})};
  std::vector<Value> outs = b.scan({steps}, info, body, sym("k"), {});
  BOOST_TEST_REQUIRE(outs.size() == 1u);
  BOOST_TEST(outs[0].type().str() == "f32[k]");
  // A body with a parameter too many, a missing result, or an input too many.
  auto extra = std::make_shared<Graph>(*body);
  extra->params.push_back(b.param(f32(), 1, "p", {}));
  BOOST_TEST(internal_error_containing([&] { b.scan({steps}, info, extra, sym("k"), {}); }, "scan body param count"));
  auto no_result = std::make_shared<Graph>(*body);
  no_result->results.clear();
  BOOST_TEST(internal_error_containing([&] { b.scan({steps}, info, no_result, sym("k"), {}); }, "scan body result count"));
  BOOST_TEST(internal_error_containing([&] { b.scan({steps, steps}, info, body, sym("k"), {}); }, "scan input count"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(verifier)

const char* const kProgram =
    "fn f(u: f32[L], x0: f32[2]) -> f32[?] {\n"
    "  let x = scan(reverse) {\n"
    "    init x = x0\n"
    "    let h = u[t-2] * 2\n"
    "    x[t] = h + x[t-1] + x[t-2]\n"
    "    until x[t] > 10\n"
    "  }\n"
    "  return sum(x[1:], axis = 0) + x\n"
    "}\n"
    "fn g(A: f32[n], k: i32) -> f32[n] {\n"
    "  let acc = scan(steps = k) {\n"
    "    init acc = ones_like(A)\n"
    "    acc[t] = acc[t-1] * A\n"
    "  }\n"
    "  return acc[-1]\n"
    "}\n";

BOOST_AUTO_TEST_CASE(accepts_analyzed_programs) {
  Program p = compile(kProgram);
  BOOST_TEST(p.functions.size() == 2u);
  BOOST_CHECK_NO_THROW(verify(p));
}

BOOST_AUTO_TEST_CASE(rejects_a_param_of_another_graph) {
  Builder b;
  Value p = b.param(f32({c(3)}), 0, "p", {});
  Value q = b.param(f32({c(3)}), 0, "q", {});
  Graph g;
  g.params = {q};
  g.results = {b.binary(BinaryOp::Add, p, q, {})};
  BOOST_TEST(internal_error_containing([&] { verify(g); }, "param 'p' does not belong to this graph"));
  g.results = {b.binary(BinaryOp::Add, q, q, {})};
  BOOST_CHECK_NO_THROW(verify(g));
}

BOOST_AUTO_TEST_CASE(rejects_misnumbered_params) {
  Builder b;
  Graph g;
  g.params = {b.param(f32(), 1, "p", {})};
  g.results = {g.params[0]};
  BOOST_TEST(internal_error_containing([&] { verify(g); }, "graph param 0 is not ParamNode #0"));
}

BOOST_AUTO_TEST_CASE(rejects_a_scan_body_of_the_wrong_arity) {
  Program p = compile(kProgram);
  BOOST_TEST_REQUIRE(p.functions.size() == 2u);
  const Function& g = *p.find("g");
  const ScanNode* scan = first_scan(g.graph);
  BOOST_TEST_REQUIRE(scan);
  // The node built directly (bypassing the builder's checks) with a body that lacks its last param.
  auto short_body = std::make_shared<Graph>(scan->body());
  short_body->params.pop_back();
  auto broken = std::make_shared<ScanNode>(scan->inputs(), scan->info(), short_body, scan->output_types(), scan->loc());
  Graph graph;
  graph.params = g.graph.params;
  graph.results = {broken->output(0)};
  BOOST_TEST(internal_error_containing([&] { verify(graph); }, "scan body param count"));
  // ... or that yields nothing.
  auto no_yield = std::make_shared<Graph>(scan->body());
  no_yield->results.clear();
  auto broken2 = std::make_shared<ScanNode>(scan->inputs(), scan->info(), no_yield, scan->output_types(), scan->loc());
  graph.results = {broken2->output(0)};
  BOOST_TEST(internal_error_containing([&] { verify(graph); }, "scan body result count"));
  // A function whose graph has fewer params than its arguments.
  Function f = g;
  f.graph.params.pop_back();
  BOOST_TEST(internal_error_containing([&] { verify(f); }, "param count different from its args"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(printer)

BOOST_AUTO_TEST_CASE(prints_a_function_with_a_scan) {
  Program p = compile(
      "fn f(x: f32[n], k: i64) -> f32[n] {\n"
      "  let y = scan(steps = k) {\n"
      "    init y = x\n"
      "    y[t] = y[t-1] * 2.0 + x[0]\n"
      "  }\n"
      "  return y[-1]\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  BOOST_TEST(print_function(p.functions[0]) ==
             "fn f(%x: f32[n], %k: i64) -> f32[n] {\n"
             "  %0: f32[k, n] = scan steps=%k states(y: init %x lags [1]) params(%x) {\n"
             "  ^step(%t: i64, %y[t-1]: f32[n], %x.2: f32[n]):\n"
             "    %1: f32 = const 2.0\n"
             "    %2: f32[n] = mul %y[t-1], %1\n"
             "    %3: i64 = const 0\n"
             "    %4: f32 = index %x.2[%3]\n"
             "    %5: f32[n] = add %2, %4\n"
             "    yield y=%5\n"
             "  }\n"
             "  %6: i64 = const -1\n"
             "  %7: f32[n] = index %0[%6]\n"
             "  return %7\n"
             "}\n");
}

BOOST_AUTO_TEST_CASE(prints_multi_output_scans_sequences_and_until) {
  Program p = compile(
      "fn f(u: f32[L], w: f32) -> (a: f32[L], b: f32[L]) {\n"
      "  let (a, b) = scan {\n"
      "    init a = 0.0\n"
      "    a[t] = a[t-1] + u[t] * w\n"
      "    b[t] = a[t] - 1\n"
      "  }\n"
      "  return (a, b)\n"
      "}\n"
      "fn g(u: f32[L], x0: f32[2]) -> f32[?] {\n"
      "  let x = scan(reverse) {\n"
      "    init x = x0\n"
      "    x[t] = u[t-2] * 2 + x[t-2]\n"
      "    until x[t] > 10\n"
      "  }\n"
      "  return x[1:]\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 2u);
  BOOST_TEST(print_program(p) ==
             "fn f(%u: f32[L], %w: f32) -> (a: f32[L], b: f32[L]) {\n"
             "  %0: f32 = const 0.0\n"
             "  (%1#a: f32[L], %1#b: f32[L]) = scan sequences(%u taps [0]) states(a: init %0 lags [1]) outputs(b) "
             "params(%w) {\n"
             "  ^step(%t: i64, %u[t]: f32, %a[t-1]: f32, %w.2: f32):\n"
             "    %2: f32 = mul %u[t], %w.2\n"
             "    %3: f32 = add %a[t-1], %2\n"
             "    %4: f32 = const 1.0\n"
             "    %5: f32 = sub %3, %4\n"
             "    yield a=%3, b=%5\n"
             "  }\n"
             "  return %1#a, %1#b\n"
             "}\n"
             "\n"
             "fn g(%u: f32[L], %x0: f32[2]) -> f32[?] {\n"
             "  %0: f32[?] = scan reverse until sequences(%u taps [-2]) states(x: init %x0 lags [2]) {\n"
             "  ^step(%t: i64, %u[t-2]: f32, %x[t-2]: f32):\n"
             "    %1: f32 = const 2.0\n"
             "    %2: f32 = mul %u[t-2], %1\n"
             "    %3: f32 = add %2, %x[t-2]\n"
             "    %4: f32 = const 10.0\n"
             "    %5: bool = gt %3, %4\n"
             "    yield x=%3, until=%5\n"
             "  }\n"
             "  %6: i64 = const 1\n"
             "  %7: f32[?] = index %0[%6:]\n"
             "  return %7\n"
             "}\n");
}

BOOST_AUTO_TEST_CASE(prints_a_graph) {
  Builder b;
  Graph g;
  g.params = {b.param(f32({sym("n")}), 0, "x", {})};
  Value e = b.unary(UnaryOp::Exp, g.params[0], {});
  g.results = {b.reduce(ReduceOp::Sum, e, 0, {}), e};
  BOOST_TEST(print_graph(g) ==
             "graph(%x: f32[n]) {\n"
             "  %0: f32[n] = exp %x\n"
             "  %1: f32 = sum %0, axis=0\n"
             "  return %1, %0\n"
             "}\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(prune)

// States a, b, e and the per-step output c: b reads a's past, e only its own; c reads neither.
const char* const kFourOutputs =
    "fn f(u: f32[L]) -> (a: f32[L], b: f32[L], c: f32[L], e: f32[L]) {\n"
    "  let (a, b, c, e) = scan {\n"
    "    init a = 0.0\n"
    "    init b = 1.0\n"
    "    init e = 0.0\n"
    "    a[t] = a[t-1] + u[t]\n"
    "    b[t] = b[t-1] + a[t-1]\n"
    "    e[t] = e[t-1] + 1\n"
    "    c[t] = u[t] * 3\n"
    "  }\n"
    "  return (a, b, c, e)\n"
    "}\n";

BOOST_AUTO_TEST_CASE(nothing_to_prune_when_everything_is_used) {
  Program p = compile(kFourOutputs);
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const ScanNode* scan = first_scan(p.functions[0].graph);
  BOOST_TEST_REQUIRE(scan);
  BOOST_TEST(info_str(scan->info()) == "states(a, b, e) outputs(c)");
  Graph pruned = prune_dead_scan_outputs(p.functions[0].graph);
  BOOST_TEST((pruned.results == p.functions[0].graph.results));
}

BOOST_AUTO_TEST_CASE(drops_unused_outputs_and_states) {
  Program p = compile(kFourOutputs);
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const Graph& full = p.functions[0].graph;
  // Only c: every state goes, with its init and its lag params.
  Graph only_c{full.params, {full.results[2]}};
  Graph pruned = prune_dead_scan_outputs(only_c);
  BOOST_CHECK_NO_THROW(verify(pruned));
  const ScanNode* scan = first_scan(pruned);
  BOOST_TEST_REQUIRE(scan);
  BOOST_TEST(info_str(scan->info()) == "states() outputs(c)");
  BOOST_TEST(scan->num_inputs() == 1);  // the sequence u
  BOOST_TEST(scan->body().params.size() == 2u);  // t and u[t]
  BOOST_TEST(pruned.results[0].type().str() == "f32[L]");
  // The pruned graph computes the same c.
  Function f = p.functions[0];
  f.graph = pruned;
  f.results = {f.results[2]};
  f.tuple_result = false;
  auto r = interp::Interpreter().run(f, {scangen::testing::vec<float>({1, 2, 3})});
  BOOST_TEST(scangen::testing::values<float>(r[0]) == (std::vector<float>{3, 6, 9}));
}

BOOST_AUTO_TEST_CASE(keeps_a_state_another_output_needs) {
  Program p = compile(kFourOutputs);
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const Graph& full = p.functions[0].graph;
  Graph only_b{full.params, {full.results[1]}};
  Graph pruned = prune_dead_scan_outputs(only_b);
  BOOST_CHECK_NO_THROW(verify(pruned));
  const ScanNode* scan = first_scan(pruned);
  BOOST_TEST_REQUIRE(scan);
  BOOST_TEST(info_str(scan->info()) == "states(a, b) outputs()");
  // The result is b, now output #1 of the new scan.
  BOOST_TEST(pruned.results[0].node.get() == static_cast<const Node*>(scan));
  BOOST_TEST(pruned.results[0].index == 1);
  Function f = p.functions[0];
  f.graph = pruned;
  f.results = {f.results[1]};
  f.tuple_result = false;
  // a = 1, 3, 6; b = 1 + 0, 1 + 1, 2 + 3
  auto r = interp::Interpreter().run(f, {scangen::testing::vec<float>({1, 2, 3})});
  BOOST_TEST(scangen::testing::values<float>(r[0]) == (std::vector<float>{1, 2, 5}));
}

BOOST_AUTO_TEST_CASE(keeps_a_state_the_until_condition_needs) {
  Program p = compile(
      "fn f(u: f32[L]) -> (c: f32[?], n: i64[?]) {\n"
      "  let (c, n) = scan {\n"
      "    init n = 0\n"
      "    n[t] = n[t-1] + 1\n"
      "    c[t] = u[t] * 2\n"
      "    until n[t] >= 2\n"
      "  }\n"
      "  return (c, n)\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const Graph& full = p.functions[0].graph;
  Graph only_c{full.params, {full.results[0]}};
  Graph pruned = prune_dead_scan_outputs(only_c);
  const ScanNode* scan = first_scan(pruned);
  BOOST_TEST_REQUIRE(scan);
  BOOST_TEST(info_str(scan->info()) == "states(n) outputs(c)");
}

BOOST_AUTO_TEST_CASE(sema_prunes_what_is_not_returned) {
  // Unbound outputs that nothing needs are not computed, so their run-time errors do not occur.
  Program p = compile(
      "fn f(u: f32[L], x: f32[n], i: i64) -> f32[L] {\n"
      "  let (good, bad) = scan {\n"
      "    good[t] = u[t] + 1\n"
      "    bad[t] = x[i]\n"
      "  }\n"
      "  return good\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const ScanNode* scan = first_scan(p.functions[0].graph);
  BOOST_TEST_REQUIRE(scan);
  BOOST_TEST(info_str(scan->info()) == "states() outputs(good)");
  auto r = interp::Interpreter().run(p.functions[0], {scangen::testing::vec<float>({1, 2}), scangen::testing::vec<float>({5}),
                                              scangen::testing::scalar<int64_t>(7)});
  BOOST_TEST(scangen::testing::values<float>(r[0]) == (std::vector<float>{2, 3}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(step_variance)

BOOST_AUTO_TEST_CASE(values_and_shapes_in_a_scan_body) {
  Program p = compile(
      "fn f(x: f32[n], u: f32[L]) -> (a: f32[?, n], b: f32[?, n], c: i64[?], d: f32[?], e: f32[?]) {\n"
      "  let (a, b, c, d, e) = scan {\n"
      "    a[t] = x * 2.0\n"
      "    b[t] = x * u[t]\n"
      "    c[t] = sum(arange(t))\n"
      "    d[t] = sum(x[0:t])\n"
      "    e[t] = sum(scan(steps = t, index = s) {\n"
      "      z[s] = 1.0\n"
      "    })\n"
      "  }\n"
      "  return (a, b, c, d, e)\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.functions.size() == 1u);
  const ScanNode* scan = first_scan(p.functions[0].graph);
  BOOST_TEST_REQUIRE(scan);
  const Graph& body = scan->body();
  StepVariance v(*scan);
  // The loop index and the sequence tap vary; the captured x does not.
  BOOST_TEST(v.value_varies(body.params[0]));
  BOOST_TEST(v.value_varies(body.params[1]));
  BOOST_TEST(!v.value_varies(body.params[2]));
  BOOST_TEST_REQUIRE(body.results.size() == 5u);
  const Value &a = body.results[0], &b = body.results[1], &c = body.results[2], &d = body.results[3],
              &e = body.results[4];
  BOOST_TEST(!v.value_varies(a));
  BOOST_TEST(!v.shape_varies(a));
  BOOST_TEST(v.value_varies(b));
  BOOST_TEST(!v.shape_varies(b));
  BOOST_TEST(v.value_varies(c));
  BOOST_TEST(!v.shape_varies(c));
  BOOST_TEST(v.value_varies(d));
  BOOST_TEST(!v.shape_varies(d));
  // Inside: arange(t), x[0:t] and the nested scan of t steps change shape from step to step.
  const ArangeNode* arange = nullptr;
  const IndexNode* slice = nullptr;
  const ScanNode* inner = nullptr;
  for (const Node* n : topological_order(body)) {
    if (n->as<ArangeNode>()) arange = n->as<ArangeNode>();
    if (n->as<IndexNode>()) slice = n->as<IndexNode>();
    if (n->as<ScanNode>()) inner = n->as<ScanNode>();
  }
  BOOST_TEST_REQUIRE(arange);
  BOOST_TEST_REQUIRE(slice);
  BOOST_TEST_REQUIRE(inner);
  BOOST_TEST(v.shape_varies(arange->output(0)));
  BOOST_TEST(v.shape_varies(slice->output(0)));
  BOOST_TEST(v.shape_varies(inner->output(0)));
  BOOST_TEST(v.value_varies(e));
  BOOST_TEST(!v.shape_varies(e));
}

BOOST_AUTO_TEST_CASE(explicit_param_variance) {
  Builder b;
  Graph g;
  g.params = {b.param(Type(DType::I64), 0, "i", {}), b.param(Type(DType::I64), 1, "n", {})};
  Value r1 = b.arange(b.int_constant(0), g.params[1], std::nullopt, {});
  Value r2 = b.arange(b.int_constant(0), g.params[0], std::nullopt, {});
  Value sum = b.binary(BinaryOp::Add, b.cast(r1, DType::I64, {}), g.params[0], {});
  g.results = {r1, r2, sum};
  StepVariance v(g, {true, false}, {{}, {}});
  BOOST_TEST(!v.value_varies(r1));
  BOOST_TEST(!v.shape_varies(r1));
  BOOST_TEST(v.value_varies(r2));
  BOOST_TEST(v.shape_varies(r2));
  BOOST_TEST(v.value_varies(sum));
  BOOST_TEST(!v.shape_varies(sum));
  BOOST_TEST(throws_internal([&] { StepVariance(g, {true}, {{}}); }));
  BOOST_TEST(throws_internal([&] { StepVariance(g, {true, false}, {{}}); }));
}

// Sizes vary dimension by dimension: what drops or reduces a varying dimension has a fixed shape
// (issue 12: `sum(z, axis = 0)` of an inner scan that stops on `until`, `r[-1]`, `r @ r`).
BOOST_AUTO_TEST_CASE(dimensions_vary_one_by_one) {
  Builder b;
  Graph g;
  Dim unknown = Dim::fresh_unknown();
  // p: f32[?, 3] whose first dimension varies; q: f32[?] whose only dimension does not.
  g.params = {b.param(Type(DType::F32, {unknown, Dim::constant(3)}), 0, "p", {}),
              b.param(Type(DType::F32, {Dim::fresh_unknown()}), 1, "q", {})};
  const Value &p = g.params[0], &q = g.params[1];
  Value sum0 = b.reduce(ReduceOp::Sum, p, 0, {});
  Value sum1 = b.reduce(ReduceOp::Sum, p, 1, {});
  Value last_row = b.index(p, {IndexSpec{}}, {b.int_constant(-1)}, {});
  IndexSpec from_one{IndexSpec::Kind::Slice, true, false};
  Value tail = b.index(p, {from_one}, {b.int_constant(1)}, {});
  Value rows = b.dim_size(p, 0, {});
  Value cols = b.dim_size(p, 1, {});
  Value column = b.index(p, {IndexSpec{IndexSpec::Kind::Slice, false, false}, IndexSpec{}}, {b.int_constant(0)}, {});
  Value dot = b.matmul(column, column, {});
  Value outer = b.matmul(b.reduce(ReduceOp::Sum, p, 1, {}), p, {});
  Value mixed = b.binary(BinaryOp::Add, b.cast(q, DType::F32, {}), b.reduce(ReduceOp::Max, p, 1, {}), {});
  g.results = {sum0, sum1, last_row, tail, rows, cols, dot, outer, mixed};
  StepVariance v(g, {true, true}, {{true, false}, {false}});
  BOOST_TEST((v.dims_vary(p) == std::vector<bool>{true, false}));
  BOOST_TEST(!v.shape_varies(sum0));
  BOOST_TEST(v.shape_varies(sum1));
  BOOST_TEST(!v.shape_varies(last_row));
  BOOST_TEST((v.dims_vary(tail) == std::vector<bool>{true, false}));
  BOOST_TEST(v.value_varies(rows));
  BOOST_TEST(!v.value_varies(cols));
  BOOST_TEST(!v.shape_varies(dot));
  BOOST_TEST(!v.shape_varies(outer));
  // Broadcasting a varying dimension with one that does not vary may still vary (it may be 1).
  BOOST_TEST(v.shape_varies(mixed));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mutator)

// Replaces the constant 2.0 by 3.0; everything else through the default rules.
class TwoToThree : public Mutator {
 protected:
  std::vector<Value> visit_Constant(const ConstantNode& n, std::vector<Value> inputs) override {
    if (n.value() == Scalar::of_float(DType::F32, 2.0)) return {builder.constant(Scalar::of_float(DType::F32, 3.0), n.loc())};
    return keep_or_rebuild(n, std::move(inputs));
  }
};

BOOST_AUTO_TEST_CASE(rebuilds_only_what_changed) {
  Builder b;
  Graph g;
  g.params = {b.param(f32({sym("n")}), 0, "p", {})};
  Value p = g.params[0];
  Value a = b.unary(UnaryOp::Exp, p, {});
  Value two = b.constant(Scalar::of_float(DType::F32, 2.0));
  Value scaled = b.binary(BinaryOp::Mul, a, two, {});
  Value squared = b.binary(BinaryOp::Mul, scaled, scaled, {});
  Value other = b.binary(BinaryOp::Add, a, p, {});
  g.results = {squared, other};

  TwoToThree m;
  Graph out = m.mutate(g);
  BOOST_CHECK_NO_THROW(verify(out));
  BOOST_TEST((out.params == g.params));
  // `other` does not depend on the constant: the very same node.
  BOOST_TEST((out.results[1] == other));
  // `squared` and `scaled` are new; `a` under them is shared, and `scaled` is rebuilt once.
  BOOST_TEST((out.results[0] != squared));
  const Node& new_squared = *out.results[0].node;
  BOOST_TEST((new_squared.input(0) == new_squared.input(1)));
  const Node& new_scaled = *new_squared.input(0).node;
  BOOST_TEST((new_scaled.input(0) == a));
  BOOST_TEST(constant_value(new_scaled.input(1))->f == 3.0);
  BOOST_TEST(out.results[0].type().same_as(squared.type()));  // operand types unchanged: type kept

  // A mutator that changes nothing returns the same nodes.
  Mutator identity;
  Graph same = identity.mutate(g);
  BOOST_TEST((same.results == g.results));
}

BOOST_AUTO_TEST_CASE(substitute_params_recomputes_types) {
  Builder b;
  Graph g;
  g.params = {b.param(f32({sym("n")}), 0, "p", {})};
  Value a = b.unary(UnaryOp::Exp, g.params[0], {});
  Value s = b.binary(BinaryOp::Add, a, g.params[0], {});
  g.results = {s};
  std::vector<Value> out = substitute_params({b.param(f32({c(4)}), 0, "q", {})}, g.results);
  BOOST_TEST(out[0].type().str() == "f32[4]");
  BOOST_TEST(out[0].node->input(0).node->input(0).node->as<ParamNode>()->name() == "q");
  // Replacing a param by itself keeps every node.
  std::vector<Value> same = substitute_params(g.params, g.results);
  BOOST_TEST((same[0] == s));
}

BOOST_AUTO_TEST_SUITE_END()

// ---- constant folding (ir/fold.h): the element semantics of run time, and what it flags

BOOST_AUTO_TEST_SUITE(folding)

static Scalar i64(int64_t v) { return Scalar::of_int(DType::I64, v); }
static Scalar i32(int64_t v) { return Scalar::of_int(DType::I32, v); }
static Scalar f64(double v) { return Scalar::of_float(DType::F64, v); }

BOOST_AUTO_TEST_CASE(integers_wrap_and_say_so) {
  auto sum = fold_binary(BinaryOp::Add, i32(2147483647), i32(1));
  BOOST_TEST_REQUIRE(sum.has_value());
  BOOST_TEST(sum->value->i == -2147483648);
  BOOST_TEST((sum->issue == FoldIssue::Wrapped));
  BOOST_TEST((fold_binary(BinaryOp::Add, i64(2), i64(3))->issue == FoldIssue::None));
  // MIN / -1 wraps to MIN; MIN % -1 is 0, exactly.
  auto q = fold_binary(BinaryOp::Div, i64(INT64_MIN), i64(-1));
  BOOST_TEST(q->value->i == INT64_MIN);
  BOOST_TEST((q->issue == FoldIssue::Wrapped));
  auto r = fold_binary(BinaryOp::Mod, i64(INT64_MIN), i64(-1));
  BOOST_TEST(r->value->i == 0);
  BOOST_TEST((r->issue == FoldIssue::None));
  BOOST_TEST((fold_unary(UnaryOp::Neg, i64(INT64_MIN))->issue == FoldIssue::Wrapped));
  BOOST_TEST((fold_unary(UnaryOp::Abs, i64(INT64_MIN))->issue == FoldIssue::Wrapped));
}

BOOST_AUTO_TEST_CASE(integer_powers_wrap_only_when_the_exact_power_does_not_fit) {
  // (-2)^63 is exactly INT64_MIN; 2^63 and 3^40 are not i64s.
  auto exact = fold_binary(BinaryOp::Pow, i64(-2), i64(63));
  BOOST_TEST(exact->value->i == INT64_MIN);
  BOOST_TEST((exact->issue == FoldIssue::None));
  BOOST_TEST((fold_binary(BinaryOp::Pow, i64(2), i64(63))->issue == FoldIssue::Wrapped));
  auto big = fold_binary(BinaryOp::Pow, i64(3), i64(40));
  BOOST_TEST(big->value->i == -6289078614652622815);  // what ipow.scan prints at run time
  BOOST_TEST((big->issue == FoldIssue::Wrapped));
  BOOST_TEST((fold_binary(BinaryOp::Pow, i64(1), i64(1000000))->issue == FoldIssue::None));
}

BOOST_AUTO_TEST_CASE(run_time_errors_give_no_value) {
  auto by_zero = fold_binary(BinaryOp::Mod, i32(7), i32(0));
  BOOST_TEST(!by_zero->value.has_value());
  BOOST_TEST((by_zero->issue == FoldIssue::DivisionByZero));
  auto negative = fold_binary(BinaryOp::Pow, i64(2), i64(-1));
  BOOST_TEST(!negative->value.has_value());
  BOOST_TEST((negative->issue == FoldIssue::NegativeExponent));
  // Floats have no such errors.
  BOOST_TEST(std::isinf(fold_binary(BinaryOp::Div, f64(1), f64(0))->value->f));
}

BOOST_AUTO_TEST_CASE(floats_and_casts_follow_the_element_semantics) {
  BOOST_TEST(fold_unary(UnaryOp::Sigmoid, f64(0))->value->f == 0.5);
  BOOST_TEST(fold_binary(BinaryOp::Mod, f64(-7.5), f64(2))->value->f == -1.5);
  // max keeps the first NaN; comparisons give bools; logic is for bools only.
  BOOST_TEST(std::isnan(fold_binary(BinaryOp::Max, f64(NAN), f64(1))->value->f));
  BOOST_TEST(fold_binary(BinaryOp::Lt, f64(1), f64(2))->value->i == 1);
  BOOST_TEST(!fold_binary(BinaryOp::And, i64(1), i64(1)).has_value());
  BOOST_TEST(!fold_unary(UnaryOp::Exp, i64(1)).has_value());
  // Casts round once and saturate: 2^60 + 2^36 + 1 is nearer 2^60 + 2^37 than 2^60 (through f64
  // first it would be a tie, to 2^60).
  Scalar big = fold_cast(i64((int64_t(1) << 60) + (int64_t(1) << 36) + 1), DType::F32);
  BOOST_TEST(big.f == std::ldexp(1.0, 60) + std::ldexp(1.0, 37));
  BOOST_TEST(fold_cast(f64(3e10), DType::I32).i == 2147483647);
  BOOST_TEST(fold_cast(f64(NAN), DType::I64).i == 0);
  BOOST_TEST(fold_cast(i64(4294967297), DType::I32).i == 1);
}

BOOST_AUTO_TEST_SUITE_END()
