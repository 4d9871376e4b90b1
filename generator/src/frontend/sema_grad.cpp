// Semantic analysis: grad(C, w) and grad(C, (w1, w2, ...)). The gradient is expanded into
// IR right here (autodiff/gradients.h), so what follows sees an ordinary value; the variables are
// the values the names are bound to, wherever they were computed (an argument, a let of the
// function, a let of this step or of an enclosing one).
#include <algorithm>

#include "autodiff/gradients.h"
#include "autodiff/rules.h"
#include "frontend/sema_internal.h"

namespace scangen::sema {

SValue Analyzer::grad(const ast::Call& c, Scope& scope) {
  SValue cost = single(expr(*c.args[0], scope), c.args[0]->loc);
  if (cost.ok() && cost.weak && is_float(cost.dtype())) cost = materialize(cost, DType::F32, c.args[0]->loc);
  bool ok = cost.ok();
  if (ok && (cost.weak || !is_float(cost.dtype()) || !cost.type().is_scalar())) {
    diags_.report(DiagId::err_grad_cost_type, c.args[0]->loc, type_words(cost));
    ok = false;
  }

  const ast::Expr& second = *c.args[1];
  std::vector<const ast::Expr*> names;
  if (second.kind == ast::ExprKind::Tuple) {
    for (const auto& e : ast::as<ast::Tuple>(second).elements) names.push_back(e.get());
  } else {
    names.push_back(&second);
  }
  std::vector<ir::Value> wrt;
  for (const ast::Expr* e : names) {
    if (e->kind != ast::ExprKind::Name) {
      diags_.report(DiagId::err_grad_wrt_form, e->loc);
      ok = false;
      continue;
    }
    const std::string& name = ast::as<ast::Name>(*e).name;
    SValue w = expr(*e, scope);
    if (!w.ok()) {
      ok = false;
    } else if (w.kind != SValue::Kind::Tensor) {
      diags_.report(DiagId::err_grad_wrt_form, e->loc);
      ok = false;
    } else if (w.weak) {
      diags_.report(DiagId::err_grad_wrt_literal, e->loc, name, name);
      ok = false;
    } else if (!is_float(w.dtype())) {
      diags_.report(DiagId::err_grad_wrt_type, e->loc, name, w.type().str());
      ok = false;
    } else {
      wrt.push_back(w.value);
    }
  }
  if (!ok) return SValue::invalid();

  std::vector<ir::Value> grads;
  try {
    grads = autodiff::gradients(builder_, cost.value, wrt, c.loc);
  } catch (const autodiff::MissingPartial& missing) {
    const ir::ImportedFunction& f = missing.call->function();
    std::string partial = f.name + "_d" + std::to_string(missing.param);
    // The header may define f_d<i> in a way scangen cannot call (other types): say why.
    const std::vector<ir::UnusableFunction>& unusable = missing.call->import()->unusable;
    auto bad = std::find_if(unusable.begin(), unusable.end(), [&](const auto& u) { return u.name == partial; });
    if (bad != unusable.end()) {
      auto& d = diags_.report(DiagId::err_import_unusable_partial, missing.call->loc(), f.name, missing.param, partial);
      note_unusable(d, *bad);
      return SValue::invalid();
    }
    auto& d = diags_.report(DiagId::err_import_no_partial, missing.call->loc(), f.name, missing.param, partial);
    diags_.note(d, DiagId::note_import_function_here, f.loc, f.name);
    return SValue::invalid();
  }
  if (second.kind != ast::ExprKind::Tuple) return SValue::tensor(grads[0], c.loc);
  SValue out;
  out.kind = SValue::Kind::Multi;
  out.callee = "grad";
  out.loc = c.loc;
  for (const ir::Value& g : grads) out.elements.push_back(SValue::tensor(g, c.loc));
  return out;
}

}  // namespace scangen::sema
