// The derivative rule of a scan: backpropagation through time as another scan.
//
// The backward scan runs over the steps the forward scan took, last first (only the last N with
// truncate_gradient = N). Its step recomputes what the forward step's derivative rules need from
// the forward step's inputs, except the values the forward pass kept: a state's value at step t
// and t - k (read from the state's history, its init rows followed by its result rows) and each
// output's value (its result row). What nothing needs is not recomputed: the IR only holds what
// its results reach.
//
// It carries, as states, the cotangent each step gives to the states it read k steps back (one
// state per lag k, read k steps later), and the sum over steps of each parameter's cotangent. A
// sequence's cotangent is a per-step output per tap, added into the rows that tap read; an init's
// is what the first steps gave to the rows before step 0.
//
// A forward scan with `reverse` reads its sequences from the end: it is the forward scan of the
// same step over the flipped sequences with negated taps, which is how it is differentiated.
#include <map>
#include <unordered_map>

#include "autodiff/scan_adjoint.h"

#include "autodiff/rules.h"
#include "autodiff/tensor_ops.h"

namespace scangen::autodiff {

using ir::BinaryOp;
using ir::Dim;
using ir::IndexSpec;
using ir::ScanInfo;
using ir::Type;

Stretch whole_scan(AdjointContext& ctx, const ir::ScanNode& n, const std::vector<Value>& output_cotangents) {
  ir::Builder& b = ctx.builder;
  Stretch s;
  s.steps = steps_taken(ctx, output_cotangents);
  s.back_steps = s.steps;
  s.first = i64(ctx, 0);
  if (n.info().truncate_gradient >= 0) {
    s.back_steps = b.binary(BinaryOp::Min, s.steps, i64(ctx, n.info().truncate_gradient), ctx.loc);
    s.first = sub(ctx, s.steps, s.back_steps);
  }
  for (const Value& in : n.inputs()) s.inputs.push_back(ctx.primal(in));
  s.histories.resize(n.info().states.size());
  for (int o = 0; o < n.num_outputs(); ++o) s.output_rows.push_back(ctx.primal(n.output(o)));
  s.cotangent_rows = output_cotangents;
  return s;
}

BackwardScan::BackwardScan(AdjointContext& ctx, const ir::ScanNode& n, Stretch stretch, const std::vector<bool>& needed)
    : c_(ctx), b_(ctx.builder), fi_(n.info()), fwd_(n.body()), s_(std::move(stretch)), needed_(needed),
      in_(s_.inputs), replay_(ctx.builder), steps_(s_.steps), back_steps_(s_.back_steps), first_(s_.first) {}

BackwardOutputs BackwardScan::run() {
  plan_steps();
  add_sequences();
  add_states();
  add_params();
  build_body();
  // The user's permission to reassociate the forward recurrence covers its adjoint.
  info_.parallel = fi_.parallel;
  outs_.outputs = b_.scan(std::move(inputs_), std::move(info_), body_, Dim::fresh_unknown(), c_.loc);
  return outs_;
}

void BackwardScan::add_sequences() {
  // The forward sequences, over the rows the covered steps read.
  for (size_t i = 0; i < fi_.sequences.size(); ++i) {
    const ir::ScanSequence& s = fi_.sequences[i];
    Value u = in_[size_t(fi_.sequence_input(int(i)))];
    Value span = i64(c_, s.span());
    Value rows_read;
    std::vector<int64_t> taps = s.taps;
    if (!fi_.reverse) {
      rows_read = rows(c_, u, first_, add(c_, steps_, span));
    } else {
      Value len = b_.dim_size(u, 0, c_.loc);
      rows_read = flip_rows(c_, rows(c_, u, sub(c_, len, add(c_, steps_, span)), sub(c_, len, first_)));
      for (int64_t& k : taps) k = -k;
    }
    auto params = add_sequence(rows_read, taps, s.label);
    for (size_t j = 0; j < s.taps.size(); ++j)
      replay_.give(fwd_.params[size_t(fi_.body_sequence_param(int(i), int(j)))],
                   params.at(fi_.reverse ? -s.taps[j] : s.taps[j]));
  }
  // Each state's history (init rows, then the rows of its result): X[t] and X[t - k].
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    const ir::ScanState& st = fi_.states[i];
    int64_t lags = st.max_lag();
    Value history = s_.histories[i];
    if (!history) history = s_.output_rows[i];
    if (!s_.histories[i] && lags > 0) history = rows_after(c_, in_[size_t(fi_.init_input(int(i)))], lags, history);
    std::vector<int64_t> taps{0};
    for (int64_t k : st.lags) taps.push_back(-k);
    history_.push_back(history);
    auto params = add_sequence(rows(c_, history, first_, add(c_, steps_, i64(c_, lags))), taps, st.name);
    for (size_t j = 0; j < st.lags.size(); ++j)
      replay_.give(fwd_.params[size_t(fi_.body_state_param(int(i), int(j)))], params.at(-st.lags[j]));
    if (!replay_.given(fwd_.results[i])) replay_.give(fwd_.results[i], params.at(0));
  }
  // The per-step outputs' rows, and the cotangents arriving at every output.
  for (int o = int(fi_.states.size()); o < fi_.num_outputs(); ++o) {
    if (!s_.output_rows[size_t(o)]) continue;
    auto params = add_sequence(rows(c_, s_.output_rows[size_t(o)], first_, steps_), {0}, fi_.output_name(o));
    if (!replay_.given(fwd_.results[size_t(o)])) replay_.give(fwd_.results[size_t(o)], params.at(0));
  }
  for (int o = 0; o < fi_.num_outputs(); ++o) {
    const Value& g = s_.cotangent_rows[size_t(o)];
    if (g) output_cotangent_[o] = add_sequence(rows(c_, g, first_, steps_), {0}, "d" + fi_.output_name(o)).at(0);
  }
}

void BackwardScan::add_states() {
  // One carried cotangent per state and lag: the one a step gives to X[t - k], read k steps later.
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (!float_state(int(i))) continue;
    const Value& x = history_[i];  // rows: the step's shape after the first dimension
    std::vector<Value> row_dims = dims_of(c_, x);
    std::vector<Dim> row_static = x.type().shape;
    row_dims.erase(row_dims.begin());
    row_static.erase(row_static.begin());
    for (int64_t k : fi_.states[i].lags) {
      std::vector<Value> dims = row_dims;
      std::vector<Dim> static_dims = row_static;
      if (k > 1) dims.insert(dims.begin(), i64(c_, k)), static_dims.insert(static_dims.begin(), Dim::constant(k));
      auto carried = s_.carried_lags.find({int(i), k});
      inputs_.push_back(carried != s_.carried_lags.end() ? carried->second
                                                          : b_.fill(scalar(c_, x.type().dtype, 0), dims, static_dims, c_.loc));
      info_.states.push_back({"d" + fi_.states[i].name + "_" + std::to_string(k), {k}});
      lag_[{int(i), k}] = param(fwd_.results[i].type(), info_.states.back().name);
    }
  }
  for (int p = 0; p < fi_.num_params; ++p) {
    if (!wants(fi_.param_input(p))) continue;
    const Value& w = in_[size_t(fi_.param_input(p))];
    auto carried = s_.carried_sums.find(p);
    inputs_.push_back(carried != s_.carried_sums.end() ? carried->second : zeros_like(c_, w));
    info_.states.push_back({"d" + fwd_.params[size_t(fi_.body_param(p))].node->as<ir::ParamNode>()->name(), {1}});
    sum_[p] = param(w.type(), info_.states.back().name);
  }
}

void BackwardScan::add_params() {
  for (int p = 0; p < fi_.num_params; ++p) {
    const Value& fp = fwd_.params[size_t(fi_.body_param(p))];
    inputs_.push_back(in_[size_t(fi_.param_input(p))]);
    replay_.give(fp, param(fp.type(), fp.node->as<ir::ParamNode>()->name()));
  }
  info_.num_params = fi_.num_params + 1;
  inputs_.push_back(steps_);
  Value steps = param(Type(DType::I64), "steps");
  // The forward step of backward step s.
  Value t = sub(c_, sub(c_, steps, i64(c_, 1)), body_->params[0]);
  if (s_.first_index) {
    inputs_.push_back(s_.first_index);
    t = add(c_, param(Type(DType::I64), "first_step"), t);
    ++info_.num_params;
  }
  replay_.give(fwd_.params[0], t);
}

void BackwardScan::build_body() {
  AdjointContext step{b_, c_.loc, [this](const Value& v) { return replay_(v); }};
  std::vector<std::pair<Value, Value>> seeds;
  for (int o = 0; o < fi_.num_outputs(); ++o) {
    Value g;
    if (output_cotangent_.count(o)) g = output_cotangent_[o];
    if (o < int(fi_.states.size()) && float_state(o))
      for (int64_t k : fi_.states[size_t(o)].lags) g = g ? add(c_, g, lag_[{o, k}]) : lag_[{o, k}];
    if (g) seeds.push_back({fwd_.results[size_t(o)], g});
  }
  // The variables: every state tap (its cotangent goes to earlier steps), the taps of sequences
  // and the params whose cotangents are asked for.
  std::vector<Value> wrt;
  std::vector<std::function<void(const Value&)>> take;
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (!float_state(int(i))) continue;
    for (size_t j = 0; j < fi_.states[i].lags.size(); ++j) {
      wrt.push_back(fwd_.params[size_t(fi_.body_state_param(int(i), int(j)))]);
      int64_t k = fi_.states[i].lags[j];
      take.push_back([this, i, k](const Value& g) {
        outs_.lag_output[int(results_.size())] = {int(i), k};
        results_.push_back(g ? g : zeros_like(c_, lag_[{int(i), k}]));
      });
    }
  }
  for (auto& [p, sum] : sum_) {
    wrt.push_back(fwd_.params[size_t(fi_.body_param(p))]);
    take.push_back([this, p = p, sum = sum](const Value& g) {
      outs_.sum_output[p] = int(results_.size());
      outs_.sum_flows[p] = bool(g);
      results_.push_back(g ? add(c_, sum, g) : sum);
    });
  }
  for (size_t i = 0; i < fi_.sequences.size(); ++i) {
    if (!wants(fi_.sequence_input(int(i)))) continue;
    for (size_t j = 0; j < fi_.sequences[i].taps.size(); ++j) {
      wrt.push_back(fwd_.params[size_t(fi_.body_sequence_param(int(i), int(j)))]);
      int64_t k = fi_.sequences[i].taps[j];
      take.push_back([this, i, k](const Value& g) {
        if (!g) return;  // the step does not depend on this tap
        outs_.seq_output[{int(i), k}] = int(results_.size());
        results_.push_back(g);
        info_.outputs.push_back("d" + fi_.sequences[i].label + "@" + std::to_string(k));
      });
    }
  }
  std::vector<Value> grads = backprop(step, seeds, wrt);
  for (size_t v = 0; v < grads.size(); ++v) take[v](grads[v]);
  body_->results = results_;
}

Value BackwardScan::init_cotangent(int state, const BackwardOutputs& outs) {
  const ir::ScanState& st = fi_.states[size_t(state)];
  int64_t lags = st.max_lag();
  Value init = in_[size_t(fi_.init_input(state))];
  // Init row of X[-j] gets what the step t = k - j gave to lag k, at backward step steps - 1 - t.
  std::vector<Value> row_of(size_t(lags) + 1);
  for (auto& [out, lag] : outs.lag_output) {
    if (lag.first != state) continue;
    int64_t k = lag.second;
    for (int64_t j = 1; j <= k; ++j) {
      Value part = sum_rows(c_, last_rows(c_, outs.outputs[size_t(out)], k - j + 1, k - j));
      row_of[size_t(j)] = row_of[size_t(j)] ? add(c_, row_of[size_t(j)], part) : part;
    }
  }
  Value whole = lags > 1 ? zeros_like(c_, init) : Value();
  for (int64_t j = 1; j <= lags; ++j) {
    Value row = row_of[size_t(j)];
    if (fi_.truncate_gradient >= 0) {
      // Truncated before step 0: the init gets nothing.
      Value all = b_.binary(BinaryOp::Eq, back_steps_, steps_, c_.loc);
      row = b_.select(all, row, scalar(c_, row.type().dtype, 0), c_.loc);
    }
    if (lags == 1) return unbroadcast(c_, row, init);
    whole = b_.update(whole, row, {IndexSpec{}}, {i64(c_, lags - j)}, false, c_.loc);
  }
  return whole;
}

namespace {

// The cotangent of sequence `seq` (its value `u`): the rows each tap read get that tap's cotangent
// rows, summed over taps; empty when no tap got any.
Value sequence_cotangent(AdjointContext& c, const ScanInfo& fi, int seq, const Value& u, const CotangentSources& src) {
  ir::Builder& b = c.builder;
  const ir::ScanSequence& s = fi.sequences[size_t(seq)];
  Value g;
  for (int64_t k : s.taps) {
    Value d = src.sequence_rows(seq, k);
    if (!d) continue;
    if (!g) g = zeros_like(c, u);
    Value lo;
    if (!fi.reverse) {
      // Step t read row first + t + k - m: rows in step order.
      if (!src.in_step_order) d = flip_rows(c, d);
      lo = add(c, src.first, i64(c, k - s.min_tap()));
    } else {
      // From the end: the last step covered read the lowest row.
      if (src.in_step_order) d = flip_rows(c, d);
      lo = add(c, sub(c, b.dim_size(u, 0, c.loc), src.steps), i64(c, k - s.max_tap()));
    }
    g = b.update(g, d, {IndexSpec{IndexSpec::Kind::Slice, true, true}}, {lo, add(c, lo, src.back_steps)}, true, c.loc);
  }
  return g;
}

}  // namespace

std::vector<Value> scan_input_cotangents(AdjointContext& c, const ScanInfo& fi, const std::vector<Value>& inputs,
                                         const std::vector<bool>& needed, const BackwardOutputs& outs,
                                         const CotangentSources& sources) {
  auto wants = [&](int input) { return wants_cotangent(needed, inputs, input); };
  std::vector<Value> in(inputs.size());
  for (size_t i = 0; i < fi.sequences.size(); ++i) {
    int input = fi.sequence_input(int(i));
    if (wants(input)) in[size_t(input)] = sequence_cotangent(c, fi, int(i), inputs[size_t(input)], sources);
  }
  for (size_t i = 0; i < fi.states.size(); ++i) {
    int input = fi.init_input(int(i));
    if (wants(input) && fi.states[i].max_lag() > 0) in[size_t(input)] = sources.init_cotangent(int(i));
  }
  for (auto& [p, out] : outs.sum_output)
    if (outs.sum_flows.at(p)) in[size_t(fi.param_input(p))] = sum_rows(c, last_rows(c, outs.outputs[size_t(out)], 1, 0));
  return in;
}

std::vector<Value> BackwardScan::input_cotangents(const BackwardOutputs& outs) {
  CotangentSources sources;
  sources.sequence_rows = [&](int seq, int64_t k) { return outs.sequence_rows(seq, k); };
  sources.first = first_;
  sources.steps = steps_;
  sources.back_steps = back_steps_;
  sources.init_cotangent = [&](int state) { return init_cotangent(state, outs); };
  return scan_input_cotangents(c_, fi_, in_, needed_, outs, sources);
}

std::vector<Value> rule_Scan(AdjointContext& ctx, const ir::Node& node, const std::vector<Value>& output_cotangents,
                             const std::vector<bool>& needed) {
  const auto& scan = *node.as<ir::ScanNode>();
  // With truncation the backward pass covers the last N steps only; checkpoints are not used then.
  if (scan.info().checkpoint > 0 && scan.info().truncate_gradient < 0)
    return checkpointed_adjoint(ctx, scan, output_cotangents, needed);
  BackwardScan backward(ctx, scan, whole_scan(ctx, scan, output_cotangents), needed);
  return backward.input_cotangents(backward.run());
}

}  // namespace scangen::autodiff
