// Step variance: within a scan body, which values change from one step to the next (they depend
// on the loop index, a sequence tap or a state tap) and which shapes do.
//
// The language requires every output of a scan to have the same shape at every step, and scangen
// computes those shapes before the first step (so that buffers are allocated once and a scan of
// zero steps still knows its step shape). A shape is computable before the loop when it depends
// only on the scan's parameters: the frontend rejects outputs whose shape varies, the interpreter
// and the lowering compute the others up front.
#pragma once

#include <unordered_map>

#include "ir/ir.h"

namespace scangen::ir {

class StepVariance {
 public:
  // Analyzes the body of `scan`: its parameters are invariant, everything else a step reads varies.
  explicit StepVariance(const ScanNode& scan);
  // Analyzes `body` with the given variance of its params.
  StepVariance(const Graph& body, std::vector<bool> param_varies);

  bool value_varies(const Value& v);
  bool shape_varies(const Value& v);

 private:
  std::vector<bool> param_varies_;
  std::unordered_map<const Node*, bool> value_memo_;
  std::unordered_map<const Node*, std::vector<bool>> shape_memo_;
  std::vector<bool> node_shape_varies(const Node& n);
};

}  // namespace scangen::ir
