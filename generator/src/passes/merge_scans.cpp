// merge-scans: two loops over the same steps become one loop.
//
// Matches: two scans of one graph, neither reading (even indirectly) what the other computes, in
// the same direction, taking the same number of steps whatever the arguments (the same `steps`
// value, or, without `steps`, the same number of rows left by their sequences' lengths and taps),
// neither of which can fail (passes/util.h: scan_can_fail), both without `until` or both with the
// same `until` (the same computation of the loop index, the same sequence rows and parameters:
// `until t >= m`, `until u[t] < 0`), which then stops both at the same step.
// Produces: one scan reading the sequences, states and parameters of both, whose step does both
// steps, the first scan's then the second's; the uses of either read its outputs (merge-inouts
// then reads a sequence or parameter the two shared once).
// Must not fire on: scans one of which feeds the other, scans whose step counts may differ (a
// `steps` value against sequence lengths, lengths not provably equal), scans whose `until` flags
// differ or read their own states (the first to stop would stop both), or a scan that can fail (the merged loop would interleave the
// two scans' steps and could report a different error first).
#include <algorithm>
#include <set>
#include <unordered_set>

#include "ir/mutator.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Value;

// The number of steps of a scan as a static dimension (its outputs' rows), when an output keeps
// all of them.
std::optional<ir::Dim> steps_of(const ir::ScanNode& n) {
  for (int i = 0; i < n.num_outputs(); ++i)
    if (n.info().window(i) == 0) return n.output_types()[size_t(i)].shape[0];
  return std::nullopt;
}

// The rows each sequence of a scan without `steps` leaves (its length less its taps' span): the
// scan takes the least of them, before `until` stops it.
std::vector<ir::Dim> rows_left(const ir::ScanNode& n) {
  std::vector<ir::Dim> rows;
  for (size_t s = 0; s < n.info().sequences.size(); ++s)
    rows.push_back(n.input(n.info().sequence_input(int(s))).type().shape[0].plus(-n.info().sequences[s].span()));
  return rows;
}

bool same_dims(const std::vector<ir::Dim>& a, const std::vector<ir::Dim>& b) {
  auto covered = [](const std::vector<ir::Dim>& p, const std::vector<ir::Dim>& q) {
    return std::all_of(p.begin(), p.end(), [&](const ir::Dim& d) {
      return std::any_of(q.begin(), q.end(), [&](const ir::Dim& e) { return d.same_as(e); });
    });
  };
  return covered(a, b) && covered(b, a);
}

bool same_number_of_steps(const ir::ScanNode& a, const ir::ScanNode& b) {
  const ir::ScanInfo &x = a.info(), &y = b.info();
  if (x.has_steps != y.has_steps) return false;
  if (x.has_steps) return a.input(x.steps_input()) == b.input(y.steps_input());
  if (same_dims(rows_left(a), rows_left(b))) return true;
  auto sa = steps_of(a), sb = steps_of(b);
  return !x.has_until && sa && sb && sa->same_as(*sb);
}

// Whether `to` is reachable from the inputs of `from`.
bool reads(const ir::Node& from, const ir::Node& to) {
  std::unordered_set<const ir::Node*> seen;
  std::vector<const ir::Node*> stack{&from};
  while (!stack.empty()) {
    const ir::Node* n = stack.back();
    stack.pop_back();
    for (const Value& in : n->inputs()) {
      if (in.node.get() == &to) return true;
      if (seen.insert(in.node.get()).second) stack.push_back(in.node.get());
    }
  }
  return false;
}

// The rows tap k of sequence s reads (ir::ScanSequence::row_offset).
int64_t row_offset(const ir::ScanInfo& info, size_t s, size_t k) {
  return info.sequences[s].row_offset(info.sequences[s].taps[k], info.reverse);
}

// Whether the `until` flags of a and b are the same at every step: b's flag, with the loop index,
// the sequence rows and the parameters it reads standing for a's that are the same outer values,
// is a's flag (once simplified). A flag that reads a state or an output is never the same.
bool same_until(const ir::ScanNode& a, const ir::ScanNode& b) {
  const ir::ScanInfo &x = a.info(), &y = b.info();
  const std::vector<Value>& a_params = a.body().params;
  std::vector<Value> b_as_a(b.body().params.size());
  ir::Builder builder;
  for (size_t i = 0; i < b_as_a.size(); ++i) {
    // What has no counterpart in a becomes a fresh param: a flag that reads it differs from a's.
    const auto* p = b.body().params[i].node->as<ir::ParamNode>();
    b_as_a[i] = builder.param(p->output_types()[0], int(a_params.size() + i), p->name(), p->loc());
  }
  b_as_a[size_t(y.body_index_param())] = a_params[size_t(x.body_index_param())];
  for (size_t s = 0; s < y.sequences.size(); ++s)
    for (size_t k = 0; k < y.sequences[s].taps.size(); ++k)
      for (size_t t = 0; t < x.sequences.size(); ++t)
        for (size_t j = 0; j < x.sequences[t].taps.size(); ++j)
          if (a.input(x.sequence_input(int(t))) == b.input(y.sequence_input(int(s))) &&
              row_offset(x, t, j) == row_offset(y, s, k))
            b_as_a[size_t(y.body_sequence_param(int(s), int(k)))] = a_params[size_t(x.body_sequence_param(int(t), int(j)))];
  for (int p = 0; p < y.num_params; ++p)
    for (int q = 0; q < x.num_params; ++q)
      if (a.input(x.param_input(q)) == b.input(y.param_input(p)))
        b_as_a[size_t(y.body_param(p))] = a_params[size_t(x.body_param(q))];
  std::vector<Value> flags = simplify_values(
      {a.body().results.back(), ir::substitute_params(b_as_a, {b.body().results.back()})[0]});
  return flags[0] == flags[1];
}

bool can_merge(const ir::ScanNode& a, const ir::ScanNode& b) {
  const ir::ScanInfo &x = a.info(), &y = b.info();
  return x.reverse == y.reverse && x.has_until == y.has_until && x.truncate_gradient == y.truncate_gradient && x.checkpoint == y.checkpoint &&
         same_number_of_steps(a, b) && !scan_can_fail(a) && !scan_can_fail(b) && !reads(a, b) && !reads(b, a) &&
         (!x.has_until || same_until(a, b));
}

// The merged scan; returns, for each output of a then of b, the merged scan's output.
std::vector<Value> merge(const ir::ScanNode& a, const ir::ScanNode& b, ir::Builder& builder) {
  const ir::ScanInfo &x = a.info(), &y = b.info();
  ir::ScanInfo info = x;
  info.windows.clear();
  // Output names stay unique (windows are keyed by them): b's clashing names get a suffix.
  std::set<std::string> names;
  for (int i = 0; i < x.num_outputs(); ++i) names.insert(x.output_name(i));
  auto unique_name = [&](const std::string& name) {
    std::string candidate = name;
    for (int k = 2; names.count(candidate); ++k) candidate = name + "." + std::to_string(k);
    names.insert(candidate);
    return candidate;
  };
  std::vector<std::string> b_names;
  for (int i = 0; i < y.num_outputs(); ++i) b_names.push_back(unique_name(y.output_name(i)));
  for (const auto& [name, rows] : x.windows) info.windows[name] = rows;
  for (int i = 0; i < y.num_outputs(); ++i)
    if (int64_t w = y.window(i)) info.windows[b_names[size_t(i)]] = w;

  info.sequences.insert(info.sequences.end(), y.sequences.begin(), y.sequences.end());
  for (size_t s = 0; s < y.states.size(); ++s) {
    info.states.push_back(y.states[s]);
    info.states.back().name = b_names[s];
  }
  for (size_t o = 0; o < y.outputs.size(); ++o) info.outputs.push_back(b_names[y.states.size() + o]);
  info.num_params = x.num_params + y.num_params;

  // Inputs and body params in the merged layout: a's then b's within each group.
  std::vector<Value> inputs;
  if (x.has_steps) inputs.push_back(a.input(x.steps_input()));
  auto body = std::make_shared<ir::Graph>();
  std::vector<Value> a_params(a.body().params.size()), b_params(b.body().params.size());
  auto add_param = [&](const ir::ScanNode& scan, int old_index, std::vector<Value>& params_of) {
    const auto* p = scan.body().params[size_t(old_index)].node->as<ir::ParamNode>();
    Value np = builder.param(p->output_types()[0], int(body->params.size()), p->name(), p->loc());
    body->params.push_back(np);
    params_of[size_t(old_index)] = np;
  };
  add_param(a, x.body_index_param(), a_params);
  b_params[size_t(y.body_index_param())] = a_params[size_t(x.body_index_param())];
  for (const auto* scan : {&a, &b}) {
    const ir::ScanInfo& i = scan->info();
    auto& params_of = scan == &a ? a_params : b_params;
    for (size_t s = 0; s < i.sequences.size(); ++s) {
      inputs.push_back(scan->input(i.sequence_input(int(s))));
      for (size_t k = 0; k < i.sequences[s].taps.size(); ++k) add_param(*scan, i.body_sequence_param(int(s), int(k)), params_of);
    }
  }
  for (const auto* scan : {&a, &b}) {
    const ir::ScanInfo& i = scan->info();
    auto& params_of = scan == &a ? a_params : b_params;
    for (size_t s = 0; s < i.states.size(); ++s) {
      inputs.push_back(scan->input(i.init_input(int(s))));
      for (size_t k = 0; k < i.states[s].lags.size(); ++k) add_param(*scan, i.body_state_param(int(s), int(k)), params_of);
    }
  }
  for (const auto* scan : {&a, &b}) {
    const ir::ScanInfo& i = scan->info();
    auto& params_of = scan == &a ? a_params : b_params;
    for (int p = 0; p < i.num_params; ++p) {
      inputs.push_back(scan->input(i.param_input(p)));
      add_param(*scan, i.body_param(p), params_of);
    }
  }
  std::vector<Value> a_results = ir::substitute_params(a_params, a.body().results);
  std::vector<Value> b_results = ir::substitute_params(b_params, b.body().results);
  auto states_of = [](const std::vector<Value>& r, const ir::ScanInfo& i) {
    return std::vector<Value>(r.begin(), r.begin() + long(i.states.size()));
  };
  auto outputs_of = [](const std::vector<Value>& r, const ir::ScanInfo& i) {
    return std::vector<Value>(r.begin() + long(i.states.size()), r.begin() + long(i.num_outputs()));
  };
  for (const auto& part : {states_of(a_results, x), states_of(b_results, y), outputs_of(a_results, x), outputs_of(b_results, y)})
    body->results.insert(body->results.end(), part.begin(), part.end());
  // The flags are the same (same_until): a's stops both.
  if (x.has_until) body->results.push_back(a_results.back());

  std::optional<ir::Dim> steps = steps_of(a);
  if (!steps) steps = steps_of(b);
  std::vector<Value> merged =
      builder.scan(std::move(inputs), std::move(info), body, steps.value_or(ir::Dim::fresh_unknown()), a.loc());
  // Back to the order of a's outputs then b's.
  size_t xs = x.states.size(), ys = y.states.size(), xo = x.outputs.size();
  std::vector<Value> out;
  for (size_t i = 0; i < xs; ++i) out.push_back(merged[i]);
  for (size_t i = 0; i < xo; ++i) out.push_back(merged[xs + ys + i]);
  for (size_t i = 0; i < ys; ++i) out.push_back(merged[xs + i]);
  for (size_t i = 0; i < y.outputs.size(); ++i) out.push_back(merged[xs + ys + xo + i]);
  return out;
}

}  // namespace

ir::Program run_merge_scans(const ir::Program& program, PassContext& context) {
  return rewrite_graphs(program, [&](const ir::Graph& graph) {
    ir::Graph g = graph;
    ir::Builder builder;
    for (;;) {
      std::vector<const ir::ScanNode*> scans;
      for (const ir::Node* node : ir::topological_order(g))
        if (const auto* s = node->as<ir::ScanNode>()) scans.push_back(s);
      const ir::ScanNode *first = nullptr, *second = nullptr;
      for (size_t i = 0; i < scans.size() && !first; ++i)
        for (size_t j = i + 1; j < scans.size() && !first; ++j)
          if (can_merge(*scans[i], *scans[j])) first = scans[i], second = scans[j];
      if (!first) return g;
      std::vector<Value> merged = merge(*first, *second, builder);
      std::unordered_map<Value, Value, ir::ValueHash> replacements;
      const ir::ScanInfo &x = first->info(), &y = second->info();
      for (int i = 0; i < x.num_outputs(); ++i) replacements[first->output(i)] = merged[size_t(i)];
      for (int i = 0; i < y.num_outputs(); ++i) replacements[second->output(i)] = merged[size_t(x.num_outputs() + i)];
      g.results = replace_values(replacements, g.results);
      context.fired();
    }
  });
}

}  // namespace scangen::passes
