// checkpoint = N: the gradient of a scan through its segment form.
//
// The steps are cut into segments of N (the last one shorter). The segment scan runs over the
// segments: its states are the forward states' windows (the rows of earlier steps the next segment
// reads) and its step runs the forward step over one segment, as an inner scan whose index is
// offset by the segment's first step. Its per-step outputs are the segment's rows padded to N;
// laid end to end and cut to the steps taken, they are the forward scan's results. Differentiating
// that with the ordinary rule is checkpointing: the backward pass over the segments keeps only the
// windows (the states of every N-th step), and for each segment recomputes its steps (the segment
// scan is marked recompute_outputs, so its rows are not kept) before running their backward pass,
// which keeps that segment's states only. The cost: the forward steps run twice more (once to
// find the windows, once per segment in the backward pass).
#include "autodiff/rules.h"
#include "autodiff/tensor_ops.h"
#include "ir/mutator.h"
#include "support/check.h"

namespace scangen::autodiff {

using ir::BinaryOp;
using ir::Dim;
using ir::IndexSpec;
using ir::ScanInfo;
using ir::Type;

namespace {

class SegmentForm {
 public:
  SegmentForm(AdjointContext& c, const ir::ScanNode& n, const std::vector<Value>& output_cotangents)
      : c_(c), b_(c.builder), n_(n), fi_(n.info()) {
    for (const Value& in : n.inputs()) in_.push_back(c.primal(in));
    steps_ = steps_taken(c, output_cotangents);
  }

  // The forward scan's results, computed through the segment scan.
  std::vector<Value> results() {
    Value size = i64(c_, fi_.checkpoint);
    Value segments = div(c_, add(c_, steps_, i64(c_, fi_.checkpoint - 1)), size);
    std::vector<Value> outs = segment_scan(segments);
    std::vector<Value> results;
    for (int o = 0; o < fi_.num_outputs(); ++o) {
      const Value& padded = outs[size_t(windowed_states() + o)];
      std::vector<Value> dims = dims_of(c_, padded);
      std::vector<Dim> static_dims = padded.type().shape;
      dims.erase(dims.begin());
      static_dims.erase(static_dims.begin());
      dims[0] = mul(c_, segments, size);
      static_dims[0] = Dim::fresh_unknown();
      Value laid_out = b_.reshape(padded, dims, static_dims, c_.loc);
      results.push_back(rows(c_, laid_out, i64(c_, 0), steps_));
    }
    return results;
  }

 private:
  int64_t lags(int state) const { return fi_.states[size_t(state)].max_lag(); }
  int windowed_states() const {
    int count = 0;
    for (size_t i = 0; i < fi_.states.size(); ++i) count += lags(int(i)) > 0;
    return count;
  }
  Value param(ir::Graph& g, const Type& t, const std::string& name) {
    Value p = b_.param(t, int(g.params.size()), name, c_.loc);
    g.params.push_back(p);
    return p;
  }

  std::vector<Value> segment_scan(const Value& segments);
  std::shared_ptr<ir::Graph> offset_step();
  Value window_after(int state, const Value& window, const Value& rows_of_segment, const Value& count);

  AdjointContext& c_;
  ir::Builder& b_;
  const ir::ScanNode& n_;
  const ScanInfo& fi_;
  std::vector<Value> in_;
  Value steps_;
};

// The forward step with its index offset by the segment's first step (an extra last param), and
// without its until flag (the steps taken are held fixed).
std::shared_ptr<ir::Graph> SegmentForm::offset_step() {
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

// The rows a state's next segment reads: the last `lags` rows of (window, the segment's rows).
Value SegmentForm::window_after(int state, const Value& window, const Value& rows_of_segment, const Value& count) {
  int64_t l = lags(state);
  if (l == 1) return b_.index(rows_of_segment, {IndexSpec{}}, {i64(c_, -1)}, c_.loc);
  std::vector<Value> dims = dims_of(c_, rows_of_segment);
  std::vector<Dim> static_dims = rows_of_segment.type().shape;
  dims[0] = add(c_, count, i64(c_, l));
  static_dims[0] = Dim::fresh_unknown();
  Value both = b_.fill(scalar(c_, window.type().dtype, 0), dims, static_dims, c_.loc);
  both = b_.update(both, window, {IndexSpec{IndexSpec::Kind::Slice, true, true}}, {i64(c_, 0), i64(c_, l)}, false, c_.loc);
  both = b_.update(both, rows_of_segment, {IndexSpec{IndexSpec::Kind::Slice, true, false}}, {i64(c_, l)}, false, c_.loc);
  return last_rows(c_, both, l, 0);
}

std::vector<Value> SegmentForm::segment_scan(const Value& segments) {
  ScanInfo info;
  info.has_steps = true;
  info.index_name = "segment";
  info.recompute_outputs = true;
  auto body = std::make_shared<ir::Graph>();
  std::vector<Value> inputs{segments};
  Value segment = param(*body, Type(DType::I64), "segment");
  std::vector<Value> windows(fi_.states.size());
  for (size_t i = 0; i < fi_.states.size(); ++i) {
    if (lags(int(i)) == 0) continue;
    const Value& init = in_[size_t(fi_.init_input(int(i)))];
    info.states.push_back({"window_" + fi_.states[i].name, {1}});
    inputs.push_back(init);
    windows[i] = param(*body, init.type(), info.states.back().name);
  }
  // Params: the forward scan's inputs but its steps, then the steps taken.
  std::vector<Value> outer(size_t(fi_.num_inputs()));
  for (int i = fi_.has_steps ? 1 : 0; i < fi_.num_inputs(); ++i) {
    inputs.push_back(in_[size_t(i)]);
    outer[size_t(i)] = param(*body, in_[size_t(i)].type(), "in" + std::to_string(i));
  }
  inputs.push_back(steps_);
  Value steps = param(*body, Type(DType::I64), "steps");
  info.num_params = int(inputs.size()) - 1 - int(info.states.size());

  // The inner scan: the forward step over this segment's steps.
  Value first = mul(c_, segment, i64(c_, fi_.checkpoint));
  Value count = b_.binary(BinaryOp::Min, i64(c_, fi_.checkpoint), sub(c_, steps, first), c_.loc);
  ScanInfo inner = fi_;
  inner.has_steps = true;
  inner.has_until = false;
  inner.checkpoint = 0;
  inner.windows.clear();
  inner.num_params = fi_.num_params + 1;
  std::vector<Value> inner_inputs{count};
  for (size_t s = 0; s < fi_.sequences.size(); ++s) {
    const Value& u = outer[size_t(fi_.sequence_input(int(s)))];
    Value end = add(c_, add(c_, first, count), i64(c_, fi_.sequences[s].span()));
    if (!fi_.reverse) {
      inner_inputs.push_back(rows(c_, u, first, end));
    } else {
      Value len = b_.dim_size(u, 0, c_.loc);
      inner_inputs.push_back(rows(c_, u, sub(c_, len, end), sub(c_, len, first)));
    }
  }
  for (size_t i = 0; i < fi_.states.size(); ++i)
    inner_inputs.push_back(windows[i] ? windows[i] : outer[size_t(fi_.init_input(int(i)))]);
  for (int p = 0; p < fi_.num_params; ++p) inner_inputs.push_back(outer[size_t(fi_.param_input(p))]);
  inner_inputs.push_back(first);
  std::vector<Value> segment_rows = b_.scan(inner_inputs, inner, offset_step(), Dim::fresh_unknown(), c_.loc);

  for (size_t i = 0; i < fi_.states.size(); ++i)
    if (windows[i]) body->results.push_back(window_after(int(i), windows[i], segment_rows[i], count));
  // Each output's rows of this segment, padded to N rows.
  for (int o = 0; o < fi_.num_outputs(); ++o) {
    const Value& r = segment_rows[size_t(o)];
    std::vector<Value> dims = dims_of(c_, r);
    std::vector<Dim> static_dims = r.type().shape;
    dims[0] = i64(c_, fi_.checkpoint);
    static_dims[0] = Dim::constant(fi_.checkpoint);
    Value padded = b_.fill(scalar(c_, r.type().dtype, 0), dims, static_dims, c_.loc);
    body->results.push_back(b_.update(padded, r, {IndexSpec{IndexSpec::Kind::Slice, true, true}}, {i64(c_, 0), count},
                                      false, c_.loc));
    info.outputs.push_back("rows_" + fi_.output_name(o));
  }
  return b_.scan(inputs, std::move(info), body, Dim::fresh_unknown(), c_.loc);
}

}  // namespace

std::vector<Value> checkpointed_adjoint(AdjointContext& ctx, const ir::ScanNode& scan,
                                        const std::vector<Value>& output_cotangents, const std::vector<bool>& needed) {
  SegmentForm form(ctx, scan, output_cotangents);
  std::vector<Value> results = form.results();
  std::vector<std::pair<Value, Value>> seeds;
  for (size_t o = 0; o < results.size(); ++o)
    if (output_cotangents[o]) seeds.push_back({results[o], output_cotangents[o]});
  // The variables: the scan's inputs, each value once (one array may be two inputs).
  std::vector<Value> wrt;
  std::vector<int> first_input;
  std::vector<Value> cotangents(size_t(scan.num_inputs()));
  for (int i = 0; i < scan.num_inputs(); ++i) {
    Value v = ctx.primal(scan.input(i));
    if (!needed[size_t(i)] || std::find(wrt.begin(), wrt.end(), v) != wrt.end()) continue;
    wrt.push_back(v);
    first_input.push_back(i);
  }
  AdjointContext here{ctx.builder, ctx.loc, nullptr};
  std::vector<Value> grads = backprop(here, seeds, wrt);
  for (size_t k = 0; k < grads.size(); ++k) cotangents[size_t(first_input[k])] = grads[k];
  return cotangents;
}

}  // namespace scangen::autodiff
