// What every derivative rule works with: the builder and location of the adjoint IR being built,
// and how a value of the differentiated graph is seen from there (its primal value).
//
// At the top level of a function the adjoint is built beside the graph it differentiates, so a
// value is its own primal. Inside the step of a backward scan the differentiated graph is the
// forward step's, and its values are recomputed (or read from what the forward pass saved) in the
// backward step: see scan_adjoint.cpp.
#pragma once

#include <functional>

#include "ir/builder.h"

namespace scangen::autodiff {

using ir::Value;

struct AdjointContext {
  ir::Builder& builder;
  Loc loc;  // of the grad() call: the adjoint's nodes are located there
  std::function<Value(const Value&)> primal_of;

  Value primal(const Value& v) const { return primal_of ? primal_of(v) : v; }
};

// Reverse mode over the nodes that `seeds` reach: each seed is a value of the differentiated graph
// and its cotangent (a value where the adjoint is built). Returns the cotangent of each of `wrt`,
// an empty Value where none flows (so that a disconnected input costs nothing and gets exact
// zeros, not 0 * something). Gradients flow only through float values, and not through
// stop_gradient.
std::vector<Value> backprop(AdjointContext& ctx, const std::vector<std::pair<Value, Value>>& seeds,
                            const std::vector<Value>& wrt);

}  // namespace scangen::autodiff
