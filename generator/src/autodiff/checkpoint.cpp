// checkpoint = N: the gradient of a scan that keeps the states of every N-th step only.
//
// The steps are cut into segments of N (the last one shorter). A forward scan over the segments
// finds the checkpoints: the rows of each state that the first step of each segment reads (its
// window). The backward scan then runs over the segments, last first: its step recomputes the
// segment's forward steps from the segment's window, and runs the ordinary backward scan over
// them (scan_adjoint.h) starting from what the later segments carried back (the cotangents of the
// states' earlier rows and each parameter's running sum), so that every sum is added in the same
// order as without checkpoints and the gradients are the same bits. Only the windows and one
// segment's rows are kept at a time; the forward steps run twice more than without.
#include "autodiff/rules.h"
#include "autodiff/scan_adjoint.h"
#include "autodiff/tensor_ops.h"
#include "ir/mutator.h"

namespace scangen::autodiff {

using ir::BinaryOp;
using ir::Dim;
using ir::IndexSpec;
using ir::ScanInfo;
using ir::Type;

namespace {

IndexSpec slice(bool lo, bool hi) { return IndexSpec{IndexSpec::Kind::Slice, lo, hi}; }

class Checkpointed {
 public:
  Checkpointed(AdjointContext& c, const ir::ScanNode& n, const std::vector<Value>& cotangents,
               const std::vector<bool>& needed)
      : c_(c), b_(c.builder), n_(n), fi_(n.info()), cot_(cotangents), needed_(needed) {
    for (const Value& in : n.inputs()) in_.push_back(c.primal(in));
    steps_ = steps_taken(c, cotangents);
  }

  std::vector<Value> run() {
    std::vector<Value> starts = checkpoints();
    return input_cotangents(segments_backward(starts));
  }

 private:
  int64_t lags(size_t state) const { return fi_.states[state].max_lag(); }
  bool float_state(size_t state) const { return is_float(in_[size_t(fi_.init_input(int(state)))].type().dtype); }
  bool wants(int input) const { return wants_cotangent(needed_, in_, input); }
  Value segments(const Value& steps) {
    return div(c_, add(c_, steps, i64(c_, fi_.checkpoint - 1)), i64(c_, fi_.checkpoint));
  }
  Value param(ir::Graph& g, const Type& t, const std::string& name) {
    Value p = b_.param(t, int(g.params.size()), name, c_.loc);
    g.params.push_back(p);
    return p;
  }
  // The forward scan's inputs as a segment scan's step sees them (params of `body`), steps excluded.
  std::vector<Value> inputs_as_params(ir::Graph& body, std::vector<Value>& outer_inputs);
  std::vector<Value> segment_inputs(const std::vector<Value>& inputs, const std::vector<Value>& windows,
                                    const Value& first, const Value& count);
  std::vector<Value> segment_rows(const std::vector<Value>& inputs, const Value& first, const Value& count);
  std::shared_ptr<ir::Graph> offset_step();
  Value last_window(int64_t rows_kept, const Value& window, const Value& rows_of_segment);
  Value history(size_t state, const Value& window, const Value& rows_of_segment);
  std::vector<Value> checkpoints();
  BackwardOutputs segments_backward(const std::vector<Value>& starts);
  std::vector<Value> input_cotangents(const BackwardOutputs& outs);
  Value init_cotangent(size_t state, const BackwardOutputs& outs);

  AdjointContext& c_;
  ir::Builder& b_;
  const ir::ScanNode& n_;
  const ScanInfo& fi_;
  const std::vector<Value>& cot_;
  const std::vector<bool>& needed_;
  std::vector<Value> in_;
  Value steps_;
};

std::vector<Value> Checkpointed::inputs_as_params(ir::Graph& body, std::vector<Value>& outer_inputs) {
  std::vector<Value> here(size_t(fi_.num_inputs()));
  for (int i = fi_.has_steps ? 1 : 0; i < fi_.num_inputs(); ++i) {
    outer_inputs.push_back(in_[size_t(i)]);
    here[size_t(i)] = param(body, in_[size_t(i)].type(), "in" + std::to_string(i));
  }
  return here;
}

// The forward scan's inputs for one segment: its steps, the rows of each sequence it reads (in
// the forward scan's orientation), its windows as inits.
std::vector<Value> Checkpointed::segment_inputs(const std::vector<Value>& inputs, const std::vector<Value>& windows,
                                                const Value& first, const Value& count) {
  std::vector<Value> out = inputs;
  for (size_t s = 0; s < fi_.sequences.size(); ++s) {
    const Value& u = inputs[size_t(fi_.sequence_input(int(s)))];
    Value end = add(c_, add(c_, first, count), i64(c_, fi_.sequences[s].span()));
    Value len = b_.dim_size(u, 0, c_.loc);
    out[size_t(fi_.sequence_input(int(s)))] =
        fi_.reverse ? rows(c_, u, sub(c_, len, end), sub(c_, len, first)) : rows(c_, u, first, end);
  }
  for (size_t i = 0; i < fi_.states.size(); ++i)
    if (windows[i]) out[size_t(fi_.init_input(int(i)))] = windows[i];
  return out;
}

// The forward step with its index offset by the segment's first step (an extra last param), and
// without its until flag (the steps taken are held fixed).
std::shared_ptr<ir::Graph> Checkpointed::offset_step() {
  const ir::Graph& fwd = n_.body();
  auto body = std::make_shared<ir::Graph>();
  for (const Value& p : fwd.params) param(*body, p.type(), p.node->as<ir::ParamNode>()->name());
  Value first = param(*body, Type(DType::I64), "first_step");
  std::vector<Value> replacements = body->params;
  replacements[0] = add(c_, body->params[0], first);
  std::vector<Value> results(fwd.results.begin(), fwd.results.begin() + fi_.num_outputs());
  body->results = ir::substitute_params(replacements, results);
  return body;
}

// The forward scan over one segment (inputs from segment_inputs): every output's rows.
std::vector<Value> Checkpointed::segment_rows(const std::vector<Value>& inputs, const Value& first, const Value& count) {
  ScanInfo info = fi_;
  info.has_steps = true;
  info.has_until = false;
  info.checkpoint = 0;
  info.windows.clear();
  info.num_params = fi_.num_params + 1;
  std::vector<Value> scan_inputs = inputs;
  if (fi_.has_steps) scan_inputs[0] = count;
  else scan_inputs.insert(scan_inputs.begin(), count);
  scan_inputs.push_back(first);
  return b_.scan(scan_inputs, info, offset_step(), Dim::fresh_unknown(), c_.loc);
}

// The last `rows_kept` rows of (window, the segment's rows): a lag-k state's init for what follows.
Value Checkpointed::last_window(int64_t rows_kept, const Value& window, const Value& rows_of_segment) {
  if (rows_kept == 1) return b_.index(rows_of_segment, {IndexSpec{}}, {i64(c_, -1)}, c_.loc);
  return last_rows(c_, rows_after(c_, window, rows_kept, rows_of_segment), rows_kept, 0);
}

// A state's rows before the segment (its window) then the segment's rows.
Value Checkpointed::history(size_t state, const Value& window, const Value& rows_of_segment) {
  return lags(state) == 0 ? rows_of_segment : rows_after(c_, window, lags(state), rows_of_segment);
}

// The forward scan over the segments: per state read at earlier steps, its window at the start of
// each segment ([segments, window]).
std::vector<Value> Checkpointed::checkpoints() {
  ScanInfo info;
  info.has_steps = true;
  info.index_name = "segment";
  auto body = std::make_shared<ir::Graph>();
  Value segment = param(*body, Type(DType::I64), "segment");
  std::vector<Value> inputs{segments(steps_)}, windows(fi_.states.size());
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (lags(i) == 0) continue;
    info.states.push_back({"window_" + fi_.states[i].name, {1}});
    inputs.push_back(in_[size_t(fi_.init_input(int(i)))]);
    windows[i] = param(*body, inputs.back().type(), info.states.back().name);
  }
  std::vector<Value> here = inputs_as_params(*body, inputs);
  inputs.push_back(steps_);
  Value steps = param(*body, Type(DType::I64), "steps");
  info.num_params = int(inputs.size()) - 1 - int(info.states.size());
  Value first = mul(c_, segment, i64(c_, fi_.checkpoint));
  Value count = b_.binary(BinaryOp::Min, i64(c_, fi_.checkpoint), sub(c_, steps, first), c_.loc);
  std::vector<Value> rows_of = segment_rows(segment_inputs(here, windows, first, count), first, count);
  for (size_t i = 0; i < fi_.states.size(); ++i)
    if (windows[i]) body->results.push_back(last_window(lags(i), windows[i], rows_of[i]));
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (!windows[i]) continue;
    body->results.push_back(windows[i]);
    info.outputs.push_back("start_" + fi_.states[i].name);
  }
  std::vector<Value> outs = b_.scan(inputs, std::move(info), body, Dim::fresh_unknown(), c_.loc);
  std::vector<Value> starts(fi_.states.size());
  size_t next = outs.size() / 2;
  for (size_t i = 0; i < fi_.states.size(); ++i)
    if (windows[i]) starts[i] = outs[next++];
  return starts;
}

// The backward scan over the segments, last first. Its states carry what the segments already
// done give back to earlier steps; its outputs are each segment's rows of the sequences'
// cotangents, in step order, padded to N rows.
BackwardOutputs Checkpointed::segments_backward(const std::vector<Value>& starts) {
  ScanInfo info;
  info.has_steps = true;
  info.reverse = true;
  info.index_name = "segment";
  auto body = std::make_shared<ir::Graph>();
  Value q = param(*body, Type(DType::I64), "segment");
  std::vector<Value> inputs{segments(steps_)}, windows(fi_.states.size()), blocks(size_t(fi_.num_outputs()));
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (!starts[i]) continue;
    info.sequences.push_back({{0}, "start_" + fi_.states[i].name, {}});
    inputs.push_back(starts[i]);
    windows[i] = param(*body, starts[i].type().row(), "start_" + fi_.states[i].name);
  }
  for (int o = 0; o < fi_.num_outputs(); ++o) {
    const Value& g = cot_[size_t(o)];
    if (!g) continue;
    // The cotangent's rows, N per segment (zeros after the last step).
    std::vector<Value> dims = dims_of(c_, g);
    std::vector<Dim> static_dims = g.type().shape;
    dims[0] = mul(c_, segments(steps_), i64(c_, fi_.checkpoint));
    static_dims[0] = Dim::fresh_unknown();
    Value padded = b_.update(b_.fill(scalar(c_, g.type().dtype, 0), dims, static_dims, c_.loc), g, {slice(true, true)},
                             {i64(c_, 0), steps_}, false, c_.loc);
    dims[0] = i64(c_, fi_.checkpoint);
    dims.insert(dims.begin(), segments(steps_));
    static_dims[0] = Dim::constant(fi_.checkpoint);
    static_dims.insert(static_dims.begin(), Dim::fresh_unknown());
    info.sequences.push_back({{0}, "d" + fi_.output_name(o), {}});
    inputs.push_back(b_.reshape(padded, dims, static_dims, c_.loc));
    blocks[size_t(o)] = param(*body, inputs.back().type().row(), "d" + fi_.output_name(o));
  }
  // Carried: per float state and lag, the cotangents of the earlier rows; per param, the sum so far.
  Stretch st;
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (!float_state(i)) continue;
    const Value& init = in_[size_t(fi_.init_input(int(i)))];
    Value row_like = fi_.states[i].init_has_rows() ? b_.index(init, {IndexSpec{}}, {i64(c_, 0)}, c_.loc) : init;
    for (int64_t k : fi_.states[i].lags) {
      std::vector<Value> dims = dims_of(c_, row_like);
      std::vector<Dim> static_dims = row_like.type().shape;
      if (k > 1) dims.insert(dims.begin(), i64(c_, k)), static_dims.insert(static_dims.begin(), Dim::constant(k));
      inputs.push_back(b_.fill(scalar(c_, init.type().dtype, 0), dims, static_dims, c_.loc));
      info.states.push_back({"d" + fi_.states[i].name + "_" + std::to_string(k), {1}});
      st.carried_lags[{int(i), k}] = param(*body, inputs.back().type(), info.states.back().name);
    }
  }
  for (int p = 0; p < fi_.num_params; ++p) {
    if (!wants(fi_.param_input(p))) continue;
    inputs.push_back(zeros_like(c_, in_[size_t(fi_.param_input(p))]));
    info.states.push_back({"dparam" + std::to_string(p), {1}});
    st.carried_sums[p] = param(*body, inputs.back().type(), info.states.back().name);
  }
  std::vector<Value> here = inputs_as_params(*body, inputs);
  inputs.push_back(steps_);
  Value steps = param(*body, Type(DType::I64), "steps");
  info.num_params = int(inputs.size()) - 1 - int(info.sequences.size()) - int(info.states.size());

  // This segment: recompute its steps, then go back through them.
  Value first = mul(c_, sub(c_, sub(c_, segments(steps), i64(c_, 1)), q), i64(c_, fi_.checkpoint));
  Value count = b_.binary(BinaryOp::Min, i64(c_, fi_.checkpoint), sub(c_, steps, first), c_.loc);
  for (size_t i = 0; i < fi_.states.size(); ++i)
    if (!windows[i] && lags(i) == 0) windows[i] = Value();
  std::vector<Value> seg_inputs = segment_inputs(here, windows, first, count);
  std::vector<Value> rows_of = segment_rows(seg_inputs, first, count);
  st.steps = count;
  st.back_steps = count;
  st.first = i64(c_, 0);
  st.first_index = first;
  st.inputs = seg_inputs;
  for (size_t i = 0; i < fi_.states.size(); ++i) st.histories.push_back(history(i, windows[i], rows_of[i]));
  st.output_rows = rows_of;
  for (int o = 0; o < fi_.num_outputs(); ++o)
    st.cotangent_rows.push_back(blocks[size_t(o)] ? rows(c_, blocks[size_t(o)], i64(c_, 0), count) : Value());
  AdjointContext here_ctx{b_, c_.loc, nullptr};
  BackwardScan backward(here_ctx, n_, st, needed_);
  BackwardOutputs seg = backward.run();

  BackwardOutputs result;
  for (auto& [out, lag] : seg.lag_output) {
    const Value& carried = st.carried_lags.at(lag);
    result.lag_output[int(body->results.size())] = lag;
    body->results.push_back(last_window(lag.second, carried, seg.outputs[size_t(out)]));
  }
  for (auto& [p, out] : seg.sum_output) {
    result.sum_output[p] = int(body->results.size());
    result.sum_flows[p] = seg.sum_flows.at(p);
    body->results.push_back(b_.index(seg.outputs[size_t(out)], {IndexSpec{}}, {i64(c_, -1)}, c_.loc));
  }
  for (auto& [tap, out] : seg.seq_output) {
    const Value& d = seg.outputs[size_t(out)];
    std::vector<Value> dims = dims_of(c_, d);
    std::vector<Dim> static_dims = d.type().shape;
    dims[0] = i64(c_, fi_.checkpoint);
    static_dims[0] = Dim::constant(fi_.checkpoint);
    Value padded = b_.fill(scalar(c_, d.type().dtype, 0), dims, static_dims, c_.loc);
    result.seq_output[tap] = int(body->results.size());
    body->results.push_back(b_.update(padded, flip_rows(c_, d), {slice(true, true)}, {i64(c_, 0), count}, false, c_.loc));
    info.outputs.push_back("d" + fi_.sequences[size_t(tap.first)].label + "@" + std::to_string(tap.second));
  }
  result.outputs = b_.scan(inputs, std::move(info), body, Dim::fresh_unknown(), c_.loc);
  return result;
}

// Init row of X[-j] gets what step t = k - j gave to lag k: row j - 1 of the last window of the
// cotangents carried for lag k (oldest first), as the plain rule takes it from that step's row.
Value Checkpointed::init_cotangent(size_t state, const BackwardOutputs& outs) {
  int64_t l = lags(state);
  const Value& init = in_[size_t(fi_.init_input(int(state)))];
  std::vector<Value> row_of(size_t(l) + 1);
  for (auto& [out, lag] : outs.lag_output) {
    if (size_t(lag.first) != state) continue;
    int64_t k = lag.second;
    Value window = sum_rows(c_, last_rows(c_, outs.outputs[size_t(out)], 1, 0));
    for (int64_t j = 1; j <= k; ++j) {
      Value part = sum_rows(c_, k == 1 ? insert_unit_axis(c_, window, 0) : rows(c_, window, i64(c_, j - 1), i64(c_, j)));
      row_of[size_t(j)] = row_of[size_t(j)] ? add(c_, row_of[size_t(j)], part) : part;
    }
  }
  if (l == 1) return unbroadcast(c_, row_of[1], init);
  Value whole = zeros_like(c_, init);
  for (int64_t j = 1; j <= l; ++j) whole = b_.update(whole, row_of[size_t(j)], {IndexSpec{}}, {i64(c_, l - j)}, false, c_.loc);
  return whole;
}

std::vector<Value> Checkpointed::input_cotangents(const BackwardOutputs& outs) {
  CotangentSources sources;
  // Segments last first, each in step order: flipped, laid end to end, cut to the steps.
  sources.sequence_rows = [&](int seq, int64_t k) {
    Value blocks = outs.sequence_rows(seq, k);
    if (!blocks) return Value();
    std::vector<Value> dims = dims_of(c_, blocks);
    std::vector<Dim> static_dims = blocks.type().shape;
    dims.erase(dims.begin());
    static_dims.erase(static_dims.begin());
    dims[0] = mul(c_, segments(steps_), i64(c_, fi_.checkpoint));
    static_dims[0] = Dim::fresh_unknown();
    return rows(c_, b_.reshape(flip_rows(c_, blocks), dims, static_dims, c_.loc), i64(c_, 0), steps_);
  };
  sources.in_step_order = true;
  sources.first = i64(c_, 0);
  sources.steps = steps_;
  sources.back_steps = steps_;
  sources.init_cotangent = [&](int state) { return init_cotangent(size_t(state), outs); };
  return scan_input_cotangents(c_, fi_, in_, needed_, outs, sources);
}

}  // namespace

std::vector<Value> checkpointed_adjoint(AdjointContext& ctx, const ir::ScanNode& scan,
                                        const std::vector<Value>& output_cotangents, const std::vector<bool>& needed) {
  return Checkpointed(ctx, scan, output_cotangents, needed).run();
}

}  // namespace scangen::autodiff
