// Removes the outputs of scan nodes that nothing uses (and the states only they needed), in every
// graph and scan body. This is semantics, not an optimization: a value that no returned value
// depends on is not computed, so its run-time errors must not happen.
#pragma once

#include "ir/ir.h"

namespace scangen::ir {

Graph prune_dead_scan_outputs(const Graph& g);

}  // namespace scangen::ir
