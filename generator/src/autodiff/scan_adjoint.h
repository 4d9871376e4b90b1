// The backward scan of a scan (scan_adjoint.cpp), shared by the plain rule and the checkpointed
// one (checkpoint.cpp), which runs it once per segment.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>

#include "autodiff/context.h"
#include "ir/ir.h"
#include "support/check.h"

namespace scangen::autodiff {

// The steps a backward scan goes through and where it finds what the forward pass kept. The plain
// rule covers all the steps taken; the checkpointed rule one segment of them at a time.
struct Stretch {
  Value steps;        // forward steps in the stretch
  Value back_steps;   // the last ones, which the backward scan covers
  Value first;        // steps - back_steps
  Value first_index;  // the forward index of the stretch's first step (empty: 0)
  // The forward scan's inputs as seen here; a sequence holds the rows the stretch reads, in the
  // forward scan's own orientation.
  std::vector<Value> inputs;
  // Per state: its rows before the stretch (the init's form) then the stretch's rows. Empty: built
  // from the init and `output_rows`.
  std::vector<Value> histories;
  std::vector<Value> output_rows;     // per forward output, its rows in the stretch (empty: recomputed)
  std::vector<Value> cotangent_rows;  // per forward output, the cotangent of those rows (empty: none)
  // What the backward scan starts from (empty: zeros): per (state, k) the cotangents of the k
  // earlier steps (a lag-k state's init: one row when k = 1, else k rows, oldest first), per param
  // the sum so far.
  std::map<std::pair<int, int64_t>, Value> carried_lags;
  std::map<int, Value> carried_sums;
};

// The backward scan's outputs and what each is.
struct BackwardOutputs {
  std::vector<Value> outputs;
  std::map<int, std::pair<int, int64_t>> lag_output;   // output -> (state, k): the carried cotangent
  std::map<int, int> sum_output;                       // param -> output: the running sum
  std::map<int, bool> sum_flows;                       // param -> whether any cotangent reached it
  std::map<std::pair<int, int64_t>, int> seq_output;   // (sequence, tap) -> output: per-step rows

  // The per-step rows of a sequence tap's cotangents (empty: none reached it).
  Value sequence_rows(int seq, int64_t tap) const {
    auto out = seq_output.find({seq, tap});
    return out == seq_output.end() ? Value() : outputs[size_t(out->second)];
  }
};

// Whether a rule computes the cotangent of a forward scan's input: asked for, and a float.
inline bool wants_cotangent(const std::vector<bool>& needed, const std::vector<Value>& inputs, int input) {
  return needed[size_t(input)] && is_float(inputs[size_t(input)].type().dtype);
}

// Where a rule's backward scan left the cotangents of the forward scan's inputs.
struct CotangentSources {
  // Tap k of sequence `seq`: its cotangent rows for the steps covered (empty: none), in step order
  // when `in_step_order`, else last step first; the steps covered are the last `back_steps` of
  // `steps`, from `first` on.
  std::function<Value(int seq, int64_t tap)> sequence_rows;
  bool in_step_order = false;
  Value first, steps, back_steps;
  std::function<Value(int state)> init_cotangent;  // a state's init (read at earlier steps)
};

// The cotangents of a forward scan's inputs (`inputs`, as the rule sees them): each sequence's
// rows from its taps' rows, each init from `init_cotangent`, each param from its sum's last row;
// empty where not needed, not float or not reached.
std::vector<Value> scan_input_cotangents(AdjointContext& c, const ir::ScanInfo& fi, const std::vector<Value>& inputs,
                                         const std::vector<bool>& needed, const BackwardOutputs& outs,
                                         const CotangentSources& sources);

// The plain rule's stretch: all the steps taken (the last truncate_gradient ones).
Stretch whole_scan(AdjointContext& ctx, const ir::ScanNode& n, const std::vector<Value>& output_cotangents);

// Values of the forward step rebuilt inside the backward step, on demand: params and the values
// the forward pass kept are given, everything else is recomputed from them.
class StepReplay {
 public:
  explicit StepReplay(ir::Builder& b) : b_(b) {}
  void give(const Value& forward, const Value& backward) { map_.emplace(forward, backward); }
  bool given(const Value& forward) const { return map_.count(forward) > 0; }

  Value operator()(const Value& v) {
    if (auto it = map_.find(v); it != map_.end()) return it->second;
    // Post-order over the nodes not yet replayed.
    std::vector<std::pair<const ir::Node*, size_t>> stack{{v.node.get(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        const Value& in = node->inputs()[next++];
        if (!map_.count(in)) stack.push_back({in.node.get(), 0});
        continue;
      }
      replay(*node);
      stack.pop_back();
    }
    return map_.at(v);
  }

 private:
  void replay(const ir::Node& n) {
    bool done = true;
    for (int i = 0; i < n.num_outputs(); ++i) done = done && map_.count(n.output(i));
    if (done) return;
    SCANGEN_CHECK(n.kind() != ir::NodeKind::Param, "a forward step parameter without a backward value");
    std::vector<Value> inputs;
    for (const Value& in : n.inputs()) inputs.push_back(map_.at(in));
    ir::NodeRef copy = b_.rebuild(n, std::move(inputs));
    for (int i = 0; i < n.num_outputs(); ++i) map_.emplace(n.output(i), Value(copy, i));
  }

  ir::Builder& b_;
  std::unordered_map<Value, Value, ir::ValueHash> map_;
};

class BackwardScan {
 public:
  BackwardScan(AdjointContext& ctx, const ir::ScanNode& n, Stretch stretch, const std::vector<bool>& needed);

  // Builds the backward scan; its outputs and what each one is.
  BackwardOutputs run();
  // The plain rule's cotangents of the forward scan's inputs from the backward scan's outputs.
  std::vector<Value> input_cotangents(const BackwardOutputs& outs);

 private:
  bool float_state(int i) const { return is_float(fwd_.results[size_t(i)].type().dtype); }
  bool wants(int input) const { return wants_cotangent(needed_, in_, input); }
  Value param(const ir::Type& t, const std::string& name) {
    Value p = b_.param(t, int(body_->params.size()), name, c_.loc);
    body_->params.push_back(p);
    return p;
  }

  // The backward scan's steps and index.
  void plan_steps() {
    info_.has_steps = true;
    info_.reverse = true;
    info_.index_name = fi_.index_name;
    inputs_.push_back(back_steps_);
    body_->params.push_back(b_.param(ir::Type(DType::I64), 0, fi_.index_name, c_.loc));
  }

  // A sequence of the backward scan: its tap k param is taps[k].
  std::map<int64_t, Value> add_sequence(const Value& rows_in_iteration_order, std::vector<int64_t> taps,
                                        const std::string& label) {
    std::sort(taps.begin(), taps.end());
    info_.sequences.push_back({taps, label, {}});
    inputs_.push_back(rows_in_iteration_order);
    std::map<int64_t, Value> params;
    for (int64_t k : taps) params[k] = param(rows_in_iteration_order.type().row(), label);
    return params;
  }

  void add_sequences();
  void add_states();
  void add_params();
  void build_body();
  Value init_cotangent(int state, const BackwardOutputs& outs);

  AdjointContext& c_;
  ir::Builder& b_;
  const ir::ScanInfo& fi_;
  const ir::Graph& fwd_;
  Stretch s_;
  const std::vector<bool>& needed_;
  const std::vector<Value>& in_;  // the forward scan's inputs, as the stretch sees them
  StepReplay replay_;

  Value steps_, back_steps_, first_;
  ir::ScanInfo info_;
  std::vector<Value> inputs_;
  std::shared_ptr<ir::Graph> body_ = std::make_shared<ir::Graph>();
  std::vector<Value> results_;
  std::map<int, Value> output_cotangent_;          // forward output -> its cotangent's row
  std::vector<Value> history_;                      // per state: the rows its sequence reads
  std::map<std::pair<int, int64_t>, Value> lag_;   // (state, k) -> carried cotangent of X[t - k]
  std::map<int, Value> sum_;                       // forward param -> carried sum of its cotangents
  BackwardOutputs outs_;
};

}  // namespace scangen::autodiff
