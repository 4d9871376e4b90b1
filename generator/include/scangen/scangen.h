// scangen's C++ JIT API: compile a .scan program inside a host program and call its functions.
//
//   #include <scangen/scangen.h>
//
//   scangen::Module m = scangen::compile_file("filters.scan");          // throws CompileError
//   std::vector<float> x = ...;
//   auto out = m.call("iir", {scangen::view(x.data(), {n}), scangen::HostTensor::scalar(0.9f)});
//   const float* y = out[0].data<float>();                               // owned by out[0]
//
// Arguments are tensors in host memory; scangen::view() wraps the caller's memory without a copy
// (it must stay alive and unchanged during the call; nothing writes to it). Results own their
// memory. Calls check the arguments against the function's signature, exactly as the generated
// typed API does, and throw RuntimeError when they do not fit.
//
// Threads: compile_file and compile_source may be called from any number of threads at once.
// A Module is a cheap handle (copies share one compiled program) that any number of threads may
// use at once: calls on the interpreter and the CPU backend run concurrently; calls on one CUDA or
// CUDA-emulation module are serialized (they share a device arena). See docs/jit.md.
//
// Link scangen::compiler (find_package(scangen CONFIG)).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scangen/backend.h"
#include "scangen/fp_mode.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/tensor.h"

namespace scangen {

struct JitOptions {
  Backend backend = Backend::Cpu;
  int opt_level = 2;                         // 0: no rewrites; 2: all of them
  // Backend::Cpu only: FpMode::Fast trades the interpreter's bits for speed (scangen/fp_mode.h);
  // the other backends reject it (RuntimeError).
  FpMode fp_mode = FpMode::Strict;
  // Backend::Cpu: the threads the compiled code runs on, 1 to kMaxThreads, or 0 for every hardware
  // thread; SCANGEN_NUM_THREADS, when set, overrides it at run time (docs/jit.md).
  int threads = 1;
  std::vector<std::string> disabled_passes;  // rewrites to skip (`scangen ir --list-passes`)
  bool verify_each = false;                  // run the IR verifier after every rewrite
  // Searched for `import "..."` headers after the .scan file's own directory.
  std::vector<std::filesystem::path> include_dirs;
  // The on-disk caches, shared with the CLI: compiled C++ modules (empty: $XDG_CACHE_HOME/scangen
  // or ~/.cache/scangen) and CUDA binaries (empty: the CUDA cache's default).
  std::filesystem::path cache_dir;
  std::filesystem::path cuda_cache_dir;
  int cuda_device = 0;  // the GPU of Backend::Cuda
};

// The program has errors. what() is every diagnostic, rendered as the CLI prints them
// (file:line:col, the source line and a caret).
class CompileError : public RuntimeError {
 public:
  explicit CompileError(std::string rendered_diagnostics);
};

// A run-time error of the program (a shape that does not fit, an index out of range): message()
// is the bare message, what() adds the location in the .scan file with its source line and caret.
class ProgramError : public RuntimeError {
 public:
  ProgramError(const std::string& message, std::string rendered, int line, int column);
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

struct TensorSpec {
  std::string name;  // the parameter's name; for results, the declared name or out<i>
  DType dtype = DType::F32;
  int rank = 0;
};

struct FunctionInfo {
  std::string name;
  std::string signature;  // "(A: f32[n], k: i32) -> f32[n]"
  std::vector<TensorSpec> params;
  std::vector<TensorSpec> results;
};

namespace detail {
struct ModuleState;
}

class Module {
 public:
  // The file's functions, in the order of the file.
  const std::vector<FunctionInfo>& functions() const;
  // Throws RuntimeError naming the functions the file has when there is no `name`.
  const FunctionInfo& function(std::string_view name) const;

  // Calls `fn`. Throws RuntimeError for arguments that do not fit its signature, ProgramError
  // for a run-time error of the program, InternalError for a scangen bug.
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) const;
  // Calls `fn` with its results written into `outs`, one tensor per result (scangen::out_view()
  // over the caller's memory, or any HostTensor), each of the result's dtype, rank and shape and
  // overlapping no argument or other out; a RuntimeError otherwise, and for a function whose
  // result shapes are known only while it runs (a scan with `until`, a slice computed from
  // elements: docs/jit.md). The CPU backend computes the results there without allocating them;
  // the other backends compute them as call() does and copy them there. After an error the outs'
  // contents are unspecified.
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) const;

  Backend backend() const;
  // Warnings of the compile, rendered (empty when there were none).
  const std::string& warnings() const;
  // How many times each rewrite fired.
  const std::map<std::string, int>& pass_stats() const;
  // Why rewrites did not fire where they might have ("parallel-scan: ..."), one line each.
  const std::vector<std::string>& pass_notes() const;
  // True when this compile found the program already compiled in this process (no parsing).
  bool reused() const { return reused_; }

 private:
  friend Module compile_source(const std::string&, std::string_view, const JitOptions&);
  Module(std::shared_ptr<detail::ModuleState> state, bool reused);
  std::shared_ptr<detail::ModuleState> state_;
  bool reused_ = false;
};

// Compiles a .scan file. Throws CompileError for a program with errors, RuntimeError when the
// file cannot be read or the backend cannot be used (no C++ compiler, no GPU), InternalError for
// a scangen bug. A compile of a text (with the same options and unchanged imported headers) that
// this process has compiled before returns the same program without parsing it again; any other
// compile finds the generated code in the on-disk caches when it was built before.
Module compile_file(const std::filesystem::path& path, const JitOptions& options = {});
// The same for a program held in memory; `name` stands for the file in diagnostics, and relative
// imports are resolved against its directory (the current directory for a bare name).
Module compile_source(const std::string& name, std::string_view text, const JitOptions& options = {});

// A tensor over the caller's memory (C order, no copy). The memory must be aligned for T.
template <class T> HostTensor view(const T* data, Shape shape) {
  return HostTensor::view(dtype_of<T>(), std::move(shape), data);
}

// A tensor over the caller's writable memory (C order, no copy), to receive a result of
// Module::call_into. The memory must be aligned for T and stay alive during the call.
template <class T> HostTensor out_view(T* data, Shape shape) {
  return HostTensor::adopt(dtype_of<T>(), std::move(shape), data, nullptr, nullptr);
}

}  // namespace scangen
