// push-out-seq: step computations that depend only on sequences and parameters run once, over the
// whole sequence, before the loop — matrix products included: `u[t] @ W` becomes one product of
// the sequence's rows with W, whose row t the step reads (PyTensor stops at element-wise
// operations; this pass does not).
//
// Matches: in a scan without `until`, a node of the body that reads sequence taps (and maybe
// parameters and constants) but neither the loop index nor a state, that cannot fail, and that
// lifts row-wise (passes/lift.h: element-wise operations, casts, `row @ W`, reductions, constant
// indexings); the largest such computations the rest of the step uses.
// Produces: each computed before the loop over the rows the loop reads (a slice of the sequence
// per tap, in storage order, so that `reverse` reads it like any sequence), entering the scan as
// a new sequence read at tap 0. The original sequences stay: they still decide the number of
// steps and its checks, so errors are unchanged.
// Must not fire on: a scan with `until` (the loop may stop early; the rows after it must not be
// computed), a scan with `checkpoint` (its user asked for memory that does not grow with the steps;
// a precomputed sequence has a row per step), a computation that can fail, or one that reads the
// loop index or a state.
#include <unordered_set>

#include "ir/mutator.h"
#include "passes/lift.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Value;

// Body params that change with the step in a way a sequence cannot stand for: t and the states.
std::unordered_set<const ir::Node*> step_params(const ir::ScanNode& n) {
  const ir::ScanInfo& info = n.info();
  std::unordered_set<const ir::Node*> out{n.body().params[size_t(info.body_index_param())].node.get()};
  for (size_t s = 0; s < info.states.size(); ++s)
    for (size_t k = 0; k < info.states[s].lags.size(); ++k)
      out.insert(n.body().params[size_t(info.body_state_param(int(s), int(k)))].node.get());
  return out;
}

}  // namespace

ir::Program run_push_out_seq(const ir::Program& program, PassContext& context) {
  return rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    if (info.has_until || info.checkpoint > 0 || info.sequences.empty()) return std::nullopt;
    const ir::Graph& body = n.body();
    Loc loc = n.loc();

    // The number of rows the loop reads of every sequence: min(steps, what each allows), never
    // negative, so that every slice has it (when `steps` asks for more, the scan fails as before).
    Value rows;
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const Value& u = n.input(info.sequence_input(int(s)));
      Value allowed = b.binary(ir::BinaryOp::Sub, b.dim_size(u, 0, loc), b.int_constant(info.sequences[s].span(), loc), loc);
      rows = rows ? b.binary(ir::BinaryOp::Min, rows, allowed, loc) : allowed;
    }
    if (info.has_steps) rows = b.binary(ir::BinaryOp::Min, rows, n.input(info.steps_input()), loc);
    rows = b.binary(ir::BinaryOp::Max, rows, b.int_constant(0, loc), loc);

    Lifter lifter(b, loc);
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const ir::ScanSequence& seq = info.sequences[s];
      const Value& u = n.input(info.sequence_input(int(s)));
      for (size_t k = 0; k < seq.taps.size(); ++k) {
        int64_t tap = seq.taps[k];
        // Forward, step t reads row t + tap - m; reverse, row len - 1 - M + tap - t.
        Value lo = info.reverse
                       ? b.binary(ir::BinaryOp::Sub,
                                  b.binary(ir::BinaryOp::Add, b.dim_size(u, 0, loc),
                                           b.int_constant(tap - seq.max_tap(), loc), loc),
                                  rows, loc)
                       : b.int_constant(tap - seq.min_tap(), loc);
        Value hi = b.binary(ir::BinaryOp::Add, lo, rows, loc);
        Value slice = b.index(u, {ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true}}, {lo, hi}, loc);
        lifter.stacked_leaf(body.params[size_t(info.body_sequence_param(int(s), int(k)))], slice);
      }
    }
    for (int p = 0; p < info.num_params; ++p)
      lifter.invariant_leaf(body.params[size_t(info.body_param(p))], n.input(info.param_input(p)));

    // Candidates: stacked, liftable, not reading t or a state.
    std::unordered_set<const ir::Node*> forbidden = step_params(n);
    std::unordered_set<const ir::Node*> reads_step;
    std::unordered_set<const ir::Node*> candidate;
    std::vector<const ir::Node*> order = ir::topological_order(body);
    for (const ir::Node* node : order) {
      bool step = forbidden.count(node) > 0;
      for (const Value& in : node->inputs()) step = step || reads_step.count(in.node.get());
      if (step) reads_step.insert(node);
      if (step || node->kind() == ir::NodeKind::Param || node->kind() == ir::NodeKind::Constant) continue;
      if (node->num_outputs() == 1 && lifter.liftable(node->output(0)) && lifter.stacked(node->output(0)))
        candidate.insert(node);
    }
    // Roots: candidates used by the rest of the step or yielded.
    std::vector<const ir::Node*> roots;
    std::unordered_set<const ir::Node*> is_root;
    auto mark = [&](const Value& v) {
      if (candidate.count(v.node.get()) && is_root.insert(v.node.get()).second) roots.push_back(v.node.get());
    };
    for (const ir::Node* node : order)
      if (!candidate.count(node))
        for (const Value& in : node->inputs()) mark(in);
    for (const Value& r : body.results) mark(r);
    // A lone indexing or cast of a tap moves no work out of the loop; leave those.
    std::vector<const ir::Node*> worth;
    for (const ir::Node* r : roots)
      if (r->kind() != ir::NodeKind::Index && r->kind() != ir::NodeKind::Cast) worth.push_back(r);
    if (worth.empty()) return std::nullopt;

    // The new scan: the old sequences, then one per root, read at tap 0.
    ir::ScanInfo new_info = info;
    std::vector<Value> inputs;
    if (info.has_steps) inputs.push_back(n.input(info.steps_input()));
    for (size_t s = 0; s < info.sequences.size(); ++s) inputs.push_back(n.input(info.sequence_input(int(s))));
    auto new_body = std::make_shared<ir::Graph>();
    std::unordered_map<Value, Value, ir::ValueHash> replacements;
    auto copy_param = [&](int old_index) {
      const auto* p = body.params[size_t(old_index)].node->as<ir::ParamNode>();
      Value np = b.param(p->output_types()[0], int(new_body->params.size()), p->name(), p->loc());
      new_body->params.push_back(np);
      replacements.emplace(body.params[size_t(old_index)], np);
    };
    copy_param(info.body_index_param());
    for (size_t s = 0; s < info.sequences.size(); ++s)
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) copy_param(info.body_sequence_param(int(s), int(k)));
    int added = 0;
    for (const ir::Node* root : worth) {
      Value value = root->output(0);
      std::string label = "precomputed" + std::to_string(added++);
      new_info.sequences.push_back({{0}, label, {}});
      inputs.push_back(lifter.lift(value));
      Value np = b.param(value.type(), int(new_body->params.size()), label + "[t]", root->loc());
      new_body->params.push_back(np);
      replacements.emplace(value, np);
    }
    for (size_t s = 0; s < info.states.size(); ++s) {
      inputs.push_back(n.input(info.init_input(int(s))));
      for (size_t k = 0; k < info.states[s].lags.size(); ++k) copy_param(info.body_state_param(int(s), int(k)));
    }
    for (int p = 0; p < info.num_params; ++p) {
      inputs.push_back(n.input(info.param_input(p)));
      copy_param(info.body_param(p));
    }
    new_body->results = replace_values(replacements, body.results);
    context.fired(added);
    ir::NodeRef scan = b.rebuild_scan(n, std::move(inputs), std::move(new_info), new_body);
    std::vector<Value> outs;
    for (int i = 0; i < scan->num_outputs(); ++i) outs.push_back(scan->output(i));
    return outs;
  });
}

}  // namespace scangen::passes
