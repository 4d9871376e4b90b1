// merge-inouts: what a scan reads twice, or computes twice, it reads and computes once.
//
// Matches: two sequences of a scan with the same outer value where each row the second reads at a
// step is read by a tap of the first, and the second loses no more steps to its taps; two parameters
// with the same outer value; two per-step outputs whose step values are the same computation;
// two states with the same init, the same lags and the same step computation (the second's taps
// standing for the first's).
// Produces: one sequence, parameter, output or state; the uses of the other read it.
// Must not fire on: sequences of one value whose rows differ (`u[t]` of a sequence read at taps
// [-1, 0] is row t + 1; of one read at [0], row t) or whose taps span more steps, states with
// different inits or lags, or step values that differ anywhere.
#include <algorithm>
#include <optional>

#include "ir/mutator.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {

using ir::Value;

namespace {

// When sequence `later` of a scan can be dropped for `earlier` of the same value: for each tap of
// `later`, the tap of `earlier` reading the same row at every step. `later` must lose no more
// steps to its taps than `earlier` (or dropping it could add steps), so that `earlier`, which is
// checked first, also reports any error `later` would.
std::optional<std::vector<int>> rows_read_by(const ir::ScanSequence& later, const ir::ScanSequence& earlier,
                                             bool reverse) {
  if (later.span() > earlier.span()) return std::nullopt;
  std::vector<int> taps;
  for (int64_t tap : later.taps) {
    auto it = std::find_if(earlier.taps.begin(), earlier.taps.end(), [&](int64_t e) {
      return earlier.row_offset(e, reverse) == later.row_offset(tap, reverse);
    });
    if (it == earlier.taps.end()) return std::nullopt;
    taps.push_back(int(it - earlier.taps.begin()));
  }
  return taps;
}

}  // namespace

ir::Program run_merge_inouts(const ir::Program& program, PassContext& context) {
  return rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    const ir::Graph& body = n.body();
    size_t num_states = info.states.size();
    // rep[i]: the body param that param i is merged into (itself when kept).
    std::vector<int> rep(body.params.size());
    for (size_t i = 0; i < rep.size(); ++i) rep[i] = int(i);
    std::vector<bool> keep_seq(info.sequences.size(), true), keep_param(size_t(info.num_params), true);
    std::vector<int> output_rep(size_t(info.num_outputs()));
    for (size_t i = 0; i < output_rep.size(); ++i) output_rep[i] = int(i);
    int merged = 0;

    for (size_t s = 0; s < info.sequences.size(); ++s)
      for (size_t f = 0; f < s && keep_seq[s]; ++f) {
        if (!keep_seq[f] || n.input(info.sequence_input(int(s))) != n.input(info.sequence_input(int(f)))) continue;
        std::optional<std::vector<int>> taps_in_f = rows_read_by(info.sequences[s], info.sequences[f], info.reverse);
        if (!taps_in_f) continue;
        keep_seq[s] = false;
        for (size_t k = 0; k < taps_in_f->size(); ++k)
          rep[size_t(info.body_sequence_param(int(s), int(k)))] = info.body_sequence_param(int(f), (*taps_in_f)[k]);
        ++merged;
      }
    for (int p = 0; p < info.num_params; ++p)
      for (int f = 0; f < p && keep_param[size_t(p)]; ++f)
        if (keep_param[size_t(f)] && n.input(info.param_input(p)) == n.input(info.param_input(f))) {
          keep_param[size_t(p)] = false;
          rep[size_t(info.body_param(p))] = info.body_param(f);
          ++merged;
        }

    // The step values with merged params stand for each other, simplified so that equal
    // computations are the same value.
    auto results_with = [&](const std::vector<int>& r) {
      std::vector<Value> replacement;
      for (int i : r) replacement.push_back(body.params[size_t(i)]);
      return simplify_values(ir::substitute_params(replacement, body.results));
    };
    std::vector<Value> results = results_with(rep);
    // States: the same init and lags, and the same step once the second's taps read the first's.
    for (size_t s = 0; s < num_states; ++s)
      for (size_t f = 0; f < s && output_rep[s] == int(s); ++f) {
        if (output_rep[f] != int(f) || info.states[s].lags != info.states[f].lags ||
            n.input(info.init_input(int(s))) != n.input(info.init_input(int(f))))
          continue;
        std::vector<int> trial = rep;
        for (size_t k = 0; k < info.states[s].lags.size(); ++k)
          trial[size_t(info.body_state_param(int(s), int(k)))] = info.body_state_param(int(f), int(k));
        std::vector<Value> r = results_with(trial);
        if (r[s] != r[f]) continue;
        rep = trial;
        results = r;
        output_rep[s] = int(f);
        ++merged;
      }
    for (size_t o = num_states; o < size_t(info.num_outputs()); ++o)
      for (size_t f = num_states; f < o && output_rep[o] == int(o); ++f)
        if (output_rep[f] == int(f) && results[o] == results[f]) {
          output_rep[o] = int(f);
          ++merged;
        }
    if (merged == 0) return std::nullopt;
    context.fired(merged);

    // The new scan with what is kept.
    ir::ScanInfo new_info = info;
    new_info.sequences.clear();
    new_info.states.clear();
    new_info.outputs.clear();
    new_info.windows.clear();
    std::vector<Value> inputs;
    if (info.has_steps) inputs.push_back(n.input(info.steps_input()));
    auto new_body = std::make_shared<ir::Graph>();
    std::vector<Value> new_param_of(body.params.size());
    auto add_param = [&](int old_index) {
      const auto* p = body.params[size_t(old_index)].node->as<ir::ParamNode>();
      Value np = b.param(p->output_types()[0], int(new_body->params.size()), p->name(), p->loc());
      new_body->params.push_back(np);
      new_param_of[size_t(old_index)] = np;
    };
    add_param(info.body_index_param());
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      if (!keep_seq[s]) continue;
      new_info.sequences.push_back(info.sequences[s]);
      inputs.push_back(n.input(info.sequence_input(int(s))));
      for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) add_param(info.body_sequence_param(int(s), int(k)));
    }
    std::vector<int> new_index(size_t(info.num_outputs()), -1);
    int next_output = 0;
    for (size_t s = 0; s < num_states; ++s) {
      if (output_rep[s] != int(s)) continue;
      new_info.states.push_back(info.states[s]);
      inputs.push_back(n.input(info.init_input(int(s))));
      for (size_t k = 0; k < info.states[s].lags.size(); ++k) add_param(info.body_state_param(int(s), int(k)));
      new_index[s] = next_output++;
    }
    for (size_t o = num_states; o < size_t(info.num_outputs()); ++o)
      if (output_rep[o] == int(o)) {
        new_info.outputs.push_back(info.outputs[o - num_states]);
        new_index[o] = next_output++;
      }
    for (int p = 0; p < info.num_params; ++p) {
      if (!keep_param[size_t(p)]) continue;
      inputs.push_back(n.input(info.param_input(p)));
      add_param(info.body_param(p));
    }
    new_info.num_params = 0;
    for (bool k : keep_param) new_info.num_params += k;
    // A merged output keeps every row either of its originals kept.
    for (int i = 0; i < info.num_outputs(); ++i) {
      int kept = output_rep[size_t(i)];
      int64_t w = info.window(i), wk = info.window(kept);
      if (w > 0 && wk > 0) new_info.windows[info.output_name(kept)] = std::max(w, wk);
    }
    for (int i = 0; i < info.num_outputs(); ++i)
      if (info.window(i) == 0) new_info.windows.erase(info.output_name(output_rep[size_t(i)]));
    std::vector<Value> replacement;
    for (size_t i = 0; i < body.params.size(); ++i) replacement.push_back(new_param_of[size_t(rep[i])]);
    std::vector<Value> kept_results;
    for (int i = 0; i < info.num_outputs(); ++i)
      if (output_rep[size_t(i)] == i) kept_results.push_back(results[size_t(i)]);
    if (info.has_until) kept_results.push_back(results.back());
    new_body->results = ir::substitute_params(replacement, kept_results);
    ir::NodeRef scan = b.rebuild_scan(n, std::move(inputs), std::move(new_info), new_body);
    std::vector<Value> outs;
    for (int i = 0; i < info.num_outputs(); ++i) outs.push_back(scan->output(new_index[size_t(output_rep[size_t(i)])]));
    return outs;
  });
}

}  // namespace scangen::passes
