// push-out-non-seq: step computations that depend only on the scan's parameters and constants run
// once, before the loop (matrix products included).
//
// Matches: a node of a scan body whose value does not change from step to step (it reads neither
// the loop index nor a sequence or state tap), that cannot fail (passes/util.h: can_fail), and
// whose operands are parameters, constants or such nodes; the largest such computations used by
// the rest of the step are recomputed outside the scan and enter it as new parameters.
// Produces: the computation before the loop; the step reads the new parameter.
// Must not fire on: a computation that can fail (moved out, it would run, and fail, even when the
// loop takes zero steps), a nested scan that can fail included; a bare constant or parameter
// (nothing to gain). A nested scan over parameters only that cannot fail moves out whole.
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis.h"
#include "ir/mutator.h"
#include "passes/pass.h"
#include "passes/util.h"
#include "support/check.h"

namespace scangen::passes {
namespace {

using ir::Value;

}  // namespace

ir::Program run_push_out_non_seq(const ir::Program& program, PassContext& context) {
  return rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    const ir::Graph& body = n.body();
    ir::StepVariance variance(n);
    std::vector<const ir::Node*> order = ir::topological_order(body);

    // Movable: invariant, cannot fail, built only from params, constants and movable nodes.
    std::unordered_set<const ir::Node*> movable;
    for (const ir::Node* node : order) {
      if (node->kind() == ir::NodeKind::Param || node->kind() == ir::NodeKind::Constant) continue;
      if (node->num_outputs() != 1 || variance.value_varies(node->output(0)) || can_fail(*node)) continue;
      bool ok = true;
      for (const Value& in : node->inputs()) {
        // Only the scan's parameters exist outside: the size of a state tap is invariant but has
        // no outside value to be computed from.
        ir::NodeKind k = in.node->kind();
        if (k == ir::NodeKind::Param ? variance.value_varies(in) : k != ir::NodeKind::Constant && !movable.count(in.node.get()))
          ok = false;
      }
      if (ok) movable.insert(node);
    }
    // Roots: movable nodes the rest of the step (or its results) uses.
    std::vector<const ir::Node*> roots;
    std::unordered_set<const ir::Node*> is_root;
    auto mark = [&](const Value& v) {
      if (movable.count(v.node.get()) && is_root.insert(v.node.get()).second) roots.push_back(v.node.get());
    };
    for (const ir::Node* node : order)
      if (!movable.count(node))
        for (const Value& in : node->inputs()) mark(in);
    for (const Value& r : body.results) mark(r);
    if (roots.empty()) return std::nullopt;

    // The same computations outside, over the scan's inputs.
    std::unordered_map<const ir::Node*, Value> outside;
    std::function<Value(const Value&)> lift = [&](const Value& v) -> Value {
      const ir::Node* node = v.node.get();
      if (const auto* p = node->as<ir::ParamNode>()) {
        for (int i = 0; i < info.num_params; ++i)
          if (info.body_param(i) == p->index()) return n.input(info.param_input(i));
        SCANGEN_UNREACHABLE("a movable node reads a step param");
      }
      auto it = outside.find(node);
      if (it != outside.end()) return it->second;
      std::vector<Value> inputs;
      for (const Value& in : node->inputs()) inputs.push_back(lift(in));
      Value out(node->kind() == ir::NodeKind::Constant ? node->shared_from_this() : b.rebuild(*node, inputs), 0);
      outside.emplace(node, out);
      return out;
    };

    // The new scan: one more param per root, the step reading it.
    ir::ScanInfo new_info = info;
    std::vector<Value> inputs(n.inputs());
    auto new_body = std::make_shared<ir::Graph>();
    std::vector<Value> same_params;
    for (const Value& p : body.params) {
      const auto* pn = p.node->as<ir::ParamNode>();
      Value np = b.param(pn->output_types()[0], int(new_body->params.size()), pn->name(), pn->loc());
      new_body->params.push_back(np);
      same_params.push_back(np);
    }
    std::unordered_map<Value, Value, ir::ValueHash> replacements;
    for (size_t i = 0; i < body.params.size(); ++i) replacements.emplace(body.params[i], same_params[i]);
    for (const ir::Node* root : roots) {
      Value value = root->output(0);
      inputs.push_back(lift(value));
      Value np = b.param(value.type(), int(new_body->params.size()), "invariant" + std::to_string(new_info.num_params),
                         root->loc());
      new_body->params.push_back(np);
      replacements.emplace(value, np);
      ++new_info.num_params;
    }
    new_body->results = replace_values(replacements, body.results);
    context.fired(int(roots.size()));
    ir::NodeRef scan = b.rebuild_scan(n, std::move(inputs), std::move(new_info), new_body);
    std::vector<Value> outs;
    for (int i = 0; i < scan->num_outputs(); ++i) outs.push_back(scan->output(i));
    return outs;
  });
}

}  // namespace scangen::passes
