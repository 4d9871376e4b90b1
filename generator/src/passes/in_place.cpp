// in-place: a state whose init nothing else reads is computed in the state's own storage.
//
// Matches: a state of a scan whose steps are tensors (not scalars, which live in registers), that
// the step reads (an init no step reads is not copied anyway), and
// whose init is computed fresh by an operation of this graph (element-wise operations, fills,
// matrix products, reductions along an axis; set/inc too, though an index can always fail) used
// by nothing but this scan, once, and
// computed by nodes none of which can fail (the init is then computed just before the loop rather
// than with the scan's other inputs, which must not change which error comes first).
// Produces: the state marked `in-place` (ir::ScanState::init_in_place): the lowering writes the
// init straight into the first rows of the state's buffer instead of a buffer of its own that the
// loop would copy, saving one buffer and one copy per state.
// Must not fire on: an init that is an argument (the caller's buffer is read-only), a view (a
// slice, a reshape, a scan's result), a value also read elsewhere (returned, used by another
// node or twice by this scan), one whose computation can fail, or the state of an associative scan
// (parallel-scan: its runtime helper reads the init where it is).
#include <map>
#include <unordered_map>

#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::NodeKind;
using ir::Value;

bool computes_fresh_buffer(const ir::Node& n) {
  switch (n.kind()) {
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Call:
    case NodeKind::Cast:
    case NodeKind::Fill:
    case NodeKind::Arange:
    case NodeKind::MatMul:
    case NodeKind::Update: return true;
    case NodeKind::Reduce: return n.as<ir::ReduceNode>()->axis().has_value();
    // Views of their operand, scalars, or not written into a given buffer by the lowering.
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize:
    case NodeKind::Index:
    case NodeKind::CheckShape:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::Reshape:
    case NodeKind::StopGradient:
    case NodeKind::Transpose:
    case NodeKind::Gather:
    case NodeKind::ScatterAdd:
    case NodeKind::ArgReduce:
    case NodeKind::TopK:
    case NodeKind::Scan: return false;
  }
  return false;
}

}  // namespace

ir::Program run_in_place(const ir::Program& program, PassContext& context) {
  return rewrite_graphs(program, [&](const ir::Graph& graph) {
    // One scan at a time: mark its states, rebuild what reads it, look again.
    ir::Graph g = graph;
    ir::Builder builder;
    for (bool marked_one = true; marked_one;) {
      marked_one = false;
      std::vector<const ir::Node*> order = ir::topological_order(g);
      std::map<std::pair<const ir::Node*, int>, int> uses;
      for (const ir::Node* node : order)
        for (const Value& in : node->inputs()) ++uses[{in.node.get(), in.index}];
      for (const Value& r : g.results) ++uses[{r.node.get(), r.index}];
      for (const ir::Node* node : order) {
        const auto* scan = node->as<ir::ScanNode>();
        // An associative scan's helper reads its init where it is (parallel-scan).
        if (!scan || scan->info().assoc) continue;
        ir::ScanInfo info = scan->info();
        int marked = 0;
        for (size_t s = 0; s < info.states.size(); ++s) {
          ir::ScanState& state = info.states[s];
          const Value& init = scan->input(info.init_input(int(s)));
          bool tensor_steps = scan->output_types()[s].rank() >= 2;
          if (state.init_in_place || !tensor_steps || state.max_lag() == 0 || !computes_fresh_buffer(*init.node) ||
              uses[{init.node.get(), init.index}] != 1 || value_can_fail(init))
            continue;
          state.init_in_place = true;
          ++marked;
        }
        if (!marked) continue;
        ir::NodeRef rebuilt = builder.rebuild_scan(*scan, scan->inputs(), std::move(info), scan->body_ptr());
        std::unordered_map<Value, Value, ir::ValueHash> replacements;
        for (int i = 0; i < scan->num_outputs(); ++i) replacements.emplace(scan->output(i), rebuilt->output(i));
        g.results = replace_values(replacements, g.results);
        context.fired(marked);
        marked_one = true;
        break;
      }
    }
    return g;
  });
}

}  // namespace scangen::passes
