// Semantic analysis: the handlers of the builtins of math, reductions, construction and updates
// (rows of builtins.def; the arguments are counted and the keywords checked before a handler runs).
#include "frontend/builtins.h"
#include "support/check.h"
#include "support/limits.h"

namespace scangen::sema {

using ir::BinaryOp;
using ir::Dim;
using ir::ReduceOp;
using ir::Scalar;
using ir::UnaryOp;
using ir::Value;

namespace {

// 0 or 1 of a dtype, for zeros and ones.
Scalar zero_or_one(DType d, bool one) {
  if (d == DType::Bool) return Scalar::of_bool(one);
  return is_float(d) ? Scalar::of_float(d, one ? 1.0 : 0.0) : Scalar::of_int(d, one ? 1 : 0);
}

}  // namespace

std::optional<int64_t> int_literal_value(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::IntLit) return ast::as<ast::IntLit>(e).value;
  if (e.kind == ast::ExprKind::Unary) {
    const auto& u = ast::as<ast::Unary>(e);
    if (u.op == ast::UnaryOp::Neg && u.operand->kind == ast::ExprKind::IntLit)
      return -ast::as<ast::IntLit>(*u.operand).value;
  }
  return std::nullopt;
}

SValue Analyzer::argument(const ast::Call& c, size_t i, Scope& scope) {
  return single(expr(*c.args[i], scope), c.args[i]->loc);
}

// Arithmetic needs numbers: false (reported) for a bool.
bool Analyzer::not_bool(const ast::Call& c, const SValue& v) {
  if (!v.ok()) return false;
  if (v.dtype() != DType::Bool) return true;
  diags_.report(DiagId::err_arith_on_bool, c.loc, c.callee);
  return false;
}

// ---- element-wise math

// Floats of floats, f64 of integers, a weak float of a literal (folded when it is a constant).
SValue Analyzer::float_math_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  UnaryOp op = *b.op.unary;
  SValue x = argument(c, 0, scope);
  if (!not_bool(c, x)) return SValue::invalid();
  if (x.weak) {
    if (auto k = weak_constant(x)) return fold_literal(op, *k, c.loc);
    SValue out = SValue::tensor(builder_.unary(op, materialize(x, DType::F32, c.loc).value, c.loc), c.loc);
    out.weak = true;
    out.remake = [this, op, x, loc = c.loc](DType d) { return builder_.unary(op, materialize(x, d, loc).value, loc); };
    return out;
  }
  DType d = is_float(x.dtype()) ? x.dtype() : DType::F64;
  return SValue::tensor(builder_.unary(op, materialize(x, d, c.loc).value, c.loc), c.loc);
}

// abs, sign, floor, ceil: the operand's dtype (floor and ceil of an integer are the integer).
SValue Analyzer::numeric_math_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  UnaryOp op = *b.op.unary;
  SValue x = argument(c, 0, scope);
  if (!not_bool(c, x)) return SValue::invalid();
  if (is_int(x.dtype()) && !ir::unary_op_allows_int(op)) return x;  // already whole
  if (auto k = weak_constant(x)) return fold_literal(op, *k, c.loc);
  x = concrete(x, c.loc);
  return SValue::tensor(builder_.unary(op, x.value, c.loc), c.loc);
}

SValue Analyzer::relu_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  // max(0, x): max gives all to its first operand at a tie, so relu'(0) is 0 (the contract).
  return binary(*b.op.binary, int_literal(0, c.loc), argument(c, 0, scope), c.loc, b.name);
}

SValue Analyzer::binary_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  SValue x = argument(c, 0, scope);
  return binary(*b.op.binary, x, argument(c, 1, scope), c.loc, b.name);
}

// min(x) and max(x) reduce; min(a, b) and max(a, b) are element-wise (and take no axis).
SValue Analyzer::min_max_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  if (c.args.size() == 1) return reduce_call(c, scope, b);
  if (!c.kwargs.empty()) {
    diags_.report(DiagId::err_unknown_keyword, c.kwargs[0].loc, c.callee, c.kwargs[0].name);
    return SValue::invalid();
  }
  return binary_call(c, scope, b);
}

SValue Analyzer::clip_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  SValue x = argument(c, 0, scope), lo = argument(c, 1, scope), hi = argument(c, 2, scope);
  return binary(BinaryOp::Min, binary(BinaryOp::Max, x, lo, c.loc, b.name), hi, c.loc, b.name);
}

SValue Analyzer::where_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  SValue cond = argument(c, 0, scope), x = argument(c, 1, scope), y = argument(c, 2, scope);
  return select(cond, x, y, c.loc, b.name);
}

// ---- reductions

SValue Analyzer::reduce_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  ReduceOp op = *b.op.reduce;
  SValue x = concrete(argument(c, 0, scope), c.args[0]->loc);
  std::optional<int> axis;
  if (!axis_keyword(c, x.ok() ? x.type().rank() : -1, 0, &axis) || !x.ok()) return SValue::invalid();
  if (x.dtype() == DType::Bool) {
    diags_.report(DiagId::err_reduce_bool, c.loc, c.callee);
    return SValue::invalid();
  }
  if (op == ReduceOp::Mean && is_int(x.dtype())) x = materialize(x, DType::F64, c.loc);
  return SValue::tensor(builder_.reduce(op, x.value, axis, c.loc), c.loc);
}

// ---- construction

SValue Analyzer::zeros_like_call(const ast::Call& c, Scope& scope, const Builtin&) { return like(c, scope, false); }
SValue Analyzer::ones_like_call(const ast::Call& c, Scope& scope, const Builtin&) { return like(c, scope, true); }

// zeros_like and ones_like: a fill of x's dtype and shape.
SValue Analyzer::like(const ast::Call& c, Scope& scope, bool one) {
  SValue x = concrete(argument(c, 0, scope), c.args[0]->loc);
  if (!x.ok()) return x;
  return filled_like(x, constant(zero_or_one(x.dtype(), one), c.loc), c.loc);
}

SValue Analyzer::filled_like(const SValue& x, const SValue& fill, Loc loc) {
  std::vector<Value> dims;
  for (int i = 0; i < x.type().rank(); ++i) dims.push_back(dim_value(x.value, i, loc));
  return SValue::tensor(builder_.fill(fill.value, dims, x.type().shape, loc), loc);
}

SValue Analyzer::full_like_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = concrete(argument(c, 0, scope), c.args[0]->loc);
  if (!x.ok()) return x;
  SValue v = argument(c, 1, scope);
  if (!v.ok()) return v;
  if (!v.type().is_scalar()) {
    diags_.report(DiagId::err_not_scalar, c.args[1]->loc, "the value of full_like", v.type().str());
    return SValue::invalid();
  }
  SValue fill = stored_value(c, x, v);
  if (!fill.ok()) return fill;
  return filled_like(x, fill, c.loc);
}

// The value v stored into x (full_like, set, inc): x's dtype, without a downcast (c's second
// argument is v).
SValue Analyzer::stored_value(const ast::Call& c, const SValue& x, const SValue& v) {
  DType d = x.dtype();
  Loc at = c.args[1]->loc;
  if ((v.dtype() == DType::Bool) != (d == DType::Bool) || (v.weak && is_int(d) && is_float(v.dtype()))) {
    diags_.report(DiagId::err_downcast, at, c.callee, type_words(v), dtype_name(d));
    return SValue::invalid();
  }
  if (!v.weak && v.dtype() != d) {
    auto p = promote(x, v, c.loc, c.callee.c_str());
    if (!p) return SValue::invalid();
    if (p->dtype != d) {
      diags_.report(DiagId::err_downcast, at, c.callee, v.type().str(), dtype_name(d));
      return SValue::invalid();
    }
  }
  return materialize(v, d, c.loc);
}

SValue Analyzer::zeros_call(const ast::Call& c, Scope& scope, const Builtin&) { return filled(c, scope, false); }
SValue Analyzer::ones_call(const ast::Call& c, Scope& scope, const Builtin&) { return filled(c, scope, true); }

// zeros(T, d0, ...) and ones(T, d0, ...).
SValue Analyzer::filled(const ast::Call& c, Scope& scope, bool one) {
  SValue t = expr(*c.args[0], scope);
  if (t.kind != SValue::Kind::DType) {
    if (t.ok()) diags_.report(DiagId::err_zeros_dtype, c.args[0]->loc, c.callee);
    return SValue::invalid();
  }
  std::vector<Value> dims;
  std::vector<Dim> static_dims;
  bool ok = true;
  for (size_t i = 1; i < c.args.size(); ++i) {
    SValue dim = to_index_i64(expr(*c.args[i], scope), c.args[i]->loc, "a dimension");
    ok = ok && dim.ok();
    if (!dim.ok()) continue;
    dims.push_back(dim.value);
    static_dims.push_back(dim.as_dim ? *dim.as_dim : Dim::fresh_unknown());
  }
  if (!ok) return SValue::invalid();
  if (dims.size() > size_t(kMaxRank)) {
    diags_.report(DiagId::err_rank_limit, c.loc, kMaxRank, dims.size());
    return SValue::invalid();
  }
  Value fill = constant(zero_or_one(t.dtype_ref, one), c.loc).value;
  return SValue::tensor(builder_.fill(fill, dims, static_dims, c.loc), c.loc);
}

SValue Analyzer::arange_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue a = to_index_i64(argument(c, 0, scope), c.args[0]->loc, "the argument of arange");
  if (c.args.size() == 1) {
    if (!a.ok()) return a;
    return SValue::tensor(builder_.arange(builder_.int_constant(0, c.loc), a.value, a.as_dim, c.loc), c.loc);
  }
  SValue b = to_index_i64(argument(c, 1, scope), c.args[1]->loc, "the argument of arange");
  if (!a.ok() || !b.ok()) return SValue::invalid();
  std::optional<Dim> length;
  if (auto lo = ir::constant_value(a.value); lo && lo->i == 0) length = b.as_dim;
  return SValue::tensor(builder_.arange(a.value, b.value, length, c.loc), c.loc);
}

SValue Analyzer::len_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = concrete(argument(c, 0, scope), c.args[0]->loc);
  if (!x.ok()) return x;
  if (x.type().is_scalar()) {
    diags_.report(DiagId::err_len_scalar, c.loc);
    return SValue::invalid();
  }
  SValue out = SValue::tensor(dim_value(x.value, 0, c.loc), c.loc);
  out.as_dim = x.type().shape[0];
  return out;
}

// ---- set and inc: x with the region x[idx] replaced by v, or v added to it

SValue Analyzer::update_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  bool accumulate = b.op.binary.has_value();
  if (c.args[0]->kind != ast::ExprKind::Index) {
    diags_.report(DiagId::err_set_target, c.args[0]->loc, c.callee);
    expr(*c.args[0], scope);
    argument(c, 1, scope);
    return SValue::invalid();
  }
  const auto& target = ast::as<ast::Index>(*c.args[0]);
  // set(h[t - 1, i], v): the step of an output, then the position in it.
  const TapRead* tap = tap_read_of(target);
  if (tap && tap->kind != TapRead::Kind::Output) tap = nullptr;
  size_t first = tap ? 1 : 0;
  SValue x;
  if (tap && target.items.size() == 1) {
    diags_.report(DiagId::err_set_whole_step, target.loc, ast::to_source(target), ast::to_source(*target.base),
                  c.callee, ast::to_source(*target.items[0].index));
  } else if (tap) {
    x = output_read(*tap->frame, tap->slot, tap->k, target, target.loc);
  } else if (!misread_output(target, scope)) {
    x = single(expr(*target.base, scope), target.base->loc);
  }
  x = concrete(x, c.loc);
  std::vector<ir::IndexSpec> specs;
  std::vector<Value> operands;
  bool ok = x.ok() && index_specs(x.type(), target.items, first, scope, target.loc, &specs, &operands);
  SValue v = argument(c, 1, scope);
  if (!ok || !v.ok()) return SValue::invalid();
  if (accumulate && x.dtype() == DType::Bool) {
    diags_.report(DiagId::err_arith_on_bool, c.loc, c.callee);
    return SValue::invalid();
  }
  v = stored_value(c, x, v);
  if (!v.ok()) return v;
  std::vector<Dim> region = ir::index_result_shape(x.type(), specs, operands);
  auto fits = ir::broadcast_shapes(v.type().shape, region);
  bool shape_ok = v.type().rank() <= int(region.size()) && fits.has_value();
  if (shape_ok) {
    // v must broadcast *to* the region, not the other way round.
    for (size_t i = 0; i < region.size(); ++i)
      if (region[i].is_const() && (*fits)[i].is_const() && !region[i].same_as((*fits)[i])) shape_ok = false;
  }
  if (!shape_ok) {
    diags_.report(DiagId::err_set_value_shape, c.args[1]->loc, c.callee, ir::shape_str(v.type().shape),
                  ir::shape_str(region));
    return SValue::invalid();
  }
  return SValue::tensor(builder_.update(x.value, v.value, std::move(specs), std::move(operands), accumulate, c.loc),
                        c.loc);
}

// ---- gradients

SValue Analyzer::grad_call(const ast::Call& c, Scope& scope, const Builtin&) { return grad(c, scope); }

SValue Analyzer::stop_gradient_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = argument(c, 0, scope);
  if (!x.ok() || x.weak) return x;  // a literal carries no gradient anyway
  return SValue::tensor(builder_.stop_gradient(x.value, c.loc), c.loc);
}

}  // namespace scangen::sema
