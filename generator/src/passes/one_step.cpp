// one-step: a scan that takes exactly one step becomes straight-line code.
//
// Matches: a scan whose number of steps is 1 whatever the arguments (passes/util.h:
// constant_step_count: `steps = 1` with sequences of constant length long enough, or sequences
// of constant lengths whose taps leave one step), with or without `reverse`; with `until` only
// when computing the `until` flag cannot fail (one step is taken whatever the flag says, but its
// errors must stay); only when no state's step value can fail (the loop computes it even where
// nothing reads it: `until a[t - 1]` at the last step), nor any input (the loop computes its inits,
// parameters and sequences before the first step, read or not).
// Produces: the step's computation in the enclosing graph with the loop index 0; a sequence tap k
// reads row k - m of its sequence (forward) or row k - M - 1, counted from the end (reverse: the
// first step reads the last rows); a state tap of lag k reads the init (or its row L - k when the
// init holds L rows); each result is the step value reshaped to one row.
// Must not fire on: a step count that is not provably 1 (a `steps` argument, a sequence whose
// length is not a constant: the scan would report that it is too short, or take another number
// of steps).
#include "ir/mutator.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Value;

Value row(ir::Builder& b, const Value& x, int64_t index, const Loc& loc) {
  return b.index(x, {ir::IndexSpec{}}, {b.int_constant(index, loc)}, loc);
}

// v with a leading dimension of 1: one step's row stacked.
Value as_one_row(ir::Builder& b, const Value& v, const Loc& loc) {
  std::vector<Value> dims{b.int_constant(1, loc)};
  std::vector<ir::Dim> static_dims{ir::Dim::constant(1)};
  for (int axis = 0; axis < v.type().rank(); ++axis) {
    dims.push_back(b.dim_size(v, axis, loc));
    static_dims.push_back(v.type().shape[size_t(axis)]);
  }
  return b.reshape(v, std::move(dims), std::move(static_dims), loc);
}

bool until_can_fail(const ir::ScanNode& n) {
  if (!n.info().has_until) return false;
  ir::Graph flag{n.body().params, {n.body().results.back()}};
  for (const ir::Node* node : ir::topological_order(flag))
    if (can_fail(*node)) return true;
  return false;
}

// Whether computing some input of the scan (an init, a parameter, a sequence) can fail. The loop
// computes its inputs before the first step; straight-line code computes only those that what
// is used reads (an init read only by `until a[t - 1]`, whose flag one step never needs).
bool input_can_fail(const ir::ScanNode& n) {
  for (int i = 0; i < n.num_inputs(); ++i)
    if (value_can_fail(n.input(i))) return true;
  return false;
}

// Whether computing some state's step value can fail. The loop computes every state at every
// step, the last one included, even when only a later step would read it (`until a[t - 1]` reads
// the init at step 0; a[0] is computed all the same). In straight-line code nothing reads that
// value unless the state's result is used, and its error would vanish.
bool state_can_fail(const ir::ScanNode& n) {
  std::vector<Value> states(n.body().results.begin(), n.body().results.begin() + long(n.info().states.size()));
  for (const ir::Node* node : ir::topological_order(ir::Graph{n.body().params, states}))
    if (can_fail(*node)) return true;
  return false;
}

}  // namespace

ir::Program run_one_step(const ir::Program& program, PassContext& context) {
  return rewrite_scans(program, [&](const ir::ScanNode& n, ir::Builder& b) -> std::optional<std::vector<Value>> {
    const ir::ScanInfo& info = n.info();
    if (constant_step_count(n) != 1 || until_can_fail(n) || state_can_fail(n) || input_can_fail(n))
      return std::nullopt;
    const Loc& loc = n.loc();

    std::vector<Value> replacements(n.body().params.size());
    replacements[size_t(info.body_index_param())] = b.int_constant(0, loc);
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const ir::ScanSequence& seq = info.sequences[s];
      const Value& u = n.input(info.sequence_input(int(s)));
      for (size_t k = 0; k < seq.taps.size(); ++k) {
        int64_t tap = seq.taps[k];
        // The first step's row: counted from the end (-1 is the last row) when reverse.
        int64_t offset = seq.row_offset(tap, info.reverse);
        int64_t index = info.reverse ? -offset - 1 : offset;
        replacements[size_t(info.body_sequence_param(int(s), int(k)))] = row(b, u, index, loc);
      }
    }
    for (size_t s = 0; s < info.states.size(); ++s) {
      const ir::ScanState& state = info.states[s];
      const Value& init = n.input(info.init_input(int(s)));
      for (size_t k = 0; k < state.lags.size(); ++k) {
        int64_t lag = state.lags[k];
        replacements[size_t(info.body_state_param(int(s), int(k)))] =
            state.init_has_rows() ? row(b, init, state.max_lag() - lag, loc) : init;
      }
    }
    for (int p = 0; p < info.num_params; ++p)
      replacements[size_t(info.body_param(p))] = n.input(info.param_input(p));

    std::vector<Value> step = ir::substitute_params(replacements, n.body().results);
    std::vector<Value> outs;
    for (int i = 0; i < info.num_outputs(); ++i) outs.push_back(as_one_row(b, step[size_t(i)], loc));
    context.fired();
    return outs;
  });
}

}  // namespace scangen::passes
