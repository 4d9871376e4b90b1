// Only real steps in a batch of sequences of different lengths (language.md, `lengths`: "a step
// not taken is not evaluated"). The frontend masks each row's values after its end with selects
// (sema_scan_lengths.cpp), but a select throws away only a value, not what computing it raised or
// what its derivative carries: `log(w * x[t])` on a padded row gives -inf, whose derivative times
// the select's zero is NaN in the gradient of w; `84 / x[t]` on a padded 0 raises an error.
//
// So a step that computes each row from that row alone (ir::RowWise) gives a row that does not
// take part the inputs of one that does, and computes on them exactly what that row computes:
//  - at step t < L* (L* the longest length; b* its first row), a row that has ended reads row b*
//    of every sequence row, state and per-row parameter, and the index t, as row b* does;
//  - at a step t >= L*, where no row takes part, every row reads what row b* read at step 0 (its
//    inits, the first rows of its sequences) and the index reads 0.
// Each of those is an evaluation the scan makes anyway (row b* at step t, or at step 0), so it
// raises nothing and overflows nowhere that a real step does not. Its value is still thrown away
// by the selects on the results, and its derivative is that of a real step times 0: exactly 0.
// The rows that take part read their own rows: the same bits.
// Only when every length is 0 is there no real step to borrow; the step then computes on row 0's
// step-0 inputs (docs/language.md, decision 23). A value of the whole batch made from its rows (a
// sum over the batch) is computed as before, on the held states and zero sequence rows of the
// rows that have ended, as the contract says; every row then reads that same value. A step that
// computes a row from other rows (a gather or product along the batch, a nested scan of it) keeps
// the selects alone.
#include <functional>
#include <unordered_set>

#include "frontend/sema_internal.h"
#include "ir/row_wise.h"

namespace scangen::sema {

using ir::Dim;
using ir::NodeKind;
using ir::Value;

namespace {

struct StepGraph {
  std::vector<const ir::Node*> nodes;  // the step's own nodes, each after its operands
  std::vector<Value> leaves;           // params of the step and values from outside it
  // Nodes that give one value for the whole batch from its rows (a sum over the batch, a row
  // read by index): they see the held states and zero sequence rows of rows that have ended, as
  // the contract says, and every row reads the same result.
  std::unordered_set<const ir::Node*> mixing;
};

}  // namespace

std::vector<Value> Analyzer::steps_on_real_rows(ScanFrame& f, const std::vector<Value>& results) {
  if (!f.lengths || results.empty()) return results;
  auto is_mask = [&](const Value& v) {
    for (const auto& [rank, mask] : f.row_masks)
      if (mask == v) return true;
    return false;
  };
  auto masking_select = [&](const ir::Node& n) { return n.kind() == NodeKind::Select && is_mask(n.input(0)); };
  for (const Value& r : results)
    if (!masking_select(*r.node)) return results;

  // The step's nodes and leaves, and whether each computes a row from that row alone.
  auto has_batch = [&](const ir::Type& t) { return ir::batch_axis(t, f.batch_dim) != ir::kNoBatchAxis; };
  auto mixes_rows = [&](const ir::Node& n) {
    for (const ir::Type& t : n.output_types())
      if (has_batch(t)) return false;
    for (const Value& in : n.inputs())
      if (has_batch(in.type())) return true;
    return false;
  };
  StepGraph g;
  std::unordered_set<const ir::Node*> seen;
  std::function<void(const Value&)> visit = [&](const Value& v) {
    if (!seen.insert(v.node.get()).second) return;
    if (v.node->kind() == NodeKind::Param || region_of(v.node.get()) != f.region) {
      g.leaves.push_back(v);
      return;
    }
    if (mixes_rows(*v.node)) {
      g.mixing.insert(v.node.get());
      return;
    }
    for (const Value& in : v.node->inputs()) visit(in);
    g.nodes.push_back(v.node.get());
  };
  for (const Value& r : results) visit(r);
  const ir::RowWise row_wise(f.batch_dim);
  for (const ir::Node* n : g.nodes)
    if (!row_wise.holds(*n, nullptr)) return results;
  for (const Value& leaf : g.leaves) {
    int axis = ir::batch_axis(leaf.type(), f.batch_dim);
    if (axis != ir::kNoBatchAxis && axis != 0) return results;
  }

  const Loc loc = f.offsets ? f.offsets_loc : f.lengths_loc;
  auto i64 = [&](int64_t v) { return builder_.int_constant(v, loc); };
  // Before the scan: b* and L* from L with a -1 after it, so that an empty batch has them too.
  Value padded = builder_.fill(i64(-1), {builder_.binary(ir::BinaryOp::Add, f.batch_size, i64(1), loc)},
                               {f.batch_dim.plus(1)}, loc);
  padded = builder_.update(padded, f.checked_lengths, {ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true}},
                           {i64(0), f.batch_size}, false, loc);
  const Value longest_row = builder_.arg_reduce(ir::ReduceOp::Max, padded, std::nullopt, loc);
  const Value longest = builder_.reduce(ir::ReduceOp::Max, padded, std::nullopt, loc);

  const Value after_longest_row = builder_.binary(ir::BinaryOp::Add, longest_row, i64(1), loc);
  // Row r of x along axis 0 as a value of one row less rank, without a check that could fail
  // (so that rewrites still see a step that cannot fail): the sum of the slice x[r : r + 1],
  // which is 0 where x has no row r (then nothing reads it). Bools are summed as i32.
  auto row_of = [&](const Value& x, const Value& r, const Value& r_end) {
    const DType dtype = x.type().dtype;
    Value rows = builder_.index(x, {ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true}}, {r, r_end}, loc);
    if (dtype == DType::Bool) rows = builder_.cast(rows, DType::I32, loc);
    Value row = builder_.reduce(ir::ReduceOp::Sum, rows, 0, loc);
    return dtype == DType::Bool ? builder_.cast(row, DType::Bool, loc) : row;
  };
  auto constant_row = [&](const Value& x, int64_t r) { return row_of(x, i64(r), i64(r + 1)); };
  // What row b* of each param of the step reads at step 0 (the first rows of its sequences, its
  // inits), computed before the scan.
  std::unordered_map<Value, Value, ir::ValueHash> at_step_0;
  for (const auto& seq : f.sequences) {
    const std::vector<int64_t> taps(seq.taps.begin(), seq.taps.end());
    const bool backward = f.reverse && f.lengths;  // walked forward with taps negated (scan_node)
    const int64_t first = backward ? std::min<int64_t>(-taps.back(), 0) : std::min<int64_t>(taps.front(), 0);
    for (size_t i = 0; i < taps.size(); ++i) {
      Value rows = constant_row(seq.value.value, (backward ? -taps[i] : taps[i]) - first);
      at_step_0[seq.tap_params[i]] = row_of(rows, longest_row, after_longest_row);
    }
  }
  for (const auto& out : f.outputs) {
    if (!out.is_state()) continue;
    const int64_t max_lag = *out.lags.rbegin();
    size_t i = 0;
    for (int64_t lag : out.lags) {
      Value rows = max_lag > 1 ? constant_row(out.init_value.value, max_lag - lag) : out.init_value.value;
      at_step_0[out.lag_params[i++]] = row_of(rows, longest_row, after_longest_row);
    }
  }

  RegionGuard region(*this, f.region);
  const Value live = builder_.binary(ir::BinaryOp::Lt, f.index_param, longest, loc);
  const Value index = builder_.select(live, f.index_param, i64(0), loc);
  // A param with the batch: its own rows where they take part, else row b* of it at this step
  // (or, at a step no row takes, what row b* read at step 0).
  auto real_rows = [&](const Value& param) {
    Value source = row_of(param, longest_row, after_longest_row);
    if (auto first = at_step_0.find(param); first != at_step_0.end())
      source = builder_.select(live, source, first->second, loc);
    return builder_.select(row_mask(f, param.type().rank(), loc), param, source, loc);
  };

  // The step again, each leaf with the batch read at the rows chosen above.
  std::unordered_map<Value, Value, ir::ValueHash> rewritten;
  std::function<Value(const Value&)> rewrite = [&](const Value& v) -> Value {
    if (auto it = rewritten.find(v); it != rewritten.end()) return it->second;
    Value out = v;
    if (v == f.index_param) {
      out = index;
    } else if (g.mixing.count(v.node.get())) {
      // as it is
    } else if (v.node->kind() == NodeKind::Param || region_of(v.node.get()) != f.region) {
      if (ir::batch_axis(v.type(), f.batch_dim) == 0) out = real_rows(v);
    } else if (masking_select(*v.node)) {
      out = rewrite(v.node->input(1));
    } else {
      std::vector<Value> inputs;
      bool changed = false;
      for (const Value& in : v.node->inputs()) {
        inputs.push_back(rewrite(in));
        changed = changed || inputs.back() != in;
      }
      if (changed) out = Value(builder_.rebuild(*v.node, std::move(inputs)), v.index);
    }
    rewritten.emplace(v, out);
    return out;
  };
  std::vector<Value> out;
  for (const Value& r : results)
    out.push_back(builder_.select(r.node->input(0), rewrite(r.node->input(1)), r.node->input(2), r.node->loc()));
  return out;
}

}  // namespace scangen::sema
