// The pipeline of loop-IR passes (lir_passes.def): those that run for every backend after the
// lowering, then those of the CPU backend's functions or of the CUDA backend's kernels. `scangen ir --lir` prints the loop IR after
// them, or after each with --print-after-all.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace scangen::codegen {

enum class LirStage {
  Lowering,  // every backend
  Fast,      // the fast floating-point mode (CPU backend only)
  Cpu,       // the CPU backend's functions
  Cuda,      // the CUDA backend's kernels
};

struct LirPassInfo {
  const char* name;
  LirStage stage;
  int (*run)(lir::Function&);
  const char* summary;
};

// The table, in pipeline order.
const std::vector<LirPassInfo>& lir_pass_table();
const LirPassInfo* find_lir_pass(const std::string& name);

struct LirPipelineOptions {
  // Fast: lower_program also runs the fast stage and marks the module fast.
  FpMode fp_mode = FpMode::Strict;
  // Run only these passes (in table order); empty: all the stage's passes.
  std::vector<std::string> only;
  // Called after each pass that ran, with the module as it then is.
  std::function<void(const LirPassInfo&, const lir::Module&)> after_each;
  // Added to per pass: how many changes or decisions it made, over all functions.
  std::function<void(const LirPassInfo&, int)> count;
};

// Runs the passes of `stage` on every function of `m`.
void run_lir_passes(lir::Module& m, LirStage stage, const LirPipelineOptions& options = {});

}  // namespace scangen::codegen
