// Running what the CUDA backend emits for the JIT (`scangen run --backend cuda`, host programs):
// the kernels' source and the manifest that describes them (<stem>.cu and <stem>.cuda.json of
// the backend's single-translation-unit output). Compiles through the NVRTC cache, loads on a
// device, and calls functions on host tensors: arguments are uploaded, the kernel runs the whole
// function (templates/cuda/scangen_cuda_launch.h), results come back.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/tensor.h"

namespace scangen {

// factor * the product of argument dimensions (argument index, axis).
struct CudaWidthTerm {
  int64_t factor = 1;
  std::vector<std::pair<int, int>> dims;
};

struct CudaFunctionInfo {
  std::string name;
  std::string signature;
  std::string kernel;
  int kernel_index = 0;  // its source compiles alone with -DSCANGEN_KERNEL=<kernel_index>
  std::vector<DType> arg_dtypes, result_dtypes;
  std::vector<int> arg_ranks, result_ranks;
  // The parallel width (threads worth launching) is the largest term, at least 1.
  std::vector<CudaWidthTerm> width;
};

// Parses a manifest; a malformed one is an InternalError (scangen wrote it).
std::vector<CudaFunctionInfo> parse_cuda_manifest(const std::string& json);
// The parallel width of a call with arguments of these shapes (saturating at 2^62).
long long cuda_parallel_width(const CudaFunctionInfo& fn, const std::vector<Shape>& arg_shapes);

// What CudaProgram compiles for `fn`: its kernel alone, for `arch`.
CudaCompileOptions kernel_compile_options(const CudaFunctionInfo& fn, int arch);
// The same for `device`: its architecture, and an NVRTC that suits its driver.
CudaCompileOptions kernel_compile_options(const CudaFunctionInfo& fn, const CudaDeviceInfo& device);

class CudaProgram {
 public:
  // Keeps `source` (every function's kernel) for `device`. Nothing is compiled yet: each function
  // is compiled (CUBIN for the device's architecture, PTX as the fallback; through `compiler`'s
  // cache) and loaded on its first call, alone, so a call pays NVRTC for its own kernel only.
  // Throws RuntimeError for a device of compute capability below 7.0.
  CudaProgram(std::shared_ptr<CudaDevice> device, std::string source, const std::string& manifest,
              CudaCompiler compiler = CudaCompiler());

  const std::vector<CudaFunctionInfo>& functions() const { return functions_; }

  // Compiles and loads `fn`'s kernel if that has not happened yet; its binary (compile time,
  // whether it came from the cache, NVRTC's log).
  const CudaBinary& load(std::string_view fn);

  // Calls `fn` with `args` (checked against its signature: RuntimeError). An error of the .scan
  // program is a RuntimeError with its line and column.
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args);
  // The same with the results written into `outs` (host tensors, one per result, of its dtype and
  // rank): the kernel computes them in device buffers of their shapes, the form of the generated
  // API with results in the caller's memory (checked there), and they are downloaded into `outs`.
  // A function without that form computes them in its arena; their shapes must then equal the
  // outs' (RuntimeError otherwise).
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs);

  // Launches of the last call (more than one when the arena had to grow).
  int last_launches() const { return last_launches_; }

  // The most device memory (the arena) a call of `fn` has used so far, in bytes; 0 before its
  // first call. Buffers a launch of one block keeps in shared memory are not in it.
  unsigned long long arena_bytes(std::string_view fn) const;

 private:
  struct Loaded {
    CudaBinary binary;
    std::shared_ptr<CudaModule> module;
  };
  Loaded& loaded(size_t index);

  std::shared_ptr<CudaDevice> device_;
  std::string source_;
  CudaCompiler compiler_;
  std::vector<CudaFunctionInfo> functions_;
  std::vector<std::optional<Loaded>> loaded_;
  std::vector<unsigned long long> arena_hints_;
  int last_launches_ = 0;
};

class CudaEmulation {
 public:
  CudaEmulation(const std::string& source, const std::string& manifest, CpuJit& jit);
  ~CudaEmulation();
  CudaEmulation(const CudaEmulation&) = delete;
  CudaEmulation& operator=(const CudaEmulation&) = delete;

  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args);
  // As CudaProgram::call_into.
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs);
  int last_launches() const { return last_launches_; }

 private:
  std::vector<CudaFunctionInfo> functions_;
  std::shared_ptr<CpuModule> module_;
  void* launcher_ = nullptr;
  std::vector<unsigned long long> arena_hints_;
  int last_launches_ = 0;
};

}  // namespace scangen
