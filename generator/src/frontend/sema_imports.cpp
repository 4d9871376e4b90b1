// Semantic analysis, imported C++ functions: their names (conflicts with builtins, the file's
// functions and other headers) and their calls, whose arguments convert to the parameters' dtypes
// the way full_like converts its value: a weak literal takes the parameter's dtype, a strong value
// converts when the conversion is no downcast (the parameter is what the two dtypes promote to),
// and bool only to bool.
#include "frontend/builtins.h"

namespace scangen::sema {

namespace {

// The dtype two strong dtypes promote to (the language's rules for two values).
DType promoted(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

}  // namespace

void Analyzer::register_imports() {
  std::map<std::string, std::pair<const ir::Import*, Loc>> offered;
  for (size_t i = 0; i < imports_.size(); ++i) {
    const ir::ImportRef& import = imports_[i];
    for (size_t j = 0; j < import->functions.size(); ++j) {
      const ir::ImportedFunction& f = import->functions[j];
      std::string header = import->spelling;
      auto declared_here = [&](Diagnostic& d) { diags_.note(d, DiagId::note_import_function_here, f.loc, f.name); };
      if (find_builtin(f.name)) {
        declared_here(diags_.report(DiagId::err_import_name_builtin, import->loc, f.name, header));
      } else if (auto fn = functions.find(f.name); fn != functions.end()) {
        auto& d = diags_.report(DiagId::err_import_name_fn, import->loc, f.name, header);
        declared_here(d);
        diags_.note(d, DiagId::note_defined_here, fn->second->name_loc, f.name);
      } else if (auto other = offered.find(f.name); other != offered.end()) {
        auto& d = diags_.report(DiagId::err_import_name_twice, import->loc, f.name, other->second.first->spelling, header);
        diags_.note(d, DiagId::note_import_function_here, other->second.second, f.name);
        declared_here(d);
      } else {
        offered.emplace(f.name, std::make_pair(import.get(), f.loc));
        imported_functions.emplace(f.name, std::make_pair(import, static_cast<int>(j)));
      }
    }
  }
  // An unusable function of one header with the name of another's function: both are in namespace
  // scangen_export, where C++ would take them for overloads of each other.
  for (const ir::ImportRef& import : imports_)
    for (const ir::UnusableFunction& f : import->unusable) {
      auto other = offered.find(f.name);
      if (other == offered.end() || other->second.first == import.get()) continue;
      auto& d = diags_.report(DiagId::err_import_name_unusable_twice, import->loc, f.name,
                              other->second.first->spelling, import->spelling);
      diags_.note(d, DiagId::note_import_function_here, other->second.second, f.name);
      note_unusable(d, f);
    }
}

const ir::UnusableFunction* Analyzer::find_unusable(const std::string& name, const ir::Import** import) const {
  for (const ir::ImportRef& header : imports_)
    for (const ir::UnusableFunction& f : header->unusable)
      if (f.name == name) {
        if (import) *import = header.get();
        return &f;
      }
  return nullptr;
}

void Analyzer::note_unusable(Diagnostic& d, const ir::UnusableFunction& f) {
  for (const auto& [loc, reason] : f.reasons) diags_.note(d, DiagId::note_import_unusable_reason, loc, reason);
}

SValue Analyzer::unusable_call(const ast::Call& c, Scope& scope, const ir::Import& import, const ir::UnusableFunction& f) {
  for (const auto& a : c.args) expr(*a, scope);  // still report errors inside the arguments
  note_unusable(diags_.report(DiagId::err_import_unusable, c.callee_loc, f.name, import.spelling), f);
  return SValue::invalid();
}

SValue Analyzer::imported_call(const ast::Call& c, Scope& scope, const ir::ImportRef& import, int function) {
  const ir::ImportedFunction& f = import->functions[size_t(function)];
  std::vector<SValue> args;
  bool ok = true;
  for (const auto& a : c.args) {
    args.push_back(single(expr(*a, scope), a->loc));
    ok = ok && args.back().ok();
  }
  if (!c.kwargs.empty()) {
    diags_.report(DiagId::err_unknown_keyword, c.kwargs[0].loc, f.name, c.kwargs[0].name);
    return SValue::invalid();
  }
  if (c.args.size() != f.params.size()) {
    diags_.report(DiagId::err_wrong_arg_count, c.loc, f.name, f.params.size(), plural(f.params.size()), c.args.size());
    return SValue::invalid();
  }
  if (!ok) return SValue::invalid();
  std::vector<ir::Value> converted;
  std::vector<ir::Dim> shape;
  for (size_t i = 0; i < args.size(); ++i) {
    const SValue& v = args[i];
    DType want = f.params[i];
    Loc at = c.args[i]->loc;
    std::string what = fmt::format("argument {} of '{}'", i + 1, f.name);
    bool number_for_bool = (v.dtype() == DType::Bool) != (want == DType::Bool);
    bool float_literal_for_int = v.weak && is_float(v.dtype()) && is_int(want);
    bool downcast = !v.weak && promoted(v.dtype(), want) != want;
    if (number_for_bool || float_literal_for_int || downcast) {
      diags_.report(DiagId::err_downcast, at, what, type_words(v), dtype_name(want));
      return SValue::invalid();
    }
    ir::Value x = v.weak ? materialize(v, want, at).value
                         : v.dtype() == want ? v.value : builder_.cast(v.value, want, at);
    if (!x) return SValue::invalid();
    auto b = ir::broadcast_shapes(shape, x.type().shape);
    if (!b) {
      diags_.report(DiagId::err_shapes_not_broadcastable, c.loc, ir::shape_str(shape), ir::shape_str(x.type().shape));
      return SValue::invalid();
    }
    shape = *b;
    converted.push_back(x);
  }
  return SValue::tensor(builder_.call(import, function, std::move(converted), c.loc), c.loc);
}

}  // namespace scangen::sema
