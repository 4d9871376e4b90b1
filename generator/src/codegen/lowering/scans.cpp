// Scans: the storage of each output's rows, the time loop with its step, and the results.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {


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

// ---- scans

std::vector<Tensor> GraphLowering::scan(const ir::ScanNode& n) {
  const ir::ScanInfo& info = n.info();
  const ir::Graph& body = n.body();
  F.comment("scan at " + loc_text(n.loc()));
  // Every input first, in order, as the interpreter computes them (ir::topological_order) before it
  // runs the scan: when an input fails too (an index out of range in a param, say), that error
  // comes before this scan's own checks of `steps` and of the sequences, on every backend.
  // An init the in-place rewrite marked is computed later, straight into the state's storage
  // (only its shape checks happen here): it cannot fail, and nothing else reads it.
  std::vector<bool> in_place(info.states.size(), false);
  for (size_t s = 0; s < info.states.size(); ++s) {
    const Value& init = n.input(info.init_input(int(s)));
    in_place[s] = info.states[s].init_in_place && n.output_types()[s].rank() >= 2 && uses(init) == 1 && !value_memo_.count(init.node.get());
  }
  for (int i = 0; i < n.num_inputs(); ++i) {
    int state = i - info.init_input(0);
    if (state >= 0 && state < int(info.states.size()) && in_place[size_t(state)])
      dims(n.input(i));
    else
      value(n.input(i));
  }

  // The number of steps, and the checks of `steps` against the sequences.
  ExprRef steps;
  if (info.has_steps) {
    steps = value(n.input(info.steps_input())).scalar;
    F.check(lir::ge(steps, lir::i64(0)), n.loc(),
            {{"steps is ", nullptr}, {"", steps}, {"; it must be >= 0", nullptr}});
  }
  std::vector<Tensor> seqs;
  std::vector<ExprRef> seq_row_sizes;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ir::ScanSequence& seq = info.sequences[s];
    Tensor u = value(n.input(info.sequence_input(int(s))));
    seqs.push_back(u);
    std::vector<ExprRef> row(u.dims.begin() + 1, u.dims.end());
    seq_row_sizes.push_back(F.product(row, "row"));
    // A length is never negative: only a span of taps can make `allowed` negative.
    ExprRef allowed = seq.span() == 0 ? u.dims[0]
                                      : F.let("allowed", lir::max(lir::sub(u.dims[0], lir::i64(seq.span())), lir::i64(0)));
    if (info.has_steps) {
      F.check(lir::ge(allowed, steps), n.loc(),
              {{"sequence '" + seq.label + "' has length ", nullptr}, {"", u.dims[0]},
               {" and taps [" + seq.taps_text() + "]: too short for steps = ", nullptr}, {"", steps},
               {" (it allows ", nullptr}, {"", allowed}, {")", nullptr}});
    } else {
      steps = s == 0 ? allowed : F.let("steps", lir::min(steps, allowed));
    }
  }
  steps = F.let("steps", steps);

  // The body, lowered with its params: shapes are known before the loop, values in it.
  std::vector<Tensor> body_params(body.params.size());
  body_params[size_t(info.body_index_param())] = Tensor{DType::I64, 0, nullptr, nullptr, {}, ""};
  for (size_t s = 0; s < info.sequences.size(); ++s)
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) {
      Tensor row;
      row.dtype = seqs[s].dtype;
      row.rank = seqs[s].rank - 1;
      row.dims.assign(seqs[s].dims.begin() + 1, seqs[s].dims.end());
      body_params[size_t(info.body_sequence_param(int(s), int(k)))] = row;
    }
  // Where the rows of each output live:
  //  - All: every step's row, after `prefix` rows holding a state's init (so X[t - k] is the row
  //    of step t - k, init rows included);
  //  - Ring: `ring` slots reused in turn (a state nothing reads keeps its taps' rows; an output
  //    with a window keeps its last rows);
  //  - None: nothing (a scalar state nothing reads lives in variables only).
  struct RowStore {
    enum class Kind { All, Ring, None } kind = Kind::All;
    int64_t prefix = 0;
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
  std::vector<StateStorage> states(info.states.size());
  std::vector<RowStore> stores(size_t(info.num_outputs()));
  for (size_t s = 0; s < info.states.size(); ++s) {
    StateStorage& st = states[s];
    const Value& init = n.input(info.init_input(int(s)));
    if (in_place[s]) {
      st.init.dtype = init.type().dtype;
      st.init.rank = init.type().rank();
      st.init.dims = dims(init);
    } else {
      st.init = value(init);
    }
    st.lag = info.states[s].max_lag();
    st.scalar = n.output_types()[s].rank() == 1;
    st.row_dims = st.init.dims;
    if (info.states[s].init_has_rows()) st.row_dims.erase(st.row_dims.begin());
    Tensor p;
    p.dtype = st.init.dtype;
    p.rank = int(st.row_dims.size());
    p.dims = st.row_dims;
    for (size_t k = 0; k < info.states[s].lags.size(); ++k)
      body_params[size_t(info.body_state_param(int(s), int(k)))] = p;
  }
  for (int p = 0; p < info.num_params; ++p) body_params[size_t(info.body_param(p))] = value(n.input(info.param_input(p)));
  GraphLowering inner(F, body, std::move(body_params));

  // Step shapes of the outputs, before the loop.
  std::vector<std::vector<ExprRef>> row_dims(size_t(info.num_outputs()));
  std::vector<ExprRef> row_sizes(size_t(info.num_outputs()));
  inner.begin_step_shapes();
  for (int i = 0; i < info.num_outputs(); ++i) {
    row_dims[size_t(i)] = i < int(states.size()) ? states[size_t(i)].row_dims : inner.dims(body.results[size_t(i)]);
    for (const ExprRef& d : row_dims[size_t(i)])
      SCANGEN_CHECK(d != nullptr, "the step shape of '" + info.output_name(i) + "' depends on a step value");
    row_sizes[size_t(i)] = F.product(row_dims[size_t(i)], "row");
  }
  inner.end_step_shapes();

  auto rows_site = [&](int i) {
    return FunctionLowering::BufferSite{n.loc(), "the rows of '" + info.output_name(i) + "'"};
  };
  // A scan that stops on `until` starts with room for some rows and doubles it when full; others
  // know their number of steps.
  ExprRef rows_held = steps;
  if (info.has_until) rows_held = F.decl("rows_held", lir::min(steps, lir::i64(ir::kInitialUntilRows)));
  bool growable = info.has_until;

  for (int i = 0; i < info.num_outputs(); ++i) {
    RowStore& store = stores[size_t(i)];
    bool is_state = i < int(states.size());
    bool scalar_state = is_state && states[size_t(i)].scalar;
    store.prefix = is_state && !scalar_state ? states[size_t(i)].lag : 0;
    store.window = info.window(i);
    store.row_size = row_sizes[size_t(i)];
    bool used = uses(n.output(i)) > 0;
    if (!used && scalar_state) {
      store.kind = RowStore::Kind::None;
    } else if (!used) {
      store.kind = RowStore::Kind::Ring;  // only the taps' rows
      store.ring = store.prefix + 1;
    } else if (store.window > 0) {
      store.kind = RowStore::Kind::Ring;
      store.ring = std::max(store.prefix + 1, store.window);
    }
    // A state that keeps at most its last row, with an element-wise step, lives in one row.
    if (is_state && !scalar_state && store.kind == RowStore::Kind::Ring && store.window <= 1 &&
        info.states[size_t(i)].lags == std::vector<int64_t>{1} && updates_in_one_row(n, i))
      store.ring = 1;
    if (store.kind == RowStore::Kind::None) continue;
    DType d = n.output_types()[size_t(i)].dtype;
    bool all = store.kind == RowStore::Kind::All;
    ExprRef rows = all ? lir::add(rows_held, lir::i64(store.prefix)) : lir::i64(store.ring);
    auto [count, failure] = F.rows_count(rows, all ? rows_held : rows, row_dims[size_t(i)], d, rows_site(i));
    store.base = F.allocate(info.output_name(i), d, count, &store.storage, n.loc(), std::move(failure), growable && all);
  }
  // Scalar states start in their registers; other states copy their init rows into theirs.
  for (size_t s = 0; s < states.size(); ++s) {
    StateStorage& st = states[s];
    const std::string& name = info.states[s].name;
    if (st.scalar) {
      for (int64_t k = 1; k <= st.lag; ++k) {
        ExprRef init = st.init.rank == 0 ? st.init.scalar : lir::load(st.init.data, lir::i64(st.lag - k));
        st.registers.push_back(F.decl(name + "_" + std::to_string(k), init));
      }
    } else if (in_place[s]) {
      value_into(n.input(info.init_input(int(s))), stores[s].base);
    } else if (st.lag > 0) {
      F.copy(stores[s].base, st.init.data, F.let("init_count", lir::mul(lir::i64(st.lag), stores[s].row_size)));
    }
  }

  ExprRef taken = info.has_until ? F.decl("taken", steps) : steps;
  F.loop("step", lir::i64(0), steps, lir::LoopKind::Time, [&](ExprRef step) {
    if (growable) {
      F.when(lir::eq(step, rows_held), [&] {
        // Twice the rows, at most `steps` (rows_held < steps here; rows_held * 2 might overflow).
        F.assign(rows_held, lir::add(rows_held, lir::min(rows_held, lir::sub(steps, rows_held))));
        for (int i = 0; i < info.num_outputs(); ++i) {
          const RowStore& store = stores[size_t(i)];
          if (store.kind != RowStore::Kind::All) continue;
          DType d = n.output_types()[size_t(i)].dtype;
          auto [count, failure] = F.rows_count(lir::add(rows_held, lir::i64(store.prefix)), rows_held, row_dims[size_t(i)], d,
                                               rows_site(i));
          F.grow(store.base, store.storage, count, lir::mul(lir::add(step, lir::i64(store.prefix)), store.row_size), n.loc(),
                 std::move(failure));
        }
      });
    }
    inner.set_param(size_t(info.body_index_param()), Tensor{DType::I64, 0, step, nullptr, {}, ""});
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const ir::ScanSequence& seq = info.sequences[s];
      const Tensor& u = seqs[s];
      for (size_t k = 0; k < seq.taps.size(); ++k) {
        int64_t tap = seq.taps[k];
        ExprRef row = info.reverse ? lir::sub(lir::i64(-1 - seq.max_tap() + tap), step)
                                   : lir::add(step, lir::i64(tap - seq.min_tap()));
        if (info.reverse) row = lir::add(u.dims[0], row);
        Tensor p;
        p.dtype = u.dtype;
        p.rank = u.rank - 1;
        p.dims.assign(u.dims.begin() + 1, u.dims.end());
        std::string hint = seq.label + "_" + (tap < 0 ? "m" + std::to_string(-tap) : tap > 0 ? "p" + std::to_string(tap) : "t");
        if (p.rank == 0) {
          p.scalar = F.let(hint, lir::load(u.data, row));
        } else {
          p.data = F.let_pointer(hint, u.data, lir::mul(row, seq_row_sizes[s]), false);
        }
        inner.set_param(size_t(info.body_sequence_param(int(s), int(k))), p);
      }
    }
    // The row each output writes this step.
    std::vector<ExprRef> current(size_t(info.num_outputs()));
    for (int i = 0; i < info.num_outputs(); ++i) {
      const RowStore& store = stores[size_t(i)];
      if (store.kind == RowStore::Kind::None || (i < int(states.size()) && states[size_t(i)].scalar)) continue;
      ExprRef row = F.let("row", store.row_of(step));
      current[size_t(i)] = F.let_pointer(info.output_name(i) + "_t", store.base, lir::mul(row, store.row_size), true);
    }
    for (size_t s = 0; s < states.size(); ++s) {
      StateStorage& st = states[s];
      const ir::ScanState& decl = info.states[s];
      for (size_t k = 0; k < decl.lags.size(); ++k) {
        int64_t lag = decl.lags[k];
        Tensor p;
        p.dtype = st.init.dtype;
        p.rank = int(st.row_dims.size());
        p.dims = st.row_dims;
        if (st.scalar) {
          p.scalar = st.registers[size_t(lag - 1)];
        } else if (stores[s].kind == RowStore::Kind::Ring && stores[s].ring == 1) {
          // One row, read and overwritten through one pointer (two would alias under __restrict).
          p.data = current[s];
        } else {
          ExprRef row = F.let("row", stores[s].row_of(lir::sub(step, lir::i64(lag))));
          p.data = F.let_pointer(decl.name + "_m" + std::to_string(lag), stores[s].base,
                                 lir::mul(row, stores[s].row_size), false);
        }
        inner.set_param(size_t(info.body_state_param(int(s), int(k))), p);
      }
    }
    inner.compute_deferred();
    // The outputs of this step, written into their rows.
    std::vector<ExprRef> new_scalars(states.size());
    for (int i = 0; i < info.num_outputs(); ++i) {
      const Value& result = body.results[size_t(i)];
      const RowStore& store = stores[size_t(i)];
      bool scalar_state = i < int(states.size()) && states[size_t(i)].scalar;
      if (scalar_state) {
        new_scalars[size_t(i)] = F.let(info.states[size_t(i)].name, inner.value(result).scalar);
        if (store.kind != RowStore::Kind::None) F.store(store.base, store.row_of(step), new_scalars[size_t(i)]);
      } else if (result.type().rank() == 0) {
        F.store(current[size_t(i)], lir::i64(0), inner.value(result).scalar);
      } else {
        inner.value_into(result, current[size_t(i)]);
      }
    }
    // The condition as it is before the registers rotate (it may be a bare read of one of them).
    ExprRef stop;
    if (info.has_until) stop = F.let("stop", inner.value(body.results.back()).scalar);
    // Scalar states move one step back: X[t - k] becomes X[t - k - 1].
    for (size_t s = 0; s < states.size(); ++s) {
      StateStorage& st = states[s];
      if (!st.scalar) continue;
      for (size_t k = st.registers.size(); k-- > 1;) F.assign(st.registers[k], st.registers[k - 1]);
      if (!st.registers.empty()) F.assign(st.registers[0], new_scalars[s]);
    }
    if (stop) {
      F.when(stop, [&] {
        F.assign(taken, lir::add(step, lir::i64(1)));
        auto brk = std::make_shared<Stmt>();
        brk->kind = StmtKind::Break;
        F.emit(brk);
      });
    }
  });

  std::vector<Tensor> outs;
  for (int i = 0; i < info.num_outputs(); ++i) {
    const RowStore& store = stores[size_t(i)];
    Tensor t;
    t.dtype = n.output_types()[size_t(i)].dtype;
    t.rank = n.output_types()[size_t(i)].rank();
    const std::string& name = info.output_name(i);
    if (store.kind == RowStore::Kind::All) {
      t.dims.push_back(taken);
      t.data = F.let_pointer(name + "_results", store.base, lir::mul(lir::i64(store.prefix), store.row_size), true);
      t.storage = store.storage;
    } else if (store.kind == RowStore::Kind::Ring && store.window > 0) {
      // The last min(taken, window) rows, in iteration order.
      ExprRef rows = F.let(name + "_rows", lir::min(taken, lir::i64(store.window)));
      t.dims.push_back(rows);
      if (store.window == 1) {
        ExprRef last = F.let("row", store.row_of(lir::max(lir::sub(taken, lir::i64(1)), lir::i64(0))));
        t.data = F.let_pointer(name + "_last", store.base, lir::mul(last, store.row_size), true);
        t.storage = store.storage;
      } else {
        std::vector<ExprRef> window_dims{lir::i64(store.window)};
        window_dims.insert(window_dims.end(), row_dims[size_t(i)].begin(), row_dims[size_t(i)].end());
        ExprRef count;
        t.data = F.buffer_for(nullptr, name + "_window", t.dtype, window_dims, rows_site(i), &t.storage, &count);
        ExprRef first = F.let("first", lir::sub(taken, rows));
        F.loop("j", lir::i64(0), rows, lir::LoopKind::Serial, [&](ExprRef j) {
          ExprRef from = F.let("row", store.row_of(lir::add(first, j)));
          F.copy(F.let_pointer(name + "_to", t.data, lir::mul(j, store.row_size), true),
                 F.let_pointer(name + "_from", store.base, lir::mul(from, store.row_size), false), store.row_size);
        });
      }
    } else {
      t.dims.push_back(taken);  // nothing reads it
    }
    t.dims.insert(t.dims.end(), row_dims[size_t(i)].begin(), row_dims[size_t(i)].end());
    outs.push_back(t);
  }
  return outs;
}

}  // namespace scangen::codegen::lowering
