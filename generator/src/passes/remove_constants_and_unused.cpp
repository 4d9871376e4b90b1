// remove-constants-and-unused: a scan's parameters that are constants move into its step; what the
// step does not read goes away, to a fixpoint.
//
// Matches: a scan parameter whose value is a scalar constant (the step uses the constant: it
// folds there, and the loop has one input less); a parameter the step never reads; a sequence tap
// the step never reads when dropping it changes neither m nor M (the taps' span decides the
// number of steps, so taps in the text count even unused); a sequence whose taps are all unused
// when its length provably does not decide the number of steps (another kept sequence is no
// longer, or `steps` is given and it is provably long enough); states and outputs nothing needs
// (ir/prune.h), keeping whatever `until` reads.
// Must not fire on: a sequence that may be the shortest, or may be too short for `steps`, or
// whose computation can fail (its removal would change the number of steps or remove an error).
#include <set>

#include "ir/mutator.h"
#include "ir/prune.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Dim;
using ir::Value;

// a <= b whatever the arguments.
bool provably_le(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return a.offset() <= b.offset();
  if (a.kind() != b.kind() || a.kind() == Dim::Kind::Const) return false;
  // The same symbol (or the same unknown) plus offsets.
  Dim a0 = a.plus(-a.offset()), b0 = b.plus(-b.offset());
  return a0.same_as(b0) && a.offset() <= b.offset();
}

std::set<int> params_read(const ir::Graph& body) {
  std::set<int> read;
  for (const ir::Node* n : ir::topological_order(body))
    if (const auto* p = n->as<ir::ParamNode>()) read.insert(p->index());
  return read;
}

std::pair<int64_t, int64_t> span_of(const std::vector<int64_t>& taps) {
  int64_t m = 0, M = 0;
  for (int64_t k : taps) {
    m = std::min(m, k);
    M = std::max(M, k);
  }
  return {m, M};
}

}  // namespace

ir::Program run_remove_constants_and_unused(const ir::Program& program, PassContext& context) {
  ir::Program out = rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    const ir::Graph& body = n.body();
    std::set<int> read = params_read(body);
    int removed = 0;

    // Parameters: constants are inlined, unread ones dropped.
    std::vector<Value> replacement(body.params.size());
    std::vector<int> kept_params;
    for (int p = 0; p < info.num_params; ++p) {
      int index = info.body_param(p);
      const Value& outer = n.input(info.param_input(p));
      if (auto c = ir::constant_value(outer); c && read.count(index)) {
        replacement[size_t(index)] = b.constant(*c, outer.node->loc());
        ++removed;
      } else if (!read.count(index)) {
        ++removed;
      } else {
        kept_params.push_back(p);
      }
    }
    // Sequences: unread taps that leave the span alone, and whole unread sequences that cannot
    // decide the number of steps.
    std::vector<std::vector<bool>> keep_tap(info.sequences.size());
    std::vector<bool> keep_seq(info.sequences.size(), true);
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const auto& taps = info.sequences[s].taps;
      keep_tap[s].assign(taps.size(), true);
      for (size_t k = 0; k < taps.size(); ++k) {
        if (read.count(info.body_sequence_param(int(s), int(k)))) continue;
        std::vector<int64_t> without;
        for (size_t j = 0; j < taps.size(); ++j)
          if (j != k && keep_tap[s][j]) without.push_back(taps[j]);
        if (!without.empty() && span_of(without) == span_of(taps)) {
          keep_tap[s][k] = false;
          ++removed;
        }
      }
    }
    auto allowance = [&](size_t s) {
      return n.input(info.sequence_input(int(s))).type().shape[0].plus(-info.sequences[s].span());
    };
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      bool any_read = false;
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
        any_read = any_read || read.count(info.body_sequence_param(int(s), int(k)));
      // A sequence whose computation can fail stays: the error happens at -O0.
      if (any_read || value_can_fail(n.input(info.sequence_input(int(s))))) continue;
      bool decides_nothing = false;
      if (info.has_steps) {
        // Long enough for `steps` whatever the arguments (the scan's outputs have `steps` rows).
        const Dim& steps = n.output_types().empty() ? Dim::fresh_unknown() : n.output_types()[0].shape[0];
        decides_nothing = !info.has_until && provably_le(steps, allowance(s));
      } else {
        for (size_t o = 0; o < info.sequences.size(); ++o)
          if (o != s && keep_seq[o] && provably_le(allowance(o), allowance(s))) decides_nothing = true;
      }
      if (decides_nothing) {
        keep_seq[s] = false;
        ++removed;
      }
    }
    if (removed == 0) return std::nullopt;
    context.fired(removed);

    // The new scan: its layout without what was removed.
    ir::ScanInfo new_info = info;
    new_info.sequences.clear();
    std::vector<Value> inputs;
    if (info.has_steps) inputs.push_back(n.input(info.steps_input()));
    auto new_body = std::make_shared<ir::Graph>();
    auto new_param = [&](int old_index) {
      const auto* p = body.params[size_t(old_index)].node->as<ir::ParamNode>();
      Value v = b.param(p->output_types()[0], int(new_body->params.size()), p->name(), p->loc());
      new_body->params.push_back(v);
      replacement[size_t(old_index)] = v;
    };
    new_param(info.body_index_param());
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      if (!keep_seq[s]) continue;
      ir::ScanSequence seq;
      seq.label = info.sequences[s].label;
      seq.written_taps = info.sequences[s].taps_in_messages();
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k)
        if (keep_tap[s][k]) {
          seq.taps.push_back(info.sequences[s].taps[k]);
          new_param(info.body_sequence_param(int(s), int(k)));
        }
      new_info.sequences.push_back(seq);
      inputs.push_back(n.input(info.sequence_input(int(s))));
    }
    for (size_t s = 0; s < info.states.size(); ++s) {
      inputs.push_back(n.input(info.init_input(int(s))));
      for (size_t k = 0; k < info.states[s].lags.size(); ++k) new_param(info.body_state_param(int(s), int(k)));
    }
    for (int p : kept_params) {
      inputs.push_back(n.input(info.param_input(p)));
      new_param(info.body_param(p));
    }
    new_info.num_params = int(kept_params.size());
    // Params dropped as unread have no replacement; nothing refers to them.
    for (Value& r : replacement)
      if (!r) r = new_body->params.front();
    new_body->results = ir::substitute_params(replacement, body.results);
    ir::NodeRef scan = b.rebuild_scan(n, std::move(inputs), std::move(new_info), new_body);
    std::vector<Value> outs;
    for (int i = 0; i < scan->num_outputs(); ++i) outs.push_back(scan->output(i));
    return outs;
  });
  for (ir::Function& f : out.functions) f.graph = ir::prune_dead_scan_outputs(f.graph);
  return out;
}

}  // namespace scangen::passes
