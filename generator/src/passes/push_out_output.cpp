// push-out-output: computation at the end of the step that nothing later in the loop reads (e.g.
// `y[t] = x[t] @ W_out`) runs once after the loop, over all the steps taken.
//
// Matches: a per-step output whose value the loop itself does not need (neither a state nor the
// `until` condition reads it) and which lifts row-wise (passes/lift.h) from the current values of
// the states (whose results hold them, one row per step taken), parameters and constants — and,
// in a forward scan, sequence taps (rows sliced to the steps taken).
// Produces: the output computed after the loop from the stacked results; the scan no longer
// computes it (ir/prune.h removes it). With `until` the stacked results hold the steps taken, so
// nothing extra is computed.
// Must not fire on: an output the loop needs, one computed from a past state (`x[t - 1]`), from a
// state whose results are windowed, or from sequence taps of a reverse scan.
#include <unordered_set>

#include "ir/mutator.h"
#include "ir/prune.h"
#include "passes/lift.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {

using ir::Value;

ir::Program run_push_out_output(const ir::Program& program, PassContext& context) {
  ir::Program out = rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    const ir::Graph& body = n.body();
    int num_states = int(info.states.size());
    if (info.outputs.empty()) return std::nullopt;
    Loc loc = n.loc();

    // What the loop needs: everything the states and the until condition read.
    ir::Graph needed;
    for (int s = 0; s < num_states; ++s) needed.results.push_back(body.results[size_t(s)]);
    if (info.has_until) needed.results.push_back(body.results.back());
    std::unordered_set<const ir::Node*> loop_needs;
    for (const ir::Node* node : ir::topological_order(needed)) loop_needs.insert(node);

    Lifter lifter(b, loc);
    // The current value of a state is row t of its results.
    for (int s = 0; s < num_states; ++s)
      if (info.window(s) == 0) lifter.stacked_leaf(body.results[size_t(s)], n.output(s));
    for (int p = 0; p < info.num_params; ++p)
      lifter.invariant_leaf(body.params[size_t(info.body_param(p))], n.input(info.param_input(p)));
    if (!info.reverse && num_states + int(info.outputs.size()) > 0) {
      // Sequence rows of the steps taken (the results' number of rows).
      Value taken = b.dim_size(n.output(0), 0, loc);
      for (size_t s = 0; s < info.sequences.size(); ++s) {
        const ir::ScanSequence& seq = info.sequences[s];
        const Value& u = n.input(info.sequence_input(int(s)));
        for (size_t k = 0; k < seq.taps.size(); ++k) {
          Value lo = b.int_constant(seq.taps[k] - seq.min_tap(), loc);
          Value hi = b.binary(ir::BinaryOp::Add, lo, taken, loc);
          Value slice = b.index(u, {ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true}}, {lo, hi}, loc);
          lifter.stacked_leaf(body.params[size_t(info.body_sequence_param(int(s), int(k)))], slice);
        }
      }
    }
    // The stacked results must have every row: windows would hide some. Output 0 gives the count.
    if (info.window(0) != 0) return std::nullopt;

    std::vector<Value> outs;
    for (int i = 0; i < n.num_outputs(); ++i) outs.push_back(n.output(i));
    int moved = 0;
    for (size_t o = 0; o < info.outputs.size(); ++o) {
      int i = num_states + int(o);
      const Value& result = body.results[size_t(i)];
      if (info.window(i) != 0 || lifter.is_leaf(result)) continue;
      if (loop_needs.count(result.node.get()) || result.node->kind() == ir::NodeKind::Param) continue;
      if (!lifter.liftable(result) || !lifter.stacked(result)) continue;
      // Every node the lifted output reads must be outside the loop's needs, or a leaf.
      outs[size_t(i)] = lifter.lift(result);
      ++moved;
    }
    if (moved == 0) return std::nullopt;
    context.fired(moved);
    return outs;
  });
  // The outputs now computed after the loop are no longer read from the scan.
  for (ir::Function& f : out.functions) f.graph = ir::prune_dead_scan_outputs(f.graph);
  return out;
}

}  // namespace scangen::passes
