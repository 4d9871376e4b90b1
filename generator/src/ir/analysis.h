// Step variance: within a scan body, which values change from one step to the next (they depend
// on the loop index, a sequence tap or a state tap) and, dimension by dimension, which sizes do.
//
// The language requires every output of a scan to have the same shape at every step, and scangen
// computes those shapes before the first step (so that buffers are allocated once and a scan of
// zero steps still knows its step shape). A size is computable before the loop when it depends
// only on the scan's parameters: the frontend rejects outputs with a size that varies, and the
// interpreter and the lowering compute the others up front, leaving the sizes that vary unknown
// (a step value may have such a size as long as no output keeps it: `sum(z, axis = 0)` of an inner
// scan `z` that stops on `until` has the fixed shape of z's rows).
//
// Sizes are tracked per dimension: a dimension whose static type is a constant or a symbol of the
// signature never varies; an unknown one varies when what computes it does (the arguments of
// `arange`, `zeros`, a slice's bounds, a nested scan's number of steps, ...).
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace scangen::ir {

class StepVariance {
 public:
  // Analyzes the body of `scan`: its parameters are invariant, everything else a step reads varies;
  // every body parameter keeps its shape.
  explicit StepVariance(const ScanNode& scan);
  // Analyzes `body` given, per body parameter, whether its value varies and which of its
  // dimensions do.
  StepVariance(const Graph& body, std::vector<bool> param_varies, std::vector<std::vector<bool>> param_dims_vary);

  bool value_varies(const Value& v);
  // Per dimension of v: whether its size may differ from one step to the next.
  const std::vector<bool>& dims_vary(const Value& v);
  // Whether any dimension of v varies.
  bool shape_varies(const Value& v);

 private:
  std::vector<bool> param_varies_;
  std::vector<std::vector<bool>> param_dims_vary_;
  std::unordered_map<const Node*, bool> value_memo_;
  std::unordered_map<const Node*, std::vector<std::vector<bool>>> dims_memo_;
  std::vector<std::vector<bool>> node_dims_vary(const Node& n);
  std::vector<bool> broadcast_dims_vary(const Node& n);
  std::vector<bool> index_dims_vary(const Node& n);
  std::vector<std::vector<bool>> scan_dims_vary(const ScanNode& n);
};

}  // namespace scangen::ir
