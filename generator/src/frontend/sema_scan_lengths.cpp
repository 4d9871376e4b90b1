// Semantic analysis of a scan with `lengths = L` (language.md, "Scans"): a batch of B sequences
// of different lengths, padded to one number of steps, the batch being axis 1 of every sequence
// and axis 0 of every state's and per-step output's step. The frontend writes the meaning out in
// the IR, so that every rewrite, backend and gradient rule sees ordinary operations:
//  - before the scan, L is checked to lie in 0..steps (a CheckLengths node), and with `reverse`
//    each sequence is replaced by its rows reversed within their own lengths (a gather), which the
//    scan then walks forward with its taps negated;
//  - in the body, row b takes part at step t only while t < L[b]: a sequence row is read as 0
//    after the row's end, a state's row keeps its previous value and a per-step output's row is 0
//    (selects on the mask t < L[b]). Gradients follow from the selects: steps not taken pass
//    nothing, a held state passes its gradient through unchanged.
#include "frontend/sema_internal.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Dim;
using ir::Value;

const char* const kLengthsShape = "[B], one length per sequence of the batch";
const char* const kOffsetsShape = "[B + 1], where each packed sequence starts, then their total rows";

// An integer vector option (`lengths = L`, `offsets = O`) as i64, read in the enclosing scope.
std::optional<SValue> batch_vector_option(Analyzer& a, const ast::ScanOption& opt, Scope& scope, const char* shape) {
  if (!opt.value) {
    a.diags().report(DiagId::err_scan_option_value, opt.loc, opt.name, "needs a value: " + opt.name + " = V");
    return std::nullopt;
  }
  SValue v = a.single(a.expr(*opt.value, scope), opt.value->loc);
  if (!v.ok()) return std::nullopt;
  if (v.weak || v.type().rank() != 1 || !is_int(v.dtype())) {
    a.diags().report(DiagId::err_lengths_type, opt.value->loc, "'" + opt.name + "'", shape, v.weak ? "a literal" : v.type().str());
    return std::nullopt;
  }
  if (v.dtype() != DType::I64) v = SValue::tensor(a.builder().cast(v.value, DType::I64, opt.value->loc), v.loc);
  return v;
}

// `lengths = L` and `offsets = O` (the packed form, sema_scan_offsets.cpp).
bool lengths_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope) {
  f.lengths = batch_vector_option(a, opt, scope, kLengthsShape);
  f.lengths_loc = opt.value ? opt.value->loc : opt.loc;
  return f.lengths.has_value();
}

bool offsets_option(Analyzer& a, const ast::ScanOption& opt, ScanFrame& f, Scope& scope) {
  f.steps_given = true;  // the offsets give the steps: the longest sequence
  f.offsets = batch_vector_option(a, opt, scope, kOffsetsShape);
  f.offsets_loc = opt.value ? opt.value->loc : opt.loc;
  return f.offsets.has_value();
}

// v (what) with its batch axis checked against L's size: a compile error when both are known and
// differ, a run-time check when they may differ. Invalid after reporting.
SValue Analyzer::batch_checked(ScanFrame& f, const SValue& v, int axis, const std::string& what,
                               const char* axis_text, Loc loc) {
  const ir::Type& t = v.type();
  const char* option = f.offsets ? "offsets" : "lengths";
  Loc option_loc = f.offsets ? f.offsets_loc : f.lengths_loc;
  if (t.rank() <= axis) {
    auto& d = diags_.report(DiagId::err_lengths_batch_rank, loc, what, t.str(), option, axis_text);
    diags_.note(d, DiagId::note_lengths_here, option_loc, option);
    return SValue::invalid();
  }
  const Dim& have = t.shape[size_t(axis)];
  if (have.same_as(f.batch_dim)) return v;
  if (have.provably_different(f.batch_dim)) {
    auto& d = diags_.report(DiagId::err_lengths_batch_size, loc, what, have.str(), axis_text, option, f.batch_dim.str());
    diags_.note(d, DiagId::note_lengths_here, option_loc, option);
    return SValue::invalid();
  }
  std::vector<ir::DimCheck> checks(size_t(t.rank()));
  checks[size_t(axis)] = {ir::DimCheck::Kind::Operand, 1, f.offsets ? "len(offsets) - 1" : "len(lengths)"};
  std::vector<Dim> shape = t.shape;
  shape[size_t(axis)] = f.batch_dim;
  return SValue::tensor(builder_.check_shape(v.value, std::move(checks), {f.batch_size}, what, shape, loc), v.loc);
}

// U[source[j, b], b] for U [T, B, ...] and source an i64 [T, B] of rows of each column, each in
// 0..T-1: U is gathered as [B * T, ...], row b * T + i being U[i, b].
Value Analyzer::gathered_in_columns(const Value& u, const Value& source, Loc loc) {
  const ir::Type& t = u.type();
  Value steps_dim = dim_value(u, 0, loc), batch = dim_value(u, 1, loc);
  Value one = builder_.int_constant(1, loc), zero = builder_.int_constant(0, loc);
  std::vector<int> perm(size_t(t.rank()));
  for (int i = 0; i < t.rank(); ++i) perm[size_t(i)] = i == 0 ? 1 : i == 1 ? 0 : i;
  Value by_row = builder_.transpose(u, perm, loc);
  std::vector<Value> flat_dims{builder_.binary(ir::BinaryOp::Mul, batch, steps_dim, loc)};
  std::vector<Dim> flat_static{Dim::fresh_unknown()};
  for (int i = 2; i < t.rank(); ++i) {
    flat_dims.push_back(dim_value(u, i, loc));
    flat_static.push_back(t.shape[size_t(i)]);
  }
  Value flat = builder_.reshape(by_row, flat_dims, flat_static, loc);
  Value row_start = builder_.reshape(
      builder_.binary(ir::BinaryOp::Mul, builder_.arange(zero, batch, t.shape[1], loc), steps_dim, loc), {one, batch},
      {Dim::constant(1), t.shape[1]}, loc);
  return builder_.gather(flat, builder_.binary(ir::BinaryOp::Add, row_start, source, loc), loc);
}

// The row index j of U [T, B, ...] as an i64 [T, 1], and L as [1, B].
std::pair<Value, Value> Analyzer::rows_and_lengths(const Value& u, const Value& lengths, Loc loc) {
  const ir::Type& t = u.type();
  Value steps_dim = dim_value(u, 0, loc), batch = dim_value(lengths, 0, loc);
  Value one = builder_.int_constant(1, loc), zero = builder_.int_constant(0, loc);
  Value j = builder_.reshape(builder_.arange(zero, steps_dim, t.shape[0], loc), {steps_dim, one},
                             {t.shape[0], Dim::constant(1)}, loc);
  return {j, builder_.reshape(lengths, {one, batch}, {Dim::constant(1), t.shape[1]}, loc)};
}

// Sequence `seq`'s rows reversed within each row's own length: R[j, b] = U[L[b] + span - 1 - j, b]
// (clamped into U; the rows past a length are never read while the row takes part), so that a
// forward walk of R with negated taps reads what `reverse` reads of row b's own elements.
Value Analyzer::reversed_rows(const ScanFrame& f, const ScanFrame::Sequence& seq, Loc loc) {
  const Value& u = seq.value.value;
  auto op = [&](ir::BinaryOp o, Value x, Value y) { return builder_.binary(o, std::move(x), std::move(y), loc); };
  auto [j, lengths] = rows_and_lengths(u, f.checked_lengths, loc);
  Value source = op(ir::BinaryOp::Sub, op(ir::BinaryOp::Add, lengths, builder_.int_constant(seq.span() - 1, loc)), j);
  Value last = op(ir::BinaryOp::Sub, dim_value(u, 0, loc), builder_.int_constant(1, loc));
  source = op(ir::BinaryOp::Max, op(ir::BinaryOp::Min, source, last), builder_.int_constant(0, loc));
  return gathered_in_columns(u, source, loc);
}

// The scan's steps before it runs, for the check of L: `steps`, or what the sequences allow.
Value Analyzer::steps_before_scan(const ScanFrame& f, Loc loc) {
  if (f.steps) return f.steps->value;
  std::optional<Value> steps;
  for (const auto& seq : f.sequences) {
    int64_t span = seq.span();
    Value allowed = builder_.binary(ir::BinaryOp::Sub, dim_value(seq.value.value, 0, loc),
                                    builder_.int_constant(span, loc), loc);
    allowed = builder_.binary(ir::BinaryOp::Max, allowed, builder_.int_constant(0, loc), loc);
    steps = steps ? builder_.binary(ir::BinaryOp::Min, *steps, allowed, loc) : allowed;
  }
  SCANGEN_CHECK(steps.has_value(), "a scan without steps or sequences");
  return *steps;
}

// Step 3b of a scan with lengths: the options that cannot go with it, the batch axes of the
// sequences and inits, the check of L and the reversed sequences. False after reporting.
bool Analyzer::scan_lengths(ScanFrame& f) {
  if (!f.lengths && !f.offsets) return true;
  const char* option = f.offsets ? "offsets" : "lengths";
  Loc loc = f.offsets ? f.offsets_loc : f.lengths_loc;
  bool ok = true;
  if (f.lengths && f.offsets) {
    diags_.report(DiagId::err_lengths_with_offsets, f.offsets_loc);
    return false;
  }
  if (f.until) {
    auto& d = diags_.report(DiagId::err_lengths_with_until, f.until->loc, option);
    diags_.note(d, DiagId::note_lengths_here, loc, option);
    ok = false;
  }
  if (f.truncate_gradient >= 0) {
    diags_.report(DiagId::err_lengths_truncate_gradient, loc, option);
    ok = false;
  }
  if (f.offsets) return packed_batch(f) && ok;
  f.batch_dim = f.lengths->type().shape[0];
  f.batch_size = dim_value(f.lengths->value, 0, loc);
  for (auto& seq : f.sequences) {
    seq.value = batch_checked(f, seq.value, 1, "sequence '" + seq.label + "'", "axis 1: [steps, B, ...]", seq.base->loc);
    ok = ok && seq.value.ok();
  }
  if (!batch_inits(f) || !ok) return false;
  f.checked_lengths = builder_.check_lengths(f.lengths->value, steps_before_scan(f, loc), loc);
  if (f.reverse)
    for (auto& seq : f.sequences) seq.value = SValue::tensor(reversed_rows(f, seq, seq.base->loc), seq.value.loc);
  return true;
}

// The inits of a batched scan, checked to have the batch axis; false after reporting.
bool Analyzer::batch_inits(ScanFrame& f) {
  bool ok = true;
  for (auto& out : f.outputs) {
    if (!out.is_state()) continue;
    bool rows = out.lags.size() > 0 && *out.lags.rbegin() > 1;
    out.init_value = batch_checked(f, out.init_value, rows ? 1 : 0, "the init of state '" + out.name + "'",
                                   rows ? "axis 1: [lags, B, ...]" : "axis 0: [B, ...]", out.init->value->loc);
    ok = ok && out.init_value.ok();
  }
  return ok;
}

// In the body: t < L[b] as a bool [B, 1, ...] of the given rank (one mask per rank and pass).
Value Analyzer::row_mask(ScanFrame& f, int rank, Loc loc) {
  auto it = f.row_masks.find(rank);
  if (it != f.row_masks.end()) return it->second;
  Value lengths = f.checked_lengths;
  if (rank > 1) {
    std::vector<Value> dims{dim_value(lengths, 0, loc)};
    std::vector<Dim> shape{lengths.type().shape[0]};
    for (int i = 1; i < rank; ++i) {
      dims.push_back(builder_.int_constant(1, loc));
      shape.push_back(Dim::constant(1));
    }
    lengths = builder_.reshape(lengths, dims, shape, loc);
  }
  Value mask = builder_.binary(ir::BinaryOp::Lt, f.index_param, lengths, loc);
  f.row_masks.emplace(rank, mask);
  return mask;
}

// v where row b takes part at this step, else `otherwise` (a value, or 0 when null).
Value Analyzer::while_row_takes_part(ScanFrame& f, const Value& v, const Value* otherwise, Loc loc) {
  Value other = otherwise ? *otherwise : builder_.constant(ir::Scalar::zero(v.type().dtype), loc);
  return builder_.select(row_mask(f, v.type().rank(), loc), v, other, loc);
}

// A step value of a scan with lengths: a state's rows that have ended keep their value, a per-step
// output's are 0. `out` is checked to have the batch as its axis 0.
SValue Analyzer::masked_step_value(ScanFrame& f, ScanFrame::Output& out, SValue v, Loc loc) {
  if (!f.lengths || !v.ok()) return v;
  if (out.is_state()) {
    auto lag1 = out.lags.find(1);
    SCANGEN_CHECK(lag1 != out.lags.end(), "a state of a scan with lengths without its lag 1");
    Value previous = out.lag_params.at(size_t(std::distance(out.lags.begin(), lag1)));
    return SValue::tensor(while_row_takes_part(f, v.value, &previous, loc), v.loc);
  }
  v = batch_checked(f, v, 0, "the step of '" + out.name + "'", "axis 0: [B, ...]", loc);
  if (!v.ok()) return v;
  return SValue::tensor(while_row_takes_part(f, v.value, nullptr, loc), v.loc);
}

// sequence_mask(L, n): the bool [n, B] that is true where t < L[b].
SValue Analyzer::sequence_mask_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue lengths = concrete(argument(c, 0, scope), c.args[0]->loc);
  SValue n = to_index_i64(argument(c, 1, scope), c.args[1]->loc, "the second argument of sequence_mask");
  if (!lengths.ok() || !n.ok()) return SValue::invalid();
  if (lengths.type().rank() != 1 || !is_int(lengths.dtype())) {
    diags_.report(DiagId::err_lengths_type, c.args[0]->loc, "the first argument of sequence_mask", kLengthsShape,
                  lengths.type().str());
    return SValue::invalid();
  }
  Loc loc = c.loc;
  Value l = lengths.dtype() == DType::I64 ? lengths.value : builder_.cast(lengths.value, DType::I64, loc);
  Value one = builder_.int_constant(1, loc), zero = builder_.int_constant(0, loc);
  Dim steps = n.as_dim ? *n.as_dim : Dim::fresh_unknown();
  if (auto k = ir::constant_value(n.value)) steps = Dim::constant(k->i);
  // A negative n gives no rows, as arange(n) does.
  Value steps_range = builder_.arange(zero, n.value, steps, loc);
  Value t = builder_.reshape(steps_range, {dim_value(steps_range, 0, loc), one}, {steps_range.type().shape[0], Dim::constant(1)}, loc);
  Value rows = builder_.reshape(l, {one, dim_value(l, 0, loc)}, {Dim::constant(1), l.type().shape[0]}, loc);
  return SValue::tensor(builder_.binary(ir::BinaryOp::Lt, t, rows, loc), loc);
}

// reverse_sequence(x, L): the first L[b] rows of each column b of x [n, B, ...] reversed, the rest
// in place (TensorFlow's reverse_sequence with seq_axis 0, batch_axis 1): R[j, b] = x[L[b] - 1 - j,
// b] for j < L[b], else x[j, b]. Each L[b] must lie in 0..n (a run-time error otherwise).
SValue Analyzer::reverse_sequence_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = concrete(argument(c, 0, scope), c.args[0]->loc);
  SValue lengths = concrete(argument(c, 1, scope), c.args[1]->loc);
  if (!x.ok() || !lengths.ok()) return SValue::invalid();
  if (lengths.type().rank() != 1 || !is_int(lengths.dtype())) {
    diags_.report(DiagId::err_lengths_type, c.args[1]->loc, "the second argument of reverse_sequence", kLengthsShape,
                  lengths.weak ? "a literal" : lengths.type().str());
    return SValue::invalid();
  }
  if (x.type().rank() < 2) {
    diags_.report(DiagId::err_call_arg_rank, c.args[0]->loc, "x", "reverse_sequence", "2 or more ([n, B, ...])",
                  std::to_string(x.type().rank()));
    return SValue::invalid();
  }
  const Loc loc = c.loc;
  Value l = lengths.dtype() == DType::I64 ? lengths.value : builder_.cast(lengths.value, DType::I64, loc);
  const Dim& have = x.type().shape[1];
  const Dim& batch = l.type().shape[0];
  Value u = x.value;
  if (have.provably_different(batch)) {
    diags_.report(DiagId::err_lengths_batch_size, c.args[0]->loc, "'x'", have.str(), "axis 1: [n, B, ...]", "L",
                  batch.str());
    return SValue::invalid();
  }
  if (!have.same_as(batch)) {
    std::vector<ir::DimCheck> checks(size_t(x.type().rank()));
    checks[1] = {ir::DimCheck::Kind::Operand, 1, "len(L)"};
    std::vector<Dim> shape = x.type().shape;
    shape[1] = batch;
    u = builder_.check_shape(u, std::move(checks), {dim_value(l, 0, loc)}, "x of reverse_sequence", shape, loc);
  }
  l = builder_.check_lengths(l, dim_value(u, 0, loc), loc, ir::LengthsBound::Rows);
  auto op = [&](ir::BinaryOp o, Value a, Value b) { return builder_.binary(o, std::move(a), std::move(b), loc); };
  auto [j, row_lengths] = rows_and_lengths(u, l, loc);
  Value reversed = op(ir::BinaryOp::Sub, op(ir::BinaryOp::Sub, row_lengths, builder_.int_constant(1, loc)), j);
  Value source = builder_.select(op(ir::BinaryOp::Lt, j, row_lengths), reversed, j, loc);
  return SValue::tensor(gathered_in_columns(u, source, loc), loc);
}

}  // namespace scangen::sema
