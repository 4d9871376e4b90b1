// The JIT API (include/scangen/scangen.h): the driver, a backend's code generator and its runner,
// behind one Module handle, with an in-process memo of compiled programs (api/module_memo.h).
#include "scangen/scangen.h"

#include <cstring>
#include <mutex>

#include "api/module_memo.h"
#include "api/module_state.h"
#include "codegen/backend.h"
#include "ir/interpreter.h"
#include "support/source.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda_program.h"

namespace scangen {
namespace fs = std::filesystem;

namespace {

// ---- runners: one per backend, built from the emitted sources

class InterpreterRunner final : public detail::Runner {
 public:
  explicit InterpreterRunner(const ir::Program& program) : program_(program) {}
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) override {
    return ir::Interpreter().run(*program_.find(std::string(fn)), args);
  }
  bool concurrent() const override { return true; }

 private:
  const ir::Program& program_;
};

// The C++ JIT over the options' cache directory (the default one when none is given), with what
// fast-mode code needs when the options ask for it.
CpuJit cpu_jit(const JitOptions& options) {
  CxxCompiler compiler = CxxCompiler::from_environment();
  if (options.fp_mode == FpMode::Fast) compiler.add_fast_fp();
  return CpuJit(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir, std::move(compiler));
}

class CpuRunner final : public detail::Runner {
 public:
  CpuRunner(const std::vector<codegen::EmittedFile>& files, const JitOptions& options)
      : module_(cpu_jit(options).compile_and_load(files.at(0).contents)) {}
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) override {
    return module_->call(fn, args);
  }
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) override {
    module_->call_into(fn, args, outs);
  }
  bool concurrent() const override { return true; }  // emitted code keeps no state between calls

 private:
  std::shared_ptr<CpuModule> module_;
};

class CudaEmulationRunner final : public detail::Runner {
 public:
  CudaEmulationRunner(const std::vector<codegen::EmittedFile>& files, const JitOptions& options)
      : jit_(cpu_jit(options)),
        emulation_(files.at(0).contents, files.at(1).contents, jit_) {}
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) override {
    return emulation_.call(fn, args);
  }
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) override {
    emulation_.call_into(fn, args, outs);
  }
  bool concurrent() const override { return false; }  // one arena per module

 private:
  CpuJit jit_;
  CudaEmulation emulation_;
};

class CudaRunner final : public detail::Runner {
 public:
  CudaRunner(const std::vector<codegen::EmittedFile>& files, const JitOptions& options)
      : program_(cuda_device(options.cuda_device), files.at(0).contents, files.at(1).contents,
                 options.cuda_cache_dir.empty() ? CudaCompiler() : CudaCompiler(options.cuda_cache_dir)) {}
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) override {
    return program_.call(fn, args);
  }
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) override {
    program_.call_into(fn, args, outs);
  }
  bool concurrent() const override { return false; }  // one arena per module

 private:
  CudaProgram program_;
};

struct BackendEntry {
  Backend backend;
  std::string_view name;        // --backend
  const char* codegen_backend;  // codegen::generate's backend, or nullptr for none
  bool cuda_emulation;
  std::unique_ptr<detail::Runner> (*make)(const ir::Program&, const std::vector<codegen::EmittedFile>&,
                                          const JitOptions&);
};

template <class R> std::unique_ptr<detail::Runner> make_runner(const ir::Program&,
    const std::vector<codegen::EmittedFile>& files, const JitOptions& options) {
  return std::make_unique<R>(files, options);
}
std::unique_ptr<detail::Runner> make_interpreter(const ir::Program& program,
    const std::vector<codegen::EmittedFile>&, const JitOptions&) {
  return std::make_unique<InterpreterRunner>(program);
}

const BackendEntry kBackends[] = {
    {Backend::Interpreter, "interp", nullptr, false, make_interpreter},
    {Backend::Cpu, "cpu", "cpu", false, make_runner<CpuRunner>},
    {Backend::Cuda, "cuda", "cuda", false, make_runner<CudaRunner>},
    {Backend::CudaEmulation, "cuda-emulation", "cuda", true, make_runner<CudaEmulationRunner>},
};

const BackendEntry& entry(Backend backend) {
  for (const BackendEntry& e : kBackends)
    if (e.backend == backend) return e;
  throw InternalError("JIT: backend " + std::to_string(static_cast<int>(backend)) + " has no entry");
}

FunctionInfo describe(const ir::Function& fn) {
  FunctionInfo info{fn.name, fn.signature(), {}, {}};
  for (const ir::ArgDecl& a : fn.args) info.params.push_back({a.name, a.type.dtype, a.type.rank()});
  for (size_t i = 0; i < fn.results.size(); ++i)
    info.results.push_back({fn.result_name(i), fn.results[i].type.dtype, fn.results[i].type.rank()});
  return info;
}

PipelineOptions pipeline_options(const JitOptions& options) {
  if (options.opt_level != 0 && options.opt_level != 2)
    throw RuntimeError("JIT: opt_level must be 0 or 2, got " + std::to_string(options.opt_level));
  if (options.fp_mode != FpMode::Strict && options.backend != Backend::Cpu)
    throw RuntimeError("JIT: fp_mode " + std::string(fp_mode_name(options.fp_mode)) + " is for the cpu backend only (" +
                       std::string(backend_name(options.backend)) + " computes the interpreter's results: strict)");
  if (options.threads < 0 || options.threads > kMaxThreads)
    throw RuntimeError("JIT: threads must be from 0 (every hardware thread) to " + std::to_string(kMaxThreads) +
                       ", got " + std::to_string(options.threads));
  if (options.threads != 1 && options.backend != Backend::Cpu)
    throw RuntimeError("JIT: threads applies to Backend::Cpu, not to " + std::string(backend_name(options.backend)));
  PipelineOptions p(options.opt_level);
  p.disabled_passes.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  p.verify_each = options.verify_each;
  p.fp_mode = options.fp_mode;
  p.include_dirs = options.include_dirs;
  p.cache_dir = options.cache_dir;
  return p;
}

// Parses, analyzes, rewrites, emits and builds the runner: everything a new program needs.
std::shared_ptr<detail::ModuleState> build(const std::string& name, std::string_view text, const JitOptions& options) {
  auto state = std::make_shared<detail::ModuleState>();
  state->backend = options.backend;
  std::optional<ir::Program> program = state->driver.load_text(name, std::string(text), pipeline_options(options));
  if (!program) throw CompileError(state->driver.rendered_diagnostics());
  state->warnings = state->driver.rendered_diagnostics();
  state->stats = state->driver.pass_stats();
  state->notes = state->driver.pass_notes();
  state->program = std::move(*program);
  for (const ir::Function& fn : state->program.functions) state->functions.push_back(describe(fn));
  const BackendEntry& backend = entry(options.backend);
  // CUDA code calls only __host__ __device__ imported functions (the emulation holds to it too).
  const bool cuda_code = backend.codegen_backend && std::string_view(backend.codegen_backend) == "cuda";
  if (cuda_code && !state->driver.check_cuda_imports(state->program))
    throw CompileError(state->driver.rendered_diagnostics());
  std::vector<codegen::EmittedFile> files;
  if (backend.codegen_backend) {
    codegen::EmitOptions emit;
    emit.stem = fs::path(name).stem().string();
    if (emit.stem.empty()) emit.stem = "module";
    emit.single_translation_unit = true;
    emit.cuda_emulation = backend.cuda_emulation;
    emit.fp_mode = options.fp_mode;
    emit.threads = options.threads;
    files = codegen::generate(state->program, backend.codegen_backend, emit);
  }
  state->runner = backend.make(state->program, files, options);
  return state;
}

}  // namespace

std::string_view backend_name(Backend backend) { return entry(backend).name; }

std::optional<Backend> backend_from_name(std::string_view name) {
  for (const BackendEntry& e : kBackends)
    if (e.name == name) return e.backend;
  return std::nullopt;
}

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
  throw RuntimeError(state_->driver.describe_missing_function(state_->program, std::string(name)));
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

void detail::Runner::call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) {
  std::vector<HostTensor> results = call(fn, args);
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].shape() != outs[i].shape())
      throw RuntimeError("result " + std::to_string(i) + " of '" + std::string(fn) + "' has shape " +
                         shape_to_string(results[i].shape()) + ", the tensor given for it has shape " +
                         shape_to_string(outs[i].shape()));
    if (results[i].nbytes() > 0) std::memcpy(outs[i].raw_data(), results[i].raw_data(), results[i].nbytes());
  }
}

std::vector<HostTensor> Module::call(std::string_view fn, const std::vector<HostTensor>& args) const {
  function(fn);
  detail::ModuleState& s = *state_;
  try {
    if (s.runner->concurrent()) return s.runner->call(fn, args);
    std::lock_guard<std::mutex> lock(s.call_mutex);
    return s.runner->call(fn, args);
  } catch (const ProgramError&) {
    throw;
  } catch (const RuntimeError& e) {
    throw ProgramError(e.what(), s.driver.render_runtime_error(e.what(), e.line(), e.column()), e.line(), e.column());
  }
}

Module compile_source(const std::string& name, std::string_view text, const JitOptions& options) {
  const std::string key = detail::memo_key(name, text, options, backend_name(options.backend));
  if (std::shared_ptr<detail::ModuleState> state = detail::module_memo().find(key)) return Module(state, true);
  std::shared_ptr<detail::ModuleState> state = build(name, text, options);
  state->imported = detail::fingerprint(state->driver.dependencies(), name);
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
    if (s.runner->concurrent()) return s.runner->call_into(fn, args, outs);
    std::lock_guard<std::mutex> lock(s.call_mutex);
    s.runner->call_into(fn, args, outs);
  } catch (const ProgramError&) {
    throw;
  } catch (const RuntimeError& e) {
    throw ProgramError(e.what(), s.driver.render_runtime_error(e.what(), e.line(), e.column()), e.line(), e.column());
  }
}

}  // namespace scangen
