// Calls the functions of one compiled program on one backend: the interpreter on the IR, the C++
// JIT's module, the CUDA program on a GPU, or the CUDA kernels compiled for the CPU. Made by the
// pipeline (Stage::Loaded) from the backend table (scangen/backends.def).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "codegen/backend.h"
#include "driver/options.h"
#include "ir/ir.h"
#include "scangen/runtime/tensor.h"

namespace scangen::driver {

class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) = 0;
  // `fn` with its results written into `outs` (their count, dtypes and ranks checked by the
  // caller). By default the results are computed as call() does and copied there.
  virtual void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs);
  // Whether calls may run at the same time from several threads.
  virtual bool concurrent() const = 0;
};

// The runner of `backend` for a program: the interpreter runs `program` (which must outlive the
// runner), the others compile and load `sources` (the JIT layout of Layout::Jit) with the
// options' caches and device.
std::unique_ptr<Runner> make_runner(Backend backend, const ir::Program& program,
                                    const std::vector<codegen::EmittedFile>& sources, const Options& options);

}  // namespace scangen::driver
