// The interface every backend implements: print the lowered program (loop IR) as source files.
// Backends share the lowering (codegen/lower.h); they differ only in printing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"
#include "ir/ir.h"

namespace scangen::codegen {

struct EmitOptions {
  std::string stem;             // file names: <stem>.h, <stem>.cpp
  std::string cpp_namespace = "scangen_generated";
  // One self-contained translation unit (the JIT compiles it alone) instead of a header + source.
  bool single_translation_unit = false;
  // CUDA, with single_translation_unit: the kernels as host C++ for the CUDA emulation
  // (templates/cuda/scangen_cuda_emulation.h) instead of for NVRTC.
  bool cuda_emulation = false;
  // Fast: the loop IR's fast passes run (lir_passes.def); the CPU backend only (the CUDA backend
  // rejects it).
  FpMode fp_mode = FpMode::Strict;
  // CPU: the threads the code runs on (1: none of the pool; 0: every hardware thread), planned by
  // the CPU pass `threads` (lir_passes.def).
  int threads = 1;
};

struct EmittedFile {
  std::string filename;
  std::string contents;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual std::vector<EmittedFile> emit(const ir::Program& program, const lir::Module& module,
                                        const EmitOptions& options) const = 0;
};

// The registered backends, by name ("cpu").
const Backend* find_backend(const std::string& name);
std::vector<std::string> backend_names();

// Lowers and prints in one call.
std::vector<EmittedFile> generate(const ir::Program& program, const std::string& backend, const EmitOptions& options);

}  // namespace scangen::codegen
