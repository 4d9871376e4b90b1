#include "ir/mutator.h"

#include "support/check.h"

namespace scangen::ir {

std::vector<Value> Mutator::keep_or_rebuild(const Node& n, std::vector<Value> inputs) {
  bool changed = false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] != n.inputs()[i]) changed = true;
  NodeRef node = changed ? builder.rebuild(n, std::move(inputs)) : n.shared_from_this();
  std::vector<Value> outs;
  for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(Value(node, i));
  return outs;
}

std::vector<Value> Mutator::dispatch(const Node& n, std::vector<Value> inputs) {
  switch (n.kind()) {
#define IR_NODE(kind, name, checks) \
  case NodeKind::kind: return visit_##kind(static_cast<const kind##Node&>(n), std::move(inputs));
#include "ir/nodes.def"
#undef IR_NODE
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

const std::vector<Value>& Mutator::mutated(const Node* root) {
  auto hit = memo_.find(root);
  if (hit != memo_.end()) return hit->second;
  // Iterative post-order so that long chains cannot overflow the stack.
  std::vector<std::pair<const Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs().size()) {
      const Node* in = node->inputs()[next++].node.get();
      if (!memo_.count(in)) stack.push_back({in, 0});
      continue;
    }
    if (!memo_.count(node)) {
      std::vector<Value> inputs;
      inputs.reserve(node->inputs().size());
      for (const Value& in : node->inputs()) inputs.push_back(memo_.at(in.node.get()).at(size_t(in.index)));
      std::vector<Value> outs = dispatch(*node, std::move(inputs));
      SCANGEN_CHECK(int(outs.size()) == node->num_outputs(), "a mutator returned the wrong number of outputs");
      memo_.emplace(node, std::move(outs));
    }
    stack.pop_back();
  }
  return memo_.at(root);
}

Value Mutator::mutate(const Value& v) { return mutated(v.node.get()).at(size_t(v.index)); }

Graph Mutator::mutate(const Graph& g) {
  Graph out;
  out.params = g.params;
  for (const Value& r : g.results) out.results.push_back(mutate(r));
  return out;
}

namespace {

class ParamReplacer : public Mutator {
 public:
  explicit ParamReplacer(const std::vector<Value>& params) : params_(params) {}

 protected:
  std::vector<Value> visit_Param(const ParamNode& n, std::vector<Value>) override {
    SCANGEN_CHECK(size_t(n.index()) < params_.size() && params_[size_t(n.index())], "param without a replacement");
    return {params_[size_t(n.index())]};
  }

 private:
  const std::vector<Value>& params_;
};

}  // namespace

std::vector<Value> substitute_params(const std::vector<Value>& replacements, const std::vector<Value>& results) {
  ParamReplacer r(replacements);
  std::vector<Value> out;
  for (const Value& v : results) out.push_back(r.mutate(v));
  return out;
}

}  // namespace scangen::ir
