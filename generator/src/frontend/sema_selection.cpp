// Semantic analysis: the handlers of the selection and layout builtins (argmax, argmin, top_k,
// transpose, reshape, flip, concat, stack) and gathers by an integer array. Each builds on a few
// IR nodes: top_k's values, flip and gathers are GatherNodes; concat is a fill updated piece by
// piece.
#include "frontend/builtins.h"
#include "support/check.h"
#include "support/limits.h"

namespace scangen::sema {

using ir::Dim;
using ir::ReduceOp;
using ir::Value;

// ---- helpers

// The keyword `axis = i` (an integer literal) if given, normalized for a value of rank `rank`
// (`extra` more for stack's new axis; a negative rank checks only the keyword's form). False when
// an error was reported.
bool Analyzer::axis_keyword(const ast::Call& c, int rank, int extra, std::optional<int>* axis) {
  for (const ast::KeywordArg& kw : c.kwargs) {  // only `axis`: builtin_arguments_fit saw to it
    std::optional<int64_t> a = int_literal_value(*kw.value);
    if (!a) {
      diags_.report(DiagId::err_axis_literal, kw.value->loc);
      return false;
    }
    if (rank < 0) continue;  // the value had an error of its own
    int64_t r = rank + extra;
    if (*a >= r || *a < -r) {
      diags_.report(DiagId::err_axis_out_of_range, kw.value->loc, *a, r);
      return false;
    }
    *axis = int(*a < 0 ? *a + r : *a);
  }
  return true;
}

// A numeric array argument (weak literals take their default dtype).
SValue Analyzer::numeric_array_arg(const ast::Call& c, size_t i, Scope& scope, bool allow_scalar) {
  SValue x = concrete(argument(c, i, scope), c.args[i]->loc);
  if (!x.ok()) return x;
  if (x.dtype() == DType::Bool) {
    diags_.report(DiagId::err_reduce_bool, c.loc, c.callee);
    return SValue::invalid();
  }
  if (!allow_scalar && x.type().is_scalar()) {
    diags_.report(DiagId::err_needs_array, c.args[i]->loc, c.callee);
    return SValue::invalid();
  }
  return x;
}

// x[idx] for an integer array idx: rows of x.
SValue Analyzer::gather_rows(const SValue& x, const SValue& idx, Loc idx_loc, Loc loc) {
  if (!is_int(idx.dtype())) {
    diags_.report(DiagId::err_gather_index_dtype, idx_loc, type_words(idx));
    return SValue::invalid();
  }
  if (x.type().is_scalar()) {
    diags_.report(DiagId::err_index_scalar, loc);
    return SValue::invalid();
  }
  if (idx.type().rank() + x.type().rank() - 1 > kMaxRank) {
    diags_.report(DiagId::err_rank_limit, loc, kMaxRank, idx.type().rank() + x.type().rank() - 1);
    return SValue::invalid();
  }
  return SValue::tensor(builder_.gather(x.value, idx.value, loc), loc);
}

// ---- argmax, argmin

SValue Analyzer::arg_extreme_call(const ast::Call& c, Scope& scope, const Builtin& b) {
  SValue x = numeric_array_arg(c, 0, scope, true);
  if (!x.ok()) return x;
  std::optional<int> axis;
  if (!axis_keyword(c, x.type().rank(), 0, &axis)) return SValue::invalid();
  ReduceOp op = *b.op.reduce;
  if (x.type().is_scalar()) return SValue::tensor(builder_.int_constant(0, c.loc), c.loc);  // NumPy's
  return SValue::tensor(builder_.arg_reduce(op, x.value, axis, c.loc), c.loc);
}

// ---- top_k: the positions, then the values gathered from x flattened

SValue Analyzer::top_k_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = numeric_array_arg(c, 0, scope, false);
  SValue raw_k = expr(*c.args[1], scope);
  SValue k = to_index_i64(raw_k, c.args[1]->loc, "top_k's k");
  if (!x.ok() || !k.ok()) return SValue::invalid();
  Value positions = builder_.top_k(x.value, k.value, k.as_dim.value_or(Dim::fresh_unknown()), c.loc);
  Value values;
  int rank = x.type().rank();
  if (rank == 1) {
    values = builder_.gather(x.value, positions, c.loc);
  } else {
    // Row r's position p is element r * n + p of x flattened.
    std::vector<Value> lead;
    std::vector<Dim> lead_dims;
    Value rows = builder_.int_constant(1, c.loc);
    for (int d = 0; d + 1 < rank; ++d) {
      lead.push_back(dim_value(x.value, d, c.loc));
      lead_dims.push_back(x.type().shape[size_t(d)]);
      rows = builder_.binary(ir::BinaryOp::Mul, rows, lead.back(), c.loc);
    }
    Value n = dim_value(x.value, rank - 1, c.loc);
    Value count = builder_.binary(ir::BinaryOp::Mul, rows, n, c.loc);
    Value flat = builder_.reshape(x.value, {count}, {Dim::fresh_unknown()}, c.loc);
    Value starts = builder_.binary(ir::BinaryOp::Mul, builder_.arange(builder_.int_constant(0, c.loc), rows, std::nullopt, c.loc), n, c.loc);
    lead.push_back(builder_.int_constant(1, c.loc));
    lead_dims.push_back(Dim::constant(1));
    starts = builder_.reshape(starts, lead, lead_dims, c.loc);
    values = builder_.gather(flat, builder_.binary(ir::BinaryOp::Add, positions, starts, c.loc), c.loc);
  }
  SValue out;
  out.kind = SValue::Kind::Multi;
  out.callee = "top_k";
  out.loc = c.loc;
  out.elements = {SValue::tensor(values, c.loc), SValue::tensor(positions, c.loc)};
  return out;
}

// ---- transpose, reshape, flip

SValue Analyzer::transpose_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = argument(c, 0, scope);
  if (!x.ok() || x.type().rank() < 2) return x;  // a scalar or a vector is its own transpose
  std::vector<int> perm;
  for (int d = x.type().rank(); d-- > 0;) perm.push_back(d);
  return SValue::tensor(builder_.transpose(x.value, perm, c.loc), c.loc);
}

SValue Analyzer::reshape_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = concrete(argument(c, 0, scope), c.loc);
  std::vector<Value> sizes;
  std::vector<Dim> static_sizes;
  std::optional<size_t> inferred;
  bool ok = x.ok();
  for (size_t i = 1; i < c.args.size(); ++i) {
    std::optional<int64_t> lit = int_literal_value(*c.args[i]);
    if (lit && *lit < 0 && *lit != -1) {
      diags_.report(DiagId::err_reshape_size, c.args[i]->loc, *lit);
      ok = false;
    } else if (lit && *lit == -1 && inferred) {
      diags_.report(DiagId::err_reshape_two_inferred, c.args[i]->loc);
      ok = false;
    } else if (lit && *lit == -1) {
      inferred = sizes.size();
    }
    SValue d = to_index_i64(expr(*c.args[i], scope), c.args[i]->loc, "a dimension");
    if (!d.ok()) ok = false;
    sizes.push_back(d.ok() ? d.value : Value());
    static_sizes.push_back(d.ok() && d.as_dim ? *d.as_dim : Dim::fresh_unknown());
  }
  if (!ok) return SValue::invalid();
  if (sizes.size() > size_t(kMaxRank)) {
    diags_.report(DiagId::err_rank_limit, c.loc, kMaxRank, sizes.size());
    return SValue::invalid();
  }
  if (inferred) {
    // count / (the product of the others), 0 when they hold nothing; the check then decides.
    Value count = builder_.int_constant(1, c.loc), others = builder_.int_constant(1, c.loc);
    for (int d = 0; d < x.type().rank(); ++d) count = builder_.binary(ir::BinaryOp::Mul, count, dim_value(x.value, d, c.loc), c.loc);
    for (size_t i = 0; i < sizes.size(); ++i)
      if (i != *inferred) others = builder_.binary(ir::BinaryOp::Mul, others, sizes[i], c.loc);
    Value zero = builder_.int_constant(0, c.loc);
    Value divisor = builder_.binary(ir::BinaryOp::Max, others, builder_.int_constant(1, c.loc), c.loc);
    sizes[*inferred] = builder_.select(builder_.binary(ir::BinaryOp::Eq, others, zero, c.loc), zero,
                                       builder_.binary(ir::BinaryOp::Div, count, divisor, c.loc), c.loc);
    static_sizes[*inferred] = Dim::fresh_unknown();
  }
  return SValue::tensor(builder_.reshape(x.value, sizes, static_sizes, c.loc, /*checked=*/true), c.loc);
}

// flip along axis 0 is a gather of the rows in reverse; along another axis, that axis is swapped
// to the front and back.
SValue Analyzer::flip_call(const ast::Call& c, Scope& scope, const Builtin&) {
  SValue x = concrete(argument(c, 0, scope), c.loc);
  if (!x.ok()) return x;
  std::optional<int> axis;
  if (!axis_keyword(c, x.type().rank(), 0, &axis)) return SValue::invalid();
  if (x.type().is_scalar()) {
    diags_.report(DiagId::err_needs_array, c.args[0]->loc, c.callee);
    return SValue::invalid();
  }
  int a = axis.value_or(0);
  std::vector<int> swap;
  for (int d = 0; d < x.type().rank(); ++d) swap.push_back(d == 0 ? a : d == a ? 0 : d);
  Value v = a == 0 ? x.value : builder_.transpose(x.value, swap, c.loc);
  Value n = dim_value(v, 0, c.loc);
  Value rows = builder_.arange(builder_.int_constant(0, c.loc), n, v.type().shape[0], c.loc);
  Value last = builder_.binary(ir::BinaryOp::Sub, n, builder_.int_constant(1, c.loc), c.loc);
  v = builder_.gather(v, builder_.binary(ir::BinaryOp::Sub, last, rows, c.loc), c.loc);
  if (a != 0) v = builder_.transpose(v, swap, c.loc);
  return SValue::tensor(v, c.loc);
}

// ---- concat and stack: a fill of the result's shape, each piece stored into its slice. stack
// first gives every piece a unit axis at `axis`.

bool Analyzer::concat_pieces(const ast::Call& c, Scope& scope, std::vector<SValue>* pieces) {
  if (c.args[0]->kind != ast::ExprKind::Tuple) {
    diags_.report(DiagId::err_pieces_tuple, c.args[0]->loc, c.callee);
    expr(*c.args[0], scope);
    return false;
  }
  bool ok = true;
  for (const ast::ExprPtr& e : ast::as<ast::Tuple>(*c.args[0]).elements) {
    pieces->push_back(single(expr(*e, scope), e->loc));
    ok = ok && pieces->back().ok();
  }
  if (!ok) return false;
  // One dtype for all, by the rules of arithmetic.
  SValue common = (*pieces)[0];
  for (size_t i = 1; i < pieces->size(); ++i) {
    auto p = promote(common, (*pieces)[i], c.loc, c.callee.c_str());
    if (!p) return false;
    if (!p->weak) common = materialize(common, p->dtype, c.loc);
  }
  DType d = common.weak ? weak_default(common) : common.dtype();
  for (SValue& piece : *pieces) piece = materialize(piece, d, c.loc);
  for (size_t i = 0; i < pieces->size(); ++i) {
    int rank = (*pieces)[i].type().rank(), first = (*pieces)[0].type().rank();
    if (rank != first) {
      diags_.report(DiagId::err_piece_rank, (*pieces)[i].loc, c.callee, i, rank, first);
      return false;
    }
  }
  return true;
}

SValue Analyzer::concat_call(const ast::Call& c, Scope& scope, const Builtin&) { return join(c, scope, false); }
SValue Analyzer::stack_call(const ast::Call& c, Scope& scope, const Builtin&) { return join(c, scope, true); }

SValue Analyzer::join(const ast::Call& c, Scope& scope, bool stack) {
  std::vector<SValue> pieces;
  if (!concat_pieces(c, scope, &pieces)) return SValue::invalid();
  int rank = pieces[0].type().rank();
  std::optional<int> axis;
  if (!axis_keyword(c, rank, stack ? 1 : 0, &axis)) return SValue::invalid();
  int a = axis.value_or(0);
  if (stack) {
    for (SValue& p : pieces) {
      std::vector<Value> dims;
      std::vector<Dim> shape = p.type().shape;
      for (int d = 0; d < rank; ++d) dims.push_back(dim_value(p.value, d, c.loc));
      dims.insert(dims.begin() + a, builder_.int_constant(1, c.loc));
      shape.insert(shape.begin() + a, Dim::constant(1));
      p = SValue::tensor(builder_.reshape(p.value, dims, shape, c.loc), p.loc);
    }
    ++rank;
  } else if (rank == 0) {
    diags_.report(DiagId::err_needs_array, pieces[0].loc, c.callee);
    return SValue::invalid();
  }
  return joined(c, pieces, a);
}

// The pieces, of one dtype and rank, joined along `axis`.
SValue Analyzer::joined(const ast::Call& c, const std::vector<SValue>& pieces, int axis) {
  const ir::Type& first = pieces[0].type();
  for (size_t i = 1; i < pieces.size(); ++i)
    for (int d = 0; d < first.rank(); ++d) {
      const Dim &want = first.shape[size_t(d)], &have = pieces[i].type().shape[size_t(d)];
      if (d == axis || !want.provably_different(have)) continue;
      diags_.report(DiagId::err_piece_dim, pieces[i].loc, c.callee, i, have.str(), d, want.str());
      return SValue::invalid();
    }
  std::vector<Value> dims, operands;
  std::vector<Dim> shape = first.shape;
  for (int d = 0; d < first.rank(); ++d) dims.push_back(dim_value(pieces[0].value, d, c.loc));
  Value total = builder_.int_constant(0, c.loc);
  std::optional<int64_t> static_total = 0;
  for (const SValue& p : pieces) {
    total = builder_.binary(ir::BinaryOp::Add, total, dim_value(p.value, axis, c.loc), c.loc);
    auto n = p.type().shape[size_t(axis)].const_value();
    static_total = n && static_total ? std::optional<int64_t>(*static_total + *n) : std::nullopt;
  }
  dims[size_t(axis)] = total;
  shape[size_t(axis)] = static_total ? Dim::constant(*static_total) : Dim::fresh_unknown();
  DType d = first.dtype;
  Value out = builder_.fill(builder_.constant(ir::Scalar::zero(d), c.loc), dims, shape, c.loc);
  std::vector<ir::IndexSpec> specs(size_t(axis) + 1, ir::IndexSpec{ir::IndexSpec::Kind::Slice, false, false});
  specs.back() = ir::IndexSpec{ir::IndexSpec::Kind::Slice, true, true};
  Value offset = builder_.int_constant(0, c.loc);
  for (size_t i = 0; i < pieces.size(); ++i) {
    Value piece = pieces[i].value;
    if (i > 0) piece = same_sides(c, pieces[i], pieces[0], axis, i);
    Value end = builder_.binary(ir::BinaryOp::Add, offset, dim_value(piece, axis, c.loc), c.loc);
    out = builder_.update(out, piece, specs, {offset, end}, false, c.loc);
    offset = end;
  }
  return SValue::tensor(out, c.loc);
}

// `piece` checked at run time to have the sizes of `first` in every dimension but `axis`.
Value Analyzer::same_sides(const ast::Call& c, const SValue& piece, const SValue& first, int axis, size_t i) {
  std::vector<ir::DimCheck> checks(size_t(piece.type().rank()));
  std::vector<Value> operands;
  std::vector<Dim> shape = piece.type().shape;
  bool any = false;
  for (int d = 0; d < piece.type().rank(); ++d) {
    const Dim& want = first.type().shape[size_t(d)];
    if (d == axis || want.same_as(shape[size_t(d)])) continue;
    operands.push_back(dim_value(first.value, d, c.loc));
    checks[size_t(d)] = ir::DimCheck{ir::DimCheck::Kind::Operand, int64_t(operands.size()), ""};
    shape[size_t(d)] = want;
    any = true;
  }
  if (!any) return piece.value;
  std::string what = c.callee + ": piece " + std::to_string(i);
  return builder_.check_shape(piece.value, checks, operands, what, shape, piece.loc);
}

}  // namespace scangen::sema
