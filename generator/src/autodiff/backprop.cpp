// Reverse-mode accumulation over a graph: the cotangent of every value that depends on one of the
// variables is the sum of what its users' rules give it, users first.
#include <unordered_map>
#include <unordered_set>

#include "autodiff/context.h"
#include "autodiff/rules.h"
#include "autodiff/tensor_ops.h"

namespace scangen::autodiff {

namespace {

using ValueSet = std::unordered_set<Value, ir::ValueHash>;

// The float values that change with one of `wrt`: the variables themselves and everything computed
// from them, except through stop_gradient.
ValueSet active_values(const std::vector<const ir::Node*>& order, const std::vector<Value>& wrt) {
  ValueSet active;
  for (const Value& w : wrt)
    if (is_float(w.type().dtype)) active.insert(w);
  for (const ir::Node* n : order) {
    if (n->kind() == ir::NodeKind::StopGradient) continue;
    bool reads_active = false;
    for (const Value& in : n->inputs()) reads_active = reads_active || active.count(in);
    if (!reads_active) continue;
    for (int i = 0; i < n->num_outputs(); ++i)
      if (is_float(n->output_types()[size_t(i)].dtype)) active.insert(n->output(i));
  }
  return active;
}

}  // namespace

std::vector<Value> backprop(AdjointContext& ctx, const std::vector<std::pair<Value, Value>>& seeds,
                            const std::vector<Value>& wrt) {
  ir::Graph reached;
  for (const auto& s : seeds) reached.results.push_back(s.first);
  const std::vector<const ir::Node*> order = ir::topological_order(reached);
  const ValueSet active = active_values(order, wrt);

  std::unordered_map<Value, Value, ir::ValueHash> cotangent;
  auto accumulate = [&](const Value& v, const Value& g) {
    if (!active.count(v)) return;
    auto it = cotangent.find(v);
    if (it == cotangent.end()) cotangent.emplace(v, g);
    else it->second = add(ctx, it->second, g);
  };
  for (const auto& [v, g] : seeds) accumulate(v, g);

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& n = **it;
    std::vector<Value> outs(size_t(n.num_outputs()));
    bool arrived = false;
    for (int i = 0; i < n.num_outputs(); ++i) {
      auto c = cotangent.find(n.output(i));
      if (c != cotangent.end()) outs[size_t(i)] = c->second, arrived = true;
    }
    std::vector<bool> needed(size_t(n.num_inputs()));
    bool any_needed = false;
    for (int i = 0; i < n.num_inputs(); ++i) any_needed |= needed[size_t(i)] = active.count(n.input(i)) > 0;
    if (!arrived || !any_needed) continue;
    std::vector<Value> ins = rule_for(n.kind())(ctx, n, outs, needed);
    for (int i = 0; i < n.num_inputs(); ++i)
      if (needed[size_t(i)] && ins[size_t(i)]) accumulate(n.input(i), ins[size_t(i)]);
  }

  std::vector<Value> out;
  for (const Value& w : wrt) {
    auto c = cotangent.find(w);
    out.push_back(c != cotangent.end() ? c->second : Value());
  }
  return out;
}

}  // namespace scangen::autodiff
