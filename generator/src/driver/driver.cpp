#include "driver/driver.h"

#include <set>
#include <sstream>

#include "frontend/imports.h"
#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "scangen/runtime/cpu_jit.h"
#include "support/large_stack.h"

namespace scangen {

Driver::Driver() : diags_(sources_) {}

std::optional<ir::Program> Driver::load_file(const std::string& path, const PipelineOptions& options) {
  int id = sources_.load(path);
  dependencies_ = {std::filesystem::path(path)};
  return finish(id, std::filesystem::path(path).parent_path(), options);
}

std::optional<ir::Program> Driver::load_text(const std::string& name, const std::string& text,
                                             const PipelineOptions& options) {
  int id = sources_.add(name, text);
  dependencies_.clear();
  return finish(id, std::filesystem::path(name).parent_path(), options);
}

std::optional<ir::Program> Driver::finish(int file_id, const std::filesystem::path& scan_dir,
                                          const PipelineOptions& options) {
  return with_large_stack([&] { return analyze_file(file_id, scan_dir, options); });
}

std::optional<ir::Program> Driver::analyze_file(int file_id, const std::filesystem::path& scan_dir,
                                                const PipelineOptions& options) {
  last_file_ = file_id;
  ast::Module module = parse_file(sources_, file_id, diags_);
  // After a syntax error the tree has holes; analyzing it would only add follow-up errors.
  if (diags_.has_errors()) return std::nullopt;
  ImportSearch search{scan_dir.empty() ? std::filesystem::path(".") : scan_dir, options.include_dirs,
                      options.cache_dir.empty() ? default_cache_dir() : options.cache_dir};
  std::vector<ir::ImportRef> imports = resolve_imports(module, sources_, diags_, search, dependencies_);
  // A header that cannot be used would only add "unknown function" errors at its calls.
  if (diags_.has_errors()) return std::nullopt;
  std::optional<ir::Program> program = analyze(module, sources_, diags_, imports);
  if (!program) return std::nullopt;
  ir::verify(*program);
  passes::PipelineConfig config;
  config.opt_level = options.opt_level;
  config.only = options.only_passes;
  config.disabled = options.disabled_passes;
  config.verify_each = options.verify_each;
  config.fp_mode = options.fp_mode;
  if (options.after_each_pass)
    config.after_each = [&](const passes::PassInfo& p, const ir::Program& prog) { options.after_each_pass(p.name, prog); };
  passes::PassContext context;
  ir::Program optimized = passes::run_passes(*program, config, context);
  pass_stats_ = context.stats();
  pass_notes_ = context.notes();
  return optimized;
}

std::string Driver::rendered_diagnostics() const {
  std::ostringstream os;
  diags_.print_all(os);
  return os.str();
}

std::string Driver::render_runtime_error(const std::string& message, int line, int column) const {
  Diagnostic d;
  d.id = DiagId::err_at_run_time;
  d.severity = Severity::Error;
  d.message = message;
  if (line > 0 && last_file_ >= 0) d.loc = Loc{last_file_, line, column, 1};
  return diags_.render(d);
}

namespace {
std::string function_list(const ir::Program& p) {
  std::string list;
  for (const auto& f : p.functions) list += (list.empty() ? "" : ", ") + f.name;
  return list;
}
void collect_calls(const ir::Graph& g, std::vector<const ir::CallNode*>& out) {
  for (const ir::Node* n : ir::topological_order(g)) {
    if (const auto* s = n->as<ir::ScanNode>()) collect_calls(s->body(), out);
    if (const auto* c = n->as<ir::CallNode>()) out.push_back(c);
  }
}

}  // namespace

bool Driver::check_cuda_imports(const ir::Program& p) {
  int errors_before = diags_.error_count();
  std::vector<const ir::CallNode*> calls;
  for (const ir::Function& f : p.functions) collect_calls(f.graph, calls);
  std::set<const ir::Import*> reported_imports;
  std::set<std::pair<int, int>> reported_calls;  // one error per place in the .scan file
  for (const ir::CallNode* c : calls) {
    const ir::Import& import = *c->import();
    if (!import.cuda_parse_problem.empty()) {
      if (reported_imports.insert(&import).second)
        diags_.report(DiagId::err_import_cuda_parse, import.loc, import.spelling, import.cuda_parse_problem);
      continue;
    }
    const ir::ImportedFunction& f = c->function();
    if (f.host_device || !reported_calls.insert({c->loc().line, c->loc().col}).second) continue;
    auto& d = diags_.report(DiagId::err_import_no_cuda, c->loc(), f.name);
    diags_.note(d, DiagId::note_import_needs_host_device, f.loc, f.name);
  }
  return diags_.error_count() == errors_before;
}

const ir::Function* Driver::select_function(const ir::Program& p, const std::string& name) {
  if (name.empty()) return p.functions.empty() ? nullptr : &p.functions.front();
  if (const ir::Function* f = p.find(name)) return f;
  auto& d = diags_.report(DiagId::err_no_such_fn, Loc{}, name);
  diags_.note(d, DiagId::note_available_fns, Loc{}, function_list(p));
  return nullptr;
}

std::string Driver::describe_missing_function(const ir::Program& p, const std::string& name) const {
  Diagnostic d{DiagId::err_no_such_fn, diag_severity(DiagId::err_no_such_fn), Loc{},
               fmt::format(fmt::runtime(diag_format(DiagId::err_no_such_fn)), name), {}};
  d.notes.push_back({Loc{}, fmt::format(fmt::runtime(diag_format(DiagId::note_available_fns)), function_list(p))});
  return diags_.render(d);
}

}  // namespace scangen
