// parallel-scan: a recurrence whose step is one associative operator becomes a scan the backends
// may evaluate in any association order (a chunked prefix scan over threads, SIMD lanes or GPU
// threads), instead of one step after the other.
//
// Matches: a state with one lag whose step value is op(h[t-1], operands) for an operator of
// ir/ops.def's ASSOC_OP table, `a * h + b` (written `h*a + b`, `b + a*h`, ...), `h + b`, `h * b`,
// `max`, `min`, each operand a sequence tap, a scan parameter or a constant, of the state's type or
// a scalar (ir/assoc.h: the earlier rewrites have already moved `(1 - decay) * x[t]` and the like
// out of the step). Floats only in a scan written `scan(parallel)` or with --fp fast (the result
// may change in its last bits); integers, `max` and `min` always (every order gives the same bits).
// Produces: a scan of that state alone marked `assoc=<op>` (ir::ScanInfo::assoc). When the scan
// has other states or outputs, the state is split out into a scan of its own over the same steps,
// and the rest of the scan reads its values as a new sequence (read at tap 0: `h[t]`).
// When the rest reads h[t-1] too, that sequence is [init, h[0], ...] read at taps 0 and 1; a
// reverse scan reads it flipped.
// Must not fire on: a scan with `until` (the number of steps depends on each step), a state read
// more than one step back, an operand computed in the step or converted, or a float recurrence
// without the user's permission. Each state left sequential gets its reason in
// `scangen ir --stats`.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/assoc.h"
#include "ir/prune.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Value;

std::string where(const ir::ScanNode& n) { return "scan at " + line_col(n.loc()); }

// The nodes of the body that compute state s's step from h[t-1] (the result and, for a * h + b
// and (h + b) * a, the inner operation; the operands are params and constants): what splitting
// the state out takes away from the rest of the step.
std::unordered_set<const ir::Node*> step_nodes(const ir::ScanNode& n, int s) {
  const Value& result = n.body().results[size_t(s)];
  std::unordered_set<const ir::Node*> nodes{result.node.get()};
  for (const Value& in : result.node->inputs())
    if (in.node->kind() == ir::NodeKind::Binary) nodes.insert(in.node.get());
  return nodes;
}

// Whether anything but state s's own step reads h[t-1], or the product of `a * h[t-1] + b` (shared
// by a common subexpression): the rest of the scan then reads the state's values one step back.
bool previous_read_elsewhere(const ir::ScanNode& n, int s) {
  const ir::ScanInfo& info = n.info();
  const ir::Node* previous = n.body().params[size_t(info.body_state_param(s, 0))].node.get();
  const ir::Node* value = n.body().results[size_t(s)].node.get();
  std::unordered_set<const ir::Node*> own = step_nodes(n, s);
  auto inner = [&](const ir::Node* node) { return node == previous || (own.count(node) && node != value); };
  for (const ir::Node* node : ir::topological_order(n.body())) {
    if (own.count(node)) continue;
    for (const Value& in : node->inputs())
      if (inner(in.node.get())) return true;
  }
  for (size_t r = 0; r < n.body().results.size(); ++r)
    if (int(r) != s && inner(n.body().results[r].node.get())) return true;
  return false;
}

// Whether anything but state s's own step reads its value h[t].
bool current_read_elsewhere(const ir::ScanNode& n, int s) {
  const Value& value = n.body().results[size_t(s)];
  std::unordered_set<const ir::Node*> own = step_nodes(n, s);
  for (const ir::Node* node : ir::topological_order(n.body())) {
    if (own.count(node)) continue;
    for (const Value& in : node->inputs())
      if (in == value) return true;
  }
  for (size_t r = 0; r < n.body().results.size(); ++r)
    if (int(r) != s && n.body().results[r] == value) return true;
  return false;
}

// Why state s may not run in another association order, or "" when it may.
std::string why_sequential(const ir::ScanNode& n, int s, PassContext& context) {
  const ir::ScanInfo& info = n.info();
  std::string why;
  std::optional<ir::AssocStep> step = ir::match_assoc_step(info, n.body(), s, &why);
  if (!step) return why;
  const DType d = n.body().results[size_t(s)].type().dtype;
  if (!ir::assoc_is_exact(step->op, d) && !info.parallel && context.fp_mode() != FpMode::Fast)
    return "a float recurrence (" + std::string(ir::assoc_op_name(step->op)) +
           ") may change in its last bits in another order: write scan(parallel) or compile with --fp fast";
  return "";
}

// The scan with only its state s, marked associative.
Value associative_scan_of(const ir::ScanNode& n, int s, ir::Builder& b) {
  ir::Graph alone;
  alone.results.push_back(n.output(s));
  alone = ir::prune_dead_scan_outputs(alone);
  const auto& pruned = *alone.results[0].node->as<ir::ScanNode>();
  ir::ScanInfo info = pruned.info();
  std::string why;
  info.assoc = ir::match_assoc_step(info, pruned.body(), 0, &why)->op;
  return b.rebuild_scan(pruned, pruned.inputs(), std::move(info), pruned.body_ptr())->output(alone.results[0].index);
}

// The scan without state s. The rest of its step reads the state's values `values` (one row per
// step, in iteration order) as a new sequence: h[t] at tap 0, or, when it reads h[t-1] too, the
// values after the init, [init, values...], at taps 0 (h[t-1]) and 1 (h[t]). A reverse scan reads
// its sequences from the end: it gets the rows flipped, h[t] at tap 0 and h[t-1] at tap 1.
ir::NodeRef scan_without(const ir::ScanNode& n, int s, const Value& values, ir::Builder& b) {
  const ir::ScanInfo& info = n.info();
  const ir::Graph& body = n.body();
  const bool previous = previous_read_elsewhere(n, s), current = current_read_elsewhere(n, s);
  const std::string& name = info.states[size_t(s)].name;
  ir::ScanInfo out = info;
  out.states.erase(out.states.begin() + s);
  Value rows = previous ? ir::rows_after(b, n.input(info.init_input(s)), 1, values, n.loc()) : values;
  if (info.reverse && (previous || current)) rows = ir::flip_rows(b, rows, n.loc());
  // Which tap reads h[t-1] and which h[t] (-1: none).
  const int64_t previous_tap = !previous ? -1 : info.reverse ? 1 : 0;
  const int64_t current_tap = !current ? -1 : info.reverse || !previous ? 0 : 1;
  std::vector<int64_t> taps;
  for (int64_t tap : {int64_t(0), int64_t(1)})
    if (tap == previous_tap || tap == current_tap) taps.push_back(tap);
  if (!taps.empty()) out.sequences.push_back({taps, name, {}});
  std::vector<Value> inputs;
  if (info.has_steps) inputs.push_back(n.input(info.steps_input()));
  for (size_t q = 0; q < info.sequences.size(); ++q) inputs.push_back(n.input(info.sequence_input(int(q))));
  if (!taps.empty()) inputs.push_back(rows);
  for (size_t q = 0; q < info.states.size(); ++q)
    if (int(q) != s) inputs.push_back(n.input(info.init_input(int(q))));
  for (int p = 0; p < info.num_params; ++p) inputs.push_back(n.input(info.param_input(p)));

  // The new body's params, in the order of `out`, each standing for the old value it replaces.
  std::vector<Value> params(size_t(out.num_body_params()));
  std::unordered_map<Value, Value, ir::ValueHash> replace;
  auto carry = [&](int old_index, int new_index) {
    const Value& old = body.params[size_t(old_index)];
    params[size_t(new_index)] = b.param(old.type(), new_index, old.node->as<ir::ParamNode>()->name(), old.node->loc());
    replace.emplace(old, params[size_t(new_index)]);
  };
  carry(info.body_index_param(), out.body_index_param());
  for (size_t q = 0; q < info.sequences.size(); ++q)
    for (size_t k = 0; k < info.sequences[q].taps.size(); ++k)
      carry(info.body_sequence_param(int(q), int(k)), out.body_sequence_param(int(q), int(k)));
  const int seq = int(info.sequences.size());
  auto row_param = [&](int64_t tap, const std::string& text) {
    const int index = out.body_sequence_param(seq, int(std::find(taps.begin(), taps.end(), tap) - taps.begin()));
    params[size_t(index)] = b.param(values.type().row(), index, text, n.loc());
    return params[size_t(index)];
  };
  if (previous) replace.emplace(body.params[size_t(info.body_state_param(s, 0))], row_param(previous_tap, name + "[t-1]"));
  if (current) replace.emplace(body.results[size_t(s)], row_param(current_tap, name));
  for (size_t q = 0, kept = 0; q < info.states.size(); ++q) {
    if (int(q) == s) continue;
    for (size_t k = 0; k < info.states[q].lags.size(); ++k)
      carry(info.body_state_param(int(q), int(k)), out.body_state_param(int(kept), int(k)));
    ++kept;
  }
  for (int p = 0; p < info.num_params; ++p) carry(info.body_param(p), out.body_param(p));

  std::vector<Value> results = body.results;
  results.erase(results.begin() + s);
  auto new_body = std::make_shared<ir::Graph>();
  new_body->params = params;
  new_body->results = replace_values(replace, results);
  return b.rebuild_scan(n, std::move(inputs), std::move(out), std::move(new_body));
}

// Each state of the scan that may run associatively, in turn, becomes a scan of its own; the scan
// left (n) is looked at again for the next state. Returns the values that replace the original
// scan's outputs, or nothing when no state may.
std::optional<std::vector<Value>> split_states(const ir::ScanNode& scan, ir::Builder& b, PassContext& context) {
  std::vector<Value> outputs;
  for (int i = 0; i < scan.num_outputs(); ++i) outputs.push_back(scan.output(i));
  ir::NodeRef current = nullptr;
  const ir::ScanNode* n = &scan;
  // Output i of the original scan: index into `outputs` kept in step with n's outputs.
  std::vector<int> position(size_t(scan.num_outputs()));
  for (int i = 0; i < scan.num_outputs(); ++i) position[size_t(i)] = i;
  int fired = 0;
  for (int s = 0; s < int(n->info().states.size());) {
    std::string why = why_sequential(*n, s, context);
    if (!why.empty()) {
      context.note(where(*n) + ": state '" + n->info().states[size_t(s)].name + "' stays sequential: " + why);
      ++s;
      continue;
    }
    ++fired;
    Value values = associative_scan_of(*n, s, b);
    // The original output that is state s of n takes the new scan's values; n's later outputs
    // move down by one once s is gone from it.
    int original = -1;
    for (size_t i = 0; i < position.size(); ++i)
      if (position[i] == s) original = int(i);
    outputs[size_t(original)] = values;
    position[size_t(original)] = -1;
    if (n->num_outputs() == 1) break;  // the state was the whole scan
    current = scan_without(*n, s, values, b);
    n = current->as<ir::ScanNode>();
    for (int& p : position)
      if (p > s) --p;
    for (size_t i = 0; i < position.size(); ++i)
      if (position[i] >= 0) outputs[i] = n->output(position[i]);
  }
  if (!fired) return std::nullopt;
  context.fired(fired);
  return outputs;
}

}  // namespace

ir::Program run_parallel_scan(const ir::Program& program, PassContext& context) {
  return rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    if (info.assoc || info.states.empty()) return std::nullopt;
    if (info.has_until) {
      context.note(where(n) + ": stays sequential: `until` decides the number of steps at each step");
      return std::nullopt;
    }
    std::optional<std::vector<Value>> out = split_states(n, b, context);
    return out;
  });
}

}  // namespace scangen::passes
