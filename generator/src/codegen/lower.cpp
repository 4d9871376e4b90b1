// Lowering: program IR -> loop IR, shared by every backend. Each function is lowered by
// lowering::FunctionLowering (generator/src/codegen/lowering/), then the loop-IR passes of every
// backend run (lir_passes.def), and those of the fast floating-point mode when the options ask
// for it.
#include "codegen/lower.h"

#include "codegen/lowering/function_lowering.h"
#include "codegen/lir_passes.h"

namespace scangen::codegen {

lir::Module lower_program(const ir::Program& program, const LirPipelineOptions& options) {
  lir::Module m;
  m.source_path = program.source_path;
  for (const ir::Function& fn : program.functions) {
    lir::Function f;
    lowering::FunctionLowering lowering(fn, f);
    // The typed API names its functions after the .scan functions, in the namespace that also
    // holds the implementations: an implementation symbol must not be any function's name
    // (fn g's g_impl against a fn named g_impl).
    for (const ir::Function& other : program.functions) lowering.names.reserve(other.name);
    lowering.run();
    m.functions.push_back(std::move(f));
  }
  run_lir_passes(m, LirStage::Lowering, options);
  if (options.fp_mode == FpMode::Fast) {
    run_lir_passes(m, LirStage::Fast, options);
    m.fp_mode = FpMode::Fast;
  }
  return m;
}

}  // namespace scangen::codegen
