// The interpreter's scans: the steps `steps` and the sequences allow (with their errors), the rows
// each output keeps, and the steps themselves, one after the other.
#include <algorithm>
#include <cstring>

#include "interpreter/elements.h"
#include "interpreter/node_eval.h"
#include "interpreter/shape_eval.h"

namespace scangen::interp {

using namespace scangen::ir;

namespace {

HostTensor row_of(const HostTensor& t, int64_t row) {
  Shape shape(t.shape().begin() + 1, t.shape().end());
  HostTensor out(t.dtype(), shape);
  size_t bytes = out.nbytes();
  if (bytes) std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + size_t(row) * bytes, bytes);
  return out;
}

// The rows one output of a scan keeps, in one buffer: all of them, or (save-mem) the last
// `window` in turn. It is allocated before the first step, as compiled code allocates it, so that a
// result too large to allocate fails before the loop; a scan that stops on `until` starts with
// room for kInitialUntilRows rows and doubles it when full.
class OutputRows {
 public:
  // `kept` false: nothing reads the output, and no rows are kept.
  OutputRows(DType dtype, Shape row, int64_t window, int64_t steps, bool until, bool kept)
      : row_(std::move(row)), window_(window), steps_(steps), kept_(kept) {
    int64_t rows = !kept ? 0 : window > 0 ? std::min(steps, window) : until ? std::min(steps, kInitialUntilRows) : steps;
    buffer_ = HostTensor(dtype, with_rows(rows));
    row_bytes_ = size_t(*tensor_bytes(dtype, row_));
  }

  void append(const HostTensor& row) {
    SCANGEN_CHECK(row.shape() == row_, "a step value of the output's step shape");
    if (!kept_) return;
    int64_t slot = window_ > 0 ? count_ % window_ : count_;
    if (slot == capacity()) grow();
    if (row_bytes_) std::memcpy(at(slot), row.raw_data(), row_bytes_);
    ++count_;
  }

  // The rows kept, in iteration order.
  HostTensor take() const {
    int64_t rows = window_ > 0 ? std::min(count_, window_) : count_;
    if (window_ == 0 && rows == capacity()) return buffer_;
    HostTensor out(buffer_.dtype(), with_rows(rows));
    for (int64_t r = 0; r < rows && row_bytes_; ++r) {
      int64_t step = count_ - rows + r;
      std::memcpy(static_cast<char*>(out.raw_data()) + size_t(r) * row_bytes_, at(window_ > 0 ? step % window_ : step),
                  row_bytes_);
    }
    return out;
  }

 private:
  Shape with_rows(int64_t rows) const {
    Shape s{rows};
    s.insert(s.end(), row_.begin(), row_.end());
    return s;
  }
  int64_t capacity() const { return buffer_.dim(0); }
  char* at(int64_t slot) const { return static_cast<char*>(const_cast<void*>(buffer_.raw_data())) + size_t(slot) * row_bytes_; }
  void grow() {
    HostTensor bigger(buffer_.dtype(), with_rows(std::min(steps_, std::max<int64_t>(1, capacity() * 2))));
    if (row_bytes_) std::memcpy(bigger.raw_data(), buffer_.raw_data(), size_t(capacity()) * row_bytes_);
    buffer_ = bigger;
  }

  Shape row_;
  int64_t window_;
  int64_t steps_;
  bool kept_;
  HostTensor buffer_;
  size_t row_bytes_ = 0;
  int64_t count_ = 0;
};

// The number of steps `steps` and the sequences allow, with their errors.
int64_t scan_steps(const ScanNode& n, const std::vector<HostTensor>& in) {
  const ScanInfo& info = n.info();
  int64_t steps = 0;
  if (info.has_steps) {
    steps = scalar_i64(in[size_t(info.steps_input())]);
    if (steps < 0) fail(n.loc(), RuntimeErrorId::steps_negative, {ErrorArg::number(steps)});
  }
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ScanSequence& seq = info.sequences[s];
    int64_t length = in[size_t(info.sequence_input(int(s)))].dim(0);
    int64_t allowed = std::max<int64_t>(length - seq.span(), 0);
    if (!info.has_steps) {
      steps = s == 0 ? allowed : std::min(steps, allowed);
    } else if (allowed < steps) {
      fail(n.loc(), RuntimeErrorId::sequence_too_short,
           {ErrorArg::text_of(seq.label), ErrorArg::number(length), ErrorArg::text_of(seq.taps_text()),
            ErrorArg::number(steps), ErrorArg::number(allowed)});
    }
  }
  return steps;
}

// The buffers of the outputs' rows, from their step shapes computed before the first step.
std::vector<OutputRows> scan_rows(const ScanNode& n, const std::vector<HostTensor>& in, const std::vector<bool>& used,
                                  int64_t steps) {
  const ScanInfo& info = n.info();
  std::vector<Shape> shapes;
  std::vector<std::optional<HostTensor>> values;
  for (const HostTensor& t : in) {
    shapes.push_back(t.shape());
    values.push_back(t);
  }
  std::vector<Shape> row_shapes = ShapeEval::rows_from_inputs(n, std::move(shapes), std::move(values));
  std::vector<OutputRows> rows;
  for (int i = 0; i < info.num_outputs(); ++i) {
    try {
      const bool kept = used.empty() || used[size_t(i)];
      rows.emplace_back(n.output_types()[size_t(i)].dtype, row_shapes[size_t(i)], info.window(i), steps, info.has_until, kept);
    } catch (const AllocationError& e) {
      fail_allocation(e, "the rows of '" + info.output_name(i) + "'", n.loc());
    }
  }
  return rows;
}

// The last max_lag values of each state, oldest first, before the first step.
std::vector<std::vector<HostTensor>> initial_history(const ScanNode& n, const std::vector<HostTensor>& in) {
  const ScanInfo& info = n.info();
  std::vector<std::vector<HostTensor>> history(info.states.size());
  for (size_t s = 0; s < info.states.size(); ++s) {
    const HostTensor& init = in[size_t(info.init_input(int(s)))];
    if (info.states[s].init_has_rows()) {
      for (int64_t r = 0; r < info.states[s].max_lag(); ++r) history[s].push_back(row_of(init, r));
    } else {
      history[s].push_back(init);
    }
  }
  return history;
}

// The step graph's params at step t: the index, the sequences' taps, the states' lags, the params.
std::vector<HostTensor> step_params(const ScanNode& n, const std::vector<HostTensor>& in,
                                    const std::vector<std::vector<HostTensor>>& history, int64_t t) {
  const ScanInfo& info = n.info();
  std::vector<HostTensor> params(n.body().params.size());
  params[size_t(info.body_index_param())] = HostTensor::scalar<int64_t>(t);
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ScanSequence& seq = info.sequences[s];
    const HostTensor& u = in[size_t(info.sequence_input(int(s)))];
    for (size_t k = 0; k < seq.taps.size(); ++k) {
      int64_t tap = seq.taps[k];
      int64_t row = info.reverse ? u.dim(0) - 1 - seq.max_tap() + tap - t : t + tap - seq.min_tap();
      params[size_t(info.body_sequence_param(int(s), int(k)))] = row_of(u, row);
    }
  }
  for (size_t s = 0; s < info.states.size(); ++s) {
    const auto& h = history[s];
    for (size_t k = 0; k < info.states[s].lags.size(); ++k)
      params[size_t(info.body_state_param(int(s), int(k)))] = h[h.size() - size_t(info.states[s].lags[k])];
  }
  for (int p = 0; p < info.num_params; ++p) params[size_t(info.body_param(p))] = in[size_t(info.param_input(p))];
  return params;
}

}  // namespace

std::vector<HostTensor> NodeEval::visit_Scan(const ScanNode& n) {
  const ScanInfo& info = n.info();
  const Graph& body = n.body();
  const int64_t steps = scan_steps(n, in_);
  std::vector<OutputRows> rows = scan_rows(n, in_, used_outputs, steps);
  std::vector<std::vector<HostTensor>> history = initial_history(n, in_);
  const std::vector<const Node*> order = topological_order(body);
  const OutputUses uses = output_uses(body, order);
  for (int64_t t = 0; t < steps; ++t) {
    GraphEval eval(step_params(n, in_, history, t), run_);
    std::vector<HostTensor> results = eval.results(body, order, uses);
    for (int i = 0; i < info.num_outputs(); ++i) {
      try {
        rows[size_t(i)].append(results[size_t(i)]);
      } catch (const AllocationError& e) {
        fail_allocation(e, "the rows of '" + info.output_name(i) + "'", n.loc());
      }
    }
    for (size_t s = 0; s < info.states.size(); ++s) {
      auto& h = history[s];
      h.push_back(results[s]);
      size_t keep = size_t(std::max<int64_t>(info.states[s].max_lag(), 1));
      if (h.size() > keep) h.erase(h.begin(), h.end() - long(keep));
    }
    if (info.has_until && results.back().data<bool>()[0]) break;
  }
  std::vector<HostTensor> out;
  for (const OutputRows& r : rows) out.push_back(r.take());
  return out;
}

}  // namespace scangen::interp
