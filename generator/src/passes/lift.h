// Row-wise lifting: what a scan body computes at each step, computed once for all steps over
// "stacked" operands (one row per step, in the same order). Shared by push-out-seq (over rows of
// the sequences) and push-out-output (over the rows of the scan's results).
//
// A body value is a *stacked leaf* (its row at step t is row t of an outer tensor), an
// *invariant leaf* (the same outer value at every step: a parameter), a constant, or a node whose
// operands lift. A lifted stacked value has shape [n] + its step shape. Element-wise operations
// broadcast exactly as in the step (a stacked operand of lower rank gets dimensions of size 1
// inserted after n); `row @ W` becomes one matrix product (a row that is a matrix is reshaped to
// [n * m, k] first); reductions and indexings shift their axes by one. Only operations that cannot
// fail are lifted (passes/util.h: can_fail), so lifting never raises an error the loop would not.
#pragma once

#include <unordered_map>

#include "ir/builder.h"

namespace scangen::passes {

class Lifter {
 public:
  Lifter(ir::Builder& builder, Loc loc) : b_(builder), loc_(loc) {}

  void stacked_leaf(const ir::Value& body_value, ir::Value stacked);
  void invariant_leaf(const ir::Value& body_value, ir::Value outer);
  bool is_leaf(const ir::Value& v) const { return leaves_.count(v) > 0; }

  // Whether v can be computed for all steps at once; creates no node.
  bool liftable(const ir::Value& v);
  // Whether v's lifted value has one row per step (else it is the same at every step).
  bool stacked(const ir::Value& v);
  // The lifted value (call only when liftable).
  ir::Value lift(const ir::Value& v);

 private:
  struct Leaf {
    ir::Value outer;
    bool stacked;
  };
  ir::Value steps_of(const ir::Value& lifted) { return b_.dim_size(lifted, 0, loc_); }
  // A stacked value with its step shape padded to `rank` by leading 1s (for broadcasting).
  ir::Value expand(const ir::Value& lifted, int row_rank, int rank);
  ir::Value dim(const ir::Value& x, int axis) { return b_.dim_size(x, axis, loc_); }

  ir::Builder& b_;
  Loc loc_;
  std::unordered_map<ir::Value, Leaf, ir::ValueHash> leaves_;
  std::unordered_map<ir::Value, bool, ir::ValueHash> liftable_;
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> lifted_;
};

}  // namespace scangen::passes
