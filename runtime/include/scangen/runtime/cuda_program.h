// Running what the CUDA backend emits for the JIT (`scangen run --backend cuda`, host programs):
// the kernels' source and the manifest that describes them (<stem>.cu and <stem>.cuda.json of
// the backend's single-translation-unit output). Compiles through the NVRTC cache, loads on a
// device, and calls functions on host tensors: arguments are uploaded, the kernel runs the whole
// function (templates/cuda/scangen_cuda_launch.h), results come back.
#pragma once

#include <memory>
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
  std::vector<DType> arg_dtypes, result_dtypes;
  std::vector<int> arg_ranks, result_ranks;
  // The parallel width (threads worth launching) is the largest term, at least 1.
  std::vector<CudaWidthTerm> width;
};

// Parses a manifest; a malformed one is an InternalError (scangen wrote it).
std::vector<CudaFunctionInfo> parse_cuda_manifest(const std::string& json);
// The parallel width of a call with arguments of these shapes (saturating at 2^62).
long long cuda_parallel_width(const CudaFunctionInfo& fn, const std::vector<Shape>& arg_shapes);

class CudaProgram {
 public:
  // Compiles `source` for the device (CUBIN for its architecture, PTX as the fallback) through
  // `compiler`'s cache and loads it.
  CudaProgram(std::shared_ptr<CudaDevice> device, const std::string& source, const std::string& manifest,
              const CudaCompiler& compiler = CudaCompiler());

  const std::vector<CudaFunctionInfo>& functions() const { return functions_; }
  const CudaBinary& binary() const { return binary_; }

  // Calls `fn` with `args` (checked against its signature: RuntimeError). An error of the .scan
  // program is a RuntimeError with its line and column.
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args);

  // Launches of the last call (more than one when the arena had to grow).
  int last_launches() const { return last_launches_; }

 private:
  std::shared_ptr<CudaDevice> device_;
  std::vector<CudaFunctionInfo> functions_;
  CudaBinary binary_;
  std::shared_ptr<CudaModule> module_;
  std::vector<unsigned long long> arena_hints_;
  int last_launches_ = 0;
};

// The CUDA emulation (`scangen run --backend cuda-emulation`): the kernels compiled as host C++
// (the backend's emulation output, templates/cuda/scangen_cuda_emulation.h) by the CPU JIT, each
// launch run on the CPU with one thread per CUDA thread, on a fixed grid of 2 blocks of 3 threads.
// It checks the CUDA backend's kernels, barriers and launch protocol on machines without a GPU.
class CudaEmulation {
 public:
  CudaEmulation(const std::string& source, const std::string& manifest, CpuJit& jit);
  ~CudaEmulation();
  CudaEmulation(const CudaEmulation&) = delete;
  CudaEmulation& operator=(const CudaEmulation&) = delete;

  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args);
  int last_launches() const { return last_launches_; }

 private:
  std::vector<CudaFunctionInfo> functions_;
  std::shared_ptr<CpuModule> module_;
  void* handle_ = nullptr;
  void* launcher_ = nullptr;
  std::vector<unsigned long long> arena_hints_;
  int last_launches_ = 0;
};

}  // namespace scangen
