// Semantic analysis of a scan, step 1 (sema_scan.cpp): its options and its statements.
#include "frontend/sema_internal.h"
#include "frontend/spelling.h"

namespace scangen::sema {

// Collects the statements of a body; false when nothing can be analyzed.
bool collect_statements(Analyzer& a, ScanFrame& f) {
  SemaDiagnostics& diags = a.diags();
  const int errors_before = diags.error_count();
  std::map<std::string, const ast::Init*> inits;
  std::map<std::string, Loc> defined;  // every name the body defines, for duplicates
  std::vector<ScanFrame::Output> states, outputs;
  auto define = [&](const std::string& n, Loc loc) {
    if (n == f.index_name) {
      diags.report(DiagId::err_index_name_reserved, loc, n);
      return false;
    }
    auto [it, inserted] = defined.emplace(n, loc);
    if (!inserted) {
      auto& d = diags.report(DiagId::err_redefinition, loc, n);
      diags.note(d, DiagId::note_previous_definition, it->second, n);
      return false;
    }
    return true;
  };
  const auto& body = f.syntax->body;
  for (const auto& s : body)
    if (s->kind == ast::StmtKind::Init) {
      const auto& init = ast::as<ast::Init>(*s);
      auto [it, inserted] = inits.emplace(init.name.name, &init);
      if (!inserted) {
        auto& d = diags.report(DiagId::err_duplicate_init, init.name.loc, init.name.name);
        diags.note(d, DiagId::note_previous_definition, it->second->name.loc, init.name.name);
      }
    }
  std::set<std::string> assigned;
  std::set<std::string> rejected;  // targets of definitions already reported as malformed
  for (size_t i = 0; i < body.size(); ++i) {
    const ast::Stmt& s = *body[i];
    switch (s.kind) {
      case ast::StmtKind::Let: {
        const auto& let = ast::as<ast::Let>(s);
        bool ok = true;
        for (const auto& n : let.names) ok = define(n.name, n.loc) && ok;
        if (!ok) break;
        ScanFrame::LetInfo info;
        info.stmt = &let;
        info.position = int(i);
        f.lets.push_back(info);
        break;
      }
      case ast::StmtKind::StepDef: {
        const auto& def = ast::as<ast::StepDef>(s);
        if (def.step->kind != ast::ExprKind::Name || ast::as<ast::Name>(*def.step).name != f.index_name) {
          diags.report(DiagId::err_step_target, def.step->loc, f.index_name);
          rejected.insert(def.target.name);
          break;
        }
        if (assigned.count(def.target.name)) {
          diags.report(DiagId::err_duplicate_step_def, def.target.loc, def.target.name, f.index_name);
          break;
        }
        assigned.insert(def.target.name);
        if (!define(def.target.name, def.target.loc)) break;
        ScanFrame::Output o;
        o.name = def.target.name;
        o.loc = def.target.loc;
        o.def = &def;
        o.stmt = int(i);
        auto init = inits.find(def.target.name);
        if (init != inits.end()) {
          o.init = init->second;
          states.push_back(std::move(o));
        } else {
          outputs.push_back(std::move(o));
        }
        break;
      }
      case ast::StmtKind::Until: {
        const auto& u = ast::as<ast::Until>(s);
        if (f.until) {
          diags.report(DiagId::err_duplicate_until, u.loc);
          break;
        }
        f.until = &u;
        break;
      }
      case ast::StmtKind::Init:
      case ast::StmtKind::Return: break;  // inits are collected above; return was reported
    }
  }
  for (const auto& [n, init] : inits) {
    if (assigned.count(n)) continue;
    f.lone_inits.push_back(init);
    if (!rejected.count(n)) {
      auto& d = diags.report(DiagId::err_init_without_step, init->name.loc, n, n, f.index_name);
      // `stte[t] = ...` for the state `state`: a per-step output of a name close to it.
      Spelling spelling(n);
      for (const auto& o : outputs) spelling.consider(o.name);
      for (const auto& o : outputs)
        if (spelling.best() == o.name)
          diags.note(d, DiagId::note_step_def_misspelled, o.loc, n, o.name, f.index_name);
    }
  }
  f.num_states = int(states.size());
  for (auto& s : states) f.outputs.push_back(std::move(s));
  for (auto& o : outputs) f.outputs.push_back(std::move(o));
  if (f.outputs.empty()) {
    // A definition that was rejected above is not reported a second time as missing.
    if (diags.error_count() == errors_before)
      diags.report(DiagId::err_scan_no_outputs, f.syntax->loc);
    return false;
  }
  return true;
}

namespace {

// A flag option (`reverse`, `parallel`): on without a value, or `= true` / `= false`; nullopt (after
// reporting) for anything else.
std::optional<bool> flag_option(const ast::ScanOption& opt, SemaDiagnostics& diags) {
  if (!opt.value) return true;
  if (opt.value->kind == ast::ExprKind::BoolLit) return ast::as<ast::BoolLit>(*opt.value).value;
  diags.report(DiagId::err_scan_option_value, opt.value->loc, opt.name, "takes no value, or true or false");
  return std::nullopt;
}

// Each reads one option into the frame; false when it reported an error.
bool steps_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope) {
  // A `steps` whose value is wrong still bounds the scan: no second error says it has no steps.
  f.steps_given = true;
  if (!opt.value) {
    a.diags().report(DiagId::err_scan_option_value, opt.loc, "steps", "needs a value: steps = n");
    return false;
  }
  SValue v = a.single(a.expr(*opt.value, scope), opt.value->loc);
  if (!v.ok()) return false;
  if (!v.type().is_scalar() || !is_int(v.dtype())) {
    a.diags().report(DiagId::err_steps_type, opt.value->loc, v.weak ? "a float literal" : v.type().str());
    return false;
  }
  SValue i64 = a.materialize(v, DType::I64, opt.value->loc);
  i64.as_dim = v.as_dim;
  f.steps = i64;
  return true;
}

bool reverse_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope&) {
  std::optional<bool> on = flag_option(opt, a.diags());
  f.reverse = on.value_or(false);
  return on.has_value();
}

bool parallel_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope&) {
  std::optional<bool> on = flag_option(opt, a.diags());
  f.parallel = on.value_or(false);
  return on.has_value();
}

bool index_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope&) {
  if (!opt.value || opt.value->kind != ast::ExprKind::Name) {
    a.diags().report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "index",
                     "needs a name: index = s");
    return false;
  }
  f.index_name = ast::as<ast::Name>(*opt.value).name;
  f.index_loc = opt.value->loc;
  return true;
}

bool truncate_gradient_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope&) {
  std::optional<int64_t> n = opt.value ? int_literal_value(*opt.value) : std::nullopt;
  if (!n || *n < -1) {
    a.diags().report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "truncate_gradient",
                     "needs an integer literal: -1 (no truncation) or N >= 0");
    return false;
  }
  f.truncate_gradient = *n;
  return true;
}

bool checkpoint_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope&) {
  if (!opt.value || opt.value->kind != ast::ExprKind::IntLit || ast::as<ast::IntLit>(*opt.value).value < 1) {
    a.diags().report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "checkpoint",
                     "needs an integer literal >= 1: checkpoint = N keeps every N-th step for gradients");
    return false;
  }
  f.checkpoint = ast::as<ast::IntLit>(*opt.value).value;
  return true;
}

// The table of scan options: it reads them, names them in the error for an unknown one and
// suggests them for a misspelled one.
struct ScanOptionRule {
  const char* name;
  bool (*read)(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope);
};
const ScanOptionRule kScanOptions[] = {
    {"steps", steps_option},
    {"reverse", reverse_option},
    {"index", index_option},
    {"truncate_gradient", truncate_gradient_option},
    {"checkpoint", checkpoint_option},
    {"parallel", parallel_option},
    {"lengths", lengths_option},
    {"offsets", offsets_option},
};

// "steps, reverse, ... or parallel".
std::string option_names() {
  std::string list;
  size_t n = std::size(kScanOptions);
  for (size_t i = 0; i < n; ++i) list += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kScanOptions[i].name);
  return list;
}

}  // namespace

bool Analyzer::scan_options(ScanFrame& f, Scope& scope) {
  bool ok = true;
  std::set<std::string> seen;
  for (const ast::ScanOption& opt : f.syntax->options) {
    if (!seen.insert(opt.name).second) {
      diags_.report(DiagId::err_duplicate_scan_option, opt.loc, opt.name);
      ok = false;
      continue;
    }
    const ScanOptionRule* rule = nullptr;
    for (const ScanOptionRule& r : kScanOptions)
      if (opt.name == r.name) rule = &r;
    if (rule) {
      ok = rule->read(*this, opt, f, scope) && ok;
      continue;
    }
    auto& d = diags_.report(DiagId::err_unknown_scan_option, opt.loc, opt.name, option_names());
    Spelling spelling(opt.name);
    for (const ScanOptionRule& r : kScanOptions) spelling.consider(r.name);
    if (spelling.best()) diags_.note(d, DiagId::note_did_you_mean, opt.loc, *spelling.best());
    // An unknown option with a value may be a misspelled `steps = n` (`step = n`).
    f.steps_given = f.steps_given || opt.value != nullptr;
    ok = false;
  }
  return ok;
}

// The names a body binds: its loop index, its outputs and its lets.
void Analyzer::bind_body_names(ScanFrame& f, Scope& scope) {
  f.body_scope.parent = &scope;
  auto bind = [&](const std::string& name, Binding::Kind kind, int slot, Loc loc) {
    Binding b;
    b.kind = kind;
    b.frame = &f;
    b.slot = slot;
    b.loc = loc;
    b.id = new_binding_id();
    f.body_scope.names[name] = b;
  };
  bind(f.index_name, Binding::Kind::Index, -1, f.index_loc.valid() ? f.index_loc : f.syntax->loc);
  for (size_t i = 0; i < f.outputs.size(); ++i) bind(f.outputs[i].name, Binding::Kind::Output, int(i), f.outputs[i].loc);
  for (size_t i = 0; i < f.lets.size(); ++i)
    for (const auto& n : f.lets[i].stmt->names) bind(n.name, Binding::Kind::Let, int(i), n.loc);
  // A state without a definition (reported) reads as a value with an error of its own: silently.
  for (const ast::Init* init : f.lone_inits)
    if (!f.body_scope.find_local(init->name.name)) bind(init->name.name, Binding::Kind::Value, -1, init->name.loc);
}

}  // namespace scangen::sema
