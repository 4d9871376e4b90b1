#include "driver/driver.h"

#include <set>
#include <sstream>

#include "codegen/lir_passes.h"
#include "codegen/lower.h"
#include "frontend/imports.h"
#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "scangen/runtime/cpu_jit.h"
#include "support/check.h"
#include "support/large_stack.h"

namespace scangen::driver {

namespace fs = std::filesystem;

namespace {

codegen::LirPipelineOptions lir_options(const Options& o) {
  codegen::LirPipelineOptions lir;
  lir.only = o.only_lir_passes;
  if (o.after_each_lir_pass)
    lir.after_each = [&o](const codegen::LirPassInfo& p, const lir::Module& m) { o.after_each_lir_pass(p.name, m); };
  if (o.count_lir_pass) lir.count = [&o](const codegen::LirPassInfo& p, int n) { o.count_lir_pass(p.name, n); };
  return lir;
}

std::vector<codegen::EmittedFile> print(const lir::Module& module, Backend backend, const Options& o) {
  codegen::EmitOptions emit;
  emit.stem = o.stem.empty() ? "module" : o.stem;
  emit.cpp_namespace = o.cpp_namespace;
  emit.single_translation_unit = o.layout == Layout::Jit;
  emit.cuda_emulation = backend == Backend::CudaEmulation;
  switch (backend_info(backend).code) {
    case BackendCode::Cpp: return codegen::print_cpp(module, emit);
    case BackendCode::Cuda: return codegen::print_cuda(module, emit);
    case BackendCode::None: break;
  }
  throw InternalError("the " + std::string(backend_name(backend)) + " backend has no code to print");
}

void collect_calls(const ir::Graph& g, std::vector<const ir::CallNode*>& out) {
  for (const ir::Node* n : ir::topological_order(g)) {
    if (const auto* s = n->as<ir::ScanNode>()) collect_calls(s->body(), out);
    if (const auto* c = n->as<ir::CallNode>()) out.push_back(c);
  }
}

}  // namespace

ir::Program rewrite(const ir::Program& program, const Options& o, passes::PassContext* stats) {
  passes::PipelineConfig config;
  config.opt_level = o.opt_level;
  config.only = o.only_passes;
  config.disabled.insert(o.disabled_passes.begin(), o.disabled_passes.end());
  config.verify_each = o.verify_each;
  config.fp_mode = o.fp_mode;
  if (o.after_each_pass)
    config.after_each = [&o](const passes::PassInfo& p, const ir::Program& prog) { o.after_each_pass(p.name, prog); };
  passes::PassContext context;
  ir::Program rewritten = with_large_stack([&] { return passes::run_passes(program, config, context); });
  if (stats) *stats = context;
  return rewritten;
}

lir::Module lower(const ir::Program& program, Backend backend, const Options& o) {
  return with_large_stack([&] {
    const codegen::LirPipelineOptions lir = lir_options(o);
    lir::Module m = codegen::lower_program(program);
    codegen::run_lir_passes(m, codegen::LirStage::Lowering, lir);
    if (o.fp_mode == FpMode::Fast) {
      codegen::run_lir_passes(m, codegen::LirStage::Fast, lir);
      m.fp_mode = FpMode::Fast;
    }
    switch (backend_info(backend).code) {
      case BackendCode::Cpp:
        for (lir::Function& f : m.functions) f.threads = o.threads;
        codegen::run_lir_passes(m, codegen::LirStage::Cpu, lir);
        return m;
      case BackendCode::Cuda:
        codegen::run_lir_passes(m, codegen::LirStage::Cuda, lir);
        return m;
      case BackendCode::None: break;
    }
    throw InternalError("the " + std::string(backend_name(backend)) + " backend has no loop IR");
  });
}

std::vector<codegen::EmittedFile> emit(const ir::Program& program, Backend backend, const Options& o) {
  const lir::Module m = lower(program, backend, o);
  return with_large_stack([&] { return print(m, backend, o); });
}

// ---- Compilation

Compilation::Compilation(std::string name, std::optional<std::string> text, Options options)
    : options_(std::move(options)), name_(std::move(name)), text_(std::move(text)),
      sources_(std::make_unique<SourceManager>()), diags_(std::make_unique<DiagnosticEngine>(*sources_)) {
  if (options_.stem.empty()) options_.stem = fs::path(name_).stem().string();
}

Compilation::~Compilation() = default;

Compilation Compilation::of_file(const fs::path& path, Options options, const OptionSpelling& spelling) {
  validate(options, spelling);
  return Compilation(path.string(), std::nullopt, std::move(options));
}

Compilation Compilation::of_text(std::string name, std::string text, Options options, const OptionSpelling& spelling) {
  validate(options, spelling);
  return Compilation(std::move(name), std::move(text), std::move(options));
}

bool Compilation::reach(Stage stage) {
  if (stage == Stage::Loaded && options_.backends.size() != 1)
    throw OptionError("a program runs on one backend, not on " + std::to_string(options_.backends.size()));
  return with_large_stack([&] {
    for (Stage s : {Stage::Analyzed, Stage::Rewritten, Stage::LoopIr, Stage::Sources, Stage::Loaded}) {
      if (failed_ || s > stage) break;
      if (reached_ && *reached_ >= s) continue;
      switch (s) {
        case Stage::Analyzed: failed_ = !analyze(); break;
        case Stage::Rewritten: rewrite(); break;
        case Stage::LoopIr: lower(); break;
        case Stage::Sources: print(); break;
        case Stage::Loaded: load(); break;
      }
      if (!failed_) reached_ = s;
    }
    return !failed_;
  });
}

bool Compilation::analyze() {
  file_id_ = text_ ? sources_->add(name_, *text_) : sources_->load(name_);
  dependencies_.clear();
  if (!text_) dependencies_.push_back(fs::path(name_));
  ast::Module module = parse_file(*sources_, file_id_, *diags_);
  // After a syntax error the tree has holes; analyzing it would only add follow-up errors.
  if (diags_->has_errors()) return false;
  fs::path dir = fs::path(name_).parent_path();
  ImportSearch search{dir.empty() ? fs::path(".") : dir, options_.include_dirs,
                      options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir};
  std::vector<ir::ImportRef> imports = resolve_imports(module, *sources_, *diags_, search, dependencies_);
  // A header that cannot be used would only add "unknown function" errors at its calls.
  if (diags_->has_errors()) return false;
  std::optional<ir::Program> program = scangen::analyze(module, *sources_, *diags_, imports);
  if (!program) return false;
  ir::verify(*program);
  program_ = std::make_unique<ir::Program>(std::move(*program));
  bool cuda = options_.check_cuda_imports;
  for (Backend b : options_.backends) cuda = cuda || backend_info(b).code == BackendCode::Cuda;
  return !cuda || check_cuda_imports();
}

// Reports, as errors, what keeps the program's imported functions from CUDA code: a call of a
// function that is not __host__ __device__, a header that the CUDA-mode parse rejected.
bool Compilation::check_cuda_imports() {
  int errors_before = diags_->error_count();
  std::vector<const ir::CallNode*> calls;
  for (const ir::Function& f : program_->functions) collect_calls(f.graph, calls);
  std::set<const ir::Import*> reported_imports;
  std::set<std::pair<int, int>> reported_calls;  // one error per place in the .scan file
  for (const ir::CallNode* c : calls) {
    const ir::Import& import = *c->import();
    if (!import.cuda_parse_problem.empty()) {
      if (reported_imports.insert(&import).second)
        diags_->report(DiagId::err_import_cuda_parse, import.loc, import.spelling, import.cuda_parse_problem);
      continue;
    }
    const ir::ImportedFunction& f = c->function();
    if (f.host_device || !reported_calls.insert({c->loc().line, c->loc().col}).second) continue;
    auto& d = diags_->report(DiagId::err_import_no_cuda, c->loc(), f.name);
    diags_->note(d, DiagId::note_import_needs_host_device, f.loc, f.name);
  }
  return diags_->error_count() == errors_before;
}

void Compilation::rewrite() {
  passes::PassContext context;
  *program_ = driver::rewrite(*program_, options_, &context);
  pass_stats_ = context.stats();
  pass_notes_ = context.notes();
}

void Compilation::lower() {
  targets_.clear();
  for (Backend b : options_.backends)
    if (backend_info(b).code != BackendCode::None) targets_.push_back({b, driver::lower(*program_, b, options_), {}});
}

// The JIT's caches are keyed on the source text: code for the JIT names the .scan file by its
// canonical path, so that `f.scan`, `./f.scan` and its absolute path are one program (and one
// compile). Code for a build system keeps the name as given (no path of the building machine).
std::string Compilation::source_name_for(Layout layout) const {
  if (layout == Layout::BuildSystem || name_.empty()) return name_;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::absolute(name_, ec), ec);
  return ec ? name_ : canonical.string();
}

std::vector<codegen::EmittedFile> Compilation::sources_of(const Target& t, Layout layout) const {
  Options o = options_;
  o.layout = layout;
  lir::Module m = t.loop_ir;
  m.source_path = source_name_for(layout);
  return driver::print(m, t.backend, o);
}

void Compilation::print() {
  for (Target& t : targets_) t.sources = sources_of(t, options_.layout);
}

void Compilation::load() {
  const Backend backend = options_.backends.front();
  std::vector<codegen::EmittedFile> sources;
  // The JIT compiles one translation unit per target.
  if (!targets_.empty())
    sources = options_.layout == Layout::Jit ? targets_.front().sources : sources_of(targets_.front(), Layout::Jit);
  runner_ = make_runner(backend, *program_, sources, options_);
}

const ir::Program& Compilation::program() const {
  SCANGEN_CHECK(program_ != nullptr, "the program of a compilation that has not been analyzed");
  return *program_;
}

Runner& Compilation::runner() const {
  SCANGEN_CHECK(runner_ != nullptr, "the runner of a compilation that has not been loaded");
  return *runner_;
}

std::string Compilation::rendered_diagnostics() const {
  std::ostringstream os;
  diags_->print_all(os);
  return os.str();
}

std::string Compilation::render_runtime_error(const std::string& message, int line, int column) const {
  Diagnostic d;
  d.id = DiagId::err_at_run_time;
  d.severity = Severity::Error;
  d.message = message;
  if (line > 0 && file_id_ >= 0) d.loc = Loc{file_id_, line, column, 1};
  return diags_->render(d);
}

namespace {

std::string function_list(const ir::Program* program) {
  std::string list;
  if (program)
    for (const auto& f : program->functions) list += (list.empty() ? "" : ", ") + f.name;
  return list;
}

}  // namespace

std::string Compilation::describe_missing_function(const std::string& name) const {
  Diagnostic d{DiagId::err_no_such_fn, diag_severity(DiagId::err_no_such_fn), Loc{},
               fmt::format(fmt::runtime(diag_format(DiagId::err_no_such_fn)), name), {}};
  d.notes.push_back({Loc{}, fmt::format(fmt::runtime(diag_format(DiagId::note_available_fns)), function_list(program_.get()))});
  return diags_->render(d);
}

std::string Compilation::missing_function_sentence(const std::string& name) const {
  return fmt::format(fmt::runtime(diag_format(DiagId::err_no_such_fn)), name) + " (" +
         fmt::format(fmt::runtime(diag_format(DiagId::note_available_fns)), function_list(program_.get())) + ")";
}

}  // namespace scangen::driver
