// Semantic analysis: indexing, slices and gathers, and reads of a scan's outputs at a step.
#include "frontend/sema_internal.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Value;

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
    case ast::ExprKind::IntLit:
    case ast::ExprKind::FloatLit:
    case ast::ExprKind::BoolLit:
    case ast::ExprKind::DTypeName:
    case ast::ExprKind::Scan: return false;  // a nested scan has names of its own
  }
  return false;
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
  base = concrete(base, loc);
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
  // NumPy's x[:, None]: one error, at None (unknown_name says how to add an axis here), rather
  // than also one about the number of indices.
  for (const ast::IndexItem& item : e.items)
    if (item.index && item.index->kind == ast::ExprKind::Name && ast::as<ast::Name>(*item.index).name == "None" &&
        !scope.find("None"))
      return unknown_name(ast::as<ast::Name>(*item.index), scope);
  if (const TapRead* tr = tap_read_of(e)) {
    ScanFrame& f = *tr->frame;
    SValue row;
    if (tr->kind == TapRead::Kind::Sequence) {
      const ScanFrame::Sequence& seq = f.sequences[size_t(tr->slot)];
      if (!seq.value.ok()) return SValue::invalid();
      size_t i = size_t(std::distance(seq.taps.begin(), seq.taps.find(tr->k)));
      row = SValue::tensor(seq.tap_values.at(i), e.loc);
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

}  // namespace scangen::sema
