// The fast floating-point mode's loop-IR passes (fast_math.h): rewrites of float arithmetic that
// change rounding, which strict mode forbids.
#include "codegen/fast_math.h"

#include <functional>

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;

bool is_float_type(DType d) { return d == DType::F32 || d == DType::F64; }

// `e` with every subexpression replaced bottom-up by `rewrite` (which returns null to keep one).
ExprRef map_expr(const ExprRef& e, const std::function<ExprRef(const ExprRef&)>& rewrite) {
  if (!e) return e;
  auto copy = std::make_shared<lir::Expr>(*e);
  bool changed = false;
  for (ExprRef* operand : {&copy->a, &copy->b, &copy->c}) {
    ExprRef mapped = map_expr(*operand, rewrite);
    changed = changed || mapped != *operand;
    *operand = mapped;
  }
  for (ExprRef& arg : copy->args) {
    ExprRef mapped = map_expr(arg, rewrite);
    changed = changed || mapped != arg;
    arg = mapped;
  }
  ExprRef current = changed ? ExprRef(copy) : e;
  ExprRef replaced = rewrite(current);
  return replaced ? replaced : current;
}

// Applies map_expr to every expression of a statement tree.
void map_stmt_exprs(Stmt& s, const std::function<ExprRef(const ExprRef&)>& rewrite) {
  for (ExprRef* e : {&s.value, &s.index, &s.begin, &s.end, &s.cond}) *e = map_expr(*e, rewrite);
  for (ExprRef& arg : s.args) arg = map_expr(arg, rewrite);
  for (lir::MessagePart& part : s.message) part.value = map_expr(part.value, rewrite);
  for (lir::StmtRef& c : s.body) map_stmt_exprs(*c, rewrite);
  for (lir::StmtRef& c : s.else_body) map_stmt_exprs(*c, rewrite);
}

void for_each_stmt(Stmt& s, const std::function<void(Stmt&)>& visit) {
  visit(s);
  for (lir::StmtRef& c : s.body) for_each_stmt(*c, visit);
  for (lir::StmtRef& c : s.else_body) for_each_stmt(*c, visit);
}

bool is_float_op(const ExprRef& e, ir::BinaryOp op) {
  return e && e->kind == ExprKind::Binary && !e->index_math && e->bop == op && is_float_type(e->type);
}

// The fast_v1 function of a unary operation that libmvec vectorizes; null for the others (exact
// or cheap inline: neg, abs, sqrt, floor...).
const char* vector_math_function(ir::UnaryOp op) {
  switch (op) {
    case ir::UnaryOp::Exp: return "scangen_rt_v1::fast_v1::exp";
    case ir::UnaryOp::Log: return "scangen_rt_v1::fast_v1::log";
    case ir::UnaryOp::Log1p: return "scangen_rt_v1::fast_v1::log1p";
    case ir::UnaryOp::Expm1: return "scangen_rt_v1::fast_v1::expm1";
    case ir::UnaryOp::Sin: return "scangen_rt_v1::fast_v1::sin";
    case ir::UnaryOp::Cos: return "scangen_rt_v1::fast_v1::cos";
    case ir::UnaryOp::Tanh: return "scangen_rt_v1::fast_v1::tanh";
    case ir::UnaryOp::Sigmoid: return "scangen_rt_v1::fast_v1::sigmoid";
    case ir::UnaryOp::Neg:
    case ir::UnaryOp::Not:
    case ir::UnaryOp::Abs:
    case ir::UnaryOp::Sign:
    case ir::UnaryOp::Sqrt:
    case ir::UnaryOp::Floor:
    case ir::UnaryOp::Ceil: return nullptr;
  }
  return nullptr;
}

bool reads_var(const ExprRef& e, const std::string& name) {
  std::vector<std::string> reads;
  lir::collect_reads(e, reads);
  for (const std::string& r : reads)
    if (r == name) return true;
  return false;
}

}  // namespace

int use_fast_products(lir::Function& f) {
  int n = 0;
  for_each_stmt(*f.body, [&](Stmt& s) {
    if (s.kind != StmtKind::Call || s.callee != "matmul" || s.args.empty() || !is_float_type(s.args[0]->type)) return;
    s.callee = "matmul_fast";
    ++n;
  });
  return n;
}

int contract_fma(lir::Function& f) {
  int n = 0;
  map_stmt_exprs(*f.body, [&](const ExprRef& e) -> ExprRef {
    const bool add = is_float_op(e, ir::BinaryOp::Add), sub = is_float_op(e, ir::BinaryOp::Sub);
    if (!add && !sub) return nullptr;
    auto fma = [&](ExprRef x, ExprRef y, ExprRef z) {
      ++n;
      return lir::call("std::fma", e->type, {std::move(x), std::move(y), std::move(z)});
    };
    // Negation is exact: a * b - c = fma(a, b, -c) and c - a * b = fma(-a, b, c), each rounded once.
    if (is_float_op(e->a, ir::BinaryOp::Mul))
      return fma(e->a->a, e->a->b, add ? e->b : lir::unary(ir::UnaryOp::Neg, e->b));
    if (is_float_op(e->b, ir::BinaryOp::Mul))
      return fma(add ? e->b->a : lir::unary(ir::UnaryOp::Neg, e->b->a), e->b->b, e->a);
    return nullptr;
  });
  return n;
}

int use_vector_math(lir::Function& f) {
  int n = 0;
  map_stmt_exprs(*f.body, [&](const ExprRef& e) -> ExprRef {
    if (e->kind != ExprKind::Unary || !is_float_type(e->type)) return nullptr;
    const char* function = vector_math_function(e->uop);
    if (!function) return nullptr;
    ++n;
    return lir::call(function, e->type, {e->a});
  });
  return n;
}

int reassociate_reductions(lir::Function& f) {
  int n = 0;
  for_each_stmt(*f.body, [&](Stmt& s) {
    if (s.kind != StmtKind::For || s.loop != lir::LoopKind::Serial || s.body.size() != 1) return;
    const Stmt& update = *s.body[0];
    if (update.kind != StmtKind::Assign) return;
    const ExprRef& v = update.value;
    const bool sum = is_float_op(v, ir::BinaryOp::Add), product = is_float_op(v, ir::BinaryOp::Mul);
    if (!sum && !product) return;
    const std::string& acc = update.var;
    auto is_acc = [&](const ExprRef& x) { return x->kind == ExprKind::Var && x->name == acc; };
    const ExprRef& term = is_acc(v->a) ? v->b : (is_acc(v->b) ? v->a : nullptr);
    if (!term || reads_var(term, acc)) return;
    s.reduction_var = acc;
    s.reduction_op = v->bop;
    ++n;
  });
  return n;
}

}  // namespace scangen::codegen
