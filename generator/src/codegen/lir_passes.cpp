#include "codegen/lir_passes.h"

#include <algorithm>

#include "codegen/cpu_threads.h"
#include "codegen/cuda_barriers.h"
#include "codegen/cuda_plan.h"
#include "codegen/element_nests.h"
#include "codegen/fast_math.h"
#include "codegen/lanes.h"
#include "codegen/scan_strategy.h"

namespace scangen::codegen {
namespace {

// The passes that count nothing report 0.
int run_hoist_invariants(lir::Function& f) {
  lir::hoist_invariants(f);
  return 0;
}

int run_remove_unused(lir::Function& f) {
  lir::remove_unused(f);
  return 0;
}

// The CUDA rewrites record what they did in the kernel's plan (its comment says it).
int run_flatten_element_nests(lir::Function& f) {
  const int n = flatten_element_nests(f);
  f.kernel.flattened += n;
  return n;
}

int run_interchange_lanes(lir::Function& f) {
  const int n = interchange_lanes(f);
  f.kernel.lanes += n;
  return n;
}

}  // namespace

const std::vector<LirPassInfo>& lir_pass_table() {
  static const std::vector<LirPassInfo> table = {
#define SCANGEN_LIR_PASS(name, function, summary, description) {name, LirStage::Lowering, function, summary},
#define SCANGEN_FAST_LIR_PASS(name, function, summary, description) {name, LirStage::Fast, function, summary},
#define SCANGEN_CPU_LIR_PASS(name, function, summary, description) {name, LirStage::Cpu, function, summary},
#define SCANGEN_CUDA_LIR_PASS(name, function, summary, description) {name, LirStage::Cuda, function, summary},
#include "codegen/lir_passes.def"
#undef SCANGEN_CUDA_LIR_PASS
#undef SCANGEN_CPU_LIR_PASS
#undef SCANGEN_FAST_LIR_PASS
#undef SCANGEN_LIR_PASS
  };
  return table;
}

const LirPassInfo* find_lir_pass(const std::string& name) {
  for (const LirPassInfo& p : lir_pass_table())
    if (name == p.name) return &p;
  return nullptr;
}

void run_lir_passes(lir::Module& m, LirStage stage, const LirPipelineOptions& options) {
  for (const LirPassInfo& pass : lir_pass_table()) {
    if (pass.stage != stage) continue;
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), pass.name) == options.only.end())
      continue;
    int changes = 0;
    for (lir::Function& f : m.functions) changes += pass.run(f);
    if (options.count) options.count(pass, changes);
    if (options.after_each) options.after_each(pass, m);
  }
}

}  // namespace scangen::codegen
