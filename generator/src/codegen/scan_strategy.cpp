// The cost model of associative scans: scan_strategy.h.
#include "codegen/scan_strategy.h"

#include "codegen/loop_ir.h"
#include "codegen/lowering/assoc_scans.h"

namespace scangen::codegen {
namespace {

int plan(lir::Stmt& s, const ScanCostModel& costs) {
  int n = 0;
  if (lowering::is_assoc_scan_call(s)) {
    s.args[lowering::kScanChunkMinSteps] = lir::i64(costs.chunk_min_steps);
    s.args[lowering::kScanChunkMaxLanes] = lir::i64(costs.chunk_max_lanes);
    ++n;
  }
  for (const lir::StmtRef& c : s.body) n += plan(*c, costs);
  for (const lir::StmtRef& c : s.else_body) n += plan(*c, costs);
  return n;
}

}  // namespace

int plan_cpu_scans(lir::Function& f) { return plan(*f.body, kCpuScanCosts); }
int plan_cuda_scans(lir::Function& f) { return plan(*f.body, kCudaScanCosts); }

}  // namespace scangen::codegen
