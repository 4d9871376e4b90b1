// Semantic analysis: weak literals. A literal, or a value computed only from literals, keeps its
// exact value (an i64 or an f64 constant) until it meets a dtype; operations of two such constants
// are folded right away by ir/fold.h, the element semantics of run time, at i64 (integers) or f64
// (floats), as Python computes `0.1 + 0.2` before NumPy sees it. Integer results are exact: one
// that would wrap, and a division by zero or a negative exponent, is a compile error.
#include "frontend/sema_internal.h"
#include "ir/fold.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Scalar;
using ir::Value;

std::string type_words(const SValue& v) {
  if (!v.is_tensor()) return "a tuple";
  if (v.weak) return is_float(v.dtype()) ? "a float literal" : "an integer literal";
  return v.type().str();
}

DType weak_default(const SValue& v) { return is_float(v.dtype()) ? DType::F32 : DType::I64; }

std::optional<Scalar> weak_constant(const SValue& v) {
  if (!v.weak || !v.is_tensor()) return std::nullopt;
  return ir::constant_value(v.value);
}

SValue Analyzer::constant(Scalar s, Loc loc) { return SValue::tensor(builder_.constant(s, loc), loc); }

SValue Analyzer::int_literal(int64_t v, Loc loc) {
  // Weak: it becomes whatever integer or float type it meets, converted as a cast converts.
  Scalar exact = Scalar::of_int(DType::I64, v);
  SValue s = constant(exact, loc);
  s.weak = true;
  s.as_dim = ir::Dim::constant(v);
  s.remake = [this, exact, loc](DType d) -> Value {
    SCANGEN_CHECK(d != DType::Bool, "integer literal materialized as bool");
    Scalar converted = ir::fold_cast(exact, d);
    if (is_int(d) && converted.i != exact.i) {
      diags_.report(DiagId::err_integer_literal_range, loc, exact.i, dtype_name(d));
      converted.i = 0;
    }
    return builder_.constant(converted, loc);
  };
  return s;
}

SValue Analyzer::float_literal(double v, Loc loc) {
  Scalar exact = Scalar::of_float(DType::F64, v);
  SValue s = constant(exact, loc);
  s.weak = true;
  s.remake = [this, exact, loc](DType d) -> Value {
    SCANGEN_CHECK(is_float(d), "float literal materialized as a non-float");
    return builder_.constant(ir::fold_cast(exact, d), loc);
  };
  return s;
}

SValue Analyzer::materialize(const SValue& v, DType dtype, Loc loc) {
  if (!v.ok()) return v;
  SValue out = v;
  out.weak = false;
  out.remake = nullptr;
  if (v.weak) {
    out.value = v.remake(dtype);
  } else if (v.dtype() != dtype) {
    out.value = builder_.cast(v.value, dtype, loc);
  }
  if (!is_int(dtype)) out.as_dim.reset();
  return out;
}

SValue Analyzer::concrete(const SValue& v, Loc loc) {
  if (!v.ok() || !v.weak) return v;
  return materialize(v, weak_default(v), loc);
}

// ---- folding

SValue Analyzer::folded_literal(const std::optional<ir::Folded>& r, Loc loc) {
  SCANGEN_CHECK(r.has_value(), "a weak literal folded with an operation not defined on it");
  switch (r->issue) {
    case ir::FoldIssue::None: break;
    case ir::FoldIssue::Wrapped: diags_.report(DiagId::err_constant_overflow, loc); return SValue::invalid();
    case ir::FoldIssue::DivisionByZero:
      diags_.report(DiagId::err_constant_division_by_zero, loc);
      return SValue::invalid();
    case ir::FoldIssue::NegativeExponent:
      diags_.report(DiagId::err_constant_negative_exponent, loc);
      return SValue::invalid();
  }
  const Scalar& s = *r->value;
  return is_float(s.dtype) ? float_literal(s.f, loc) : int_literal(s.i, loc);
}

SValue Analyzer::fold_literal(ir::UnaryOp op, const Scalar& x, Loc loc) {
  // A float function of an integer literal is the function of that number as an f64.
  bool needs_float = !ir::unary_op_allows_int(op);
  return folded_literal(ir::fold_unary(op, needs_float ? ir::fold_cast(x, DType::F64) : x), loc);
}

SValue Analyzer::fold_literals(ir::BinaryOp op, const Scalar& a, const Scalar& b, Loc loc) {
  DType at = is_float(a.dtype) || is_float(b.dtype) ? DType::F64 : DType::I64;
  return folded_literal(ir::fold_binary(op, ir::fold_cast(a, at), ir::fold_cast(b, at)), loc);
}

}  // namespace scangen::sema
