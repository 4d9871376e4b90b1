// The interpreter's evaluation of one node given its inputs' values (NodeEval) and of a graph
// node by node (GraphEval); what one run keeps for all its steps (RunState).
#pragma once

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "interpreter/import_shim.h"
#include "ir/visitor.h"
#include "scangen/runtime/tensor.h"

namespace scangen::interp {

// What one run of a function keeps for all its steps: the imported functions' shim entries. The
// headers are those of the run's start (as for emitted code, compiled once), so each call node's
// shim is looked up, and its headers hashed, once per run instead of at every step.
class RunState {
 public:
  ImportedEntry imported(const ir::CallNode& n) {
    auto key = std::make_pair(n.import().get(), n.function_index());
    auto it = imported_.find(key);
    if (it == imported_.end()) it = imported_.emplace(key, imported_entry(*n.import(), n.function_index())).first;
    return it->second;
  }

 private:
  std::map<std::pair<const ir::Import*, int>, ImportedEntry> imported_;
};

// Size `size` of input `input` of a fill (zeros, ones, ...), failing when it is negative.
int64_t checked_fill_size(const ir::Node& fill, int input, int64_t size);

// Evaluates one node given its input values (node_eval.cpp; scans in scan_eval.cpp).
class NodeEval : public ir::Visitor<std::vector<HostTensor>> {
 public:
  NodeEval(const std::vector<HostTensor>& inputs, RunState& run) : in_(inputs), run_(run) {}

  // Which of the node's outputs something reads (empty: all of them).
  std::vector<bool> used_outputs;

 protected:
#define IR_NODE(kind, name, checks) std::vector<HostTensor> visit_##kind(const ir::kind##Node& n) override;
#include "ir/nodes.def"
#undef IR_NODE

 private:
  const std::vector<HostTensor>& in_;
  RunState& run_;
};

// Per node of a graph, which of its outputs something reads (another node or the results): a
// scan keeps no rows of an output nobody reads, as compiled code keeps none.
using OutputUses = std::unordered_map<const ir::Node*, std::vector<bool>>;
OutputUses output_uses(const ir::Graph& g, const std::vector<const ir::Node*>& order);

// Evaluates a graph: every node reachable from its results, in topological order.
class GraphEval {
 public:
  GraphEval(std::vector<HostTensor> params, RunState& run) : params_(std::move(params)), run_(run) {}

  // `order` is topological_order(g) and `uses` output_uses(g, order), computed once by the caller.
  std::vector<HostTensor> results(const ir::Graph& g, const std::vector<const ir::Node*>& order, const OutputUses& uses);

 private:
  const HostTensor& value_of(const ir::Value& v);
  void evaluate(const ir::Node& n);

  std::vector<HostTensor> params_;
  RunState& run_;
  std::unordered_map<const ir::Node*, std::vector<HostTensor>> memo_;
  const OutputUses* uses_ = nullptr;
};

}  // namespace scangen::interp
