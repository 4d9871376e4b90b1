// The runners of the backends (runner.h): one class per row of scangen/backends.def.
#include "driver/runner.h"

#include <cstring>

#include "interpreter/interpreter.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/errors.h"

namespace scangen::driver {

namespace {

class InterpreterRunner final : public Runner {
 public:
  explicit InterpreterRunner(const ir::Program& program) : program_(program) {}
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) override {
    return interp::Interpreter().run(*program_.find(std::string(fn)), args);
  }
  bool concurrent() const override { return true; }

 private:
  const ir::Program& program_;
};

// The C++ JIT over the options' cache directory (the default one when none is given), with what
// fast-mode code needs when the options ask for it.
CpuJit cpu_jit(const Options& options) {
  CxxCompiler compiler = CxxCompiler::from_environment();
  if (options.fp_mode == FpMode::Fast) compiler.add_fast_fp();
  return CpuJit(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir, std::move(compiler));
}

class CpuRunner final : public Runner {
 public:
  CpuRunner(const std::vector<codegen::EmittedFile>& files, const Options& options)
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

class CudaEmulationRunner final : public Runner {
 public:
  CudaEmulationRunner(const std::vector<codegen::EmittedFile>& files, const Options& options)
      : jit_(cpu_jit(options)), emulation_(files.at(0).contents, files.at(1).contents, jit_) {}
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

class CudaRunner final : public Runner {
 public:
  CudaRunner(const std::vector<codegen::EmittedFile>& files, const Options& options)
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

}  // namespace

void Runner::call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) {
  std::vector<HostTensor> results = call(fn, args);
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].shape() != outs[i].shape())
      throw RuntimeError("result " + std::to_string(i) + " of '" + std::string(fn) + "' has shape " +
                         shape_to_string(results[i].shape()) + ", the tensor given for it has shape " +
                         shape_to_string(outs[i].shape()));
    if (results[i].nbytes() > 0) std::memcpy(outs[i].raw_data(), results[i].raw_data(), results[i].nbytes());
  }
}

std::unique_ptr<Runner> make_runner(Backend backend, const ir::Program& program,
                                    const std::vector<codegen::EmittedFile>& sources, const Options& options) {
  switch (backend) {
    case Backend::Interpreter: return std::make_unique<InterpreterRunner>(program);
    case Backend::Cpu: return std::make_unique<CpuRunner>(sources, options);
    case Backend::Cuda: return std::make_unique<CudaRunner>(sources, options);
    case Backend::CudaEmulation: return std::make_unique<CudaEmulationRunner>(sources, options);
  }
  throw InternalError("no runner for backend " + std::to_string(static_cast<int>(backend)));
}

}  // namespace scangen::driver
