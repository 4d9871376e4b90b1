// Rebuilds graphs bottom-up. For every node reachable from the results, after its inputs have been
// mutated, visit_<Kind>(node, new_inputs) returns the values that replace the node's outputs. The
// default keeps the node when its inputs are unchanged and rebuilds it otherwise, so a rewrite
// overrides only the kinds it cares about. Scan bodies are not entered unless an override does.
#pragma once

#include <unordered_map>

#include "ir/builder.h"

namespace scangen::ir {

class Mutator {
 public:
  virtual ~Mutator() = default;

  // The graph with the same params and its results mutated.
  Graph mutate(const Graph& g);
  Value mutate(const Value& v);

 protected:
  // The node unchanged when its inputs are, else rebuilt on the new inputs.
  std::vector<Value> keep_or_rebuild(const Node& n, std::vector<Value> inputs);

#define IR_NODE(kind, name, checks)                                                   \
  virtual std::vector<Value> visit_##kind(const kind##Node& n, std::vector<Value> inputs) { \
    return keep_or_rebuild(n, std::move(inputs));                                    \
  }
#include "ir/nodes.def"
#undef IR_NODE

  Builder builder;

 private:
  std::vector<Value> dispatch(const Node& n, std::vector<Value> inputs);
  const std::vector<Value>& mutated(const Node* n);

  std::unordered_map<const Node*, std::vector<Value>> memo_;
};

// `results` rebuilt with every graph parameter i replaced by replacements[i] (scan bodies inside
// are left alone: they have their own parameters).
std::vector<Value> substitute_params(const std::vector<Value>& replacements, const std::vector<Value>& results);

}  // namespace scangen::ir
