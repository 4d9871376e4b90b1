// The printers: the loop IR of a module, after the loop-IR passes of its target have run (the
// driver runs them), as source files. A printer only prints: every decision it shows was made by
// a pass and recorded in the loop IR (lir::Function::kernel, Barrier statements, parallel loops),
// and everything it needs of the program is in the lir::Module (signatures, imports, the source).
#pragma once

#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace scangen::codegen {

struct EmitOptions {
  std::string stem;             // file names: <stem>.h, <stem>.cpp
  std::string cpp_namespace = "scangen_generated";
  // One self-contained translation unit (the JIT compiles it alone) instead of a header + source.
  bool single_translation_unit = false;
  // CUDA, with single_translation_unit: the kernels as host C++ for the CUDA emulation
  // (templates/cuda/scangen_cuda_emulation.h) instead of for NVRTC.
  bool cuda_emulation = false;
};

struct EmittedFile {
  std::string filename;
  std::string contents;
};

// C++17: a header (the typed API) and a source (the loops, the helpers of templates/, the C ABI
// entry points the JIT loads); one translation unit with single_translation_unit.
std::vector<EmittedFile> print_cpp(const lir::Module& module, const EmitOptions& options);
// CUDA: for offline builds <stem>.cuh and <stem>.cu (kernels and host glue); for the JIT the
// kernels alone (or, emulated, as host C++) and a JSON manifest of the functions.
std::vector<EmittedFile> print_cuda(const lir::Module& module, const EmitOptions& options);

}  // namespace scangen::codegen
