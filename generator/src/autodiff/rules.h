// The derivative rules: one per IR node kind (nodes.def) and, for the element-wise and reduction
// kinds, one per operator (ops.def). Each table is generated from its list, so a node kind or an
// operator added without its rule fails to build.
#pragma once

#include "autodiff/context.h"

namespace scangen::autodiff {

// The cotangents of a node's inputs (an empty Value where none flows or `needed` is false) from
// those of its outputs (an empty Value where none arrived).
using Rule = std::vector<Value> (*)(AdjointContext& ctx, const ir::Node& node,
                                    const std::vector<Value>& output_cotangents, const std::vector<bool>& needed);

#define IR_NODE(kind, name, checks)                                                      \
  std::vector<Value> rule_##kind(AdjointContext& ctx, const ir::Node& node,              \
                                 const std::vector<Value>& output_cotangents, const std::vector<bool>& needed);
#include "ir/nodes.def"
#undef IR_NODE

Rule rule_for(ir::NodeKind kind);

// Thrown by the rule of an imported function's call when a cotangent is needed for a float
// parameter whose partial derivative (f_d<i>) the header does not define; the frontend reports it
// at the call.
struct MissingPartial {
  const ir::CallNode* call;
  int param;
};

// The rule of a scan with checkpoint = N (checkpoint.cpp).
std::vector<Value> checkpointed_adjoint(AdjointContext& ctx, const ir::ScanNode& scan,
                                        const std::vector<Value>& output_cotangents, const std::vector<bool>& needed);

// Whether each operator has its rule (for the test that lists them): the tables' sizes are
// checked at compile time, their order here.
bool rule_tables_in_order();

}  // namespace scangen::autodiff
