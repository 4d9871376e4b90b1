// Semantic analysis, part 3: the builtin functions (math, reductions, construction, set/inc).
#include <cmath>

#include "frontend/sema_internal.h"
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

struct FloatMath {
  const char* name;
  UnaryOp op;
  double (*fold)(double);
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Math functions that produce floats (of integers: f64).
const FloatMath kFloatMath[] = {
    {"exp", UnaryOp::Exp, [](double x) { return std::exp(x); }},
    {"log", UnaryOp::Log, [](double x) { return std::log(x); }},
    {"log1p", UnaryOp::Log1p, [](double x) { return std::log1p(x); }},
    {"expm1", UnaryOp::Expm1, [](double x) { return std::expm1(x); }},
    {"sqrt", UnaryOp::Sqrt, [](double x) { return std::sqrt(x); }},
    {"sin", UnaryOp::Sin, [](double x) { return std::sin(x); }},
    {"cos", UnaryOp::Cos, [](double x) { return std::cos(x); }},
    {"tanh", UnaryOp::Tanh, [](double x) { return std::tanh(x); }},
    {"sigmoid", UnaryOp::Sigmoid, sigmoid},
};

std::optional<ReduceOp> reduction_named(const std::string& n) {
  if (n == "sum") return ReduceOp::Sum;
  if (n == "prod") return ReduceOp::Prod;
  if (n == "mean") return ReduceOp::Mean;
  if (n == "max") return ReduceOp::Max;
  if (n == "min") return ReduceOp::Min;
  return std::nullopt;
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

SValue Analyzer::builtin(const ast::Call& c, Scope& scope, bool* handled) {
  SValue selected = selection_builtin(c, scope, handled);
  if (*handled) return selected;
  *handled = true;
  const std::string& n = c.callee;
  auto arity = [&](size_t lo, size_t hi) { return builtin_arity(c, lo, hi); };
  auto no_kwargs = [&] { return builtin_no_keywords(c); };
  auto arg = [&](size_t i) { return single(expr(*c.args[i], scope), c.args[i]->loc); };
  auto concrete_arg = [&](size_t i) {
    SValue v = arg(i);
    if (v.ok() && v.weak) v = materialize(v, is_float(v.dtype()) ? DType::F32 : DType::I64, c.args[i]->loc);
    return v;
  };
  auto no_bool = [&](const SValue& v) {
    if (!v.ok()) return false;
    if (v.dtype() != DType::Bool) return true;
    diags_.report(DiagId::err_arith_on_bool, c.loc, n);
    return false;
  };

  // ---- element-wise math producing floats
  for (const FloatMath& m : kFloatMath) {
    if (n != m.name) continue;
    if (!arity(1, 1) || !no_kwargs()) return SValue::invalid();
    SValue x = arg(0);
    if (!no_bool(x)) return SValue::invalid();
    if (x.weak) {
      if (auto k = ir::constant_value(x.value)) return float_literal(m.fold(k->as_double()), c.loc);
      SValue out = SValue::tensor(builder_.unary(m.op, materialize(x, DType::F32, c.loc).value, c.loc), c.loc);
      out.weak = true;
      out.remake = [this, op = m.op, x, loc = c.loc](DType d) {
        return builder_.unary(op, materialize(x, d, loc).value, loc);
      };
      return out;
    }
    DType d = is_float(x.dtype()) ? x.dtype() : DType::F64;
    return SValue::tensor(builder_.unary(m.op, materialize(x, d, c.loc).value, c.loc), c.loc);
  }

  // ---- element-wise, integers allowed
  if (n == "abs" || n == "sign" || n == "floor" || n == "ceil") {
    if (!arity(1, 1) || !no_kwargs()) return SValue::invalid();
    SValue x = arg(0);
    if (!no_bool(x)) return SValue::invalid();
    bool rounding = n == "floor" || n == "ceil";
    if (rounding && is_int(x.dtype())) return x;  // already whole
    UnaryOp op = n == "abs" ? UnaryOp::Abs : n == "sign" ? UnaryOp::Sign : n == "floor" ? UnaryOp::Floor : UnaryOp::Ceil;
    if (auto k = x.weak ? ir::constant_value(x.value) : std::nullopt) {
      if (is_int(k->dtype)) {
        if (op == UnaryOp::Abs && k->i == INT64_MIN) return x;
        return int_literal(op == UnaryOp::Abs ? std::abs(k->i) : (k->i > 0) - (k->i < 0), c.loc);
      }
      double f = k->f;
      double r = op == UnaryOp::Abs ? std::fabs(f) : op == UnaryOp::Floor ? std::floor(f)
               : op == UnaryOp::Ceil ? std::ceil(f) : (f > 0 ? 1.0 : f < 0 ? -1.0 : f);
      return float_literal(r, c.loc);
    }
    if (x.weak) x = materialize(x, is_float(x.dtype()) ? DType::F32 : DType::I64, c.loc);
    return SValue::tensor(builder_.unary(op, x.value, c.loc), c.loc);
  }
  if (n == "relu") {
    if (!arity(1, 1) || !no_kwargs()) return SValue::invalid();
    // max(0, x): max gives all to its first operand at a tie, so relu'(0) is 0 (the contract).
    return binary(BinaryOp::Max, int_literal(0, c.loc), arg(0), c.loc, "relu");
  }
  if (n == "pow") {
    if (!arity(2, 2) || !no_kwargs()) return SValue::invalid();
    return binary(BinaryOp::Pow, arg(0), arg(1), c.loc, "pow");
  }
  if (n == "where") {
    if (!arity(3, 3) || !no_kwargs()) return SValue::invalid();
    SValue cond = arg(0), a = arg(1), b = arg(2);
    return select(cond, a, b, c.loc, "where");
  }
  if (n == "clip") {
    if (!arity(3, 3) || !no_kwargs()) return SValue::invalid();
    SValue x = arg(0), lo = arg(1), hi = arg(2);
    return binary(BinaryOp::Min, binary(BinaryOp::Max, x, lo, c.loc, "clip"), hi, c.loc, "clip");
  }
  if ((n == "min" || n == "max") && c.args.size() == 2) {
    if (!no_kwargs()) return SValue::invalid();
    return binary(n == "min" ? BinaryOp::Min : BinaryOp::Max, arg(0), arg(1), c.loc, n.c_str());
  }

  // ---- reductions
  if (auto op = reduction_named(n)) {
    if (!arity(1, 1)) return SValue::invalid();
    SValue x = concrete_arg(0);
    std::optional<int> normalized;
    if (!axis_keyword(c, x.ok() ? x.type().rank() : -1, 0, &normalized) || !x.ok()) return SValue::invalid();
    if (x.dtype() == DType::Bool) {
      diags_.report(DiagId::err_reduce_bool, c.loc, n);
      return SValue::invalid();
    }
    if (*op == ReduceOp::Mean && is_int(x.dtype())) x = materialize(x, DType::F64, c.loc);
    return SValue::tensor(builder_.reduce(*op, x.value, normalized, c.loc), c.loc);
  }

  // ---- construction
  if (n == "zeros_like" || n == "ones_like" || n == "full_like") {
    bool full = n == "full_like";
    if (!arity(full ? 2 : 1, full ? 2 : 1) || !no_kwargs()) return SValue::invalid();
    SValue x = concrete_arg(0);
    if (!x.ok()) return x;
    DType d = x.dtype();
    SValue fill_value;
    if (full) {
      SValue v = arg(1);
      if (!v.ok()) return v;
      if (!v.type().is_scalar()) {
        diags_.report(DiagId::err_not_scalar, c.args[1]->loc, "the value of full_like", v.type().str());
        return SValue::invalid();
      }
      if ((v.dtype() == DType::Bool) != (d == DType::Bool)) {
        diags_.report(DiagId::err_downcast, c.args[1]->loc, "full_like", type_words(v),
                      dtype_name(d));
        return SValue::invalid();
      }
      if (!v.weak && v.dtype() != d) {
        auto p = promote(x, v, c.loc, "full_like");
        if (!p) return SValue::invalid();
        if (p->dtype != d) {
          diags_.report(DiagId::err_downcast, c.args[1]->loc, "full_like", v.type().str(), dtype_name(d));
          return SValue::invalid();
        }
      }
      if (v.weak && is_int(d) && is_float(v.dtype())) {
        diags_.report(DiagId::err_downcast, c.args[1]->loc, "full_like", "a float literal", dtype_name(d));
        return SValue::invalid();
      }
      fill_value = materialize(v, d, c.loc);
    } else {
      bool one = n == "ones_like";
      Scalar s = d == DType::Bool ? Scalar::of_bool(one)
                 : is_float(d)   ? Scalar::of_float(d, one ? 1.0 : 0.0)
                                 : Scalar::of_int(d, one ? 1 : 0);
      fill_value = constant(s, c.loc);
    }
    std::vector<Value> dims;
    for (int i = 0; i < x.type().rank(); ++i) dims.push_back(dim_value(x.value, i, c.loc));
    return SValue::tensor(builder_.fill(fill_value.value, dims, x.type().shape, c.loc), c.loc);
  }
  if (n == "zeros" || n == "ones") {
    if (c.args.empty()) {
      diags_.report(DiagId::err_zeros_dtype, c.loc, n);
      return SValue::invalid();
    }
    if (!no_kwargs()) return SValue::invalid();
    SValue t = expr(*c.args[0], scope);
    if (t.kind != SValue::Kind::DType) {
      if (t.ok()) diags_.report(DiagId::err_zeros_dtype, c.args[0]->loc, n);
      return SValue::invalid();
    }
    DType d = t.dtype_ref;
    bool one = n == "ones";
    Scalar s = d == DType::Bool ? Scalar::of_bool(one)
               : is_float(d)   ? Scalar::of_float(d, one ? 1.0 : 0.0)
                               : Scalar::of_int(d, one ? 1 : 0);
    std::vector<Value> dims;
    std::vector<Dim> static_dims;
    bool ok = true;
    for (size_t i = 1; i < c.args.size(); ++i) {
      SValue dim = to_index_i64(expr(*c.args[i], scope), c.args[i]->loc, "a dimension");
      if (!dim.ok()) {
        ok = false;
        continue;
      }
      dims.push_back(dim.value);
      static_dims.push_back(dim.as_dim ? *dim.as_dim : Dim::fresh_unknown());
    }
    if (!ok) return SValue::invalid();
    if (dims.size() > size_t(kMaxRank)) {
      diags_.report(DiagId::err_rank_limit, c.loc, kMaxRank, dims.size());
      return SValue::invalid();
    }
    return SValue::tensor(builder_.fill(constant(s, c.loc).value, dims, static_dims, c.loc), c.loc);
  }
  if (n == "arange") {
    if (!arity(1, 2) || !no_kwargs()) return SValue::invalid();
    SValue a = to_index_i64(arg(0), c.args[0]->loc, "the argument of arange");
    SValue b = c.args.size() == 2 ? to_index_i64(arg(1), c.args[1]->loc, "the argument of arange") : SValue();
    if (!a.ok() || (c.args.size() == 2 && !b.ok())) return SValue::invalid();
    if (c.args.size() == 1) {
      return SValue::tensor(builder_.arange(builder_.int_constant(0, c.loc), a.value, a.as_dim, c.loc), c.loc);
    }
    std::optional<Dim> length;
    if (auto lo = ir::constant_value(a.value); lo && lo->i == 0) length = b.as_dim;
    return SValue::tensor(builder_.arange(a.value, b.value, length, c.loc), c.loc);
  }
  if (n == "len") {
    if (!arity(1, 1) || !no_kwargs()) return SValue::invalid();
    SValue x = concrete_arg(0);
    if (!x.ok()) return x;
    if (x.type().is_scalar()) {
      diags_.report(DiagId::err_len_scalar, c.loc);
      return SValue::invalid();
    }
    SValue out = SValue::tensor(dim_value(x.value, 0, c.loc), c.loc);
    out.as_dim = x.type().shape[0];
    return out;
  }
  if (n == "set" || n == "inc") {
    bool accumulate = n == "inc";
    if (!arity(2, 2) || !no_kwargs()) return SValue::invalid();
    if (c.args[0]->kind != ast::ExprKind::Index) {
      diags_.report(DiagId::err_set_target, c.args[0]->loc, n);
      expr(*c.args[0], scope);
      arg(1);
      return SValue::invalid();
    }
    const auto& target = ast::as<ast::Index>(*c.args[0]);
    // set(h[t - 1, i], v): the step of an output, then the position in it.
    const TapRead* tap = tap_read_of(target);
    if (tap && tap->kind != TapRead::Kind::Output) tap = nullptr;
    size_t first = tap ? 1 : 0;
    SValue x;
    if (tap && target.items.size() == 1) {
      diags_.report(DiagId::err_set_whole_step, target.loc, ast::to_source(target), ast::to_source(*target.base), n,
                    ast::to_source(*target.items[0].index));
    } else if (tap) {
      x = output_read(*tap->frame, tap->slot, tap->k, target, target.loc);
    } else if (!misread_output(target, scope)) {
      x = single(expr(*target.base, scope), target.base->loc);
    }
    if (x.ok() && x.weak) x = materialize(x, is_float(x.dtype()) ? DType::F32 : DType::I64, c.loc);
    std::vector<ir::IndexSpec> specs;
    std::vector<Value> operands;
    bool ok = x.ok() && index_specs(x.type(), target.items, first, scope, target.loc, &specs, &operands);
    SValue v = arg(1);
    if (!ok || !v.ok()) return SValue::invalid();
    DType d = x.dtype();
    if (accumulate && d == DType::Bool) {
      diags_.report(DiagId::err_arith_on_bool, c.loc, n);
      return SValue::invalid();
    }
    if ((v.dtype() == DType::Bool) != (d == DType::Bool) || (v.weak && is_int(d) && is_float(v.dtype()))) {
      diags_.report(DiagId::err_downcast, c.args[1]->loc, n, type_words(v), dtype_name(d));
      return SValue::invalid();
    }
    if (!v.weak && v.dtype() != d) {
      auto p = promote(x, v, c.loc, n.c_str());
      if (!p) return SValue::invalid();
      if (p->dtype != d) {
        diags_.report(DiagId::err_downcast, c.args[1]->loc, n, v.type().str(), dtype_name(d));
        return SValue::invalid();
      }
    }
    v = materialize(v, d, c.loc);
    std::vector<Dim> region = ir::index_result_shape(x.type(), specs, operands);
    auto fits = ir::broadcast_shapes(v.type().shape, region);
    bool shape_ok = v.type().rank() <= int(region.size()) && fits.has_value();
    if (shape_ok) {
      // v must broadcast *to* the region, not the other way round.
      for (size_t i = 0; i < region.size(); ++i)
        if (region[i].is_const() && (*fits)[i].is_const() && !region[i].same_as((*fits)[i])) shape_ok = false;
    }
    if (!shape_ok) {
      diags_.report(DiagId::err_set_value_shape, c.args[1]->loc, n, ir::shape_str(v.type().shape), ir::shape_str(region));
      return SValue::invalid();
    }
    return SValue::tensor(builder_.update(x.value, v.value, std::move(specs), std::move(operands), accumulate, c.loc),
                          c.loc);
  }
  if (n == "grad") {
    if (!arity(2, 2) || !no_kwargs()) return SValue::invalid();
    return grad(c, scope);
  }
  if (n == "stop_gradient") {
    if (!arity(1, 1) || !no_kwargs()) return SValue::invalid();
    SValue x = arg(0);
    if (!x.ok() || x.weak) return x;  // a literal carries no gradient anyway
    return SValue::tensor(builder_.stop_gradient(x.value, c.loc), c.loc);
  }
  *handled = false;
  return SValue::invalid();
}

}  // namespace scangen::sema
