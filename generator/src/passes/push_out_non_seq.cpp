// push-out-non-seq: step computations that depend only on the scan's parameters and constants run
// once, before the loop (matrix products included).
//
// Matches: a node of a scan body whose value does not change from step to step (it reads neither
// the loop index nor a sequence or state tap), that cannot fail (passes/util.h: can_fail), and
// whose operands are parameters, constants or such nodes; the largest such computations used by
// the rest of the step are recomputed outside the scan and enter it as new parameters.
// Produces: the computation before the loop; the step reads the new parameter, which comes right
// after the first old parameter the computation reads (so outside values keep their order).
// Must not fire on: a computation that can fail (moved out, it would run, and fail, even when the
// loop takes zero steps), a nested scan that can fail included; a bare constant or parameter
// (nothing to gain). A nested scan over parameters only that cannot fail moves out whole.
#include <algorithm>
#include <functional>
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

    // The number i of the scan param a step param is (inputs param_input(i), body body_param(i)).
    const int first_body_param = info.body_param(0);
    auto scan_param = [&](const ir::ParamNode& p) {
      const int i = p.index() - first_body_param;
      SCANGEN_CHECK(i >= 0 && i < info.num_params, "a movable node reads a step param");
      return i;
    };

    // Movable: invariant, cannot fail, built only from params, constants and movable nodes. Each
    // maps to the first scan param its computation reads (num_params when none), where its new
    // param will go.
    std::unordered_map<const ir::Node*, int> movable;
    for (const ir::Node* node : order) {
      if (node->kind() == ir::NodeKind::Param || node->kind() == ir::NodeKind::Constant) continue;
      if (node->num_outputs() != 1 || variance.value_varies(node->output(0)) || can_fail(*node)) continue;
      bool ok = true;
      int first_read = info.num_params;
      for (const Value& in : node->inputs()) {
        // Only the scan's parameters exist outside: the size of a state tap is invariant but has
        // no outside value to be computed from.
        ir::NodeKind k = in.node->kind();
        if (k == ir::NodeKind::Param ? variance.value_varies(in) : k != ir::NodeKind::Constant && !movable.count(in.node.get()))
          ok = false;
        else if (k == ir::NodeKind::Param)
          first_read = std::min(first_read, scan_param(*in.node->as<ir::ParamNode>()));
        else if (k != ir::NodeKind::Constant)
          first_read = std::min(first_read, movable.at(in.node.get()));
      }
      if (ok) movable.emplace(node, first_read);
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
      if (const auto* p = node->as<ir::ParamNode>()) return n.input(info.param_input(scan_param(*p)));
      auto it = outside.find(node);
      if (it != outside.end()) return it->second;
      std::vector<Value> inputs;
      for (const Value& in : node->inputs()) inputs.push_back(lift(in));
      Value out(node->kind() == ir::NodeKind::Constant ? node->shared_from_this() : b.rebuild(*node, inputs), 0);
      outside.emplace(node, out);
      return out;
    };

    // The new scan: one more param per root, the step reading it, placed right after the first of
    // the scan's params its computation reads. The scan's inputs are computed in order, so an
    // outside value read only by the moved computation (a param that remove-constants-and-unused
    // then drops) is still computed where it was: appended last, it would be computed after the
    // other params, and of two failing values the other's error would come first (seed 116010).
    std::vector<std::vector<const ir::Node*>> roots_after(size_t(info.num_params) + 1);
    for (const ir::Node* root : roots) roots_after[size_t(movable.at(root))].push_back(root);

    ir::ScanInfo new_info = info;
    std::vector<Value> inputs(n.inputs().begin(), n.inputs().begin() + info.param_input(0));
    auto new_body = std::make_shared<ir::Graph>();
    std::unordered_map<Value, Value, ir::ValueHash> replacements;
    auto add_param = [&](const Value& old, const Value& input, const std::string& name, const Loc& loc) {
      Value np = b.param(old.type(), int(new_body->params.size()), name, loc);
      new_body->params.push_back(np);
      replacements.emplace(old, np);
      if (input.node) inputs.push_back(input);
    };
    for (int i = 0; i < first_body_param; ++i) {
      const auto* pn = body.params[size_t(i)].node->as<ir::ParamNode>();
      add_param(body.params[size_t(i)], Value(), pn->name(), pn->loc());
    }
    auto add_roots = [&](int after) {
      for (const ir::Node* root : roots_after[size_t(after)]) {
        add_param(root->output(0), lift(root->output(0)), "invariant" + std::to_string(new_info.num_params++),
                  root->loc());
      }
    };
    for (int i = 0; i < info.num_params; ++i) {
      const Value& old = body.params[size_t(info.body_param(i))];
      const auto* pn = old.node->as<ir::ParamNode>();
      add_param(old, n.input(info.param_input(i)), pn->name(), pn->loc());
      add_roots(i);
    }
    add_roots(info.num_params);
    new_body->results = replace_values(replacements, body.results);
    context.fired(int(roots.size()));
    ir::NodeRef scan = b.rebuild_scan(n, std::move(inputs), std::move(new_info), new_body);
    std::vector<Value> outs;
    for (int i = 0; i < scan->num_outputs(); ++i) outs.push_back(scan->output(i));
    return outs;
  });
}

}  // namespace scangen::passes
