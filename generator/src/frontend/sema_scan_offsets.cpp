// Semantic analysis of a scan over a packed batch, `offsets = O` (language.md, "Variable-length
// batches"): every sequence is [N, ...] with sequence b in rows O[b] .. O[b+1] - 1, and every
// per-step output is [N, ...] in the same packing. The frontend writes it as the padded batch of
// `lengths` (sema_scan_lengths.cpp): O is checked (a CheckOffsets node), L[b] = O[b+1] - O[b], the
// steps are the longest sequence (or `steps`), each packed sequence is gathered into its padded
// [steps, B, ...] form (reversed within each sequence for `reverse`), and after the scan each
// per-step output is gathered back into the packing.
#include "frontend/sema_internal.h"
#include "support/check.h"

namespace scangen::sema {

using ir::BinaryOp;
using ir::Dim;
using ir::Value;

namespace {

std::string tap_text(const std::string& index, int64_t k) {
  return index + (k > 0 ? " + " + std::to_string(k) : " - " + std::to_string(-k));
}

}  // namespace

// Step 3b of a scan with offsets: the packed sequences (tap 0, the same rows), the check of O,
// the lengths and steps it gives, the inits' batch axes and the padded sequences. False after
// reporting.
bool Analyzer::packed_batch(ScanFrame& f) {
  const Loc loc = f.offsets_loc;
  auto op = [&](BinaryOp o, Value a, Value b) { return builder_.binary(o, std::move(a), std::move(b), loc); };
  auto i64 = [&](int64_t v) { return builder_.int_constant(v, loc); };
  bool ok = true;
  std::optional<Value> rows;
  for (auto& seq : f.sequences) {
    for (int64_t k : seq.taps)
      if (k != 0) {
        diags_.report(DiagId::err_offsets_tap, seq.base->loc, seq.label, tap_text(f.index_name, k), f.index_name);
        ok = false;
      }
    if (seq.value.type().is_scalar()) {
      diags_.report(DiagId::err_offsets_sequence_scalar, seq.base->loc, seq.label);
      ok = false;
      continue;
    }
    if (!rows) {
      rows = dim_value(seq.value.value, 0, loc);
      continue;
    }
    // Every packed sequence has the rows of the first.
    const ir::Type& t = seq.value.type();
    std::vector<ir::DimCheck> checks(size_t(t.rank()));
    checks[0] = {ir::DimCheck::Kind::Operand, 1, ""};
    std::vector<Dim> shape = t.shape;
    shape[0] = f.sequences.front().value.type().shape[0];
    seq.value = SValue::tensor(builder_.check_shape(seq.value.value, std::move(checks), {*rows},
                                                    "packed sequence '" + seq.label + "'", shape, seq.base->loc),
                               seq.value.loc);
  }
  if (!ok) return false;

  Value offsets = builder_.check_offsets(f.offsets->value, rows, loc);
  Value count = dim_value(offsets, 0, loc);
  f.batch_dim = f.offsets->type().shape[0].plus(-1);
  f.batch_size = op(BinaryOp::Sub, count, i64(1));
  f.packed_rows = rows ? *rows : builder_.gather(offsets, op(BinaryOp::Sub, count, i64(1)), loc);
  f.starts = builder_.gather(offsets, builder_.arange(i64(0), f.batch_size, f.batch_dim, loc), loc);
  Value ends = builder_.gather(offsets, builder_.arange(i64(1), count, f.batch_dim, loc), loc);
  Value lengths = op(BinaryOp::Sub, ends, f.starts);
  f.lengths = SValue::tensor(lengths, loc);
  if (!f.steps) {
    // The longest sequence: the largest of O[i] - O[i - 1] (and O[0] - O[0] = 0, so never empty).
    Value previous = builder_.gather(
        offsets, op(BinaryOp::Max, op(BinaryOp::Sub, builder_.arange(i64(0), count, f.offsets->type().shape[0], loc), i64(1)), i64(0)),
        loc);
    f.steps = SValue::tensor(builder_.reduce(ir::ReduceOp::Max, op(BinaryOp::Sub, offsets, previous), std::nullopt, loc), loc);
  }
  if (!batch_inits(f)) return false;
  f.checked_lengths = builder_.check_lengths(lengths, f.steps->value, loc);
  for (auto& seq : f.sequences)
    seq.value = SValue::tensor(padded_sequence(f, seq.value.value, seq.base->loc), seq.value.loc);
  return true;
}

// A packed sequence [N, ...] as the padded batch [steps, B, ...]: step t of row b is row
// O[b] + t (O[b] + L[b] - 1 - t for `reverse`) while t < L[b], else a row of zeros.
Value Analyzer::padded_sequence(const ScanFrame& f, const Value& packed, Loc loc) {
  auto op = [&](BinaryOp o, Value a, Value b) { return builder_.binary(o, std::move(a), std::move(b), loc); };
  auto i64 = [&](int64_t v) { return builder_.int_constant(v, loc); };
  const ir::Type& t = packed.type();
  // The packed rows and one row of zeros after them, for the steps a sequence does not take.
  Value rows = dim_value(packed, 0, loc);
  std::vector<Value> dims{op(BinaryOp::Add, rows, i64(1))};
  std::vector<Dim> shape{t.shape[0].plus(1)};
  for (int d = 1; d < t.rank(); ++d) {
    dims.push_back(dim_value(packed, d, loc));
    shape.push_back(t.shape[size_t(d)]);
  }
  Value with_zero = builder_.fill(builder_.constant(ir::Scalar::zero(t.dtype), loc), dims, shape, loc);
  with_zero = builder_.update(with_zero, packed, {ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true}},
                              {i64(0), rows}, false, loc);
  // The row each step of each sequence reads, [steps, B].
  Value steps = f.steps->value;
  Dim steps_dim = f.steps->as_dim ? *f.steps->as_dim : Dim::fresh_unknown();
  Value step = builder_.reshape(builder_.arange(i64(0), steps, steps_dim, loc), {steps, i64(1)},
                                {steps_dim, Dim::constant(1)}, loc);
  auto as_row = [&](const Value& v) {
    return builder_.reshape(v, {i64(1), f.batch_size}, {Dim::constant(1), f.batch_dim}, loc);
  };
  Value start = as_row(f.starts), length = as_row(f.checked_lengths);
  Value source = f.reverse ? op(BinaryOp::Sub, op(BinaryOp::Sub, op(BinaryOp::Add, start, length), i64(1)), step)
                           : op(BinaryOp::Add, start, step);
  Value index = builder_.select(op(BinaryOp::Lt, step, length), source, rows, loc);
  return builder_.gather(with_zero, index, loc);
}

// The scan's results with each per-step output [steps, B, ...] packed into [N, ...]: row n of
// sequence b (O[b] <= n < O[b+1]) is its step n - O[b].
SValue Analyzer::packed_outputs(const ScanFrame& f, SValue result) {
  const Loc loc = f.offsets_loc;
  auto op = [&](BinaryOp o, Value a, Value b) { return builder_.binary(o, std::move(a), std::move(b), loc); };
  auto i64 = [&](int64_t v) { return builder_.int_constant(v, loc); };
  Dim rows_dim = f.sequences.empty() ? Dim::fresh_unknown() : f.sequences.front().value.type().shape[0];
  // The sequence of each packed row: how many sequences end at or before it.
  Value row = builder_.arange(i64(0), f.packed_rows, rows_dim, loc);
  Value ends = op(BinaryOp::Add, f.starts, f.checked_lengths);
  Value ended = op(BinaryOp::Le, builder_.reshape(ends, {i64(1), f.batch_size}, {Dim::constant(1), f.batch_dim}, loc),
                   builder_.reshape(row, {f.packed_rows, i64(1)}, {rows_dim, Dim::constant(1)}, loc));
  Value sequence = builder_.reduce(ir::ReduceOp::Sum, builder_.cast(ended, DType::I64, loc), 1, loc);
  Value step = op(BinaryOp::Sub, row, builder_.gather(f.starts, sequence, loc));
  Value flat_row = op(BinaryOp::Add, op(BinaryOp::Mul, step, f.batch_size), sequence);
  for (size_t i = size_t(f.num_states); i < result.elements.size(); ++i) {
    const Value& y = result.elements[i].value;
    const ir::Type& t = y.type();
    std::vector<Value> dims{op(BinaryOp::Mul, dim_value(y, 0, loc), f.batch_size)};
    std::vector<Dim> shape{Dim::fresh_unknown()};
    for (int d = 2; d < t.rank(); ++d) {
      dims.push_back(dim_value(y, d, loc));
      shape.push_back(t.shape[size_t(d)]);
    }
    Value flat = builder_.reshape(y, dims, shape, loc);
    result.elements[i] = SValue::tensor(builder_.gather(flat, flat_row, loc), result.elements[i].loc);
  }
  return result;
}

}  // namespace scangen::sema
