// The CUDA backend's barrier pass (codegen/cuda_barriers.h): where barriers go in the loop IR,
// and where they must not, on hand-built statements and on the kernels printed for programs.
#define BOOST_TEST_MODULE cuda_barriers
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/cpp_printer.h"
#include "codegen/cuda_barriers.h"
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
ExprRef plus_one(ExprRef e) { return binary(BinaryOp::Add, std::move(e), f32(1)); }

StmtRef when(ExprRef cond, std::vector<StmtRef> body) { return if_stmt(std::move(cond), std::move(body)); }

StmtRef check(ExprRef cond) { return check_stmt(std::move(cond), 0, 0, {}); }

StmtRef call(const std::string& callee, std::vector<ExprRef> args) { return call_stmt(callee, std::move(args)); }

// The body after the pass, outlined.
std::string placed(Function f) {
  place_barriers(f);
  return outline(f.body->body);
}

// The text of one function's kernel body, as the CUDA backend prints it for `text`.
std::string kernel(const std::string& text, const std::string& fn, int opt_level = 2) {
  driver::Options o = driver::at_level(opt_level);
  o.backends = {Backend::Cuda};
  o.layout = driver::Layout::Jit;
  driver::Compilation c = driver::Compilation::of_text("test.scan", text, o);
  BOOST_TEST_REQUIRE(c.reach(driver::Stage::Sources), c.rendered_diagnostics());
  const std::string cu = c.targets().at(0).sources.at(0).contents;
  const size_t start = cu.find("__device__ void " + fn + "_impl(");
  BOOST_TEST_REQUIRE(start != std::string::npos);
  return cu.substr(start, cu.find("\n}\n", start) - start);
}

// The text of `body` from the line holding `from` to the line holding `to`, both included.
std::string lines_between(const std::string& body, const std::string& from, const std::string& to) {
  const size_t a = body.rfind('\n', body.find(from));
  const size_t b = body.find('\n', body.find(to, a + 1));
  BOOST_TEST_REQUIRE(body.find(from) != std::string::npos);
  BOOST_TEST_REQUIRE(body.find(to, a + 1) != std::string::npos);
  return body.substr(a + 1, b - a - 1);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(uniform_code)

BOOST_AUTO_TEST_CASE(a_fold_gets_one_barrier_after_its_loop_and_none_in_it) {
  // Every step stores acc[0]: a slower thread may still store an older step's value when a faster
  // one loads acc[0] after the loop.
  Function f = function({alloc("acc", "s", i64(1)), time_loop("step", v("n"), {store("acc", i64(0), f32(1))}),
                         let("last", at("acc", i64(0)))});
  BOOST_TEST(placed(f) == "alloc acc; for step { store acc }; barrier; let last");
}

BOOST_AUTO_TEST_CASE(a_single_store_needs_no_barrier_before_its_load) {
  // Every thread stores the same value once and loads after its own store; a second store of
  // the buffer could be a slower thread's older value.
  Function once = function({alloc("a", "s", i64(2)), store("a", i64(0), f32(1)), let("x", at("a", i64(0)))});
  BOOST_TEST(placed(once) == "alloc a; store a; let x");
  Function twice = function({alloc("a", "s", i64(2)), store("a", i64(0), f32(1)), store("a", i64(0), f32(2)),
                             let("x", at("a", i64(0)))});
  BOOST_TEST(placed(twice) == "alloc a; store a; store a; barrier; let x");
}

BOOST_AUTO_TEST_CASE(a_store_after_a_load_of_its_buffer_waits_for_every_load) {
  Function other_statement =
      function({alloc("a", "s", i64(2)), let("x", at("a", i64(0))), store("a", i64(1), v("x"))});
  BOOST_TEST(placed(other_statement) == "alloc a; let x; barrier; store a");
  // a[1] = a[0] + 1: the value is computed into a let before the barrier.
  Function f = function({alloc("a", "s", i64(2)), store("a", i64(1), plus_one(at("a", i64(0))))});
  place_barriers(f);
  BOOST_TEST(outline(f.body->body) == "alloc a; let scangen_stored_value; barrier; store a");
  BOOST_TEST(same_expr(f.body->body[3]->value, var("scangen_stored_value", DType::F32)));
  BOOST_TEST(same_expr(f.body->body[3]->index, i64(1)));  // no load: stays in the store
}

BOOST_AUTO_TEST_CASE(loads_and_stores_of_different_buffers_need_none) {
  Function f = function({alloc("a", "s", i64(1)), alloc("b", "t", i64(1)), let("x", at("a", i64(0))),
                         store("b", i64(0), v("x")), store("b", i64(0), v("x")), let("y", at("a", i64(0)))});
  BOOST_TEST(placed(f) == "alloc a; alloc b; let x; store b; store b; let y");
}

BOOST_AUTO_TEST_CASE(arguments_are_never_written) {
  Function f = function({alloc("a", "s", v("n")), time_loop("step", v("n"), {store("a", v("step"), at("u", v("step")))})});
  f.params.push_back({"u", DType::F32, 1, {"n"}});
  BOOST_TEST(placed(f) == "alloc a; for step { store a }");
}

BOOST_AUTO_TEST_CASE(pointers_into_a_buffer_are_the_buffer) {
  // h_t and h_m1 are rows of h: a load of h_m1 and a store through h_t meet in h.
  Function f = function({alloc("h", "s", v("n")),
                         time_loop("step", v("n"),
                                   {pointer_let("h_m1", "h", v("step")), pointer_let("h_t", "h", add(v("step"), i64(1))),
                                    let("x", at("h_m1", i64(0))), store("h_t", i64(0), plus_one(var("x", DType::F32)))})});
  // One barrier per step, between the load and the store; the step's single store is harmless to
  // the next step's load.
  BOOST_TEST(placed(f) == "alloc h; for step { let h_m1; let h_t; let x; barrier; store h_t }");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(loops_and_branches)

BOOST_AUTO_TEST_CASE(a_buffer_filled_before_the_loop_costs_no_barrier_per_step) {
  // s[t] = s[t-1] + r[t] with r computed before the loop (a pushed-out reduction): r is only
  // read in the loop, s only written until after it.
  Function f = function({alloc("r", "s1", v("n")), element_loop("i", v("n"), {store("r", v("i"), f32(1))}),
                         alloc("s", "s2", i64(1)),
                         time_loop("step", v("n"), {let("x", at("r", v("step"))), store("s", i64(0), v("x"))}),
                         let("last", at("s", i64(0)))});
  BOOST_TEST(placed(f) == "alloc r; for i { store r }; barrier; alloc s; for step { let x; store s }; barrier; let last");
}

BOOST_AUTO_TEST_CASE(a_loop_over_what_an_earlier_loop_stored_gets_one_barrier_before_it) {
  // Not one in each iteration: what needs it is what the loop enters with.
  Function f = function({alloc("z", "s", v("n")), loop("i", i64(0), v("n"), {store("z", v("i"), f32(1))}),
                         loop("j", i64(0), v("n"), {let("x", at("z", v("j")))})});
  BOOST_TEST(placed(f) == "alloc z; for i { store z }; barrier; for j { let x }");
}

BOOST_AUTO_TEST_CASE(what_an_iteration_leaves_the_next_one_starts_with) {
  // The load in the loop meets the previous iteration's second store.
  Function f = function({alloc("a", "s", i64(1)),
                         time_loop("step", v("n"), {let("x", at("a", i64(0))), store("b", i64(0), v("x")),
                                                    store("b", i64(0), v("x")), store("a", i64(0), f32(1)),
                                                    store("a", i64(0), f32(2))})});
  BOOST_TEST(placed(f) == "alloc a; for step { barrier; let x; store b; store b; barrier; store a; store a }");
}

BOOST_AUTO_TEST_CASE(breaks_and_branches_join_their_paths) {
  // The store before the break reaches the load after the loop only through the break.
  Function f = function({alloc("a", "s", i64(1)),
                         time_loop("step", v("n"),
                                   {when(lt(v("step"), i64(3)), {store("a", i64(0), f32(1)), break_stmt()})}),
                         store("a", i64(0), f32(2)), let("x", at("a", i64(0)))});
  BOOST_TEST(placed(f) == "alloc a; for step { if { store a; break } }; store a; barrier; let x");
  // A load in one branch only: the store after the branch still waits for it.
  Function g = function({alloc("a", "s", i64(1)), when(lt(v("k"), i64(3)), {let("x", at("a", i64(0)))}),
                         store("a", i64(0), f32(2))});
  BOOST_TEST(placed(g) == "alloc a; if { let x }; barrier; store a");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(element_work)

BOOST_AUTO_TEST_CASE(element_loops_wait_for_uniform_work_and_end_with_a_barrier) {
  Function f = function({alloc("a", "s", v("n")), element_loop("i", v("n"), {store("a", v("i"), f32(0))}),
                         element_loop("j", v("n"), {store("a", v("j"), plus_one(at("a", v("j"))))}),
                         store("a", i64(0), f32(1)), element_loop("k", v("n"), {check(lt(v("k"), v("m")))})});
  // Nothing pending between the first two loops: the first one's barrier is enough.
  BOOST_TEST(placed(f) ==
             "alloc a; for i { store a }; barrier; for j { store a }; barrier; store a; barrier; for k { check }; barrier+check");
}

BOOST_AUTO_TEST_CASE(nothing_inside_element_loops) {
  // Each thread runs its own elements, a serial loop in each: no barrier may go inside.
  Function f = function({alloc("a", "s", v("n")),
                         element_loop("i", v("n"),
                                      {loop("k", i64(0), v("K"), {store("a", v("i"), f32(0)), store("a", v("i"), plus_one(at("a", v("i"))))})})});
  BOOST_TEST(placed(f) == "alloc a; for i { for k { store a; store a } }; barrier");
}

BOOST_AUTO_TEST_CASE(helpers_wait_for_uniform_work_and_end_with_their_own_barrier) {
  Function f = function({alloc("a", "s", v("n")), alloc("b", "t", v("n")), store("a", i64(0), f32(1)),
                         call("copy", {ptr_var("b", DType::F32), ptr_var("a", DType::F32), v("n")}),
                         element_loop("i", v("n"), {store("a", v("i"), at("b", v("i")))})});
  BOOST_TEST(placed(f) == "alloc a; alloc b; store a; barrier; call copy; for i { store a }; barrier");
}

BOOST_AUTO_TEST_CASE(the_cpu_printer_never_gets_a_barrier) {
  CppPrinter printer;
  std::ostringstream os;
  BOOST_CHECK_THROW(printer.stmt(*lir::barrier(), 0, os), InternalError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(printed_kernels)

BOOST_AUTO_TEST_CASE(a_fold_waits_for_every_step_before_its_result) {
  // samples/fold.scan's foldl: the loop stores acc[0] in every step, the result loads it.
  const std::string body = kernel(R"(
fn foldl(xs: f64[n], z: f64) -> f64 {
    let acc = scan {
        init acc = z
        acc[t] = acc[t-1] - xs[t]
    }
    return acc[-1]
}
)", "foldl");
  const std::string loop = lines_between(body, "for (int64_t step", "  }");
  BOOST_TEST(count(loop, "acc[0] = v;") == 1u, body);
  BOOST_TEST(count(loop, "ctx.barrier()") == 0u, body);
  const std::string after = lines_between(body, "acc[0] = v;", "= acc[index];");
  BOOST_TEST(count(after, "ctx.barrier();") == 1u, body);
}

BOOST_AUTO_TEST_CASE(a_pushed_out_reduction_costs_no_barrier_per_step) {
  // The sums of the rows are computed before the loop (push-out-seq), which only reads them.
  const std::string body = kernel(R"(
fn row_sums(x: f32[T, N], z: f32) -> f32 {
    let s = scan {
        init s = z
        s[t] = s[t-1] + sum(x[t])
    }
    return s[-1]
}
)", "row_sums");
  const std::string loop = lines_between(body, "for (int64_t step", "  }");
  BOOST_TEST(count(loop, "ctx.barrier()") == 0u, body);
  BOOST_TEST(count(body, "ctx.barrier();") == 2u, body);  // after the sums, after the loop
}

BOOST_AUTO_TEST_CASE(an_element_loop_with_checks_is_followed_by_the_failure_check) {
  const std::string body = kernel(R"(
fn divide(a: i32[n], b: i32[n]) -> i32[n] {
    return a / b
}
)", "divide");
  BOOST_TEST(count(body, "ctx.barrier();\n  if (ctx.failed()) return;") == 1u, body);
}

BOOST_AUTO_TEST_SUITE_END()
