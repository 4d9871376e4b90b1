// Lowering: program IR -> loop IR, shared by every backend. Each function is lowered by
// lowering::FunctionLowering (generator/src/codegen/lowering/). The loop-IR passes run after it,
// in the order the driver gives (driver/pipeline.cpp).
#include "codegen/lower.h"

#include "codegen/lowering/function_lowering.h"

namespace scangen::codegen {

lir::Module lower_program(const ir::Program& program) {
  lir::Module m;
  m.source_path = program.source_path;
  for (const ir::ImportRef& import : ir::imports_to_include(program))
    m.imports.push_back({import->header, import->spelling, import->dependencies});
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
  return m;
}

}  // namespace scangen::codegen
