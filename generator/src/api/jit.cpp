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
  throw RuntimeError(state_->compilation.describe_missing_function(std::string(name)));
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

}  // namespace

std::vector<HostTensor> Module::call(std::string_view fn, const std::vector<HostTensor>& args) const {
  function(fn);
  detail::ModuleState& s = *state_;
  try {
    // The arguments' count, dtypes and ranks, in the same words on every backend.
    interp::check_argument_types(*s.compilation.program().find(std::string(fn)), args);
    driver::Runner& runner = s.compilation.runner();
    if (runner.concurrent()) return runner.call(fn, args);
    std::lock_guard<std::mutex> lock(s.call_mutex);
    return runner.call(fn, args);
  } catch (const ProgramError&) {
    throw;
  } catch (const RuntimeError& e) {
    throw ProgramError(e.what(), s.compilation.render_runtime_error(e.what(), e.line(), e.column()), e.line(), e.column());
  }
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
  detail::ModuleState& s = *state_;
  try {
    interp::check_argument_types(*s.compilation.program().find(std::string(fn)), args);
    driver::Runner& runner = s.compilation.runner();
    if (runner.concurrent()) return runner.call_into(fn, args, outs);
    std::lock_guard<std::mutex> lock(s.call_mutex);
    runner.call_into(fn, args, outs);
  } catch (const ProgramError&) {
    throw;
  } catch (const RuntimeError& e) {
    throw ProgramError(e.what(), s.compilation.render_runtime_error(e.what(), e.line(), e.column()), e.line(), e.column());
  }
}

}  // namespace scangen
