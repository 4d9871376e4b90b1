// Semantic analysis: names, and what is suggested for one that is unknown.
#include "frontend/builtins.h"
#include "frontend/sema_internal.h"
#include "frontend/spelling.h"

namespace scangen::sema {

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
    if (functions.count(n.name) || find_builtin(n.name) || imported_functions.count(n.name) || find_unusable(n.name)) {
      diags_.report(DiagId::err_function_as_value, n.loc, n.name);
      return SValue::invalid();
    }
    return unknown_name(n, scope);
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

// Reported with the closest name in scope, or, for NumPy's None, how to add an axis here.
SValue Analyzer::unknown_name(const ast::Name& n, Scope& scope) {
  auto& d = diags_.report(DiagId::err_unknown_name, n.loc, n.name);
  if (n.name == "None") {
    diags_.note(d, DiagId::note_numpy_none, n.loc);
    return SValue::invalid();
  }
  Spelling spelling(n.name);
  Scope* candidates = spelling_scope ? spelling_scope : &scope;
  for (Scope* s = candidates; s; s = s->parent)
    for (const auto& named : s->names) spelling.consider(named.first);
  if (const auto& best = spelling.best())
    diags_.note(d, DiagId::note_did_you_mean, candidates->find(*best)->loc, *best);
  return SValue::invalid();
}

// Reported with the closest function: a builtin (with what it does), one of the file's or an
// imported one (at its declaration).
SValue Analyzer::unknown_function(const ast::Call& c, Scope& scope) {
  auto& d = diags_.report(DiagId::err_unknown_function, c.callee_loc, c.callee);
  Spelling spelling(c.callee);
  for (const Builtin& b : builtins()) spelling.consider(b.name);
  for (const auto& fn : functions) spelling.consider(fn.first);
  for (const auto& imported : imported_functions) spelling.consider(imported.first);
  if (const auto& best = spelling.best()) {
    if (auto fn = functions.find(*best); fn != functions.end()) {
      diags_.note(d, DiagId::note_did_you_mean, fn->second->name_loc, *best);
    } else if (auto imp = imported_functions.find(*best); imp != imported_functions.end()) {
      const ir::ImportedFunction& f = imp->second.first->functions.at(size_t(imp->second.second));
      diags_.note(d, DiagId::note_did_you_mean, f.loc, *best);
    } else {
      const Builtin& b = *find_builtin(*best);
      diags_.note(d, DiagId::note_did_you_mean_builtin, c.callee_loc, *best, b.signature, b.summary);
    }
  }
  for (const auto& a : c.args) expr(*a, scope);  // still report errors inside the arguments
  return SValue::invalid();
}

}  // namespace scangen::sema
