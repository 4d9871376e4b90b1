// The JIT API (include/scangen/scangen.h): a compilation of the driver through to a loaded runner,
// behind one Module handle, with an in-process memo of compiled programs (api/module_memo.h).
#include "scangen/scangen.h"

#include <cstring>
#include <mutex>

#include "api/module_memo.h"
#include "api/module_state.h"
#include "interpreter/interpreter.h"
#include "support/source.h"

namespace scangen {
namespace fs = std::filesystem;

namespace {

FunctionInfo describe(const ir::Function& fn) {
  FunctionInfo info{fn.name, fn.signature(), {}, {}};
  for (const ir::ArgDecl& a : fn.args) info.params.push_back({a.name, a.type.dtype, a.type.rank()});
  for (size_t i = 0; i < fn.results.size(); ++i)
    info.results.push_back({fn.result_name(i), fn.results[i].type.dtype, fn.results[i].type.rank()});
  return info;
}

driver::Options pipeline_options(const JitOptions& options) {
  driver::Options p;
  p.backends = {options.backend};
  p.opt_level = options.opt_level;
  p.disabled_passes = options.disabled_passes;
  p.verify_each = options.verify_each;
  p.fp_mode = options.fp_mode;
  p.threads = options.threads;
  p.include_dirs = options.include_dirs;
  p.layout = driver::Layout::Jit;
  p.cache_dir = options.cache_dir;
  p.cuda_cache_dir = options.cuda_cache_dir;
  p.cuda_device = options.cuda_device;
  return p;
}

// The whole pipeline, through to a loaded runner: everything a new program needs.
std::shared_ptr<detail::ModuleState> build(const std::string& name, std::string_view text, const JitOptions& options) {
  auto state = std::make_shared<detail::ModuleState>(
      driver::Compilation::of_text(name, std::string(text), pipeline_options(options)));
  driver::Compilation& c = state->compilation;
  state->backend = options.backend;
  if (!c.reach(driver::Stage::Rewritten)) throw CompileError(c.rendered_diagnostics());
  state->warnings = c.rendered_diagnostics();
  state->stats = c.pass_stats();
  state->notes = c.pass_notes();
  for (const ir::Function& fn : c.program().functions) state->functions.push_back(describe(fn));
  c.reach(driver::Stage::Loaded);
  return state;
}

}  // namespace

CompileError::CompileError(std::string rendered_diagnostics) : RuntimeError(std::move(rendered_diagnostics)) {}

ProgramError::ProgramError(const std::string& message, std::string rendered, int line, int column)
    : RuntimeError(std::move(rendered), line, column), message_(message) {}

Module::Module(std::shared_ptr<detail::ModuleState> state, bool reused)
    : state_(std::move(state)), reused_(reused) {}

const std::vector<FunctionInfo>& Module::functions() const { return state_->functions; }
Backend Module::backend() const { return state_->backend; }
const std::string& Module::warnings() const { return state_->warnings; }
const std::map<std::string, int>& Module::pass_stats() const { return state_->stats; }
const std::vector<std::string>& Module::pass_notes() const { return state_->notes; }

const FunctionInfo& Module::function(std::string_view name) const {
  for (const FunctionInfo& f : state_->functions)
    if (f.name == name) return f;
  throw RuntimeError(state_->compilation.missing_function_sentence(std::string(name)));
}

namespace {

// The bytes of a tensor's elements, as an address range.
bool overlap(const HostTensor& a, const HostTensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto x = reinterpret_cast<uintptr_t>(a.raw_data()), y = reinterpret_cast<uintptr_t>(b.raw_data());
  return x < y + b.nbytes() && y < x + a.nbytes();
}

std::string result_text(const FunctionInfo& f, size_t i) {
  const std::string& name = f.results[i].name;
  return "result " + std::to_string(i) + (name.empty() ? "" : " ('" + name + "')") + " of '" + f.name + "'";
}

// The arguments' count, dtypes and ranks against `f`'s signature, in the catalogue's words (naming
// the parameter) whatever the backend: a compiled module knows only positions.
void check_argument_types(const detail::ModuleState& s, const FunctionInfo& f, const std::vector<HostTensor>& args) {
  interp::check_argument_types(*s.compilation.program().find(f.name), args);
}

// `call` on the module's runner, serialized when the runner is not concurrent. A run-time error of
// the program comes out as a ProgramError: rendered with its line of the .scan file when it has
// one, else its message alone.
template <class Call> auto on_runner(detail::ModuleState& s, Call call) {
  try {
    driver::Runner& runner = s.compilation.runner();
    if (runner.concurrent()) return call(runner);
    std::lock_guard<std::mutex> lock(s.call_mutex);
    return call(runner);
  } catch (const ProgramError&) {
    throw;
  } catch (const RuntimeError& e) {
    const std::string shown = e.line() > 0 ? s.compilation.render_runtime_error(e.what(), e.line(), e.column()) : e.what();
    throw ProgramError(e.what(), shown, e.line(), e.column());
  }
}

}  // namespace

std::vector<HostTensor> Module::call(std::string_view fn, const std::vector<HostTensor>& args) const {
  const FunctionInfo& f = function(fn);
  return on_runner(*state_, [&](driver::Runner& runner) {
    check_argument_types(*state_, f, args);
    return runner.call(fn, args);
  });
}

Module compile_source(const std::string& name, std::string_view text, const JitOptions& options) {
  const std::string key = detail::memo_key(name, text, options, backend_name(options.backend));
  if (std::shared_ptr<detail::ModuleState> state = detail::module_memo().find(key)) return Module(state, true);
  std::shared_ptr<detail::ModuleState> state = build(name, text, options);
  state->imported = detail::fingerprint(state->compilation.dependencies(), name);
  detail::module_memo().insert(key, state);
  return Module(state, false);
}

Module compile_file(const fs::path& path, const JitOptions& options) {
  return compile_source(path.string(), read_source_file(path), options);
}

void Module::call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) const {
  const FunctionInfo& f = function(fn);
  if (outs.size() != f.results.size())
    throw RuntimeError("function '" + f.name + "' has " + std::to_string(f.results.size()) + " result" +
                       (f.results.size() == 1 ? "" : "s") + ", got " + std::to_string(outs.size()) +
                       " tensors for them: " + f.name + f.signature);
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string what = result_text(f, i);
    if (!outs[i].valid()) throw RuntimeError(what + ": the tensor given for it is empty");
    if (outs[i].dtype() != f.results[i].dtype || outs[i].rank() != f.results[i].rank)
      throw RuntimeError(what + " is " + std::string(dtype_name(f.results[i].dtype)) + " of rank " +
                         std::to_string(f.results[i].rank) + ", the tensor given for it " +
                         std::string(dtype_name(outs[i].dtype())) + " of rank " + std::to_string(outs[i].rank()));
    for (size_t a = 0; a < args.size(); ++a)
      if (args[a].valid() && args[a].rank() > 0 && overlap(outs[i], args[a]))
        throw RuntimeError(what + " overlaps argument '" + (a < f.params.size() ? f.params[a].name : "?") +
                           "': a result must be written to memory of its own");
    for (size_t j = 0; j < i; ++j)
      if (overlap(outs[i], outs[j]))
        throw RuntimeError(what + " overlaps " + result_text(f, j) + ": a result must be written to memory of its own");
  }
  on_runner(*state_, [&](driver::Runner& runner) {
    check_argument_types(*state_, f, args);
    runner.call_into(fn, args, outs);
  });
}

}  // namespace scangen
