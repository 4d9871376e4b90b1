// The CUDA backend's rewrites of the loop IR: index polynomials (index_poly.h), flattened element
// nests (element_nests.h) and independent lanes (lanes.h). What they may change, and above all
// what they must leave alone: a nest whose elements touch each other's addresses stays serial.
#define BOOST_TEST_MODULE cuda_loops
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "codegen/element_nests.h"
#include "codegen/index_poly.h"
#include "codegen/lanes.h"
#include "codegen/lower.h"
#include "generator_test_support.h"
#include "lir_builders.h"

using namespace scangen;
using namespace scangen::codegen;
using namespace scangen::lir;
using namespace scangen::lir::testing;

namespace {

ExprRef v(const std::string& name) { return var(name, DType::I64); }
ExprRef f32(double value) { return imm(ir::Scalar::of_float(DType::F32, value)); }
ExprRef at(const std::string& p, ExprRef index) { return load(ptr_var(p, DType::F32), std::move(index)); }

// for (o < rows) { let base = o * n; for (j < n) { out[base + j] = <value(base + j)> } }
Function row_nest(ExprRef (*value)(ExprRef element), ExprRef store_index = nullptr) {
  ExprRef element = add(v("base"), v("j"));
  return function({alloc("out", "out_storage", mul(v("rows"), v("n"))),
                   loop("o", i64(0), v("rows"),
                        {let("base", mul(v("o"), v("n"))),
                         element_loop("j", v("n"), {store("out", store_index ? store_index : element, value(element))})})});
}

const Stmt& only_loop(const Function& f) {
  BOOST_TEST_REQUIRE(f.body->body.size() == 2u);
  return *f.body->body[1];
}

}  // namespace

BOOST_AUTO_TEST_SUITE(index_polynomials)

BOOST_AUTO_TEST_CASE(lets_expand_and_terms_cancel) {
  // i0 = e / C is an unknown of its own; i1 = e - i0 * C; i0 * C + i1 is e.
  StmtRef body = block({let("i0", quotient(v("e"), v("C"))), let("i1", sub(v("e"), mul(v("i0"), v("C"))))});
  IndexPolys polys(*body);
  auto p = polys.of(add(mul(v("i0"), v("C")), v("i1")));
  BOOST_TEST_REQUIRE(p.has_value());
  BOOST_TEST((*p == poly_var("e")));
  auto q = polys.of(mul(add(v("a"), i64(2)), sub(v("a"), v("b"))));  // (a + 2)(a - b)
  BOOST_TEST_REQUIRE(q.has_value());
  BOOST_TEST(q->size() == 4u);
  BOOST_TEST(q->at({"a", "a"}) == 1);
  BOOST_TEST(q->at({"a", "b"}) == -1);
  BOOST_TEST(q->at({"a"}) == 2);
  BOOST_TEST(q->at({"b"}) == -2);
}

BOOST_AUTO_TEST_CASE(what_it_cannot_read) {
  // A variable defined twice has no single value; a select or a float is not index arithmetic.
  StmtRef body = block({let("twice", v("a")), let("twice", v("b"))});
  IndexPolys polys(*body);
  BOOST_TEST(!polys.of(add(v("twice"), i64(1))).has_value());
  BOOST_TEST(!polys.of(lir::select(lt(v("a"), v("b")), v("a"), v("b"))).has_value());
  BOOST_TEST(!polys.of(f32(1)).has_value());
  // A let of other arithmetic is an unknown of its own name.
  StmtRef other = block({let("m", lir::min(v("a"), v("b")))});
  BOOST_TEST((*IndexPolys(*other).of(v("m")) == poly_var("m")));
}

BOOST_AUTO_TEST_CASE(addresses_add_pointer_offsets) {
  StmtRef body = block({let("row", mul(v("B"), v("C"))), pointer_let("h_t", "h", mul(add(v("step"), i64(1)), v("row"))),
                        pointer_let("h_t_col", "h_t", v("c"))});
  IndexPolys polys(*body);
  auto a = polys.address("h_t_col", v("j"));
  BOOST_TEST_REQUIRE(a.has_value());
  auto want = polys.of(add(add(mul(add(v("step"), i64(1)), mul(v("B"), v("C"))), v("c")), v("j")));
  BOOST_TEST((*a == *want));
}

BOOST_AUTO_TEST_CASE(divisibility_by_a_term) {
  IndexPolys polys(*block({let("row", mul(v("B"), v("C")))}));
  IndexPoly row = *polys.of(v("row"));
  BOOST_TEST(poly_divisible(*polys.of(mul(v("step"), v("row"))), row));
  BOOST_TEST(poly_divisible(*polys.of(mul(i64(3), mul(v("C"), v("B")))), row));
  BOOST_TEST(poly_divisible(IndexPoly{}, row));
  BOOST_TEST(!poly_divisible(*polys.of(add(mul(v("step"), v("row")), v("B"))), row));
  BOOST_TEST(!poly_divisible(*polys.of(v("C")), row));
  BOOST_TEST(poly_divisible(*polys.of(mul(i64(4), v("x"))), poly_const(2)));
  BOOST_TEST(!poly_divisible(*polys.of(mul(i64(3), v("x"))), poly_const(2)));
  // n of several terms: only 0 is a multiple we can tell.
  IndexPoly sum = *polys.of(add(v("a"), v("b")));
  BOOST_TEST(!poly_divisible(sum, sum));
  BOOST_TEST(poly_divisible(IndexPoly{}, sum));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(element_nests)

BOOST_AUTO_TEST_CASE(a_row_nest_becomes_one_element_loop) {
  Function f = row_nest([](ExprRef e) { return binary(BinaryOp::Add, at("in", e), f32(1)); });
  BOOST_TEST(flatten_element_nests(f) == 1);
  const Stmt& loop = only_loop(f);
  BOOST_TEST(outline(f.body->body) ==
             "alloc out; for scangen_element { let o; let base; let j; store out }");
  BOOST_TEST((loop.loop == LoopKind::Vector));
  BOOST_TEST(same_expr(loop.end, mul(v("rows"), v("n"))));
  BOOST_TEST(same_expr(loop.body[0]->value, quotient(v("scangen_element"), v("n"))));
  // The store and the load at the element's own index now use it.
  BOOST_TEST(same_expr(loop.body[3]->index, v("scangen_element")));
  BOOST_TEST(same_expr(loop.body[3]->value, binary(BinaryOp::Add, at("in", v("scangen_element")), f32(1))));
}

BOOST_AUTO_TEST_CASE(a_neighbour_read_keeps_the_nest) {
  // out[e] = out[e + 1]: element e reads what element e + 1 writes.
  Function f = row_nest([](ExprRef e) { return at("out", add(e, i64(1))); });
  BOOST_TEST(flatten_element_nests(f) == 0);
  BOOST_TEST(outline(f.body->body) == "alloc out; for o { let base; for j { store out } }");
}

BOOST_AUTO_TEST_CASE(every_row_writing_the_same_elements_keeps_the_nest) {
  // out[j] for every o: the last row wins in order; elements of different rows would race.
  Function f = row_nest([](ExprRef e) { return at("in", e); }, v("j"));
  BOOST_TEST(flatten_element_nests(f) == 0);
}

BOOST_AUTO_TEST_CASE(a_fixed_offset_of_the_element_is_its_own) {
  // out[e + 1] = in[e]: each element still writes one address no other element touches.
  Function f = row_nest([](ExprRef e) { return at("in", e); }, add(add(v("base"), v("j")), i64(1)));
  BOOST_TEST(flatten_element_nests(f) == 1);
}

BOOST_AUTO_TEST_CASE(uniform_loads_and_other_statements_keep_the_nest) {
  auto nest = [](StmtRef uniform) {
    return function({alloc("out", "out_storage", v("n")),
                     loop("o", i64(0), v("rows"),
                          {uniform, element_loop("j", v("n"), {store("out", add(mul(v("o"), v("n")), v("j")), f32(0))})})});
  };
  Function loads = nest(let("first", at("out", i64(0))));
  BOOST_TEST(flatten_element_nests(loads) == 0);
  Function declares = nest(decl("acc", i64(0)));
  BOOST_TEST(flatten_element_nests(declares) == 0);
  Function pure = nest(let("unused", mul(v("o"), i64(2))));
  BOOST_TEST(flatten_element_nests(pure) == 1);
}

BOOST_AUTO_TEST_CASE(extents_must_agree_and_not_depend_on_the_row) {
  auto store_row = [](const std::string& j) { return store("out", add(mul(v("o"), v("n")), v(j)), f32(0)); };
  Function triangular = function({alloc("out", "s", v("n")),
                                  loop("o", i64(0), v("rows"), {element_loop("j", v("o"), {store_row("j")})})});
  BOOST_TEST(flatten_element_nests(triangular) == 0);
  Function two_extents = function({alloc("out", "s", v("n")),
                                   loop("o", i64(0), v("rows"),
                                        {element_loop("j", v("n"), {store_row("j")}),
                                         element_loop("j2", v("m"), {store_row("j2")})})});
  BOOST_TEST(flatten_element_nests(two_extents) == 0);
}

BOOST_AUTO_TEST_CASE(a_reduction_along_an_axis_runs_its_serial_loop_per_element) {
  // for (o) { for (j) acc[o*n+j] = 0; for (k < K) { for (j) acc[o*n+j] += in[(o*K + k)*n + j] } }
  ExprRef own = add(mul(v("o"), v("n")), v("j"));
  ExprRef own2 = add(mul(v("o"), v("n")), v("j2"));
  Function f = function(
      {alloc("acc", "s", mul(v("rows"), v("n"))),
       loop("o", i64(0), v("rows"),
            {element_loop("j", v("n"), {store("acc", own, f32(0))}),
             loop("k", i64(0), v("K"),
                  {let("in_k", mul(add(mul(v("o"), v("K")), v("k")), v("n"))),
                   element_loop("j2", v("n"),
                                {store("acc", own2, binary(BinaryOp::Add, at("acc", own2), at("in", add(v("in_k"), v("j2")))))})})})});
  BOOST_TEST(flatten_element_nests(f) == 1);
  BOOST_TEST(outline(f.body->body) ==
             "alloc acc; for scangen_element { let o; let j; store acc; for k { let in_k; let j2; store acc } }");
  BOOST_TEST(same_expr(f.body->body[1]->body[3]->body[2]->index, v("scangen_element")));
}

BOOST_AUTO_TEST_CASE(a_serial_loop_over_what_elements_share_keeps_the_nest) {
  // The k loop writes acc[k * n + j]: every row o writes the same elements. The k loop alone is a
  // nest of its own rows, and flattens.
  ExprRef shared = add(mul(v("k"), v("n")), v("j"));
  Function f = function({alloc("acc", "s", mul(v("K"), v("n"))),
                         loop("o", i64(0), v("rows"),
                              {loop("k", i64(0), v("K"), {element_loop("j", v("n"), {store("acc", shared, f32(1))})})})});
  BOOST_TEST(flatten_element_nests(f) == 1);
  BOOST_TEST(outline(f.body->body) == "alloc acc; for o { for scangen_element { let k; let j; store acc } }");
}

BOOST_AUTO_TEST_CASE(state_rows_apart_by_whole_nests_are_owned) {
  // h_t[e] = h_m1[e] with h_t = h + (step + 1) * row and h_m1 = h + step * row, row = rows * n: the
  // two rows are exactly one nest apart. One row less than that would overlap.
  auto step_nest = [](ExprRef row) {
    return function({let("row", row), alloc("h", "s", mul(i64(8), v("row"))),
                     time_loop("step", v("T"),
                               {pointer_let("h_t", "h", mul(add(v("step"), i64(1)), v("row"))),
                                pointer_let("h_m1", "h", mul(v("step"), v("row"))),
                                loop("o", i64(0), v("rows"),
                                     {element_loop("j", v("n"),
                                                   {store("h_t", add(mul(v("o"), v("n")), v("j")),
                                                          at("h_m1", add(mul(v("o"), v("n")), v("j"))))})})})});
  };
  Function apart = step_nest(mul(v("rows"), v("n")));
  BOOST_TEST(flatten_element_nests(apart) == 1);
  // The time loop over the flattened elements is then independent lanes (lanes.h), although its
  // extent is written rows * n and the rows' offsets `row`.
  BOOST_TEST(interchange_lanes(apart) == 1);
  BOOST_TEST(outline(apart.body->body) ==
             "let row; alloc h; for scangen_lane { for step { let h_t; let h_m1; let scangen_element; let o; let j; store h_t } }");
  Function overlapping = step_nest(sub(mul(v("rows"), v("n")), i64(1)));
  BOOST_TEST(flatten_element_nests(overlapping) == 0);
}

BOOST_AUTO_TEST_CASE(nests_of_three_levels_flatten_twice) {
  // out[(i0 * d1 + i1) * d2 + i2] = in[i2]: the inner pair first, then the outer with it.
  Function f = function(
      {alloc("out", "s", mul(mul(v("d0"), v("d1")), v("d2"))),
       loop("i0", i64(0), v("d0"),
            {loop("i1", i64(0), v("d1"),
                  {element_loop("i2", v("d2"),
                                {store("out", add(mul(add(mul(v("i0"), v("d1")), v("i1")), v("d2")), v("i2")),
                                       at("in", v("i2")))})})})});
  BOOST_TEST(flatten_element_nests(f) == 2);
  const Stmt& loop = *f.body->body[1];
  BOOST_TEST(loop.var == "scangen_element_2");
  BOOST_TEST(same_expr(loop.end, mul(v("d0"), mul(v("d1"), v("d2")))));
  BOOST_TEST(same_expr(loop.body.back()->index, v("scangen_element_2")));
}

BOOST_AUTO_TEST_CASE(lowered_programs) {
  // Per-channel decay broadcast over a batch, and a sum along the channels.
  const std::string text = R"(
fn iir(x: f32[T, B, C], decay: f32[C], h0: f32[B, C]) -> (f32[B, C], f32[T, B]) {
    let (h, e) = scan {
        init h = h0
        h[t] = decay * h[t-1] + x[t]
        e[t] = sum(h[t], axis = 1)
    }
    return (h[-1], e)
}
)";
  auto lowered = [&](int opt_level) {
    // The loop IR as the lowering and the passes of every backend leave it.
    driver::Options o = driver::at_level(opt_level);
    o.only_lir_passes = {"hoist-invariants", "remove-unused"};
    driver::Compilation c = driver::Compilation::of_text("test.scan", text, o);
    BOOST_TEST_REQUIRE(c.reach(driver::Stage::LoopIr), c.rendered_diagnostics());
    lir::Module m = c.targets().at(0).loop_ir;
    BOOST_TEST_REQUIRE(m.functions.size() == 1u);
    return m.functions[0];
  };
  // Without rewrites the sum is in the step: both nests of the step flatten, but the step reads
  // every channel of h[t] for the sum, so its time loop is not independent lanes.
  lir::Function in_step = lowered(0);
  BOOST_TEST(flatten_element_nests(in_step) == 2);
  BOOST_TEST(interchange_lanes(in_step) == 0);
  // push-out-output moves the sum after the loop, over all (step, sequence) pairs at once: the
  // step is then independent lanes.
  lir::Function pushed_out = lowered(2);
  BOOST_TEST(flatten_element_nests(pushed_out) == 2);
  BOOST_TEST(interchange_lanes(pushed_out) == 1);
}

BOOST_AUTO_TEST_SUITE_END()
