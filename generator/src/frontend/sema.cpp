// Semantic analysis: the module, functions, statements and declared types.
#include "frontend/sema.h"

#include "autodiff/gradients.h"
#include "frontend/builtins.h"
#include "ir/prune.h"
#include "support/check.h"
#include "support/limits.h"

namespace scangen {

namespace sema {

std::string plural(size_t n) { return n == 1 ? "" : "s"; }

std::string result_words(const ast::FnDecl& fn, size_t i) {
  if (fn.results.size() == 1) return "the result of '" + fn.name + "'";
  return "result " + std::to_string(i) + " of '" + fn.name + "'";
}

Analyzer::Analyzer(const ast::Module& module, const SourceManager& sources, DiagnosticEngine& diags,
                   std::vector<ir::ImportRef> imports)
    : module_(module),
      sources_(sources),
      imports_(std::move(imports)),
      diags_(diags),
      builder_([this](const ir::Node& n) { region_of_[&n] = region_; }) {
  region_parent_.push_back(-1);  // region 0: unused root
}

int Analyzer::new_region(int parent) {
  region_parent_.push_back(parent);
  return static_cast<int>(region_parent_.size()) - 1;
}

bool Analyzer::region_is_ancestor(int ancestor, int region) const {
  for (int r = region_parent_.at(size_t(region)); r >= 0; r = region_parent_.at(size_t(r)))
    if (r == ancestor) return true;
  return false;
}

int Analyzer::region_of(const ir::Node* n) const {
  auto it = region_of_.find(n);
  SCANGEN_CHECK(it != region_of_.end(), "IR node created outside the analyzer");
  return it->second;
}

std::optional<ir::Program> Analyzer::run() {
  ir::Program program;
  program.source_path = sources_.file(module_.file_id).name();
  for (const auto& fn : module_.functions) {
    auto [it, inserted] = functions.emplace(fn->name, fn.get());
    if (!inserted) {
      auto& d = diags_.report(DiagId::err_duplicate_function, fn->name_loc, fn->name);
      diags_.note(d, DiagId::note_previous_definition, it->second->name_loc, fn->name);
    } else if (find_builtin(fn->name)) {
      diags_.report(DiagId::err_builtin_redefined, fn->name_loc, fn->name);
    }
  }
  register_imports();
  program.imports = imports_;
  if (module_.functions.empty() && !diags_.has_errors()) {
    diags_.report(DiagId::err_no_function, Loc{module_.file_id, 1, 1, 1});
  }
  for (const auto& fn : module_.functions) {
    if (functions.at(fn->name) != fn.get()) continue;
    int errors_before = diags_.error_count();
    ir::Function f = analyze_entry(*fn);
    if (diags_.error_count() == errors_before) program.functions.push_back(std::move(f));
  }
  if (diags_.has_errors()) return std::nullopt;
  return program;
}

ir::Type Analyzer::declared_type(const ast::TypeDecl& t, FunctionEnv* env_for_symbols) {
  ir::Type type(t.dtype);
  for (const ast::DimDecl& d : t.dims) {
    switch (d.kind) {
      case ast::DimDecl::Constant: type.shape.push_back(ir::Dim::constant(d.value)); break;
      case ast::DimDecl::Unknown: type.shape.push_back(ir::Dim::fresh_unknown()); break;
      case ast::DimDecl::Symbol: {
        if (env_for_symbols) {
          auto it = env_for_symbols->symbols.find(d.symbol);
          if (it != env_for_symbols->symbols.end()) {
            type.shape.push_back(it->second.dim);
            break;
          }
        }
        type.shape.push_back(ir::Dim::symbol(d.symbol));
        break;
      }
    }
  }
  return type;
}

ir::Function Analyzer::analyze_entry(const ast::FnDecl& fn) {
  int root = new_region(-1);
  RegionGuard region(*this, root);
  FunctionEnv fenv;
  fenv.decl = &fn;
  FunctionEnv* saved_env = env;
  env = &fenv;

  ir::Function out;
  out.name = fn.name;
  out.loc = fn.name_loc;
  out.tuple_result = fn.tuple_result;

  // Parameters: each binds its name, the dimension symbols of its type, and (a scalar integer)
  // the symbol of its own name.
  std::vector<SValue> params;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ast::ParamDecl& p = fn.params[i];
    ir::Type type = declared_type(p.type, nullptr);
    ir::Value v = builder_.param(type, static_cast<int>(i), p.name, p.loc);
    out.args.push_back({p.name, type, p.loc});
    out.graph.params.push_back(v);
    SValue sv = SValue::tensor(v, p.loc);
    if (type.is_scalar() && is_int(type.dtype)) sv.as_dim = ir::Dim::symbol(p.name);
    params.push_back(sv);
    if (Binding* prev = fenv.scope.find_local(p.name)) {
      auto& d = diags_.report(DiagId::err_duplicate_param, p.loc, p.name);
      diags_.note(d, DiagId::note_previous_definition, prev->loc, p.name);
      continue;
    }
    Binding b;
    b.kind = Binding::Kind::Value;
    b.value = sv;
    b.loc = p.loc;
    b.id = new_binding_id();
    fenv.scope.names[p.name] = b;
  }
  // Symbols bound by scalar integer parameters come first: their value is the symbol's value.
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Type& t = out.args[i].type;
    if (!t.is_scalar() || !is_int(t.dtype)) continue;
    ir::Value v = params[i].value;
    if (t.dtype != DType::I64) v = builder_.cast(v, DType::I64, fn.params[i].loc);
    fenv.symbols.emplace(fn.params[i].name,
                         FunctionEnv::Symbol{ir::Dim::symbol(fn.params[i].name), v, fn.params[i].loc,
                                             "parameter '" + fn.params[i].name + "'"});
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ast::TypeDecl& td = fn.params[i].type;
    for (size_t axis = 0; axis < td.dims.size(); ++axis) {
      const ast::DimDecl& d = td.dims[axis];
      if (d.kind != ast::DimDecl::Symbol || fenv.symbols.count(d.symbol)) continue;
      ir::Value size = builder_.dim_size(params[i].value, static_cast<int>(axis), d.loc);
      fenv.symbols.emplace(d.symbol, FunctionEnv::Symbol{ir::Dim::symbol(d.symbol), size, d.loc,
                                                         "dimension " + std::to_string(axis) + " of '" +
                                                             fn.params[i].name + "'"});
    }
  }
  for (const ast::ResultDecl& r : fn.results) {
    for (const ast::DimDecl& d : r.type.dims)
      if (d.kind == ast::DimDecl::Symbol && !fenv.symbols.count(d.symbol))
        diags_.report(DiagId::err_unbound_dim_symbol, d.loc, d.symbol);
    out.results.push_back({r.name, declared_type(r.type, nullptr), r.loc});
  }
  for (size_t i = 0; i < fn.results.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!fn.results[i].name.empty() && fn.results[i].name == fn.results[j].name)
        diags_.report(DiagId::err_duplicate_result_name, fn.results[i].loc, fn.results[i].name);

  call_stack.push_back(&fn);
  call_locs.push_back(fn.name_loc);
  std::vector<SValue> results = function_body(fn, fenv);
  call_stack.pop_back();
  call_locs.pop_back();
  for (size_t i = 0; i < results.size() && i < fn.results.size(); ++i) {
    // The caller of an entry function checks results at run time, so no CheckShape here.
    SValue r = conform(results[i], fn.results[i].type, fenv, result_words(fn, i), results[i].loc,
                       /*runtime_check=*/false);
    if (r.ok()) out.graph.results.push_back(r.value);
  }
  env = saved_env;
  autodiff::strip_stop_gradients(out);
  if (out.graph.results.size() == fn.results.size()) out.graph = ir::prune_dead_scan_outputs(out.graph);
  return out;
}

SValue Analyzer::scan_output_by_name(const SValue& outputs, const ast::NameDecl& n, bool only_output_fits) {
  for (size_t i = 0; i < outputs.names.size(); ++i)
    if (outputs.names[i] == n.name) return outputs.elements[i];
  if (only_output_fits && outputs.elements.size() == 1) return outputs.elements[0];
  auto& d = diags_.report(DiagId::err_scan_output_name, n.loc, n.name);
  std::string list;
  for (const auto& name : outputs.names) list += (list.empty() ? "" : ", ") + name;
  diags_.note(d, DiagId::note_scan_outputs, outputs.loc, list);
  return SValue::invalid();
}

std::vector<SValue> Analyzer::let_values(const ast::Let& let, const SValue& v) {
  std::vector<SValue> bound;
  if (!let.tuple) {
    if (v.kind == SValue::Kind::Multi && v.from_scan) {
      // let r = scan {...}: the output named r, or the only output.
      bound.push_back(scan_output_by_name(v, let.names[0], /*only_output_fits=*/true));
    } else {
      bound.push_back(single(v, let.value->loc));
    }
  } else if (v.kind == SValue::Kind::Multi && v.from_scan) {
    for (const ast::NameDecl& n : let.names) bound.push_back(scan_output_by_name(v, n, /*only_output_fits=*/false));
  } else if (v.kind == SValue::Kind::Multi) {
    if (v.elements.size() != let.names.size())
      diags_.report(DiagId::err_tuple_let_count, let.loc, let.names.size(), v.elements.size(), plural(v.elements.size()));
    for (size_t i = 0; i < let.names.size(); ++i)
      bound.push_back(v.elements.size() == let.names.size() ? v.elements[i] : SValue::invalid());
  } else {
    if (v.ok()) diags_.report(DiagId::err_tuple_let_count, let.loc, let.names.size(), 1, "");
    bound.assign(let.names.size(), SValue::invalid());
  }
  return bound;
}

std::vector<SValue> Analyzer::function_body(const ast::FnDecl& fn, FunctionEnv& fenv) {
  for (const auto& s : fn.body)
    if (s->kind == ast::StmtKind::Let)
      for (const ast::NameDecl& n : ast::as<ast::Let>(*s).names) fenv.later_lets.emplace(n.name, n.loc);

  std::vector<SValue> results;
  bool returned = false;
  for (const auto& s : fn.body) {
    if (returned) {
      diags_.report(DiagId::err_statement_after_return, s->loc);
      break;
    }
    switch (s->kind) {
      case ast::StmtKind::Let: {
        const auto& let = ast::as<ast::Let>(*s);
        std::vector<SValue> bound = let_values(let, expr(*let.value, fenv.scope));
        for (size_t i = 0; i < let.names.size(); ++i) {
          const ast::NameDecl& n = let.names[i];
          fenv.later_lets.erase(n.name);
          if (Binding* prev = fenv.scope.find_local(n.name)) {
            auto& d = diags_.report(DiagId::err_redefinition, n.loc, n.name);
            diags_.note(d, DiagId::note_previous_definition, prev->loc, n.name);
            continue;
          }
          Binding b;
          b.kind = Binding::Kind::Value;
          b.value = bound[i];
          b.loc = n.loc;
          b.id = new_binding_id();
          fenv.scope.names[n.name] = b;
        }
        break;
      }
      case ast::StmtKind::Return: {
        const auto& ret = ast::as<ast::Return>(*s);
        returned = true;
        for (const auto& e : ret.values) {
          results.push_back(single(expr(*e, fenv.scope), e->loc));
          results.back().loc = e->loc;  // the whole returned expression, for messages about it
        }
        if (results.size() != fn.results.size())
          diags_.report(DiagId::err_return_count, ret.loc, fn.name, results.size(), plural(results.size()),
                        fn.results.size());
        break;
      }
      case ast::StmtKind::Init:
      case ast::StmtKind::StepDef:
      case ast::StmtKind::Until: break;  // outside a scan: reported by the parser
    }
  }
  if (!returned) {
    diags_.report(DiagId::err_missing_return, fn.close_loc, fn.name);
    return {};
  }
  if (results.size() != fn.results.size()) return {};
  return results;
}

SValue Analyzer::conform(SValue v, const ast::TypeDecl& decl, FunctionEnv& fenv, const std::string& what,
                         Loc loc, bool runtime_check) {
  if (!v.ok()) return v;
  if (!v.is_tensor()) {
    diags_.report(DiagId::err_tuple_value, loc);
    return SValue::invalid();
  }
  ir::Type want = declared_type(decl, &fenv);
  if (v.weak) {
    // A literal takes the declared dtype, but a number is no bool and a float no integer.
    if (want.dtype == DType::Bool || (is_float(v.dtype()) && is_int(want.dtype))) {
      auto& d =
          diags_.report(DiagId::err_downcast, loc, what, type_words(v), dtype_name(want.dtype));
      diags_.note(d, DiagId::note_declared_here, decl.loc);
      return SValue::invalid();
    }
    SValue m = materialize(v, want.dtype, loc);
    if (!m.ok()) return m;
    v = m;
  }
  auto mismatch = [&] {
    auto& d = diags_.report(DiagId::err_type_mismatch_declared, loc, what, v.type().str(), want.str());
    diags_.note(d, DiagId::note_declared_here, decl.loc);
    return SValue::invalid();
  };
  if (v.dtype() != want.dtype || v.type().rank() != want.rank()) return mismatch();
  std::vector<ir::DimCheck> checks(size_t(want.rank()));
  std::vector<ir::Value> operands;
  std::vector<ir::Dim> static_shape = v.type().shape;
  bool need_check = false;
  for (size_t axis = 0; axis < size_t(want.rank()); ++axis) {
    const ir::Dim& have = v.type().shape[axis];
    const ast::DimDecl& dd = decl.dims[axis];
    const ir::Dim& need = want.shape[axis];
    if (dd.kind == ast::DimDecl::Unknown) continue;
    if (have.same_as(need)) continue;
    if (have.provably_different(need)) return mismatch();
    if (!runtime_check) continue;
    need_check = true;
    ir::DimCheck& c = checks[axis];
    if (dd.kind == ast::DimDecl::Constant) {
      c.kind = ir::DimCheck::Kind::Const;
      c.value = dd.value;
    } else {
      auto it = fenv.symbols.find(dd.symbol);
      if (it == fenv.symbols.end()) continue;  // unbound: reported with the declaration
      operands.push_back(it->second.runtime);
      c.kind = ir::DimCheck::Kind::Operand;
      c.value = static_cast<int64_t>(operands.size());
      c.symbol = dd.symbol;
    }
    static_shape[axis] = need;
  }
  if (!need_check) return v;
  SValue out = SValue::tensor(builder_.check_shape(v.value, std::move(checks), std::move(operands), what,
                                                   std::move(static_shape), loc),
                              v.loc);
  out.as_dim = v.as_dim;
  return out;
}

}  // namespace sema

std::optional<ir::Program> analyze(const ast::Module& module, const SourceManager& sources,
                                   DiagnosticEngine& diags, const std::vector<ir::ImportRef>& imports) {
  sema::Analyzer analyzer(module, sources, diags, imports);
  return analyzer.run();
}

}  // namespace scangen
