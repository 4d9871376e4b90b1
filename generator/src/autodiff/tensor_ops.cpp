#include "autodiff/tensor_ops.h"

#include "support/check.h"

namespace scangen::autodiff {

using ir::BinaryOp;
using ir::Dim;
using ir::IndexSpec;
using ir::ReduceOp;
using ir::Type;

Value scalar(AdjointContext& c, DType d, double v) {
  ir::Scalar s = d == DType::Bool ? ir::Scalar::of_bool(v != 0)
                 : is_float(d)     ? ir::Scalar::of_float(d, v)
                                   : ir::Scalar::of_int(d, int64_t(v));
  return c.builder.constant(s, c.loc);
}
Value i64(AdjointContext& c, int64_t v) { return c.builder.int_constant(v, c.loc); }

Value add(AdjointContext& c, Value a, Value b) { return c.builder.binary(BinaryOp::Add, a, b, c.loc); }
Value sub(AdjointContext& c, Value a, Value b) { return c.builder.binary(BinaryOp::Sub, a, b, c.loc); }
Value mul(AdjointContext& c, Value a, Value b) { return c.builder.binary(BinaryOp::Mul, a, b, c.loc); }
Value div(AdjointContext& c, Value a, Value b) { return c.builder.binary(BinaryOp::Div, a, b, c.loc); }
Value neg(AdjointContext& c, Value a) { return c.builder.unary(ir::UnaryOp::Neg, a, c.loc); }

std::vector<Value> dims_of(AdjointContext& c, const Value& x) {
  std::vector<Value> dims;
  for (int i = 0; i < x.type().rank(); ++i) dims.push_back(c.builder.dim_size(x, i, c.loc));
  return dims;
}

Value full_like(AdjointContext& c, const Value& x, Value v) {
  return c.builder.fill(v, dims_of(c, x), x.type().shape, c.loc);
}

Value zeros_like(AdjointContext& c, const Value& x) { return full_like(c, x, scalar(c, x.type().dtype, 0)); }

Value insert_unit_axis(AdjointContext& c, Value g, int axis) {
  std::vector<Value> dims = dims_of(c, g);
  std::vector<Dim> static_dims = g.type().shape;
  dims.insert(dims.begin() + axis, i64(c, 1));
  static_dims.insert(static_dims.begin() + axis, Dim::constant(1));
  return c.builder.reshape(g, dims, static_dims, c.loc);
}

Value expand_reduced(AdjointContext& c, Value g, const Value& x, std::optional<int> axis) {
  if (!axis) return full_like(c, x, g);
  return add(c, full_like(c, x, scalar(c, g.type().dtype, 0)), insert_unit_axis(c, g, *axis));
}

namespace {

// g summed over `axis` where `like` has a single element along it at run time (the axis was
// broadcast), kept as it is otherwise; the result has like's size along the axis.
Value sum_where_broadcast(AdjointContext& c, Value g, const Value& like, int axis) {
  ir::Builder& b = c.builder;
  Value summed = add(c, zeros_like(c, g), insert_unit_axis(c, b.reduce(ReduceOp::Sum, g, axis, c.loc), axis));
  Value like_size = b.dim_size(like, axis, c.loc);
  Value was_broadcast = b.binary(BinaryOp::Eq, like_size, i64(c, 1), c.loc);
  Value chosen = b.select(was_broadcast, summed, g, c.loc);
  std::vector<IndexSpec> specs(size_t(axis), IndexSpec{IndexSpec::Kind::Slice, false, false});
  specs.push_back(IndexSpec{IndexSpec::Kind::Slice, false, true});
  return b.index(chosen, specs, {like_size}, c.loc);
}

}  // namespace

Value unbroadcast(AdjointContext& c, Value g, const Value& like) {
  ir::Builder& b = c.builder;
  const Type& target = like.type();
  while (g.type().rank() > target.rank()) g = b.reduce(ReduceOp::Sum, g, 0, c.loc);
  for (int i = 0; i < target.rank(); ++i) {
    const Dim& want = target.shape[size_t(i)];
    const Dim& have = g.type().shape[size_t(i)];
    if (want.same_as(have) || have.is_const(1)) continue;
    if (want.is_const(1)) {
      g = insert_unit_axis(c, b.reduce(ReduceOp::Sum, g, i, c.loc), i);
    } else if (!want.is_const()) {
      g = sum_where_broadcast(c, g, like, i);  // may be 1 at run time
    }
    // A constant size other than 1 is the broadcast size itself (the forward pass checked it).
  }
  if (target.rank() > 0 && !g.type().same_as(target)) g = b.reshape(g, dims_of(c, like), target.shape, c.loc);
  return g;
}

Value rows(AdjointContext& c, const Value& x, Value lo, Value hi) {
  return c.builder.index(x, {IndexSpec{IndexSpec::Kind::Slice, true, true}}, {lo, hi}, c.loc);
}

Value last_rows(AdjointContext& c, const Value& x, int64_t from, int64_t to) {
  if (to == 0) return c.builder.index(x, {IndexSpec{IndexSpec::Kind::Slice, true, false}}, {i64(c, -from)}, c.loc);
  return rows(c, x, i64(c, -from), i64(c, -to));
}

Value rows_after(AdjointContext& c, const Value& before, int64_t count, const Value& rows) {
  return ir::rows_after(c.builder, before, count, rows, c.loc);
}

Value flip_rows(AdjointContext& c, const Value& x) { return ir::flip_rows(c.builder, x, c.loc); }

Value transpose(AdjointContext& c, const Value& x) {
  SCANGEN_CHECK(x.type().rank() == 2, "transpose of a matrix");
  return c.builder.transpose(x, {1, 0}, c.loc);
}

Value steps_taken(AdjointContext& c, const std::vector<Value>& output_cotangents) {
  for (const Value& g : output_cotangents)
    if (g) return c.builder.dim_size(g, 0, c.loc);
  SCANGEN_UNREACHABLE("a scan's rule without a cotangent");
}

Value sum_rows(AdjointContext& c, const Value& x) { return c.builder.reduce(ReduceOp::Sum, x, 0, c.loc); }

}  // namespace scangen::autodiff
