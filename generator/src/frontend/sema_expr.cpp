// Semantic analysis, part 2: expressions, operators with the dtype rules, indexing and builtins.
//
// The dtype rules are JAX's with NumPy's weak literals: a literal (or a value computed only from
// literals) is weak and takes the dtype of the operand it meets; strong operands promote to the
// wider type; there is no implicit downcast.
#include <cmath>
#include <limits>

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

// The literal value of a weak constant, kept exact (an integer, or a double) until it meets a dtype.
struct Literal {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
};

std::optional<Literal> literal_of(const SValue& v) {
  if (!v.weak || !v.is_tensor()) return std::nullopt;
  auto c = ir::constant_value(v.value);
  if (!c) return std::nullopt;
  // Weak constants are materialized at i64 (integers) or f64 (floats) to keep the exact value.
  Literal l;
  l.is_float = is_float(c->dtype);
  l.i = c->i;
  l.f = c->f;
  return l;
}

bool fits(int64_t v, DType d) {
  if (d == DType::I32) return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return true;
}

}  // namespace

std::string type_words(const SValue& v) {
  if (!v.is_tensor()) return "a tuple";
  if (v.weak) return is_float(v.dtype()) ? "a float literal" : "an integer literal";
  return v.type().str();
}

// ---- literals and weak values

SValue Analyzer::constant(Scalar s, Loc loc) { return SValue::tensor(builder_.constant(s, loc), loc); }

SValue Analyzer::int_literal(int64_t v, Loc loc) {
  // Held as an exact i64 constant; weak: it becomes whatever integer or float type it meets.
  SValue s = constant(Scalar::of_int(DType::I64, v), loc);
  s.weak = true;
  s.as_dim = Dim::constant(v);
  s.remake = [this, v, loc](DType d) -> Value {
    if (is_float(d)) return builder_.constant(Scalar::of_float(d, static_cast<double>(v)), loc);
    if (d == DType::Bool) SCANGEN_UNREACHABLE("integer literal materialized as bool");
    if (!fits(v, d)) {
      diags_.report(DiagId::err_integer_literal_range, loc, v, dtype_name(d));
      return builder_.constant(Scalar::of_int(d, 0), loc);
    }
    return builder_.constant(Scalar::of_int(d, v), loc);
  };
  return s;
}

SValue Analyzer::float_literal(double v, Loc loc) {
  SValue s = constant(Scalar::of_float(DType::F64, v), loc);
  s.weak = true;
  s.remake = [this, v, loc](DType d) -> Value {
    SCANGEN_CHECK(is_float(d), "float literal materialized as a non-float");
    return builder_.constant(Scalar::of_float(d, v), loc);
  };
  return s;
}

// The default dtype of a weak value when nothing gives it one.
static DType weak_default(const SValue& v) { return is_float(v.dtype()) ? DType::F32 : DType::I64; }

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

// A weak value that must become concrete now (it is used where no other operand gives a dtype).
static SValue concrete(Analyzer& a, const SValue& v, Loc loc) {
  if (!v.ok() || !v.weak) return v;
  SValue m = a.materialize(v, weak_default(v), loc);
  return m;
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

namespace {

// Integer arithmetic of constant expressions, with overflow reported rather than wrapped.
std::optional<int64_t> fold_int(BinaryOp op, int64_t a, int64_t b, std::string* error) {
  int64_t r = 0;
  switch (op) {
    case BinaryOp::Add:
      if (__builtin_add_overflow(a, b, &r)) break;
      return r;
    case BinaryOp::Sub:
      if (__builtin_sub_overflow(a, b, &r)) break;
      return r;
    case BinaryOp::Mul:
      if (__builtin_mul_overflow(a, b, &r)) break;
      return r;
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (b == 0) {
        *error = "integer division by zero";
        return std::nullopt;
      }
      if (a == INT64_MIN && b == -1) break;
      return op == BinaryOp::Div ? a / b : a % b;
    case BinaryOp::Pow: {
      if (b < 0) {
        *error = "negative integer exponent";
        return std::nullopt;
      }
      int64_t result = 1, base = a;
      for (int64_t e = b; e > 0; e >>= 1) {
        if (e & 1)
          if (__builtin_mul_overflow(result, base, &result)) goto overflow;
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) {
          // The square is needed only when a higher bit is set.
          if ((e >> 1) != 0) goto overflow;
        }
      }
      return result;
    }
    case BinaryOp::Min: return std::min(a, b);
    case BinaryOp::Max: return std::max(a, b);
    default: return std::nullopt;
  }
overflow:
  *error = "integer overflow";
  return std::nullopt;
}

std::optional<double> fold_float(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Mod: return std::fmod(a, b);
    case BinaryOp::Pow: return std::pow(a, b);
    default: return std::nullopt;
  }
}

}  // namespace

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
  auto la = literal_of(a), lb = literal_of(b);
  if (la && lb && cls == ir::BinaryClass::Arith) {
    if (!la->is_float && !lb->is_float) {
      std::string error;
      auto r = fold_int(op, la->i, lb->i, &error);
      if (r) return int_literal(*r, loc);
      if (!error.empty()) {
        diags_.report(DiagId::err_constant_expression, loc, error);
        return SValue::invalid();
      }
    } else if (auto r = fold_float(op, la->as_double(), lb->as_double())) {
      return float_literal(*r, loc);
    }
  }

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

// ---- names

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

SValue Analyzer::name(const ast::Name& n, Scope& scope) {
  Binding* b = scope.find(n.name);
  if (!b) {
    auto sym = env->symbols.find(n.name);
    if (sym != env->symbols.end()) {
      auto& d = diags_.report(DiagId::err_dim_symbol_as_value, n.loc, n.name);
      diags_.note(d, DiagId::note_dim_symbol_declared, sym->second.loc, n.name);
      return SValue::invalid();
    }
    auto later = env->later_lets.find(n.name);
    if (later != env->later_lets.end()) {
      auto& d = diags_.report(DiagId::err_use_before_definition, n.loc, n.name);
      diags_.note(d, DiagId::note_defined_here, later->second, n.name);
      return SValue::invalid();
    }
    if (functions.count(n.name) || is_builtin(n.name) || imported_functions.count(n.name) || find_unusable(n.name)) {
      diags_.report(DiagId::err_function_as_value, n.loc, n.name);
      return SValue::invalid();
    }
    auto& d = diags_.report(DiagId::err_unknown_name, n.loc, n.name);
    std::string best;
    Loc best_loc;
    size_t best_distance = 3;
    for (Scope* s = &scope; s; s = s->parent)
      for (const auto& [candidate, binding] : s->names) {
        size_t dist = edit_distance(candidate, n.name);
        if (dist < best_distance || (dist == best_distance && !best.empty() && candidate < best && dist < 3)) {
          best_distance = dist;
          best = candidate;
          best_loc = binding.loc;
        }
      }
    // A suggestion must keep some of what was written ('z' is not a typo of 't').
    if (!best.empty() && best_distance <= std::max<size_t>(1, n.name.size() / 3) &&
        best_distance < n.name.size())
      diags_.note(d, DiagId::note_did_you_mean, best_loc, best);
    return SValue::invalid();
  }
  switch (b->kind) {
    case Binding::Kind::Value: {
      SValue v = b->value;
      v.loc = n.loc;
      return v;
    }
    case Binding::Kind::Index: {
      SValue v = SValue::tensor(b->frame->index_param, n.loc);
      return v;
    }
    case Binding::Kind::Output: {
      // In its own definition, the current step would be a cycle: point to the previous one.
      const ScanFrame::Output& out = b->frame->outputs[size_t(b->slot)];
      DiagId id = out.progress != Progress::InProgress ? DiagId::err_output_bare_name
                  : out.is_state()                     ? DiagId::err_state_bare_name_own
                                                       : DiagId::err_output_bare_name_own;
      diags_.report(id, n.loc, n.name, b->frame->index_name);
      return SValue::invalid();
    }
    case Binding::Kind::Let: return let_read(*b->frame, b->slot, n.name, n.loc);
  }
  return SValue::invalid();
}

// ---- indexing

namespace {

// Whether `e` reads the name `n` (outside nested scans).
bool mentions(const ast::Expr& e, const std::string& n) {
  switch (e.kind) {
    case ast::ExprKind::Name:
      return ast::as<ast::Name>(e).name == n;
    case ast::ExprKind::Unary:
      return mentions(*ast::as<ast::Unary>(e).operand, n);
    case ast::ExprKind::Binary:
      return mentions(*ast::as<ast::Binary>(e).lhs, n) || mentions(*ast::as<ast::Binary>(e).rhs, n);
    case ast::ExprKind::Ternary: {
      const auto& t = ast::as<ast::Ternary>(e);
      return mentions(*t.cond, n) || mentions(*t.then_expr, n) || mentions(*t.else_expr, n);
    }
    case ast::ExprKind::Call: {
      const auto& c = ast::as<ast::Call>(e);
      for (const auto& a : c.args)
        if (mentions(*a, n)) return true;
      for (const auto& kw : c.kwargs)
        if (mentions(*kw.value, n)) return true;
      return false;
    }
    case ast::ExprKind::Index: {
      const auto& i = ast::as<ast::Index>(e);
      if (mentions(*i.base, n)) return true;
      for (const auto& item : i.items)
        for (const ast::ExprPtr* x : {&item.index, &item.lo, &item.hi})
          if (*x && mentions(**x, n)) return true;
      return false;
    }
    case ast::ExprKind::Tuple:
      for (const auto& x : ast::as<ast::Tuple>(e).elements)
        if (mentions(*x, n)) return true;
      return false;
    default:
      return false;
  }
}

}  // namespace

SValue Analyzer::to_index_i64(const SValue& raw, Loc loc, const char* what) {
  SValue v = single(raw, loc);
  if (!v.ok()) return v;
  if (!v.type().is_scalar() || !is_int(v.dtype())) {
    diags_.report(DiagId::err_expected_integer, loc, what, type_words(v));
    return SValue::invalid();
  }
  return materialize(v, DType::I64, loc);
}

Value Analyzer::dim_value(const Value& x, int axis, Loc loc) {
  if (auto c = x.type().shape[size_t(axis)].const_value()) return builder_.int_constant(*c, loc);
  return builder_.dim_size(x, axis, loc);
}

bool Analyzer::index_specs(const ir::Type& base, const std::vector<ast::IndexItem>& items, size_t first,
                           Scope& scope, Loc loc, std::vector<ir::IndexSpec>* specs, std::vector<Value>* operands,
                           const SValue* first_value) {
  bool ok = true;
  if (base.is_scalar() && first < items.size()) {
    diags_.report(DiagId::err_index_scalar, loc);
    ok = false;
  } else if (int(items.size() - first) > base.rank()) {
    diags_.report(DiagId::err_too_many_indices, loc, items.size() - first, base.rank());
    ok = false;
  }
  for (size_t i = first; i < items.size(); ++i) {
    const ast::IndexItem& item = items[i];
    ir::IndexSpec spec;
    if (!item.is_slice) {
      SValue given = i == first && first_value ? *first_value : single(expr(*item.index, scope), item.index->loc);
      if (given.ok() && !given.type().is_scalar() && i > first) {
        diags_.report(DiagId::err_gather_not_first, item.index->loc);
        ok = false;
        continue;
      }
      SValue idx = to_index_i64(given, item.index->loc, "an index");
      if (!idx.ok()) {
        ok = false;
        continue;
      }
      if (ok) {
        // A constant index into a dimension of known size is checked now.
        auto c = ir::constant_value(idx.value);
        auto n = base.shape[i - first].const_value();
        if (c && n && (c->i >= *n || c->i < -*n)) {
          diags_.report(DiagId::err_index_out_of_range, item.index->loc, c->i, i - first, *n);
          ok = false;
        }
      }
      operands->push_back(idx.value);
    } else {
      spec.kind = ir::IndexSpec::Kind::Slice;
      for (const ast::ExprPtr* bound : {&item.lo, &item.hi}) {
        if (!*bound) continue;
        SValue b = to_index_i64(expr(**bound, scope), (*bound)->loc, "a slice bound");
        if (!b.ok()) {
          ok = false;
          continue;
        }
        operands->push_back(b.value);
        (bound == &item.lo ? spec.has_lo : spec.has_hi) = true;
      }
    }
    specs->push_back(spec);
  }
  return ok;
}

SValue Analyzer::apply_index(SValue base, const std::vector<ast::IndexItem>& items, size_t first,
                             Scope& scope, Loc loc) {
  base = single(base, loc);
  // A tap read with nothing more to index (X[t - 1] of a state with a literal init, in the pass
  // that learns its dtype) stays weak, so that the step value gives it its dtype.
  if (first >= items.size() && base.ok()) return base;
  base = concrete(*this, base, loc);
  if (!base.ok()) {
    // Still analyze the indices for their own errors.
    for (size_t i = first; i < items.size(); ++i)
      for (const ast::ExprPtr* e : {&items[i].index, &items[i].lo, &items[i].hi})
        if (*e) expr(**e, scope);
    return base;
  }
  // The first index is analyzed once: an integer array there gathers rows.
  SValue first_value;
  if (first < items.size() && !items[first].is_slice) {
    first_value = single(expr(*items[first].index, scope), items[first].index->loc);
    if (first_value.ok() && !first_value.type().is_scalar()) return gather_index(base, first_value, items, first, scope, loc);
  }
  std::vector<ir::IndexSpec> specs;
  std::vector<Value> operands;
  if (!index_specs(base.type(), items, first, scope, loc, &specs, &operands,
                   first < items.size() && !items[first].is_slice ? &first_value : nullptr))
    return SValue::invalid();
  if (specs.empty()) return base;
  return SValue::tensor(builder_.index(base.value, std::move(specs), std::move(operands), loc), loc);
}

// X[idx, rest...] with an integer array idx: the rows of X[:, rest...] that idx names (NumPy's
// advanced index in the first position).
SValue Analyzer::gather_index(const SValue& base, const SValue& idx, const std::vector<ast::IndexItem>& items,
                              size_t first, Scope& scope, Loc loc) {
  const ast::IndexItem& head = items[first];
  if (int(items.size() - first) > base.type().rank() && !base.type().is_scalar()) {
    diags_.report(DiagId::err_too_many_indices, loc, items.size() - first, base.type().rank());
    return SValue::invalid();
  }
  SValue x = base;
  if (first + 1 < items.size() && !base.type().is_scalar()) {
    std::vector<ir::IndexSpec> specs{ir::IndexSpec{ir::IndexSpec::Kind::Slice, false, false}};
    std::vector<Value> operands;
    if (!index_specs(base.type().row(), items, first + 1, scope, loc, &specs, &operands)) return SValue::invalid();
    x = SValue::tensor(builder_.index(base.value, std::move(specs), std::move(operands), loc), loc);
  }
  return gather_rows(x, idx, head.index->loc, loc);
}

SValue Analyzer::index_expr(const ast::Index& e, Scope& scope) {
  if (const TapRead* tr = tap_read_of(e)) {
    ScanFrame& f = *tr->frame;
    SValue row;
    if (tr->kind == TapRead::Kind::Sequence) {
      const ScanFrame::Sequence& seq = f.sequences[size_t(tr->slot)];
      if (!seq.value.ok()) return SValue::invalid();
      size_t i = size_t(std::distance(seq.taps.begin(), seq.taps.find(tr->k)));
      row = SValue::tensor(seq.tap_params.at(i), e.loc);
    } else {
      row = output_read(f, tr->slot, tr->k, e, e.loc);
    }
    if (!row.ok()) return row;
    return apply_index(row, e.items, 1, scope, e.loc);
  }
  if (misread_output(e, scope)) return SValue::invalid();
  SValue base = expr(*e.base, scope);
  return apply_index(base, e.items, 0, scope, e.loc);
}

// An output of a scan indexed other than at a step is a mistake worth its own message.
bool Analyzer::misread_output(const ast::Index& e, Scope& scope) {
  if (e.base->kind != ast::ExprKind::Name) return false;
  Binding* b = scope.find(ast::as<ast::Name>(*e.base).name);
  if (!b || b->kind != Binding::Kind::Output) return false;
  const std::string& index = b->frame->index_name;
  auto at_step = [&](size_t i) { return e.items[i].index && mentions(*e.items[i].index, index); };
  // `t`, `t + k` or `t - k` with a literal k.
  auto step_form = [&](size_t i) {
    const ast::Expr* x = e.items[i].index.get();
    if (x && x->kind == ast::ExprKind::Binary) {
      const auto& sum = ast::as<ast::Binary>(*x);
      if ((sum.op == ast::BinaryOp::Add || sum.op == ast::BinaryOp::Sub) && sum.rhs->kind == ast::ExprKind::IntLit)
        x = sum.lhs.get();
    }
    return x && x->kind == ast::ExprKind::Name && ast::as<ast::Name>(*x).name == index;
  };
  DiagId id = DiagId::err_state_bad_index;
  if (!e.items.empty() && at_step(0)) id = DiagId::err_tap_not_literal;
  // `h[j, t - 1]`: the step is there, but only the first index is the step.
  for (size_t i = 1; i < e.items.size(); ++i)
    if (step_form(i) || (id == DiagId::err_state_bad_index && at_step(i))) id = DiagId::err_step_not_first;
  diags_.report(id, e.loc, ast::as<ast::Name>(*e.base).name, index);
  return true;
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
      if (auto l = literal_of(x)) {
        if (!l->is_float) {
          if (l->i == INT64_MIN) {
            diags_.report(DiagId::err_constant_expression, e.loc, "integer overflow");
            return SValue::invalid();
          }
          return int_literal(-l->i, e.loc);
        }
        return float_literal(-l->f, e.loc);
      }
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
          SValue x = concrete(*this, single(lhs, b.lhs->loc), b.op_loc);
          SValue y = concrete(*this, single(rhs, b.rhs->loc), b.op_loc);
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

// ---- calls

SValue Analyzer::call(const ast::Call& c, Scope& scope) {
  if (c.cast_to) {
    if (c.args.size() != 1 || !c.kwargs.empty()) {
      diags_.report(DiagId::err_cast_arg, c.loc);
      return SValue::invalid();
    }
    SValue x = single(expr(*c.args[0], scope), c.args[0]->loc);
    if (!x.ok()) return x;
    DType to = *c.cast_to;
    if (x.weak && to != DType::Bool) {
      // f32(2) is the literal 2 as f32; a float literal (or a float computed from literals,
      // `i64(exp(1))`) cast to an integer truncates: it is a float first.
      if (is_float(x.dtype()) && is_int(to)) {
        SValue f = materialize(x, literal_of(x) ? DType::F64 : weak_default(x), c.loc);
        return SValue::tensor(builder_.cast(f.value, to, c.loc), c.loc);
      }
      SValue m = materialize(x, to, c.loc);
      return SValue::tensor(m.value, c.loc);
    }
    x = concrete(*this, x, c.loc);
    SValue out = x.dtype() == to ? SValue::tensor(x.value, c.loc)
                                 : SValue::tensor(builder_.cast(x.value, to, c.loc), c.loc);
    if (is_int(to) && is_int(x.dtype())) out.as_dim = x.as_dim;
    return out;
  }
  bool handled = false;
  SValue r = builtin(c, scope, &handled);
  if (handled) return r;
  auto fn = functions.find(c.callee);
  if (fn == functions.end()) {
    auto imported = imported_functions.find(c.callee);
    if (imported != imported_functions.end())
      return imported_call(c, scope, imported->second.first, imported->second.second);
    const ir::Import* header = nullptr;
    if (const ir::UnusableFunction* unusable = find_unusable(c.callee, &header))
      return unusable_call(c, scope, *header, *unusable);
    diags_.report(DiagId::err_unknown_function, c.callee_loc, c.callee);
    for (const auto& a : c.args) expr(*a, scope);  // still report errors inside the arguments
    return SValue::invalid();
  }
  return call_function(*fn->second, c, scope);
}

SValue Analyzer::call_function(const ast::FnDecl& fn, const ast::Call& c, Scope& scope) {
  for (size_t i = 0; i < call_stack.size(); ++i)
    if (call_stack[i] == &fn) {
      // Each function of the cycle would report it when analyzed on its own: once is enough.
      if (!reported_cycles.insert({call_stack.begin() + long(i), call_stack.end()}).second)
        return SValue::invalid();
      auto& d = diags_.report(DiagId::err_recursion, c.callee_loc, fn.name);
      for (size_t j = call_locs.size(); j-- > i + 1;)
        diags_.note(d, DiagId::note_call_chain, call_locs[j]);
      return SValue::invalid();
    }
  if (!c.kwargs.empty()) {
    diags_.report(DiagId::err_unknown_keyword, c.kwargs[0].loc, fn.name, c.kwargs[0].name);
    return SValue::invalid();
  }
  std::vector<SValue> args;
  bool ok = true;
  for (const auto& a : c.args) {
    args.push_back(single(expr(*a, scope), a->loc));
    ok = ok && args.back().ok();
  }
  if (args.size() != fn.params.size()) {
    diags_.report(DiagId::err_wrong_arg_count, c.callee_loc, fn.name, fn.params.size(),
                  plural(fn.params.size()), args.size());
    return SValue::invalid();
  }
  if (!ok) return SValue::invalid();

  FunctionEnv callee;
  callee.decl = &fn;
  auto arg_error = [&](DiagId id, size_t i, auto&&... more) {
    auto& d = diags_.report(id, c.args[i]->loc, fn.params[i].name, fn.name, more...);
    diags_.note(d, DiagId::note_declared_here, fn.params[i].type.loc);
    ok = false;
  };
  // dtypes and ranks; scalar integer parameters bind their symbol first.
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::TypeDecl& td = fn.params[i].type;
    SValue& a = args[i];
    if (a.weak) {
      if (td.dtype == DType::Bool || (is_float(a.dtype()) && is_int(td.dtype))) {
        arg_error(DiagId::err_call_arg_dtype, i, dtype_name(td.dtype), type_words(a));
        continue;
      }
      a = materialize(a, td.dtype, c.args[i]->loc);
    }
    if (a.dtype() != td.dtype) {
      arg_error(DiagId::err_call_arg_dtype, i, dtype_name(td.dtype), a.type().str());
      continue;
    }
    if (a.type().rank() != int(td.dims.size())) {
      arg_error(DiagId::err_call_arg_rank, i, td.dims.size(), a.type().rank());
      continue;
    }
    if (td.dims.empty() && is_int(td.dtype)) {
      Value v = materialize(a, DType::I64, c.args[i]->loc).value;
      Dim d = a.as_dim ? *a.as_dim : Dim::fresh_unknown();
      callee.symbols.emplace(fn.params[i].name,
                             FunctionEnv::Symbol{d, v, fn.params[i].loc, "parameter '" + fn.params[i].name + "'"});
    }
  }
  if (!ok) return SValue::invalid();
  // Shapes: bind each symbol at its first occurrence, check the others.
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::TypeDecl& td = fn.params[i].type;
    SValue& a = args[i];
    std::vector<ir::DimCheck> checks(td.dims.size());
    std::vector<Value> operands;
    std::vector<Dim> static_shape = a.type().shape;
    bool need_check = false;
    for (size_t axis = 0; axis < td.dims.size(); ++axis) {
      const ast::DimDecl& dd = td.dims[axis];
      const Dim& have = a.type().shape[axis];
      if (dd.kind == ast::DimDecl::Unknown) continue;
      if (dd.kind == ast::DimDecl::Constant) {
        if (have.is_const(dd.value)) continue;
        if (have.is_const()) {
          arg_error(DiagId::err_call_dim_mismatch, i, axis, have.str(), dd.value);
          continue;
        }
        checks[axis] = {ir::DimCheck::Kind::Const, dd.value, ""};
        static_shape[axis] = Dim::constant(dd.value);
        need_check = true;
        continue;
      }
      auto sym = callee.symbols.find(dd.symbol);
      if (sym == callee.symbols.end()) {
        callee.symbols.emplace(dd.symbol,
                               FunctionEnv::Symbol{have, dim_value(a.value, int(axis), dd.loc), dd.loc,
                                                   "dimension " + std::to_string(axis) + " of '" + fn.params[i].name + "'"});
        continue;
      }
      if (have.same_as(sym->second.dim)) continue;
      if (have.provably_different(sym->second.dim)) {
        arg_error(DiagId::err_call_dim_mismatch, i, axis, have.str(), sym->second.dim.str());
        continue;
      }
      operands.push_back(sym->second.runtime);
      checks[axis] = {ir::DimCheck::Kind::Operand, int64_t(operands.size()), dd.symbol};
      static_shape[axis] = sym->second.dim;
      need_check = true;
    }
    if (need_check && ok) {
      a = SValue::tensor(builder_.check_shape(a.value, std::move(checks), std::move(operands),
                                              "argument '" + fn.params[i].name + "' of '" + fn.name + "'",
                                              std::move(static_shape), c.args[i]->loc),
                         a.loc);
    }
  }
  if (!ok) return SValue::invalid();
  for (size_t i = 0; i < args.size(); ++i) {
    Binding b;
    b.kind = Binding::Kind::Value;
    b.value = args[i];
    if (auto s = callee.symbols.find(fn.params[i].name);
        s != callee.symbols.end() && args[i].type().is_scalar() && is_int(args[i].dtype()))
      b.value.as_dim = s->second.dim;
    b.loc = fn.params[i].loc;
    b.id = new_binding_id();
    callee.scope.names[fn.params[i].name] = b;
  }
  for (const ast::ResultDecl& r : fn.results)
    for (const ast::DimDecl& d : r.type.dims)
      if (d.kind == ast::DimDecl::Symbol && !callee.symbols.count(d.symbol)) return SValue::invalid();

  call_stack.push_back(&fn);
  call_locs.push_back(c.callee_loc);
  FunctionEnv* saved = env;
  env = &callee;
  std::vector<SValue> results = function_body(fn, callee);
  std::vector<SValue> conformed;
  for (size_t i = 0; i < results.size(); ++i) {
    std::string what = fn.results.size() == 1 ? "the result of '" + fn.name + "'"
                                              : "result " + std::to_string(i) + " of '" + fn.name + "'";
    conformed.push_back(conform(results[i], fn.results[i].type, callee, what, results[i].loc, true));
  }
  env = saved;
  call_stack.pop_back();
  call_locs.pop_back();
  if (conformed.size() != fn.results.size()) return SValue::invalid();
  for (const SValue& r : conformed)
    if (!r.ok()) return SValue::invalid();
  if (!fn.tuple_result) {
    SValue r = conformed[0];
    r.loc = c.loc;
    return r;
  }
  SValue multi;
  multi.kind = SValue::Kind::Multi;
  multi.callee = fn.name;
  multi.elements = conformed;
  multi.loc = c.loc;
  for (size_t i = 0; i < fn.results.size(); ++i) multi.names.push_back(fn.results[i].name);
  return multi;
}

}  // namespace scangen::sema
