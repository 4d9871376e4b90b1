// The interpreter's evaluation of every node kind but scans (scan_eval.cpp), with deliberately
// plain code; selection.cpp holds the gathers, argmax/argmin, top_k, transpose and reshape.
#include <algorithm>
#include <cstring>

#include "interpreter/elements.h"
#include "interpreter/node_eval.h"
#include "interpreter/selection.h"
#include "ir/shape_rules.h"

namespace scangen::interp {

using namespace scangen::ir;

namespace {

// The region x[specs] selects: per dimension of x, the first index and the count (and whether it
// stays in the result).
struct Region {
  std::vector<int64_t> start, count;
  Shape result_shape;
};

Region index_region(const Shape& x, const std::vector<IndexSpec>& specs, const std::vector<HostTensor>& operands,
                    size_t first_operand, const Loc& loc) {
  Region r;
  size_t op = first_operand;
  auto bound = [&](bool has) { return has ? std::optional<int64_t>(scalar_i64(operands[op++])) : std::nullopt; };
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t n = x[d];
    if (d < specs.size() && specs[d].kind == IndexSpec::Kind::Scalar) {
      r.start.push_back(checked_index(scalar_i64(operands[op++]), n, d, loc));
      r.count.push_back(1);
      continue;
    }
    std::optional<int64_t> lo, hi;
    if (d < specs.size()) {
      lo = bound(specs[d].has_lo);
      hi = bound(specs[d].has_hi);
    }
    const SliceBounds s = python_slice(n, lo, hi);
    r.start.push_back(s.start);
    r.count.push_back(s.length);
    r.result_shape.push_back(s.length);
  }
  return r;
}

// Calls f(offset_in_x, flat_index_in_region) for every element of the region, in C order.
template <class F> void for_each_in_region(const Shape& x, const Region& r, F&& f) {
  Shape counts(r.count.begin(), r.count.end());
  int64_t total = shape_numel(counts);
  if (total == 0) return;
  std::vector<int64_t> stride(x.size(), 1);
  for (size_t d = x.size(); d-- > 1;) stride[d - 1] = stride[d] * x[d];
  std::vector<int64_t> counter(x.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t offset = 0;
    for (size_t d = 0; d < x.size(); ++d) offset += (r.start[d] + counter[d]) * stride[d];
    f(offset, flat);
    for (size_t d = x.size(); d-- > 0;) {
      if (++counter[d] < r.count[d]) break;
      counter[d] = 0;
    }
  }
}

// Reduces p[0], p[inner], ... (length elements) with op, in the order emitted code does.
template <class T> T reduce_one(ReduceOp op, const T* p, int64_t length, int64_t inner) {
  T acc{};
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      acc = T(0);
      for (int64_t k = 0; k < length; ++k) acc = sc::add(acc, p[k * inner]);
      if (op == ReduceOp::Mean) acc = sc::div(acc, static_cast<T>(length));
      break;
    case ReduceOp::Prod:
      acc = T(1);
      for (int64_t k = 0; k < length; ++k) acc = sc::mul(acc, p[k * inner]);
      break;
    case ReduceOp::Max:
      acc = p[0];
      for (int64_t k = 1; k < length; ++k) acc = sc::max(acc, p[k * inner]);
      break;
    case ReduceOp::Min:
      acc = p[0];
      for (int64_t k = 1; k < length; ++k) acc = sc::min(acc, p[k * inner]);
      break;
  }
  return acc;
}

}  // namespace

Shape broadcast(const Shape& a, const Shape& b, const Loc& loc) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) fail(loc, RuntimeErrorId::broadcast, {ErrorArg::shape(a), ErrorArg::shape(b)});
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = in.size(); i-- > 0;) {
    size_t o = i + out.size() - in.size();
    strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

int64_t checked_fill_size(const Node& fill, int input, int64_t size) {
  if (size < 0)
    fail(fill.loc(), RuntimeErrorId::fill_size_negative,
         {ErrorArg::text_of(std::to_string(input - 1)), ErrorArg::number(size)});
  return size;
}

std::vector<HostTensor> NodeEval::visit_Param(const ParamNode&) { SCANGEN_UNREACHABLE("params are not evaluated"); }

std::vector<HostTensor> NodeEval::visit_Constant(const ConstantNode& n) {
  const Scalar& s = n.value();
  HostTensor t(s.dtype, {});
  dispatch_dtype(s.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) *t.data<T>() = static_cast<T>(s.f);
    else *t.data<T>() = static_cast<T>(s.i);
  });
  return {t};
}

std::vector<HostTensor> NodeEval::visit_Arange(const ArangeNode& n) {
  int64_t a = scalar_i64(in_[0]), b = scalar_i64(in_[1]);
  int64_t len = 0;
  if (b > a && __builtin_sub_overflow(b, a, &len)) fail(n.loc(), RuntimeErrorId::arange_too_large, {});
  HostTensor t(DType::I64, {std::max<int64_t>(len, 0)});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = a + i;
  return {t};
}

std::vector<HostTensor> NodeEval::visit_Fill(const FillNode& n) {
  Shape shape;
  for (size_t i = 1; i < in_.size(); ++i) shape.push_back(checked_fill_size(n, int(i), scalar_i64(in_[i])));
  HostTensor t(in_[0].dtype(), shape);
  size_t elem = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i)
    std::memcpy(static_cast<char*>(t.raw_data()) + size_t(i) * elem, in_[0].raw_data(), elem);
  return {t};
}

std::vector<HostTensor> NodeEval::visit_DimSize(const DimSizeNode& n) {
  return {HostTensor::scalar<int64_t>(in_[0].dim(n.axis()))};
}

std::vector<HostTensor> NodeEval::visit_Unary(const UnaryNode& n) {
  const HostTensor& x = in_[0];
  HostTensor out(x.dtype(), x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = x.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = unary<T>(n.op(), a[i]);
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Binary(const BinaryNode& n) {
  const HostTensor &a = in_[0], &b = in_[1];
  Shape shape = broadcast(a.shape(), b.shape(), n.loc());
  DType out_dtype = binary_op_class(n.op()) == BinaryClass::Arith ? a.dtype() : DType::Bool;
  HostTensor out(out_dtype, shape);
  std::vector<std::vector<int64_t>> strides{broadcast_strides(a.shape(), shape), broadcast_strides(b.shape(), shape)};
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    if (out_dtype == DType::Bool) {
      bool* o = out.data<bool>();
      for_each_element(shape, strides, [&](int64_t i, const std::vector<int64_t>& off) {
        o[i] = compare<T>(n.op(), pa[off[0]], pb[off[1]]);
      });
    } else if constexpr (!std::is_same_v<T, bool>) {
      T* o = out.data<T>();
      for_each_element(shape, strides, [&](int64_t i, const std::vector<int64_t>& off) {
        o[i] = arith<T>(n.op(), pa[off[0]], pb[off[1]], n.loc());
      });
    }
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Select(const SelectNode& n) {
  const HostTensor &c = in_[0], &a = in_[1], &b = in_[2];
  Shape shape = broadcast(broadcast(c.shape(), a.shape(), n.loc()), b.shape(), n.loc());
  HostTensor out(a.dtype(), shape);
  std::vector<std::vector<int64_t>> strides{broadcast_strides(c.shape(), shape), broadcast_strides(a.shape(), shape),
                                            broadcast_strides(b.shape(), shape)};
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = c.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* o = out.data<T>();
    for_each_element(shape, strides, [&](int64_t i, const std::vector<int64_t>& off) {
      o[i] = pc[off[0]] ? pa[off[1]] : pb[off[2]];
    });
  });
  return {out};
}

// An imported function, element by element through the shim the CPU JIT compiled (so that the
// interpreter computes exactly what emitted code computes).
std::vector<HostTensor> NodeEval::visit_Call(const CallNode& n) {
  ImportedEntry entry = run_.imported(n);
  Shape shape;
  for (const HostTensor& t : in_) shape = broadcast(shape, t.shape(), n.loc());
  HostTensor out(n.function().result, shape);
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor& t : in_) strides.push_back(broadcast_strides(t.shape(), shape));
  auto* bytes = static_cast<char*>(out.raw_data());
  const size_t size = dtype_size(out.dtype());
  std::vector<const void*> args(in_.size());
  for_each_element(shape, strides, [&](int64_t i, const std::vector<int64_t>& off) {
    for (size_t k = 0; k < in_.size(); ++k)
      args[k] = static_cast<const char*>(in_[k].raw_data()) + off[k] * int64_t(dtype_size(in_[k].dtype()));
    entry(args.data(), bytes + i * int64_t(size));
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Cast(const CastNode& n) {
  const HostTensor& x = in_[0];
  DType to = n.output_types()[0].dtype;
  HostTensor out(to, x.shape());
  dispatch_dtype(x.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* a = x.data<From>();
      To* o = out.data<To>();
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = sc::cast<To, From>(a[i]);
    });
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Reduce(const ReduceNode& n) {
  const HostTensor& x = in_[0];
  // View x as [outer, length, inner]: reduce the middle.
  int64_t outer = 1, length = x.numel(), inner = 1;
  if (n.axis()) {
    const int axis = *n.axis();
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    length = x.dim(axis);
  }
  HostTensor out(x.dtype(), without_axis(x.shape(), n.axis()));
  if (length == 0 && (n.op() == ReduceOp::Max || n.op() == ReduceOp::Min) && outer * inner > 0)
    fail(n.loc(), n.axis() ? RuntimeErrorId::reduce_empty_axis : RuntimeErrorId::reduce_empty,
         {ErrorArg::text_of(reduce_op_name(n.op()))});
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* a = x.data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < outer; ++i)
        for (int64_t j = 0; j < inner; ++j) o[i * inner + j] = reduce_one(n.op(), a + i * length * inner + j, length, inner);
    }
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_MatMul(const MatMulNode& n) {
  const HostTensor &a = in_[0], &b = in_[1];
  int64_t m = a.rank() == 2 ? a.dim(0) : 1, k = a.dim(a.rank() - 1);
  int64_t kb = b.dim(0), nn = b.rank() == 2 ? b.dim(1) : 1;
  if (k != kb) {
    const ErrorArg dtype = ErrorArg::text_of(std::string(dtype_name(a.dtype())));
    fail(n.loc(), RuntimeErrorId::matmul_inner,
         {dtype, ErrorArg::shape(a.shape()), dtype, ErrorArg::shape(b.shape()), ErrorArg::number(k), ErrorArg::number(kb)});
  }
  HostTensor out(a.dtype(), matmul_shape(a.shape(), b.shape()));
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < nn; ++j) {
          T acc = T(0);
          for (int64_t p = 0; p < k; ++p) acc = sc::add(acc, sc::mul(pa[i * k + p], pb[p * nn + j]));
          o[i * nn + j] = acc;
        }
    }
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Index(const IndexNode& n) {
  const HostTensor& x = in_[0];
  Region r = index_region(x.shape(), n.specs(), in_, 1, n.loc());
  HostTensor out(x.dtype(), r.result_shape);
  size_t elem = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for_each_in_region(x.shape(), r, [&](int64_t offset, int64_t flat) {
    std::memcpy(dst + size_t(flat) * elem, src + size_t(offset) * elem, elem);
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_Update(const UpdateNode& n) {
  const HostTensor &x = in_[0], &v = in_[1];
  Region r = index_region(x.shape(), n.specs(), in_, 2, n.loc());
  // v must broadcast to the region's shape.
  const Shape& region = r.result_shape;
  bool fits = v.rank() <= int(region.size());
  for (int i = 0; fits && i < v.rank(); ++i) {
    int64_t vd = v.dim(v.rank() - 1 - i), rd = region[region.size() - 1 - size_t(i)];
    if (vd != 1 && vd != rd) fits = false;
  }
  if (!fits)
    fail(n.loc(), RuntimeErrorId::update_shape,
         {ErrorArg::text_of(n.accumulate() ? "inc" : "set"), ErrorArg::shape(v.shape()), ErrorArg::shape(region)});
  HostTensor out = x.clone();
  std::vector<int64_t> vstrides = broadcast_strides(v.shape(), region);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* pv = v.data<T>();
    // Map the region's flat index to v's offset through the broadcast strides.
    for_each_in_region(x.shape(), r, [&](int64_t offset, int64_t flat) {
      int64_t rem = flat, voff = 0;
      for (size_t d = region.size(); d-- > 0;) {
        int64_t idx = region[d] ? rem % region[d] : 0;
        rem = region[d] ? rem / region[d] : 0;
        voff += idx * vstrides[d];
      }
      if constexpr (std::is_same_v<T, bool>) {
        o[offset] = pv[voff];
      } else {
        o[offset] = n.accumulate() ? sc::add(o[offset], pv[voff]) : pv[voff];
      }
    });
  });
  return {out};
}

std::vector<HostTensor> NodeEval::visit_CheckShape(const CheckShapeNode& n) {
  const HostTensor& x = in_[0];
  for (size_t axis = 0; axis < n.checks().size(); ++axis) {
    const DimCheck& c = n.checks()[axis];
    if (c.kind == DimCheck::Kind::None) continue;
    int64_t want = c.kind == DimCheck::Kind::Const ? c.value : scalar_i64(in_[size_t(c.value)]);
    int64_t have = x.dim(int(axis));
    if (have == want) continue;
    const ErrorArg what = ErrorArg::text_of(n.what()), at = ErrorArg::text_of(std::to_string(axis));
    if (c.symbol.empty())
      fail(n.loc(), RuntimeErrorId::dimension_mismatch, {what, at, ErrorArg::number(have), ErrorArg::number(want)});
    fail(n.loc(), RuntimeErrorId::dimension_mismatch_symbol,
         {what, at, ErrorArg::number(have), ErrorArg::text_of(c.symbol), ErrorArg::number(want)});
  }
  return {x};
}

std::vector<HostTensor> NodeEval::visit_CheckLengths(const CheckLengthsNode& n) {
  const HostTensor& lengths = in_[0];
  const int64_t steps = scalar_i64(in_[1]);
  for (int64_t b = 0; b < lengths.numel(); ++b) {
    int64_t length = lengths.data<int64_t>()[b];
    if (length < 0 || length > steps)
      fail(n.loc(), n.error(), {ErrorArg::number(b), ErrorArg::number(length), ErrorArg::number(steps)});
  }
  return {lengths};
}

std::vector<HostTensor> NodeEval::visit_CheckOffsets(const CheckOffsetsNode& n) {
  const HostTensor& offsets = in_[0];
  const int64_t count = offsets.numel();
  const int64_t* o = offsets.data<int64_t>();
  if (count == 0) fail(n.loc(), RuntimeErrorId::offsets_empty, {});
  if (o[0] != 0) fail(n.loc(), RuntimeErrorId::offsets_start, {ErrorArg::number(o[0])});
  for (int64_t i = 1; i < count; ++i)
    if (o[i] < o[i - 1])
      fail(n.loc(), RuntimeErrorId::offsets_decrease,
           {ErrorArg::number(i), ErrorArg::number(o[i]), ErrorArg::number(i - 1), ErrorArg::number(o[i - 1])});
  if (in_.size() > 1 && o[count - 1] != scalar_i64(in_[1]))
    fail(n.loc(), RuntimeErrorId::offsets_end,
         {ErrorArg::number(count - 1), ErrorArg::number(o[count - 1]), ErrorArg::number(scalar_i64(in_[1]))});
  return {offsets};
}

std::vector<HostTensor> NodeEval::visit_StopGradient(const StopGradientNode&) { return {in_[0]}; }

std::vector<HostTensor> NodeEval::visit_Reshape(const ReshapeNode& n) {
  Shape shape;
  for (size_t i = 1; i < in_.size(); ++i) shape.push_back(scalar_i64(in_[i]));
  if (n.checked()) check_reshape(in_[0], shape, n.loc());
  if (shape_numel(shape) != in_[0].numel())
    throw InternalError("reshape of " + shape_to_string(in_[0].shape()) + " to " + shape_to_string(shape));
  return {in_[0].reshaped(shape)};
}

std::vector<HostTensor> NodeEval::visit_Transpose(const TransposeNode& n) { return {transpose(in_[0], n.perm())}; }
std::vector<HostTensor> NodeEval::visit_Gather(const GatherNode& n) { return {gather(in_[0], in_[1], n.loc())}; }
std::vector<HostTensor> NodeEval::visit_ScatterAdd(const ScatterAddNode& n) {
  return {scatter_add(in_[0], in_[1], in_[2], n.loc())};
}
std::vector<HostTensor> NodeEval::visit_ArgReduce(const ArgReduceNode& n) {
  return {arg_reduce(n.op(), in_[0], n.axis(), n.loc())};
}
std::vector<HostTensor> NodeEval::visit_TopK(const TopKNode& n) { return {top_k(in_[0], scalar_i64(in_[1]), n.loc())}; }

}  // namespace scangen::interp
