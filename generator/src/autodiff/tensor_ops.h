// Small tensor computations the derivative rules are written with, each built from ordinary IR
// nodes so that everything downstream (interpreter, rewrites, backends) treats them like user code.
#pragma once

#include <optional>

#include "autodiff/context.h"

namespace scangen::autodiff {

// A scalar constant of dtype d.
Value scalar(AdjointContext& c, DType d, double v);
Value i64(AdjointContext& c, int64_t v);

Value add(AdjointContext& c, Value a, Value b);
Value sub(AdjointContext& c, Value a, Value b);
Value mul(AdjointContext& c, Value a, Value b);
Value div(AdjointContext& c, Value a, Value b);
Value neg(AdjointContext& c, Value a);

// The run-time size of each dimension of x.
std::vector<Value> dims_of(AdjointContext& c, const Value& x);
// A tensor of x's shape and dtype holding v (a scalar of x's dtype).
Value full_like(AdjointContext& c, const Value& x, Value v);
Value zeros_like(AdjointContext& c, const Value& x);
// g (of a broadcast result's shape) summed down to the shape of `like` (NumPy broadcasting in
// reverse). The result has like's static type.
Value unbroadcast(AdjointContext& c, Value g, const Value& like);
// g with a dimension of size 1 inserted at `axis` (keepdims of a reduction over that axis).
Value insert_unit_axis(AdjointContext& c, Value g, int axis);
// g (the shape of `x` without `axis`, or a scalar when axis is empty) broadcast back to x's shape.
Value expand_reduced(AdjointContext& c, Value g, const Value& x, std::optional<int> axis);
// x[lo:hi] along the first axis.
Value rows(AdjointContext& c, const Value& x, Value lo, Value hi);
// x[-from:-to] (x[-from:] when to is 0): among the last rows, clamped like Python (empty when x has
// no more than `to` rows). save-mem keeps only the last `from` rows of a scan output read so.
Value last_rows(AdjointContext& c, const Value& x, int64_t from, int64_t to);
// `before` (count rows, or one row when `before` has the shape of a row) followed by the rows of
// `rows`: a state's history (its init, then its results).
Value rows_after(AdjointContext& c, const Value& before, int64_t count, const Value& rows);
// The rows of x in the opposite order (a reverse scan that copies its sequence).
Value flip_rows(AdjointContext& c, const Value& x);
// The transpose of a matrix (a scan over its columns).
Value transpose(AdjointContext& c, const Value& x);
// The number of steps a scan took, from the cotangent of one of its outputs (each has a row per
// step): measuring the outputs themselves would keep all their rows (save-mem windows an output
// only when nothing but its last rows is read).
Value steps_taken(AdjointContext& c, const std::vector<Value>& output_cotangents);
// sum of x over axis 0 (x[0] + x[1] + ...; zeros of a row's shape when x has no rows).
Value sum_rows(AdjointContext& c, const Value& x);

}  // namespace scangen::autodiff
