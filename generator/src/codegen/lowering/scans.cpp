// Scans: the storage of each output's rows, the time loop with its step, and the results.
#include <memory>

#include "codegen/lowering/assoc_scans.h"
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {
namespace {

// Whether state `s` of a scan (lags {1}, tensor steps) may be updated in a single row, its step
// overwriting X[t-1] element by element: every node of the step that reads X[t-1] copies what it
// needs into fresh memory before the state's loop (a product, a reduction, an element-wise value
// computed on its own) or is fused into that loop, reading element i just before it writes
// element i (element-wise operations); no view of X[t-1] (a slice, a reshape) exists; and every
// value that depends on X[t-1] is computed by the end of that loop, i.e. is needed by the state's
// step value, which is itself computed element-wise into the row.
bool updates_in_one_row(const ir::ScanNode& n, int s) {
  const ir::ScanInfo& info = n.info();
  const ir::Graph& body = n.body();
  const Value& result = body.results[size_t(s)];
  NodeKind root = result.node->kind();
  if (root != NodeKind::Unary && root != NodeKind::Binary && root != NodeKind::Select && root != NodeKind::Cast &&
      root != NodeKind::Call)
    return false;
  const ir::Node* previous = body.params[size_t(info.body_state_param(s, 0))].node.get();
  // Another result (an output `y[t] = x[t-1]`, the until flag) that is X[t-1] itself would be
  // read after the row is overwritten.
  for (const Value& r : body.results)
    if (r.node.get() == previous) return false;
  std::set<const ir::Node*> needed;
  for (const ir::Node* node : ir::topological_order(ir::Graph{{}, {result}})) needed.insert(node);
  std::set<const ir::Node*> depends{previous};
  for (const ir::Node* node : ir::topological_order(body)) {
    bool reads_previous = false, depends_on_previous = false;
    for (const Value& in : node->inputs()) {
      reads_previous = reads_previous || in.node.get() == previous;
      depends_on_previous = depends_on_previous || depends.count(in.node.get()) > 0;
    }
    if (!depends_on_previous) continue;
    depends.insert(node);
    if (!needed.count(node)) return false;
    if (reads_previous && !computes_elementwise(node->kind()) && node->kind() != NodeKind::MatMul &&
        node->kind() != NodeKind::Reduce)
      return false;
  }
  return true;
}

// Where the rows of each output live:
//  - All: every step's row, and nothing else: the buffer is the result (so that the form writing
//    into the caller's memory computes it there). A state reads X[t - k] from row t - k, and in
//    its first steps from its init's row t - k + L (`init_rows` = L, chosen per step);
//  - Ring: `ring` slots reused in turn (a state nothing reads keeps its taps' rows; an output
//    with a window keeps its last rows);
//  - None: nothing (a scalar state nothing reads lives in variables only).
struct RowStore {
  enum class Kind { All, Ring, None } kind = Kind::All;
  int64_t prefix = 0;     // Ring: a state's init rows, first in the buffer
  int64_t init_rows = 0;  // All: a state's init rows, read from its init (max lag L)
  int64_t ring = 0;
  int64_t window = 0;  // rows of the result; 0 for all of them
  ExprRef base;
  std::string storage;
  ExprRef row_size;
  // The buffer row of step s (s may be negative: a state's init rows).
  ExprRef row_of(ExprRef s) const {
    if (kind == Kind::Ring && ring == 1) return lir::i64(0);
    ExprRef r = lir::add(std::move(s), lir::i64(prefix));
    return kind == Kind::Ring ? lir::binary(ir::BinaryOp::Mod, r, lir::i64(ring)) : r;
  }
};

struct StateStorage {
  Tensor init;
  int64_t lag = 0;      // max lag L
  bool scalar = false;  // rank 0: its taps are kept in variables
  std::vector<ExprRef> row_dims;
  std::vector<ExprRef> registers;  // scalar: registers[k - 1] holds X[t - k]
};

}  // namespace

// One scan, lowered in the order its parts run: the inputs, the number of steps, the step's
// shapes, the storage of each output's rows, the states' first rows, the time loop, the results.
class ScanLowering {
 public:
  ScanLowering(GraphLowering& outer, FunctionLowering& f, const ir::ScanNode& n)
      : outer_(outer), F(f), n_(n), info_(n.info()), body_(n.body()) {}

  std::vector<Tensor> run() {
    F.comment("scan at " + line_col(n_.loc()));
    compute_inputs();
    count_steps();
    inner_ = std::make_unique<GraphLowering>(F, body_, body_params());
    compute_step_shapes();
    plan_rows();
    if (info_.assoc) {
      associative_steps();
      return results();
    }
    start_states();
    time_loop();
    return results();
  }

 private:
  void compute_inputs();
  void count_steps();
  std::vector<Tensor> body_params();
  void compute_step_shapes();
  void plan_rows();
  void start_states();
  void time_loop();
  void associative_steps();
  void grow_rows(const ExprRef& step);
  void bind_sequences(const ExprRef& step);
  std::vector<ExprRef> bind_rows(const ExprRef& step);
  void bind_states(const ExprRef& step, const std::vector<ExprRef>& current);
  std::vector<ExprRef> write_outputs(const ExprRef& step, const std::vector<ExprRef>& current);
  std::vector<Tensor> results();
  Tensor result(int i);

  FunctionLowering::BufferSite rows_site(int i) const {
    return FunctionLowering::BufferSite{n_.loc(), "the rows of '" + info_.output_name(i) + "'"};
  }
  bool is_scalar_state(int i) const { return i < int(states_.size()) && states_[size_t(i)].scalar; }

  GraphLowering& outer_;
  FunctionLowering& F;
  const ir::ScanNode& n_;
  const ir::ScanInfo& info_;
  const ir::Graph& body_;
  std::unique_ptr<GraphLowering> inner_;  // the step's graph
  std::vector<bool> in_place_;            // inits computed straight into the state's storage
  ExprRef steps_;
  std::vector<Tensor> seqs_;
  std::vector<ExprRef> seq_row_sizes_;
  std::vector<StateStorage> states_;
  std::vector<RowStore> stores_;
  std::vector<std::vector<ExprRef>> row_dims_;
  std::vector<ExprRef> row_sizes_;
  ExprRef rows_held_;  // rows each output's buffer has room for
  ExprRef taken_;      // steps taken (fewer than steps_ when `until` stops the loop)
};

std::vector<Tensor> GraphLowering::scan(const ir::ScanNode& n) { return ScanLowering(*this, F, n).run(); }

// Every input first, in order, as the interpreter computes them (ir::topological_order) before it
// runs the scan: when an input fails too (an index out of range in a param, say), that error comes
// before this scan's own checks of `steps` and of the sequences, on every backend. An init the
// in-place rewrite marked is computed later, straight into the state's storage (only its shape
// checks happen here): it cannot fail, and nothing else reads it.
void ScanLowering::compute_inputs() {
  in_place_.assign(info_.states.size(), false);
  for (size_t s = 0; s < info_.states.size(); ++s) {
    const Value& init = n_.input(info_.init_input(int(s)));
    // A state whose every row is kept (plan_rows: All) reads its init rows from the init itself.
    const bool all_rows = outer_.uses(n_.output(int(s))) > 0 && info_.window(int(s)) == 0;
    in_place_[s] = info_.states[s].init_in_place && n_.output_types()[s].rank() >= 2 && outer_.uses(init) == 1 &&
                   !outer_.computed(init) && !all_rows;
  }
  for (int i = 0; i < n_.num_inputs(); ++i) {
    int state = i - info_.init_input(0);
    if (state >= 0 && state < int(info_.states.size()) && in_place_[size_t(state)])
      outer_.dims(n_.input(i));
    else
      outer_.value(n_.input(i));
  }
}

// The number of steps, and the checks of `steps` against the sequences.
void ScanLowering::count_steps() {
  if (info_.has_steps) {
    steps_ = outer_.value(n_.input(info_.steps_input())).scalar;
    F.check(lir::ge(steps_, lir::i64(0)), n_.loc(), RuntimeErrorId::steps_negative, {ErrorArg::number(steps_)});
  }
  for (size_t s = 0; s < info_.sequences.size(); ++s) {
    const ir::ScanSequence& seq = info_.sequences[s];
    Tensor u = outer_.value(n_.input(info_.sequence_input(int(s))));
    seqs_.push_back(u);
    std::vector<ExprRef> row(u.dims.begin() + 1, u.dims.end());
    seq_row_sizes_.push_back(F.product(row, "row"));
    // A length is never negative: only a span of taps can make `allowed` negative.
    ExprRef allowed = seq.span() == 0 ? u.dims[0]
                                      : F.let("allowed", lir::max(lir::sub(u.dims[0], lir::i64(seq.span())), lir::i64(0)));
    if (info_.has_steps) {
      F.check(lir::ge(allowed, steps_), n_.loc(), RuntimeErrorId::sequence_too_short,
              {ErrorArg::text_of(seq.label), ErrorArg::number(u.dims[0]), ErrorArg::text_of(seq.taps_text()),
               ErrorArg::number(steps_), ErrorArg::number(allowed)});
    } else {
      steps_ = s == 0 ? allowed : F.let("steps", lir::min(steps_, allowed));
    }
  }
  steps_ = F.let("steps", steps_);
}

// The params of the step's graph as known before the loop: shapes only (the step index, the
// sequences' rows and the states' rows get their values in the loop), and the scan's params.
std::vector<Tensor> ScanLowering::body_params() {
  std::vector<Tensor> params(body_.params.size());
  params[size_t(info_.body_index_param())] = Tensor{DType::I64, 0, nullptr, nullptr, {}, ""};
  for (size_t s = 0; s < info_.sequences.size(); ++s)
    for (size_t k = 0; k < info_.sequences[s].taps.size(); ++k) {
      Tensor row;
      row.dtype = seqs_[s].dtype;
      row.rank = seqs_[s].rank - 1;
      row.dims.assign(seqs_[s].dims.begin() + 1, seqs_[s].dims.end());
      params[size_t(info_.body_sequence_param(int(s), int(k)))] = row;
    }
  states_.resize(info_.states.size());
  for (size_t s = 0; s < info_.states.size(); ++s) {
    StateStorage& st = states_[s];
    const Value& init = n_.input(info_.init_input(int(s)));
    if (in_place_[s]) {
      st.init.dtype = init.type().dtype;
      st.init.rank = init.type().rank();
      st.init.dims = outer_.dims(init);
    } else {
      st.init = outer_.value(init);
    }
    st.lag = info_.states[s].max_lag();
    st.scalar = n_.output_types()[s].rank() == 1;
    st.row_dims = st.init.dims;
    if (info_.states[s].init_has_rows()) st.row_dims.erase(st.row_dims.begin());
    Tensor p;
    p.dtype = st.init.dtype;
    p.rank = int(st.row_dims.size());
    p.dims = st.row_dims;
    for (size_t k = 0; k < info_.states[s].lags.size(); ++k) params[size_t(info_.body_state_param(int(s), int(k)))] = p;
  }
  for (int p = 0; p < info_.num_params; ++p)
    params[size_t(info_.body_param(p))] = outer_.value(n_.input(info_.param_input(p)));
  return params;
}

// Step shapes of the outputs, before the loop.
void ScanLowering::compute_step_shapes() {
  row_dims_.resize(size_t(info_.num_outputs()));
  row_sizes_.resize(size_t(info_.num_outputs()));
  inner_->begin_step_shapes();
  for (int i = 0; i < info_.num_outputs(); ++i) {
    row_dims_[size_t(i)] = i < int(states_.size()) ? states_[size_t(i)].row_dims : inner_->dims(body_.results[size_t(i)]);
    for (const ExprRef& d : row_dims_[size_t(i)])
      SCANGEN_CHECK(d != nullptr, "the step shape of '" + info_.output_name(i) + "' depends on a step value");
    row_sizes_[size_t(i)] = F.product(row_dims_[size_t(i)], "row");
  }
  inner_->end_step_shapes();
}

// Where each output's rows live (RowStore), and their buffers. A scan that stops on `until` starts
// with room for some rows and doubles it when full; others know their number of steps.
void ScanLowering::plan_rows() {
  rows_held_ = steps_;
  if (info_.has_until) rows_held_ = F.decl("rows_held", lir::min(steps_, lir::i64(ir::kInitialUntilRows)));
  stores_.resize(size_t(info_.num_outputs()));
  for (int i = 0; i < info_.num_outputs(); ++i) {
    RowStore& store = stores_[size_t(i)];
    const bool is_state = i < int(states_.size());
    const bool scalar_state = is_scalar_state(i);
    store.prefix = is_state && !scalar_state ? states_[size_t(i)].lag : 0;
    store.window = info_.window(i);
    store.row_size = row_sizes_[size_t(i)];
    const bool used = outer_.uses(n_.output(i)) > 0;
    if (!used && scalar_state) {
      store.kind = RowStore::Kind::None;
    } else if (!used) {
      store.kind = RowStore::Kind::Ring;  // only the taps' rows
      store.ring = store.prefix + 1;
    } else if (store.window > 0) {
      store.kind = RowStore::Kind::Ring;
      store.ring = std::max(store.prefix + 1, store.window);
    }
    if (store.kind == RowStore::Kind::All) {
      store.init_rows = store.prefix;
      store.prefix = 0;
    }
    // A state that keeps at most its last row, with an element-wise step, lives in one row.
    if (is_state && !scalar_state && store.kind == RowStore::Kind::Ring && store.window <= 1 &&
        info_.states[size_t(i)].lags == std::vector<int64_t>{1} && updates_in_one_row(n_, i))
      store.ring = 1;
    if (store.kind == RowStore::Kind::None) continue;
    const DType d = n_.output_types()[size_t(i)].dtype;
    const bool all = store.kind == RowStore::Kind::All;
    ExprRef rows = all ? lir::add(rows_held_, lir::i64(store.prefix)) : lir::i64(store.ring);
    auto [count, failure] = F.rows_count(rows, all ? rows_held_ : rows, row_dims_[size_t(i)], d, rows_site(i));
    store.base = F.allocate(info_.output_name(i), d, count, &store.storage, n_.loc(), std::move(failure),
                            info_.has_until && all);
  }
}

// Scalar states start in their registers; other states copy their init rows into theirs.
void ScanLowering::start_states() {
  for (size_t s = 0; s < states_.size(); ++s) {
    StateStorage& st = states_[s];
    const std::string& name = info_.states[s].name;
    if (st.scalar) {
      for (int64_t k = 1; k <= st.lag; ++k) {
        ExprRef init = st.init.rank == 0 ? st.init.scalar : lir::load(st.init.data, lir::i64(st.lag - k));
        st.registers.push_back(F.decl(name + "_" + std::to_string(k), init));
      }
    } else if (in_place_[s]) {
      outer_.value_into(n_.input(info_.init_input(int(s))), stores_[s].base);
    } else if (st.lag > 0 && stores_[s].init_rows == 0) {
      F.copy(stores_[s].base, st.init.data, F.let("init_count", lir::mul(lir::i64(st.lag), stores_[s].row_size)));
    }
  }
}

// The time loop: each step binds the step's params, computes its outputs into their rows, rotates
// the scalar states' registers and, with `until`, stops.
void ScanLowering::time_loop() {
  taken_ = info_.has_until ? F.decl("taken", steps_) : steps_;
  F.loop("step", lir::i64(0), steps_, lir::LoopKind::Time, [&](ExprRef step) {
    if (info_.has_until) grow_rows(step);
    inner_->set_param(size_t(info_.body_index_param()), Tensor{DType::I64, 0, step, nullptr, {}, ""});
    bind_sequences(step);
    const std::vector<ExprRef> current = bind_rows(step);
    bind_states(step, current);
    inner_->compute_deferred();
    const std::vector<ExprRef> new_scalars = write_outputs(step, current);
    // The condition as it is before the registers rotate (it may be a bare read of one of them).
    ExprRef stop;
    if (info_.has_until) stop = F.let("stop", inner_->value(body_.results.back()).scalar);
    // Scalar states move one step back: X[t - k] becomes X[t - k - 1].
    for (size_t s = 0; s < states_.size(); ++s) {
      StateStorage& st = states_[s];
      if (!st.scalar) continue;
      for (size_t k = st.registers.size(); k-- > 1;) F.assign(st.registers[k], st.registers[k - 1]);
      if (!st.registers.empty()) F.assign(st.registers[0], new_scalars[s]);
    }
    if (stop) {
      F.when(stop, [&] {
        F.assign(taken_, lir::add(step, lir::i64(1)));
        F.emit(lir::break_stmt());
      });
    }
  });
}

// An associative scan (parallel-scan): its one state's rows come from the runtime helper.
void ScanLowering::associative_steps() {
  taken_ = steps_;
  const RowStore& store = stores_[0];
  SCANGEN_CHECK(store.kind == RowStore::Kind::All || (store.kind == RowStore::Kind::Ring && store.ring == 1),
                "the rows of an associative scan are all kept, or its last one");
  call_assoc_scan(F, outer_,
                  AssocScanPlace{n_, steps_, row_sizes_[0], store.base, store.kind == RowStore::Kind::Ring,
                                 states_[0].init, seqs_, seq_row_sizes_});
}

// With `until`, when the rows are full: twice the rows, at most `steps` (rows_held < steps here;
// rows_held * 2 might overflow).
void ScanLowering::grow_rows(const ExprRef& step) {
  F.when(lir::eq(step, rows_held_), [&] {
    F.assign(rows_held_, lir::add(rows_held_, lir::min(rows_held_, lir::sub(steps_, rows_held_))));
    for (int i = 0; i < info_.num_outputs(); ++i) {
      const RowStore& store = stores_[size_t(i)];
      if (store.kind != RowStore::Kind::All) continue;
      const DType d = n_.output_types()[size_t(i)].dtype;
      auto [count, failure] = F.rows_count(lir::add(rows_held_, lir::i64(store.prefix)), rows_held_, row_dims_[size_t(i)],
                                           d, rows_site(i));
      F.grow(store.base, store.storage, count, lir::mul(lir::add(step, lir::i64(store.prefix)), store.row_size), n_.loc(),
             std::move(failure));
    }
  });
}

// The sequences' rows this step reads, at each tap (from the end with `reverse`).
void ScanLowering::bind_sequences(const ExprRef& step) {
  for (size_t s = 0; s < info_.sequences.size(); ++s) {
    const ir::ScanSequence& seq = info_.sequences[s];
    const Tensor& u = seqs_[s];
    for (size_t k = 0; k < seq.taps.size(); ++k) {
      int64_t tap = seq.taps[k];
      ExprRef row = info_.reverse ? lir::sub(lir::i64(-1 - seq.max_tap() + tap), step) : lir::add(step, lir::i64(tap - seq.min_tap()));
      if (info_.reverse) row = lir::add(u.dims[0], row);
      Tensor p;
      p.dtype = u.dtype;
      p.rank = u.rank - 1;
      p.dims.assign(u.dims.begin() + 1, u.dims.end());
      std::string hint = seq.label + "_" + (tap < 0 ? "m" + std::to_string(-tap) : tap > 0 ? "p" + std::to_string(tap) : "t");
      if (p.rank == 0) {
        p.scalar = F.let(hint, lir::load(u.data, row));
      } else {
        p.data = F.let_pointer(hint, u.data, lir::mul(row, seq_row_sizes_[s]), false);
      }
      inner_->set_param(size_t(info_.body_sequence_param(int(s), int(k))), p);
    }
  }
}

// The row each output writes this step (null for outputs kept nowhere or in registers).
std::vector<ExprRef> ScanLowering::bind_rows(const ExprRef& step) {
  std::vector<ExprRef> current(size_t(info_.num_outputs()));
  for (int i = 0; i < info_.num_outputs(); ++i) {
    const RowStore& store = stores_[size_t(i)];
    if (store.kind == RowStore::Kind::None || is_scalar_state(i)) continue;
    ExprRef row = F.let("row", store.row_of(step));
    current[size_t(i)] = F.let_pointer(info_.output_name(i) + "_t", store.base, lir::mul(row, store.row_size), true);
  }
  return current;
}

// The states' rows X[t - lag] this step reads: registers, the row being overwritten, or a row of
// the buffer.
void ScanLowering::bind_states(const ExprRef& step, const std::vector<ExprRef>& current) {
  for (size_t s = 0; s < states_.size(); ++s) {
    StateStorage& st = states_[s];
    const ir::ScanState& decl = info_.states[s];
    for (size_t k = 0; k < decl.lags.size(); ++k) {
      int64_t lag = decl.lags[k];
      Tensor p;
      p.dtype = st.init.dtype;
      p.rank = int(st.row_dims.size());
      p.dims = st.row_dims;
      if (st.scalar) {
        p.scalar = st.registers[size_t(lag - 1)];
      } else if (stores_[s].kind == RowStore::Kind::Ring && stores_[s].ring == 1) {
        // One row, read and overwritten through one pointer (two would alias under __restrict).
        p.data = current[s];
      } else if (stores_[s].init_rows > 0) {
        // Row t - lag, or in the first steps row t - lag + L of the init: a choice per step, outside
        // the element loops (both offsets clamped, so neither pointer leaves its buffer).
        const RowStore& store = stores_[s];
        const std::string tap = std::to_string(lag);
        ExprRef row = F.let("row", lir::sub(step, lir::i64(lag)));
        ExprRef kept = F.let("kept_row", lir::max(row, lir::i64(0)));
        ExprRef init_row = F.let("init_row", lir::add(lir::min(row, lir::i64(-1)), lir::i64(store.init_rows)));
        ExprRef from_rows = F.let_pointer(decl.name + "_row_m" + tap, store.base, lir::mul(kept, store.row_size), false);
        ExprRef from_init = F.let_pointer(decl.name + "_init_m" + tap, st.init.data, lir::mul(init_row, store.row_size), false);
        p.data = F.choose_pointer(decl.name + "_m" + tap, lir::ge(row, lir::i64(0)), from_rows, from_init);
      } else {
        ExprRef row = F.let("row", stores_[s].row_of(lir::sub(step, lir::i64(lag))));
        p.data = F.let_pointer(decl.name + "_m" + std::to_string(lag), stores_[s].base, lir::mul(row, stores_[s].row_size),
                               false);
      }
      inner_->set_param(size_t(info_.body_state_param(int(s), int(k))), p);
    }
  }
}

// The outputs of this step, written into their rows; returns each scalar state's new value (the
// register it rotates into), null for the others.
std::vector<ExprRef> ScanLowering::write_outputs(const ExprRef& step, const std::vector<ExprRef>& current) {
  std::vector<ExprRef> new_scalars(states_.size());
  for (int i = 0; i < info_.num_outputs(); ++i) {
    const Value& result = body_.results[size_t(i)];
    const RowStore& store = stores_[size_t(i)];
    if (is_scalar_state(i)) {
      new_scalars[size_t(i)] = F.let(info_.states[size_t(i)].name, inner_->value(result).scalar);
      if (store.kind != RowStore::Kind::None) F.store(store.base, store.row_of(step), new_scalars[size_t(i)]);
    } else if (result.type().rank() == 0) {
      F.store(current[size_t(i)], lir::i64(0), inner_->value(result).scalar);
    } else {
      inner_->value_into(result, current[size_t(i)]);
    }
  }
  return new_scalars;
}

std::vector<Tensor> ScanLowering::results() {
  std::vector<Tensor> outs;
  for (int i = 0; i < info_.num_outputs(); ++i) outs.push_back(result(i));
  return outs;
}

// Output i as the scan's result: all its rows, its last rows (a window), or only its shape.
Tensor ScanLowering::result(int i) {
  const RowStore& store = stores_[size_t(i)];
  Tensor t;
  t.dtype = n_.output_types()[size_t(i)].dtype;
  t.rank = n_.output_types()[size_t(i)].rank();
  const std::string& name = info_.output_name(i);
  if (store.kind == RowStore::Kind::All) {
    t.dims.push_back(taken_);
    t.data = F.let_pointer(name + "_results", store.base, lir::mul(lir::i64(store.prefix), store.row_size), true);
    t.storage = store.storage;
    // Without init rows before them and with room for exactly the steps, the rows are the whole
    // buffer (a state's init rows come first; `until` grows the buffer past the steps taken).
    t.whole = store.prefix == 0 && !info_.has_until;
  } else if (store.kind == RowStore::Kind::Ring && store.window > 0) {
    // The last min(taken, window) rows, in iteration order.
    ExprRef rows = F.let(name + "_rows", lir::min(taken_, lir::i64(store.window)));
    t.dims.push_back(rows);
    if (store.window == 1) {
      ExprRef last = F.let("row", store.row_of(lir::max(lir::sub(taken_, lir::i64(1)), lir::i64(0))));
      t.data = F.let_pointer(name + "_last", store.base, lir::mul(last, store.row_size), true);
      t.storage = store.storage;
    } else {
      std::vector<ExprRef> window_dims{lir::i64(store.window)};
      window_dims.insert(window_dims.end(), row_dims_[size_t(i)].begin(), row_dims_[size_t(i)].end());
      ExprRef count;
      t.data = F.buffer_for(nullptr, name + "_window", t.dtype, window_dims, rows_site(i), &t.storage, &count);
      ExprRef first = F.let("first", lir::sub(taken_, rows));
      F.loop("j", lir::i64(0), rows, lir::LoopKind::Serial, [&](ExprRef j) {
        ExprRef from = F.let("row", store.row_of(lir::add(first, j)));
        F.copy(F.let_pointer(name + "_to", t.data, lir::mul(j, store.row_size), true),
               F.let_pointer(name + "_from", store.base, lir::mul(from, store.row_size), false), store.row_size);
      });
    }
  } else {
    t.dims.push_back(taken_);  // nothing reads it
  }
  t.dims.insert(t.dims.end(), row_dims_[size_t(i)].begin(), row_dims_[size_t(i)].end());
  return t;
}

}  // namespace scangen::codegen::lowering
