// Reverse-mode differentiation of the IR: what the frontend calls for grad(C, w).
//
// The result is ordinary IR built beside the differentiated graph (backward scans included), so
// the interpreter runs it, the rewrites optimize it, the backends emit it, and a gradient can be
// differentiated again. docs/gradients.md describes what users see.
#pragma once

#include "ir/builder.h"

namespace scangen::autodiff {

// d cost / d w for each w of `wrt`, each of w's dtype and shape (zeros where cost does not depend
// on w). cost is a float scalar. w is held as an independent variable: everything computed from it
// changes with it, nothing else does.
std::vector<ir::Value> gradients(ir::Builder& builder, const ir::Value& cost, const std::vector<ir::Value>& wrt,
                                 Loc loc);

// The graph of f with every stop_gradient marker replaced by its operand, scan bodies included:
// once every grad of a function is expanded, the markers have done their job.
void strip_stop_gradients(ir::Function& f);

}  // namespace scangen::autodiff
