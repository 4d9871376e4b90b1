// Semantic analysis: calls of the file's functions (inlined) and casts; builtins go through their
// table (builtins.def), imported C++ functions through sema_imports.cpp.
#include "frontend/builtins.h"
#include "frontend/sema_internal.h"
#include "frontend/spelling.h"

namespace scangen::sema {

using ir::Dim;
using ir::Value;

SValue Analyzer::call(const ast::Call& c, Scope& scope) {
  if (c.cast_to) return cast_call(c, scope);
  if (const Builtin* b = find_builtin(c.callee)) return builtin_call(*b, c, scope);
  if (auto fn = functions.find(c.callee); fn != functions.end()) return call_function(*fn->second, c, scope);
  if (auto imported = imported_functions.find(c.callee); imported != imported_functions.end())
    return imported_call(c, scope, imported->second.first, imported->second.second);
  const ir::Import* header = nullptr;
  if (const ir::UnusableFunction* unusable = find_unusable(c.callee, &header))
    return unusable_call(c, scope, *header, *unusable);
  return unknown_function(c, scope);
}

SValue Analyzer::cast_call(const ast::Call& c, Scope& scope) {
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
      SValue f = materialize(x, weak_constant(x) ? DType::F64 : weak_default(x), c.loc);
      return SValue::tensor(builder_.cast(f.value, to, c.loc), c.loc);
    }
    SValue m = materialize(x, to, c.loc);
    return SValue::tensor(m.value, c.loc);
  }
  x = concrete(x, c.loc);
  SValue out = x.dtype() == to ? SValue::tensor(x.value, c.loc)
                               : SValue::tensor(builder_.cast(x.value, to, c.loc), c.loc);
  if (is_int(to) && is_int(x.dtype())) out.as_dim = x.as_dim;
  return out;
}

// Whether calling fn here closes a cycle of calls (reported once per cycle).
bool Analyzer::recursive_call(const ast::FnDecl& fn, const ast::Call& c) {
  for (size_t i = 0; i < call_stack.size(); ++i)
    if (call_stack[i] == &fn) {
      // Each function of the cycle would report it when analyzed on its own: once is enough.
      if (!reported_cycles.insert({call_stack.begin() + long(i), call_stack.end()}).second) return true;
      auto& d = diags_.report(DiagId::err_recursion, c.callee_loc, fn.name);
      for (size_t j = call_locs.size(); j-- > i + 1;)
        diags_.note(d, DiagId::note_call_chain, call_locs[j]);
      return true;
    }
  return false;
}

// Checks the arguments of a call of fn against its parameters: dtypes and ranks, then shapes
// (statically where known, else by CheckShape nodes), binding the callee's dimension symbols in
// `callee`. False when an error was reported.
bool Analyzer::bind_arguments(const ast::FnDecl& fn, const ast::Call& c, std::vector<SValue>& args,
                              FunctionEnv& callee) {
  bool ok = true;
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
  if (!ok) return false;
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
  if (!ok) return false;
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
  return true;
}

SValue Analyzer::call_function(const ast::FnDecl& fn, const ast::Call& c, Scope& scope) {
  if (recursive_call(fn, c)) return SValue::invalid();
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
  if (!bind_arguments(fn, c, args, callee)) return SValue::invalid();
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
    conformed.push_back(conform(results[i], fn.results[i].type, callee, result_words(fn, i), results[i].loc, true));
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
