// The loop IR: constant folding in the expression factories, and the hoist_invariants and
// remove_unused passes.
#define BOOST_TEST_MODULE loop_ir
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"
#include "lir_builders.h"
#include "scangen/runtime/errors.h"

using namespace scangen;
using namespace scangen::lir;
using namespace scangen::lir::testing;

namespace {

bool is_imm_bool(const ExprRef& e, bool v) {
  return e->kind == ExprKind::Imm && e->type == DType::Bool && (e->imm.i != 0) == v;
}

// The constant value of an expression that must have folded to an integer.
int64_t ci(const ExprRef& e) {
  std::optional<int64_t> c = const_int(e);
  BOOST_TEST_REQUIRE(c.has_value(), "not folded to a constant");
  return *c;
}

const ExprRef n = var("n", DType::I64);
const ExprRef x = var("x", DType::I64);

}  // namespace

BOOST_AUTO_TEST_SUITE(expressions)

BOOST_AUTO_TEST_CASE(index_arithmetic_folds_constants) {
  BOOST_TEST(add(i64(0), x) == x);
  BOOST_TEST(add(x, i64(0)) == x);
  BOOST_TEST(ci(add(i64(2), i64(3))) == 5);
  BOOST_TEST(sub(x, i64(0)) == x);
  BOOST_TEST(ci(sub(i64(2), i64(7))) == -5);
  BOOST_TEST(mul(i64(1), x) == x);
  BOOST_TEST(mul(x, i64(1)) == x);
  BOOST_TEST(ci(mul(i64(0), x)) == 0);
  BOOST_TEST(ci(mul(x, i64(0))) == 0);
  BOOST_TEST(ci(mul(i64(6), i64(7))) == 42);
  BOOST_TEST(ci(min(i64(6), i64(7))) == 6);
  BOOST_TEST(ci(max(i64(6), i64(7))) == 7);
  // Nothing to fold: a real node, marked as index arithmetic.
  ExprRef s = add(x, i64(1));
  BOOST_TEST((s->kind == ExprKind::Binary));
  BOOST_TEST(s->index_math);
  BOOST_TEST((s->bop == BinaryOp::Add));
  BOOST_TEST(!const_int(s).has_value());
  // 0 - x is not x.
  BOOST_TEST((sub(i64(0), x)->kind == ExprKind::Binary));
  BOOST_TEST((min(x, i64(3))->kind == ExprKind::Binary));
}

BOOST_AUTO_TEST_CASE(comparisons_fold) {
  BOOST_TEST(is_imm_bool(lt(i64(2), i64(3)), true));
  BOOST_TEST(is_imm_bool(lt(i64(3), i64(3)), false));
  BOOST_TEST(is_imm_bool(ge(i64(3), i64(3)), true));
  BOOST_TEST(is_imm_bool(eq(i64(3), i64(4)), false));
  // The same expression on both sides.
  BOOST_TEST(is_imm_bool(lt(x, x), false));
  BOOST_TEST(is_imm_bool(ge(add(x, i64(1)), add(x, i64(1))), true));
  BOOST_TEST(is_imm_bool(eq(x, var("x", DType::I64)), true));
  ExprRef c = lt(x, n);
  BOOST_TEST((c->kind == ExprKind::Binary));
  BOOST_TEST((c->type == DType::Bool));
}

BOOST_AUTO_TEST_CASE(logic_and_select_fold) {
  ExprRef c = lt(x, n);
  ExprRef t = imm(ir::Scalar::of_bool(true)), f = imm(ir::Scalar::of_bool(false));
  BOOST_TEST(is_imm_bool(logical_or(t, c), true));
  BOOST_TEST(is_imm_bool(logical_or(c, t), true));
  BOOST_TEST(logical_or(f, c) == c);
  BOOST_TEST(is_imm_bool(logical_and(c, f), false));
  BOOST_TEST(logical_and(t, c) == c);
  BOOST_TEST((logical_and(c, lt(n, x))->kind == ExprKind::Binary));
  ExprRef a = var("a", DType::F32), b = var("b", DType::F32);
  BOOST_TEST(select(t, a, b) == a);
  BOOST_TEST(select(f, a, b) == b);
  BOOST_TEST(select(c, a, var("a", DType::F32)) == a);  // both branches the same
  ExprRef s = select(c, a, b);
  BOOST_TEST((s->kind == ExprKind::Select));
  BOOST_TEST((s->type == DType::F32));
}

BOOST_AUTO_TEST_CASE(casts_and_element_operations) {
  BOOST_TEST(cast(DType::I64, x) == x);
  ExprRef narrowed = cast(DType::I32, i64(5));
  BOOST_TEST((narrowed->kind == ExprKind::Imm));
  BOOST_TEST((narrowed->type == DType::I32));
  BOOST_TEST(narrowed->imm.i == 5);
  ExprRef f = cast(DType::F32, x);
  BOOST_TEST((f->kind == ExprKind::Cast));
  BOOST_TEST((f->type == DType::F32));
  // Element operations keep their operand type (comparisons give bool) and fold nothing.
  ExprRef a = var("a", DType::F32);
  ExprRef sum = binary(BinaryOp::Add, a, a);
  BOOST_TEST((sum->type == DType::F32));
  BOOST_TEST(!sum->index_math);
  BOOST_TEST((binary(BinaryOp::Lt, a, a)->type == DType::Bool));
  BOOST_TEST((binary(BinaryOp::Mul, i64(1), x)->kind == ExprKind::Binary));
  BOOST_TEST((unary(UnaryOp::Exp, a)->type == DType::F32));
  BOOST_CHECK_THROW(binary(BinaryOp::Add, a, x), InternalError);
  BOOST_CHECK_THROW(add(a, a), InternalError);
  BOOST_CHECK_THROW(load(x, i64(0)), InternalError);
  ExprRef l = load(ptr_var("p", DType::F64), x);
  BOOST_TEST((l->kind == ExprKind::Load));
  BOOST_TEST((l->type == DType::F64));
  BOOST_TEST(l->name == "p");
}

BOOST_AUTO_TEST_CASE(same_expr_compares_structure) {
  BOOST_TEST(same_expr(add(x, i64(1)), add(var("x", DType::I64), i64(1))));
  BOOST_TEST(!same_expr(add(x, i64(1)), add(x, i64(2))));
  BOOST_TEST(!same_expr(add(x, n), add(n, x)));
  BOOST_TEST(!same_expr(var("x", DType::I64), var("x", DType::I32)));
  BOOST_TEST(same_expr(load(ptr_var("p", DType::F32), x), load(ptr_var("p", DType::F32), x)));
  BOOST_TEST(!same_expr(load(ptr_var("p", DType::F32), x), load(ptr_var("q", DType::F32), x)));
  std::vector<std::string> reads;
  collect_reads(binary(BinaryOp::Add, load(ptr_var("p", DType::I64), x), n), reads);
  BOOST_TEST(reads == (std::vector<std::string>{"p", "x", "n"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(passes)

BOOST_AUTO_TEST_CASE(hoist_moves_invariant_lets_out_of_a_loop) {
  ExprRef i = var("i", DType::I64);
  Function f = function({
      let("n2", mul(n, i64(2))),
      loop("i", i64(0), n,
           {
               let("a", mul(n, i64(3))),             // invariant
               let("b", add(i, i64(1))),             // reads the loop variable
               let("c", add(var("a", DType::I64), n)),  // invariant once a is
               let("d", add(var("b", DType::I64), n)),  // varies through b
               store("out", i, add(var("c", DType::I64), var("d", DType::I64))),
           }),
  });
  hoist_invariants(f);
  BOOST_TEST(outline(f.body->body) == "let n2; let a; let c; for i { let b; let d; store out }");
}

BOOST_AUTO_TEST_CASE(hoist_keeps_loads_and_what_the_loop_assigns) {
  ExprRef i = var("i", DType::I64);
  Function f = function({
      decl("acc", i64(0)),
      loop("i", i64(0), n,
           {
               let("v", load(ptr_var("in", DType::I64), i64(0))),  // a load may see a store of the loop
               let("w", add(var("acc", DType::I64), i64(1))),       // acc is assigned in the loop
               assign_stmt("acc", add(var("w", DType::I64), var("v", DType::I64))),
               store("in", i, var("acc", DType::I64)),
           }),
  });
  hoist_invariants(f);
  BOOST_TEST(outline(f.body->body) == "decl acc; for i { let v; let w; assign acc; store in }");
}

BOOST_AUTO_TEST_CASE(hoist_moves_invariant_allocations_and_climbs_nested_loops) {
  ExprRef i = var("i", DType::I64), j = var("j", DType::I64);
  Function f = function({
      loop("i", i64(0), n,
           {
               alloc("buf", "s0", n),                    // sized by n only: allocated once
               alloc("row", "s1", add(i, i64(1))),       // sized by the loop variable: stays
               loop("j", i64(0), n,
                    {
                        let("k", mul(n, n)),             // invariant in both loops
                        let("ij", add(i, j)),            // varies in the inner loop
                        let("ii", mul(i, i64(2))),       // invariant in the inner loop only
                        store("buf", var("ij", DType::I64), var("ii", DType::I64)),
                        store("row", j, var("k", DType::I64)),
                    }),
           }),
  });
  hoist_invariants(f);
  BOOST_TEST(outline(f.body->body) == "alloc buf; let k; for i { alloc row; let ii; for j { let ij; store buf; store row } }");
}

BOOST_AUTO_TEST_CASE(hoist_flattens_blocks) {
  ExprRef i = var("i", DType::I64);
  Function f = function({
      block({let("z", i64(1))}),
      loop("i", i64(0), n, {block({let("a", mul(n, n)), store("out", i, var("a", DType::I64))})}),
  });
  hoist_invariants(f);
  BOOST_TEST(outline(f.body->body) == "let z; let a; for i { store out }");
}

BOOST_AUTO_TEST_CASE(remove_unused_lets_and_declarations) {
  ExprRef i = var("i", DType::I64);
  Function f = function({
      let("dead", mul(n, i64(2))),
      let("y", add(n, i64(1))),
      let("z", add(var("y", DType::I64), i64(1))),  // unused: z goes, then y
      decl("unused_acc", i64(0)),
      let("used", add(n, i64(3))),
      loop("i", i64(0), n,
           {
               let("tmp", add(i, i64(1))),  // unused inside the loop
               store("out", i, var("used", DType::I64)),
           }),
  });
  f.storages = {{"s_out", DType::F32}, {"s_dead", DType::F32}};
  f.body->body.push_back(result_stmt(0, ptr_var("out", DType::F32), {}, "s_out"));
  remove_unused(f);
  BOOST_TEST(outline(f.body->body) == "let used; for i { store out }; result");
  BOOST_TEST_REQUIRE(f.storages.size() == 1u);
  BOOST_TEST(f.storages[0].name == "s_out");
}

BOOST_AUTO_TEST_CASE(remove_unused_keeps_what_is_read) {
  ExprRef i = var("i", DType::I64);
  StmtRef assign = assign_stmt("acc", add(var("acc", DType::I64), i));
  StmtRef check = check_stmt(lt(var("acc", DType::I64), var("limit", DType::I64)), 0, 0, {{"acc is ", var("acc", DType::I64)}});
  Function f = function({
      let("limit", mul(n, n)),
      decl("acc", i64(0)),
      loop("i", i64(0), n, {assign}),
      check,
  });
  remove_unused(f);
  BOOST_TEST(outline(f.body->body) == "let limit; decl acc; for i { assign acc }; check");
  // A variable only assigned, never read, goes with its assignments.
  StmtRef assign2 = assign_stmt("count", add(var("count", DType::I64), i64(1)));
  Function g = function({decl("count", i64(0)), loop("i", i64(0), n, {assign2})});
  remove_unused(g);
  BOOST_TEST(outline(g.body->body) == "for i {  }");
}

BOOST_AUTO_TEST_SUITE_END()

// The text `scangen ir --lir` prints (loop_ir_printer.cpp): every statement kind, one a line.
BOOST_AUTO_TEST_SUITE(printer)

BOOST_AUTO_TEST_CASE(prints_every_statement_kind) {
  const ExprRef n = var("n", DType::I64), i = var("i", DType::I64), x = var("x", DType::F32);
  Function f = function({
      comment_stmt("a comment"),
      check_stmt(ge(n, i64(0)), 3, 7, {{"n is ", nullptr}, {"", n}}),
      alloc_stmt("p", DType::F32, "p_storage", n, true, 4, 1, {{"no memory", nullptr}}),
      let_pointer_stmt("q", ptr_var("p", DType::F32), mul(i64(2), n), false),
      decl_stmt("x", imm(ir::Scalar::of_float(DType::F32, 0.5))),
      for_stmt("step", i64(0), n, LoopKind::Time,
               {if_stmt(eq(var("step", DType::I64), i64(3)), {break_stmt()}),
                for_stmt("i", i64(0), n, LoopKind::Vector,
                         {store_stmt("p", i, unary(UnaryOp::Tanh, binary(BinaryOp::Add, x, load(ptr_var("q", DType::F32), i))))}),
                assign_stmt("x", cast(DType::F32, var("step", DType::I64))), barrier(true)}),
      grow_stmt("p", "p_storage", mul(n, i64(2)), n, 4, 1, {{"no memory", nullptr}}),
      call_stmt("copy", {ptr_var("p", DType::F32), ptr_var("q", DType::F32), n}),
      result_stmt(0, ptr_var("p", DType::F32), {n}, "p_storage"),
  });
  f.params = {{"in", DType::F32, 1, {"n"}}};
  f.results = {{"result0", DType::F32, 1, {}}};
  f.storages = {{"p_storage", DType::F32}};
  const std::string expected =
      "fn f (f_impl)\n"
      "  param in: f32[n]\n"
      "  result result0: f32[?]\n"
      "  storage p_storage: f32\n"
      "{\n"
      "  // a comment\n"
      "  check (n ge 0) at 3:7 else \"n is {n}\"\n"
      "  var p: f32* = alloc p_storage[n] at 4:1 else \"no memory\"\n"
      "  let q: const f32* = p + (2 mul n)\n"
      "  var x: f32 = 0.5\n"
      "  for step in [0, n) time {\n"
      "    if (step eq 3) {\n"
      "      break\n"
      "    }\n"
      "    for i in [0, n) vector {\n"
      "      p[i] = tanh(add(x, q[i]))\n"
      "    }\n"
      "    x = f32(step)\n"
      "    barrier, then return if a thread failed\n"
      "  }\n"
      "  p = grow p_storage[(n mul 2)] keeping n at 4:1 else \"no memory\"\n"
      "  call copy(p, q, n)\n"
      "  result 0 = p [n] owned by p_storage\n"
      "}\n";
  BOOST_TEST(print_function(f) == expected);
}

BOOST_AUTO_TEST_SUITE_END()
