// Semantic analysis: expressions and operators, with the dtype rules.
//
// The dtype rules are JAX's with NumPy's weak literals: a literal (or a value computed only from
// literals) is weak and takes the dtype of the operand it meets (sema_literals.cpp); strong
// operands promote to the wider type; there is no implicit downcast.
#include "frontend/sema_internal.h"
#include "support/check.h"

namespace scangen::sema {

using ir::BinaryOp;
using ir::Scalar;
using ir::UnaryOp;
using ir::Value;

SValue Analyzer::single(SValue v, Loc loc, const char* context) {
  if (!v.ok()) return v;
  if (v.kind == SValue::Kind::Tensor) {
    if (v.weak && context == nullptr) {
      // A weak value that reaches a binding keeps its weakness (let c = 2 stays a literal).
      return v;
    }
    return v;
  }
  if (v.kind == SValue::Kind::Multi) {
    if (v.from_scan && v.elements.size() == 1) return v.elements[0];
    // Reported at the scan or the call itself rather than at what uses it.
    Loc at = v.loc.valid() ? v.loc : loc;
    if (v.from_scan) {
      diags_.report(DiagId::err_inline_scan_outputs, at, v.elements.size());
    } else {
      diags_.report(DiagId::err_multi_value_in_expression, at, context ? context : v.callee.c_str(),
                    v.elements.size());
    }
    return SValue::invalid();
  }
  if (v.kind == SValue::Kind::DType) {
    std::string n(dtype_name(v.dtype_ref));
    diags_.report(DiagId::err_dtype_as_value, loc, n, n);
    return SValue::invalid();
  }
  return SValue::invalid();
}


// ---- the dtype rules

std::optional<Analyzer::Promotion> Analyzer::promote(const SValue& a, const SValue& b, Loc loc, const char* op) {
  DType da = a.dtype(), db = b.dtype();
  auto weak_meets_strong = [&](const SValue& w, DType strong) -> std::optional<Promotion> {
    if (strong == DType::Bool) {
      diags_.report(DiagId::err_compare_bool_number, loc, "a number");
      return std::nullopt;
    }
    if (is_float(w.dtype()) && is_int(strong)) return Promotion{DType::F64, false};
    return Promotion{strong, false};
  };
  if (a.weak && b.weak) {
    bool any_float = is_float(da) || is_float(db);
    return Promotion{any_float ? DType::F64 : DType::I64, true};
  }
  if (a.weak) return weak_meets_strong(a, db);
  if (b.weak) return weak_meets_strong(b, da);
  if (da == db) return Promotion{da, false};
  if (da == DType::Bool || db == DType::Bool) {
    diags_.report(DiagId::err_compare_bool_number, loc, dtype_name(da == DType::Bool ? db : da));
    return std::nullopt;
  }
  (void)op;
  if (is_float(da) && is_float(db)) return Promotion{DType::F64, false};
  if (is_int(da) && is_int(db)) return Promotion{DType::I64, false};
  return Promotion{is_float(da) ? da : db, false};
}

SValue Analyzer::binary(BinaryOp op, SValue a, SValue b, Loc loc, const char* spelling) {
  a = single(a, loc);
  b = single(b, loc);
  if (!a.ok() || !b.ok()) return SValue::invalid();
  ir::BinaryClass cls = ir::binary_op_class(op);
  if (cls == ir::BinaryClass::Logic) {
    if (a.dtype() != DType::Bool || b.dtype() != DType::Bool) {
      diags_.report(DiagId::err_logic_needs_bool, loc, spelling,
                    a.dtype() != DType::Bool ? type_words(a) : type_words(b));
      return SValue::invalid();
    }
  } else if (cls == ir::BinaryClass::Arith) {
    if (a.dtype() == DType::Bool || b.dtype() == DType::Bool) {
      diags_.report(DiagId::err_arith_on_bool, loc, spelling);
      return SValue::invalid();
    }
  } else if ((a.dtype() == DType::Bool) != (b.dtype() == DType::Bool)) {
    const SValue& other = a.dtype() == DType::Bool ? b : a;
    diags_.report(DiagId::err_compare_bool_number, loc, type_words(other));
    return SValue::invalid();
  }
  if (!ir::broadcast_shapes(a.type().shape, b.type().shape)) {
    diags_.report(DiagId::err_shapes_not_broadcastable, loc, ir::shape_str(a.type().shape),
                  ir::shape_str(b.type().shape));
    return SValue::invalid();
  }
  auto p = promote(a, b, loc, spelling);
  if (!p) return SValue::invalid();

  // Two weak constants: fold now and stay weak (2 * 3 is the literal 6).
  auto la = weak_constant(a), lb = weak_constant(b);
  if (la && lb && cls == ir::BinaryClass::Arith) return fold_literals(op, *la, *lb, loc);

  SValue ma = materialize(a, p->dtype, loc), mb = materialize(b, p->dtype, loc);
  SValue out = SValue::tensor(builder_.binary(op, ma.value, mb.value, loc), loc);
  if (cls == ir::BinaryClass::Arith && p->weak) {
    out.weak = true;
    out.remake = [this, op, a, b, loc](DType d) {
      return builder_.binary(op, materialize(a, d, loc).value, materialize(b, d, loc).value, loc);
    };
  }
  // n + 1 where n is a dimension is that dimension plus one.
  if ((op == BinaryOp::Add || op == BinaryOp::Sub) && is_int(p->dtype)) {
    int64_t sign = op == BinaryOp::Add ? 1 : -1;
    if (a.as_dim && lb) out.as_dim = a.as_dim->plus(sign * lb->i);
    else if (b.as_dim && la && op == BinaryOp::Add) out.as_dim = b.as_dim->plus(la->i);
  }
  return out;
}

// ---- expressions

SValue Analyzer::expr(const ast::Expr& e, Scope& scope) {
  switch (e.kind) {
    case ast::ExprKind::IntLit: return int_literal(ast::as<ast::IntLit>(e).value, e.loc);
    case ast::ExprKind::FloatLit: return float_literal(ast::as<ast::FloatLit>(e).value, e.loc);
    case ast::ExprKind::BoolLit: return constant(Scalar::of_bool(ast::as<ast::BoolLit>(e).value), e.loc);
    case ast::ExprKind::Name: return name(ast::as<ast::Name>(e), scope);
    case ast::ExprKind::DTypeName: {
      SValue v;
      v.kind = SValue::Kind::DType;
      v.dtype_ref = ast::as<ast::DTypeName>(e).dtype;
      v.loc = e.loc;
      return v;
    }
    case ast::ExprKind::Unary: {
      const auto& u = ast::as<ast::Unary>(e);
      SValue x = single(expr(*u.operand, scope), u.operand->loc);
      if (!x.ok()) return x;
      if (u.op == ast::UnaryOp::Not) {
        if (x.dtype() != DType::Bool) {
          diags_.report(DiagId::err_logic_needs_bool, e.loc, "!", type_words(x));
          return SValue::invalid();
        }
        return SValue::tensor(builder_.unary(UnaryOp::Not, x.value, e.loc), e.loc);
      }
      if (x.dtype() == DType::Bool) {
        diags_.report(DiagId::err_arith_on_bool, e.loc, ast::unary_op_spelling(u.op));
        return SValue::invalid();
      }
      if (u.op == ast::UnaryOp::Plus) return x;
      if (auto l = weak_constant(x)) return fold_literal(UnaryOp::Neg, *l, e.loc);
      SValue out = SValue::tensor(builder_.unary(UnaryOp::Neg, x.value, e.loc), e.loc);
      if (x.weak) {
        out.weak = true;
        out.remake = [this, x, loc = e.loc](DType d) { return builder_.unary(UnaryOp::Neg, materialize(x, d, loc).value, loc); };
      }
      return out;
    }
    case ast::ExprKind::Binary: {
      const auto& b = ast::as<ast::Binary>(e);
      SValue lhs = expr(*b.lhs, scope);
      SValue rhs = expr(*b.rhs, scope);
      const char* sp = ast::binary_op_spelling(b.op);
      switch (b.op) {
        case ast::BinaryOp::Add: return binary(BinaryOp::Add, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Sub: return binary(BinaryOp::Sub, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Mul: return binary(BinaryOp::Mul, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Div: return binary(BinaryOp::Div, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Mod: return binary(BinaryOp::Mod, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Pow: return binary(BinaryOp::Pow, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Eq: return binary(BinaryOp::Eq, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Ne: return binary(BinaryOp::Ne, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Lt: return binary(BinaryOp::Lt, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Le: return binary(BinaryOp::Le, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Gt: return binary(BinaryOp::Gt, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Ge: return binary(BinaryOp::Ge, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::And: return binary(BinaryOp::And, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::Or: return binary(BinaryOp::Or, lhs, rhs, b.op_loc, sp);
        case ast::BinaryOp::MatMul: {
          SValue x = concrete(single(lhs, b.lhs->loc), b.op_loc);
          SValue y = concrete(single(rhs, b.rhs->loc), b.op_loc);
          if (!x.ok() || !y.ok()) return SValue::invalid();
          if (x.dtype() == DType::Bool || y.dtype() == DType::Bool) {
            diags_.report(DiagId::err_arith_on_bool, b.op_loc, "@");
            return SValue::invalid();
          }
          int rx = x.type().rank(), ry = y.type().rank();
          if (rx < 1 || rx > 2 || ry < 1 || ry > 2) {
            diags_.report(DiagId::err_matmul_rank, b.op_loc, x.type().str(), y.type().str());
            return SValue::invalid();
          }
          if (!ir::matmul_result_shape(x.type(), y.type())) {
            diags_.report(DiagId::err_matmul_mismatch, b.op_loc, x.type().str(), y.type().str(),
                          x.type().shape[size_t(rx - 1)].str(), y.type().shape[0].str());
            return SValue::invalid();
          }
          auto p = promote(x, y, b.op_loc, "@");
          if (!p) return SValue::invalid();
          return SValue::tensor(builder_.matmul(materialize(x, p->dtype, e.loc).value,
                                                materialize(y, p->dtype, e.loc).value, b.op_loc),
                                e.loc);
        }
      }
      return SValue::invalid();
    }
    case ast::ExprKind::Ternary: {
      const auto& t = ast::as<ast::Ternary>(e);
      SValue c = single(expr(*t.cond, scope), t.cond->loc);
      SValue a = single(expr(*t.then_expr, scope), t.then_expr->loc);
      SValue b = single(expr(*t.else_expr, scope), t.else_expr->loc);
      return select(c, a, b, e.loc, "?:");
    }
    case ast::ExprKind::Call: return call(ast::as<ast::Call>(e), scope);
    case ast::ExprKind::Index: return index_expr(ast::as<ast::Index>(e), scope);
    case ast::ExprKind::Scan: return scan(ast::as<ast::Scan>(e), scope);
    case ast::ExprKind::Tuple: diags_.report(DiagId::err_tuple_value, e.loc); return SValue::invalid();
  }
  return SValue::invalid();
}

SValue Analyzer::select(SValue c, SValue a, SValue b, Loc loc, const char* name) {
  if (!c.ok() || !a.ok() || !b.ok()) return SValue::invalid();
  if (c.dtype() != DType::Bool) {
    diags_.report(DiagId::err_expected_bool, c.loc, std::string("the condition of ") + name,
                  type_words(c));
    return SValue::invalid();
  }
  if ((a.dtype() == DType::Bool) != (b.dtype() == DType::Bool)) {
    diags_.report(DiagId::err_select_bool_number, loc, name, type_words(a), type_words(b));
    return SValue::invalid();
  }
  auto s1 = ir::broadcast_shapes(c.type().shape, a.type().shape);
  auto s2 = s1 ? ir::broadcast_shapes(*s1, b.type().shape) : std::nullopt;
  if (!s2) {
    diags_.report(DiagId::err_shapes_not_broadcastable, loc,
                  ir::shape_str(s1 ? *s1 : c.type().shape), ir::shape_str(s1 ? b.type().shape : a.type().shape));
    return SValue::invalid();
  }
  auto p = promote(a, b, loc, "where");
  if (!p) return SValue::invalid();
  SValue out = SValue::tensor(builder_.select(c.value, materialize(a, p->dtype, loc).value,
                                              materialize(b, p->dtype, loc).value, loc),
                              loc);
  if (p->weak) {
    out.weak = true;
    out.remake = [this, c, a, b, loc](DType d) {
      return builder_.select(c.value, materialize(a, d, loc).value, materialize(b, d, loc).value, loc);
    };
  }
  return out;
}

}  // namespace scangen::sema
