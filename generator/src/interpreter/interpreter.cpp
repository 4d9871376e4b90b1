#include "interpreter/interpreter.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "interpreter/failures.h"
#include "ir/builder.h"
#include "interpreter/import_shim.h"
#include "interpreter/selection.h"
#include "ir/shape_rules.h"
#include "ir/visitor.h"
#include "scangen/runtime/errors.h"
#include "scangen_scalar.h"
#include "support/check.h"
#include "support/large_stack.h"

namespace scangen::interp {

using namespace scangen::ir;

namespace sc = scangen::scalar_v1;

namespace {

// ---- broadcasting

Shape broadcast(const Shape& a, const Shape& b, const Loc& loc) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      fail(loc, RuntimeErrorId::broadcast, {ErrorArg::shape(a), ErrorArg::shape(b)});
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element strides of `in` seen through the broadcast `out` shape (0 where broadcast).
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

// Calls f(out_index, offsets) for every element of `out` in C order, where offsets[k] is the
// element offset into input k.
template <class F>
void for_each_element(const Shape& out, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  int64_t total = shape_numel(out);
  size_t rank = out.size();
  std::vector<int64_t> counter(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, offsets);
    for (size_t d = rank; d-- > 0;) {
      ++counter[d];
      for (size_t k = 0; k < strides.size(); ++k) offsets[k] += strides[k][d];
      if (counter[d] < out[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) offsets[k] -= strides[k][d] * counter[d];
      counter[d] = 0;
    }
  }
}

int64_t scalar_i64(const HostTensor& t) { return t.get_as_int64(0); }

// Size `size` of input `input` of a fill (zeros, ones, ...): never negative.
int64_t checked_fill_size(const Node& fill, int input, int64_t size) {
  if (size < 0)
    fail(fill.loc(), RuntimeErrorId::fill_size_negative,
         {ErrorArg::text_of(std::to_string(input - 1)), ErrorArg::number(size)});
  return size;
}

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

// The region x[specs] selects: per dimension of x, the first index and the count (and whether it
// stays in the result).
struct Region {
  std::vector<int64_t> start, count;
  std::vector<bool> kept;
  Shape result_shape;
};

// With check_scalars false, scalar indices are not looked at (only the result shape is wanted).
Region index_region(const Shape& x, const std::vector<IndexSpec>& specs, const std::vector<HostTensor>& operands,
                    size_t first_operand, const Loc& loc, bool check_scalars = true) {
  Region r;
  size_t op = first_operand;
  for (size_t d = 0; d < x.size(); ++d) {
    int64_t n = x[d];
    if (d >= specs.size()) {
      r.start.push_back(0);
      r.count.push_back(n);
      r.kept.push_back(true);
      r.result_shape.push_back(n);
      continue;
    }
    const IndexSpec& s = specs[d];
    if (s.kind == IndexSpec::Kind::Scalar && !check_scalars) {
      ++op;
      r.start.push_back(0);
      r.count.push_back(1);
      r.kept.push_back(false);
      continue;
    }
    if (s.kind == IndexSpec::Kind::Scalar) {
      r.start.push_back(interp::checked_index(scalar_i64(operands[op++]), n, d, loc));
      r.count.push_back(1);
      r.kept.push_back(false);
      continue;
    }
    // Python's slice clamping.
    auto clamp = [n](int64_t v) {
      if (v < 0) v = v < -n ? 0 : v + n;
      return std::min(v, n);
    };
    int64_t lo = s.has_lo ? clamp(scalar_i64(operands[op++])) : 0;
    int64_t hi = s.has_hi ? clamp(scalar_i64(operands[op++])) : n;
    int64_t len = std::max<int64_t>(hi - lo, 0);
    r.start.push_back(lo);
    r.count.push_back(len);
    r.kept.push_back(true);
    r.result_shape.push_back(len);
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

// Evaluates one node given its input values.
// What one run of a function keeps for all its steps: the imported functions' shim entries. The
// headers are those of the run's start (as for emitted code, compiled once), so each call node's
// shim is looked up, and its headers hashed, once per run instead of at every step.
class RunState {
 public:
  ImportedEntry imported(const CallNode& n) {
    auto key = std::make_pair(n.import().get(), n.function_index());
    auto it = imported_.find(key);
    if (it == imported_.end()) it = imported_.emplace(key, imported_entry(*n.import(), n.function_index())).first;
    return it->second;
  }

 private:
  std::map<std::pair<const Import*, int>, ImportedEntry> imported_;
};

class NodeEval : public Visitor<std::vector<HostTensor>> {
 public:
  NodeEval(const std::vector<HostTensor>& inputs, RunState& run) : in_(inputs), run_(run) {}

  // Which of the node's outputs something reads (empty: all of them).
  std::vector<bool> used_outputs;

 protected:
  std::vector<HostTensor> visit_Param(const ParamNode&) override { SCANGEN_UNREACHABLE("params are not evaluated"); }

  std::vector<HostTensor> visit_Constant(const ConstantNode& n) override {
    const Scalar& s = n.value();
    HostTensor t(s.dtype, {});
    dispatch_dtype(s.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) *t.data<T>() = static_cast<T>(s.f);
      else *t.data<T>() = static_cast<T>(s.i);
    });
    return {t};
  }

  std::vector<HostTensor> visit_Arange(const ArangeNode& n) override {
    int64_t a = scalar_i64(in_[0]), b = scalar_i64(in_[1]);
    int64_t len = 0;
    if (b > a && __builtin_sub_overflow(b, a, &len)) fail(n.loc(), RuntimeErrorId::arange_too_large, {});
    HostTensor t(DType::I64, {std::max<int64_t>(len, 0)});
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = a + i;
    return {t};
  }

  std::vector<HostTensor> visit_Fill(const FillNode& n) override {
    Shape shape;
    for (size_t i = 1; i < in_.size(); ++i) shape.push_back(checked_fill_size(n, int(i), scalar_i64(in_[i])));
    HostTensor t(in_[0].dtype(), shape);
    size_t elem = dtype_size(t.dtype());
    for (int64_t i = 0; i < t.numel(); ++i)
      std::memcpy(static_cast<char*>(t.raw_data()) + size_t(i) * elem, in_[0].raw_data(), elem);
    return {t};
  }

  std::vector<HostTensor> visit_DimSize(const DimSizeNode& n) override {
    return {HostTensor::scalar<int64_t>(in_[0].dim(n.axis()))};
  }

  std::vector<HostTensor> visit_Unary(const UnaryNode& n) override {
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

  std::vector<HostTensor> visit_Binary(const BinaryNode& n) override {
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

  std::vector<HostTensor> visit_Select(const SelectNode& n) override {
    const HostTensor &c = in_[0], &a = in_[1], &b = in_[2];
    Shape shape = broadcast(broadcast(c.shape(), a.shape(), n.loc()), b.shape(), n.loc());
    HostTensor out(a.dtype(), shape);
    std::vector<std::vector<int64_t>> strides{broadcast_strides(c.shape(), shape),
                                              broadcast_strides(a.shape(), shape),
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
  std::vector<HostTensor> visit_Call(const CallNode& n) override {
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

  std::vector<HostTensor> visit_Cast(const CastNode& n) override {
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

  std::vector<HostTensor> visit_Reduce(const ReduceNode& n) override {
    const HostTensor& x = in_[0];
    // View x as [outer, length, inner]: reduce the middle.
    int64_t outer = 1, length = x.numel(), inner = 1;
    Shape out_shape;
    if (n.axis()) {
      int axis = *n.axis();
      outer = 1;
      inner = 1;
      for (int d = 0; d < axis; ++d) outer *= x.dim(d);
      for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
      length = x.dim(axis);
      out_shape = x.shape();
      out_shape.erase(out_shape.begin() + axis);
    }
    HostTensor out(x.dtype(), out_shape);
    if (length == 0 && (n.op() == ReduceOp::Max || n.op() == ReduceOp::Min) && outer * inner > 0)
      fail(n.loc(), n.axis() ? RuntimeErrorId::reduce_empty_axis : RuntimeErrorId::reduce_empty,
           {ErrorArg::text_of(reduce_op_name(n.op()))});
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        const T* a = x.data<T>();
        T* o = out.data<T>();
        for (int64_t i = 0; i < outer; ++i)
          for (int64_t j = 0; j < inner; ++j) {
            const T* p = a + i * length * inner + j;
            T acc{};
            switch (n.op()) {
              case ReduceOp::Sum:
              case ReduceOp::Mean:
                acc = T(0);
                for (int64_t k = 0; k < length; ++k) acc = sc::add(acc, p[k * inner]);
                if (n.op() == ReduceOp::Mean) acc = sc::div(acc, static_cast<T>(length));
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
            o[i * inner + j] = acc;
          }
      }
    });
    return {out};
  }

  std::vector<HostTensor> visit_MatMul(const MatMulNode& n) override {
    const HostTensor &a = in_[0], &b = in_[1];
    int64_t m = a.rank() == 2 ? a.dim(0) : 1, k = a.dim(a.rank() - 1);
    int64_t kb = b.dim(0), nn = b.rank() == 2 ? b.dim(1) : 1;
    if (k != kb) {
      const ErrorArg dtype = ErrorArg::text_of(std::string(dtype_name(a.dtype())));
      fail(n.loc(), RuntimeErrorId::matmul_inner,
           {dtype, ErrorArg::shape(a.shape()), dtype, ErrorArg::shape(b.shape()), ErrorArg::number(k), ErrorArg::number(kb)});
    }
    Shape shape;
    if (a.rank() == 2) shape.push_back(m);
    if (b.rank() == 2) shape.push_back(nn);
    HostTensor out(a.dtype(), shape);
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

  std::vector<HostTensor> visit_Index(const IndexNode& n) override {
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

  std::vector<HostTensor> visit_Update(const UpdateNode& n) override {
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

  std::vector<HostTensor> visit_CheckShape(const CheckShapeNode& n) override {
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

  std::vector<HostTensor> visit_StopGradient(const StopGradientNode&) override { return {in_[0]}; }

  std::vector<HostTensor> visit_Reshape(const ReshapeNode& n) override {
    Shape shape;
    for (size_t i = 1; i < in_.size(); ++i) shape.push_back(scalar_i64(in_[i]));
    if (n.checked()) interp::check_reshape(in_[0], shape, n.loc());
    if (shape_numel(shape) != in_[0].numel())
      throw InternalError("reshape of " + shape_to_string(in_[0].shape()) + " to " + shape_to_string(shape));
    return {in_[0].reshaped(shape)};
  }
  std::vector<HostTensor> visit_Transpose(const TransposeNode& n) override { return {interp::transpose(in_[0], n.perm())}; }
  std::vector<HostTensor> visit_Gather(const GatherNode& n) override { return {interp::gather(in_[0], in_[1], n.loc())}; }
  std::vector<HostTensor> visit_ScatterAdd(const ScatterAddNode& n) override {
    return {interp::scatter_add(in_[0], in_[1], in_[2], n.loc())};
  }
  std::vector<HostTensor> visit_ArgReduce(const ArgReduceNode& n) override {
    return {interp::arg_reduce(n.op(), in_[0], n.axis(), n.loc())};
  }
  std::vector<HostTensor> visit_TopK(const TopKNode& n) override { return {interp::top_k(in_[0], scalar_i64(in_[1]), n.loc())}; }

  std::vector<HostTensor> visit_Scan(const ScanNode& n) override;
  int64_t scan_steps(const ScanNode& n) const;
  std::vector<OutputRows> scan_rows(const ScanNode& n, int64_t steps) const;

 private:
  template <class T> static T unary(UnaryOp op, T a) {
    if constexpr (std::is_same_v<T, bool>) {
      return op == UnaryOp::Not ? !a : a;
    } else {
      switch (op) {
        case UnaryOp::Neg: return sc::neg(a);
        case UnaryOp::Abs: return sc::abs(a);
        case UnaryOp::Sign: return sc::sign(a);
        case UnaryOp::Not: break;
        default:
          if constexpr (std::is_floating_point_v<T>) {
            switch (op) {
              case UnaryOp::Exp: return sc::exp(a);
              case UnaryOp::Log: return sc::log(a);
              case UnaryOp::Log1p: return sc::log1p(a);
              case UnaryOp::Expm1: return sc::expm1(a);
              case UnaryOp::Sqrt: return sc::sqrt(a);
              case UnaryOp::Sin: return sc::sin(a);
              case UnaryOp::Cos: return sc::cos(a);
              case UnaryOp::Tanh: return sc::tanh(a);
              case UnaryOp::Sigmoid: return sc::sigmoid(a);
              case UnaryOp::Floor: return sc::floor(a);
              case UnaryOp::Ceil: return sc::ceil(a);
              default: break;
            }
          }
      }
      SCANGEN_UNREACHABLE(std::string("unary ") + unary_op_name(op) + " on this dtype");
    }
  }

  template <class T> static bool compare(BinaryOp op, T a, T b) {
    switch (op) {
      case BinaryOp::Eq: return a == b;
      case BinaryOp::Ne: return a != b;
      case BinaryOp::Lt: return a < b;
      case BinaryOp::Le: return a <= b;
      case BinaryOp::Gt: return a > b;
      case BinaryOp::Ge: return a >= b;
      case BinaryOp::And:
        if constexpr (std::is_same_v<T, bool>) return a && b;
        break;
      case BinaryOp::Or:
        if constexpr (std::is_same_v<T, bool>) return a || b;
        break;
      default: break;
    }
    SCANGEN_UNREACHABLE(std::string("comparison ") + binary_op_name(op));
  }

  template <class T> static T arith(BinaryOp op, T a, T b, const Loc& loc) {
    switch (op) {
      case BinaryOp::Add: return sc::add(a, b);
      case BinaryOp::Sub: return sc::sub(a, b);
      case BinaryOp::Mul: return sc::mul(a, b);
      case BinaryOp::Div:
        if (sc::is_int_v<T> && b == 0) fail(loc, RuntimeErrorId::integer_division_by_zero, {});
        return sc::div(a, b);
      case BinaryOp::Mod:
        if (sc::is_int_v<T> && b == 0) fail(loc, RuntimeErrorId::integer_division_by_zero, {});
        return sc::mod(a, b);
      case BinaryOp::Pow:
        if (sc::is_int_v<T> && b < 0) fail(loc, RuntimeErrorId::negative_exponent, {ErrorArg::number(int64_t(b))});
        return sc::pow(a, b);
      case BinaryOp::Min: return sc::min(a, b);
      case BinaryOp::Max: return sc::max(a, b);
      default: SCANGEN_UNREACHABLE(std::string("arithmetic ") + binary_op_name(op));
    }
  }

  const std::vector<HostTensor>& in_;
  RunState& run_;
};

// Evaluates a graph: every node reachable from its results, in topological order.
// Per node of a graph, which of its outputs something reads (another node or the results): a
// scan keeps no rows of an output nobody reads, as compiled code keeps none.
using OutputUses = std::unordered_map<const Node*, std::vector<bool>>;

OutputUses output_uses(const Graph& g, const std::vector<const Node*>& order) {
  OutputUses uses;
  auto mark = [&](const Value& v) {
    std::vector<bool>& u = uses[v.node.get()];
    u.resize(size_t(v.node->num_outputs()), false);
    u[size_t(v.index)] = true;
  };
  for (const Node* n : order)
    for (const Value& in : n->inputs()) mark(in);
  for (const Value& r : g.results) mark(r);
  return uses;
}

class GraphEval {
 public:
  GraphEval(std::vector<HostTensor> params, RunState& run) : params_(std::move(params)), run_(run) {}

  // `order` is topological_order(g) and `uses` output_uses(g, order), computed once by the caller.
  std::vector<HostTensor> results(const Graph& g, const std::vector<const Node*>& order, const OutputUses& uses) {
    uses_ = &uses;
    for (const Node* n : order) evaluate(*n);
    std::vector<HostTensor> out;
    for (const Value& r : g.results) out.push_back(value_of(r));
    return out;
  }

  const HostTensor& value_of(const Value& v) {
    if (const auto* p = v.node->as<ParamNode>()) return params_.at(size_t(p->index()));
    auto it = memo_.find(v.node.get());
    SCANGEN_CHECK(it != memo_.end(), "value used before it was evaluated");
    return it->second.at(size_t(v.index));
  }

 private:
  void evaluate(const Node& n) {
    if (n.kind() == NodeKind::Param || memo_.count(&n)) return;
    std::vector<HostTensor> inputs;
    inputs.reserve(n.inputs().size());
    for (const Value& in : n.inputs()) inputs.push_back(value_of(in));
    NodeEval eval(inputs, run_);
    eval.used_outputs = uses_->at(&n);
    try {
      memo_.emplace(&n, eval.visit(n));
    } catch (const AllocationError& e) {
      fail_allocation(e, "the value", n.loc());
    }
  }

  std::vector<HostTensor> params_;
  RunState& run_;
  std::unordered_map<const Node*, std::vector<HostTensor>> memo_;
  const OutputUses* uses_ = nullptr;
};

// Shapes of a scan body's values without running a step, for a scan of zero steps. Only what a
// shape needs is evaluated (the values that size an arange, a fill, a slice or a nested scan),
// exactly what the lowering computes before a loop. A size that depends on the step (a param
// without a value) is kUnknownSize: a step value may have one, an output's rows never do
// (StepVariance, which the frontend checks).
class ShapeEval {
 public:
  static constexpr int64_t kUnknownSize = -1;

  ShapeEval(std::vector<Shape> param_shapes, std::vector<std::optional<HostTensor>> param_values)
      : param_shapes_(std::move(param_shapes)), param_values_(std::move(param_values)) {}

  Shape shape(const Value& v) {
    if (const auto* p = v.node->as<ParamNode>()) return param_shapes_.at(size_t(p->index()));
    auto it = shapes_.find(v.node.get());
    if (it == shapes_.end()) it = shapes_.emplace(v.node.get(), node_shapes(*v.node)).first;
    return it->second.at(size_t(v.index));
  }

  // Whether v's value can be computed here: it reaches no param without a value (a size needs
  // only that dimension of its operand).
  bool has_value(const Value& v) {
    if (const auto* p = v.node->as<ParamNode>()) return param_values_.at(size_t(p->index())).has_value();
    if (const auto* d = v.node->as<DimSizeNode>()) return shape(d->input(0)).at(size_t(d->axis())) != kUnknownSize;
    auto it = has_value_.find(v.node.get());
    if (it != has_value_.end()) return it->second;
    bool known = true;
    for (const Value& in : v.node->inputs()) known = known && has_value(in);
    has_value_.emplace(v.node.get(), known);
    return known;
  }

  HostTensor value(const Value& v) {
    SCANGEN_CHECK(has_value(v), "the shape of a scan output depends on a value that changes from step to step");
    if (const auto* p = v.node->as<ParamNode>()) return *param_values_.at(size_t(p->index()));
    if (const auto* d = v.node->as<DimSizeNode>()) return HostTensor::scalar<int64_t>(shape(d->input(0)).at(size_t(d->axis())));
    auto it = values_.find(v.node.get());
    if (it == values_.end()) {
      std::vector<HostTensor> inputs;
      for (const Value& in : v.node->inputs()) inputs.push_back(value(in));
      NodeEval e(inputs, run_);
      it = values_.emplace(v.node.get(), e.visit(*v.node)).first;
    }
    return it->second.at(size_t(v.index));
  }

  // The step shapes of a scan's outputs given its inputs' values.
  static std::vector<Shape> rows_from_inputs(const ScanNode& n, std::vector<Shape> input_shapes,
                                             std::vector<std::optional<HostTensor>> input_values);

  // The number of steps and the step shape of each output of a scan (kUnknownSize where they
  // depend on the enclosing step). With_steps false leaves steps at 0: the rows alone do not need
  // it, and for a scan with `until` the steps come from evaluating the scan itself, which for the
  // scan being evaluated (rows_from_inputs, zero steps taken) recursed without end.
  struct ScanShapes {
    int64_t steps = 0;
    std::vector<Shape> rows;
  };
  ScanShapes scan_shapes(const ScanNode& n, bool with_steps = true);

 private:
  // A size as a value, or nothing when it depends on the step.
  std::optional<int64_t> size_of(const Value& v) {
    return has_value(v) ? std::optional<int64_t>(scalar_i64(value(v))) : std::nullopt;
  }
  int64_t steps_of(const ScanNode& n);
  std::vector<Shape> node_shapes(const Node& n);
  Shape sizes_shape(const Node& n);
  Shape index_shape(const IndexNode& n);
  Shape partial_broadcast(const Shape& a, const Shape& b, const Loc& loc);

  std::vector<Shape> param_shapes_;
  std::vector<std::optional<HostTensor>> param_values_;
  std::unordered_map<const Node*, std::vector<Shape>> shapes_;
  std::unordered_map<const Node*, bool> has_value_;
  RunState run_;  // its own: shapes are evaluated apart from any run
  std::unordered_map<const Node*, std::vector<HostTensor>> values_;
};

int64_t ShapeEval::steps_of(const ScanNode& n) {
  const ScanInfo& info = n.info();
  // With `until`, the steps come from running the scan, possible only when nothing it reads
  // depends on the enclosing step.
  if (info.has_until) return has_value(n.output(0)) ? value(n.output(0)).dim(0) : kUnknownSize;
  if (info.has_steps) {
    // A negative `steps` is an error of the scan when it runs; as a size it is 0.
    std::optional<int64_t> steps = size_of(n.input(info.steps_input()));
    return steps ? std::max<int64_t>(*steps, 0) : kUnknownSize;
  }
  int64_t steps = 0;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    int64_t length = shape(n.input(info.sequence_input(int(s))))[0];
    if (length == kUnknownSize) return kUnknownSize;
    int64_t allowed = std::max<int64_t>(length - info.sequences[s].span(), 0);
    steps = s == 0 ? allowed : std::min(steps, allowed);
  }
  return steps;
}

ShapeEval::ScanShapes ShapeEval::scan_shapes(const ScanNode& n, bool with_steps) {
  const ScanInfo& info = n.info();
  const Graph& body = n.body();
  std::vector<Shape> shapes(body.params.size());
  std::vector<std::optional<HostTensor>> values(body.params.size());
  auto rows_of = [](Shape s) {
    s.erase(s.begin());
    return s;
  };
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    Shape row = rows_of(shape(n.input(info.sequence_input(int(s)))));
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) shapes[size_t(info.body_sequence_param(int(s), int(k)))] = row;
  }
  // A state's step shape is its init's (a step value of another shape is an error of that step);
  // an output's comes from its step value.
  std::vector<Shape> state_rows;
  for (size_t s = 0; s < info.states.size(); ++s) {
    Shape init = shape(n.input(info.init_input(int(s))));
    state_rows.push_back(info.states[s].init_has_rows() ? rows_of(init) : init);
    for (size_t k = 0; k < info.states[s].lags.size(); ++k) shapes[size_t(info.body_state_param(int(s), int(k)))] = state_rows[s];
  }
  for (int p = 0; p < info.num_params; ++p) {
    const Value& in = n.input(info.param_input(p));
    shapes[size_t(info.body_param(p))] = shape(in);
    if (has_value(in)) values[size_t(info.body_param(p))] = value(in);
  }
  ScanShapes out;
  if (with_steps) out.steps = steps_of(n);
  ShapeEval inner(std::move(shapes), std::move(values));
  for (int i = 0; i < info.num_outputs(); ++i)
    out.rows.push_back(i < int(state_rows.size()) ? state_rows[size_t(i)] : inner.shape(body.results[size_t(i)]));
  return out;
}

// NumPy broadcasting where some sizes may be unknown: a known size other than 1 decides (an
// unknown one must then be 1 or the same, else the step reports it); mismatches of known sizes
// are the program's error, as in a step.
Shape ShapeEval::partial_broadcast(const Shape& a, const Shape& b, const Loc& loc) {
  auto known = [](const Shape& s) { return std::find(s.begin(), s.end(), kUnknownSize) == s.end(); };
  if (known(a) && known(b)) return broadcast(a, b, loc);
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da == kUnknownSize || db == kUnknownSize) {
      int64_t other = da == kUnknownSize ? db : da;
      out[i] = other != 1 && other != kUnknownSize ? other : kUnknownSize;
    } else {
      if (da != db && da != 1 && db != 1)
        fail(loc, RuntimeErrorId::broadcast, {ErrorArg::shape(a), ErrorArg::shape(b)});
      out[i] = da == 1 ? db : da;
    }
  }
  return out;
}

// Fill and Reshape: the sizes are inputs 1...
// A fill's negative size is its error, reported as soon as the size is known (as compiled code
// checks each size it knows before the loop).
Shape ShapeEval::sizes_shape(const Node& n) {
  Shape s;
  for (int i = 1; i < n.num_inputs(); ++i) {
    std::optional<int64_t> size = size_of(n.input(i));
    if (size && n.kind() == NodeKind::Fill) checked_fill_size(n, i, *size);
    s.push_back(size ? *size : kUnknownSize);
  }
  return s;
}

// Only the slices decide the shape (scalar indices are not looked at), clamped as Python does.
Shape ShapeEval::index_shape(const IndexNode& n) {
  return ir::index_shape(shape(n.input(0)), n.specs(), [&](int64_t size, int lo, int hi) {
    std::optional<int64_t> lo_value = lo >= 0 ? size_of(n.input(1 + lo)) : std::nullopt;
    std::optional<int64_t> hi_value = hi >= 0 ? size_of(n.input(1 + hi)) : std::nullopt;
    if (size == kUnknownSize || (lo >= 0 && !lo_value) || (hi >= 0 && !hi_value)) return kUnknownSize;
    return python_slice(size, lo_value, hi_value).length;
  });
}

std::vector<Shape> ShapeEval::node_shapes(const Node& n) {
  auto in_shape = [&](int i) { return shape(n.input(i)); };
  switch (n.kind()) {
    case NodeKind::Param: SCANGEN_UNREACHABLE("param");
    case NodeKind::Constant:
    case NodeKind::DimSize: return {Shape{}};
    case NodeKind::Arange: return {has_value(n.output(0)) ? value(n.output(0)).shape() : Shape{kUnknownSize}};
    case NodeKind::Fill:
    case NodeKind::Reshape: return {sizes_shape(n)};
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Update:
    case NodeKind::CheckShape:
    case NodeKind::StopGradient: return {in_shape(0)};
    case NodeKind::Binary: return {partial_broadcast(in_shape(0), in_shape(1), n.loc())};
    case NodeKind::Select:
      return {partial_broadcast(partial_broadcast(in_shape(0), in_shape(1), n.loc()), in_shape(2), n.loc())};
    case NodeKind::Call: {
      Shape s;
      for (int i = 0; i < n.num_inputs(); ++i) s = partial_broadcast(s, in_shape(i), n.loc());
      return {s};
    }
    case NodeKind::Reduce:
    case NodeKind::ArgReduce: return {without_reduced_axis(n, in_shape(0))};
    case NodeKind::MatMul: return {matmul_shape(in_shape(0), in_shape(1))};
    case NodeKind::Index: return {index_shape(*n.as<IndexNode>())};
    case NodeKind::Transpose: return {transpose_shape(in_shape(0), n.as<TransposeNode>()->perm())};
    case NodeKind::Gather: return {gather_shape(in_shape(0), in_shape(1))};
    case NodeKind::ScatterAdd: return {in_shape(0)};
    case NodeKind::TopK: return {top_k_shape(in_shape(0), size_of(n.input(1)).value_or(kUnknownSize))};
    case NodeKind::Scan: {
      const auto* scan = n.as<ScanNode>();
      ScanShapes s = scan_shapes(*scan);
      std::vector<Shape> out;
      for (size_t i = 0; i < s.rows.size(); ++i) {
        int64_t window = scan->info().window(int(i));
        Shape full{window > 0 && s.steps != kUnknownSize ? std::min(s.steps, window) : s.steps};
        full.insert(full.end(), s.rows[i].begin(), s.rows[i].end());
        out.push_back(full);
      }
      return out;
    }
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

std::vector<Shape> ShapeEval::rows_from_inputs(const ScanNode& n, std::vector<Shape> input_shapes,
                                               std::vector<std::optional<HostTensor>> input_values) {
  // Re-express the scan over params standing for its inputs, then ask for its shapes.
  ShapeEval outer(std::move(input_shapes), std::move(input_values));
  std::vector<Value> params;
  Builder b;
  for (int i = 0; i < n.num_inputs(); ++i) params.push_back(b.param(n.input(i).type(), i, "in", Loc{}));
  NodeRef over_params = b.rebuild(n, params);
  std::vector<Shape> rows = outer.scan_shapes(*over_params->as<ScanNode>(), /*with_steps=*/false).rows;
  for (const Shape& row : rows)
    SCANGEN_CHECK(std::find(row.begin(), row.end(), kUnknownSize) == row.end(),
                  "the shape of a scan output depends on a value that changes from step to step");
  return rows;
}

// The number of steps `steps` and the sequences allow, with their errors.
int64_t NodeEval::scan_steps(const ScanNode& n) const {
  const ScanInfo& info = n.info();
  int64_t steps = 0;
  if (info.has_steps) {
    steps = scalar_i64(in_[size_t(info.steps_input())]);
    if (steps < 0) fail(n.loc(), RuntimeErrorId::steps_negative, {ErrorArg::number(steps)});
  }
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ScanSequence& seq = info.sequences[s];
    int64_t length = in_[size_t(info.sequence_input(int(s)))].dim(0);
    int64_t allowed = std::max<int64_t>(length - seq.span(), 0);
    if (info.has_steps) {
      if (allowed < steps) {
        fail(n.loc(), RuntimeErrorId::sequence_too_short,
             {ErrorArg::text_of(seq.label), ErrorArg::number(length), ErrorArg::text_of(seq.taps_text()),
              ErrorArg::number(steps), ErrorArg::number(allowed)});
      }
    } else {
      steps = s == 0 ? allowed : std::min(steps, allowed);
    }
  }
  return steps;
}

// The buffers of the outputs' rows, from their step shapes computed before the first step.
std::vector<OutputRows> NodeEval::scan_rows(const ScanNode& n, int64_t steps) const {
  const ScanInfo& info = n.info();
  std::vector<Shape> shapes;
  std::vector<std::optional<HostTensor>> values;
  for (const HostTensor& in : in_) {
    shapes.push_back(in.shape());
    values.push_back(in);
  }
  std::vector<Shape> row_shapes = ShapeEval::rows_from_inputs(n, std::move(shapes), std::move(values));
  std::vector<OutputRows> rows;
  for (int i = 0; i < info.num_outputs(); ++i) {
    try {
      const bool kept = used_outputs.empty() || used_outputs[size_t(i)];
      rows.emplace_back(n.output_types()[size_t(i)].dtype, row_shapes[size_t(i)], info.window(i), steps, info.has_until, kept);
    } catch (const AllocationError& e) {
      fail_allocation(e, "the rows of '" + info.output_name(i) + "'", n.loc());
    }
  }
  return rows;
}

std::vector<HostTensor> NodeEval::visit_Scan(const ScanNode& n) {
  const ScanInfo& info = n.info();
  const Graph& body = n.body();
  const int64_t steps = scan_steps(n);
  std::vector<OutputRows> rows = scan_rows(n, steps);

  // The last max_lag values of each state, oldest first.
  std::vector<std::vector<HostTensor>> history(info.states.size());
  for (size_t s = 0; s < info.states.size(); ++s) {
    const HostTensor& init = in_[size_t(info.init_input(int(s)))];
    int64_t lag = info.states[s].max_lag();
    if (info.states[s].init_has_rows()) {
      for (int64_t r = 0; r < lag; ++r) history[s].push_back(row_of(init, r));
    } else {
      history[s].push_back(init);
    }
  }
  const std::vector<const Node*> order = topological_order(body);
  const OutputUses uses = output_uses(body, order);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<HostTensor> params(body.params.size());
    params[size_t(info.body_index_param())] = HostTensor::scalar<int64_t>(t);
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const ScanSequence& seq = info.sequences[s];
      const HostTensor& u = in_[size_t(info.sequence_input(int(s)))];
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
    for (int p = 0; p < info.num_params; ++p) params[size_t(info.body_param(p))] = in_[size_t(info.param_input(p))];

    GraphEval eval(std::move(params), run_);
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

// ---- signatures


// A value against its declared type: dtype, rank, then each dimension (a constant, or a symbol
// bound before or, when `binding`, bound here).
void check_value(const std::string& name, const std::string& what, const Type& decl, const HostTensor& value,
                 const Loc& loc, SymbolValues& symbols, bool binding) {
  const ErrorArg named = ErrorArg::text_of(what);
  if (value.dtype() != decl.dtype)
    fail(loc, RuntimeErrorId::argument_dtype,
         {named, ErrorArg::text_of(std::string(dtype_name(decl.dtype))), ErrorArg::text_of(std::string(dtype_name(value.dtype())))});
  if (value.rank() != decl.rank())
    fail(loc, RuntimeErrorId::argument_rank,
         {named, ErrorArg::text_of(std::to_string(decl.rank())), ErrorArg::text_of(decl.str()), ErrorArg::number(value.rank())});
  for (int axis = 0; axis < decl.rank(); ++axis) {
    const Dim& d = decl.shape[size_t(axis)];
    const int64_t have = value.dim(axis);
    const ErrorArg at = ErrorArg::text_of(std::to_string(axis));
    if (d.kind() == Dim::Kind::Const) {
      if (have != d.offset())
        fail(loc, RuntimeErrorId::dimension_mismatch, {named, at, ErrorArg::number(have), ErrorArg::number(d.offset())});
    } else if (d.kind() == Dim::Kind::Sym) {
      auto it = symbols.symbols.find(d.symbol_name());
      if (it == symbols.symbols.end()) {
        SCANGEN_CHECK(binding, "result dimension symbol '" + d.symbol_name() + "' is unbound");
        symbols.symbols.emplace(d.symbol_name(),
                                SymbolValues::Bound{have, "dimension " + std::to_string(axis) + " of '" + name + "'"});
        continue;
      }
      if (it->second.value != have)
        fail(loc, RuntimeErrorId::dimension_mismatch_bound,
             {named, at, ErrorArg::number(have), ErrorArg::text_of(d.symbol_name()), ErrorArg::number(it->second.value),
              ErrorArg::text_of(it->second.source)});
    }
  }
}

std::string argument_what(const Function& fn, size_t i) { return "argument '" + fn.args[i].name + "' of '" + fn.name + "'"; }

}  // namespace

void check_argument_types(const Function& fn, const std::vector<HostTensor>& args) {
  if (args.size() != fn.args.size())
    fail(fn.loc, RuntimeErrorId::argument_count,
         {ErrorArg::text_of(fn.name), ErrorArg::text_of(std::to_string(fn.args.size())),
          ErrorArg::text_of(fn.args.size() == 1 ? "" : "s"), ErrorArg::number(int64_t(args.size()))});
  for (size_t i = 0; i < fn.args.size(); ++i) {
    const Type& t = fn.args[i].type;
    if (!args[i].valid()) continue;  // no tensor at all: each backend says so
    const ErrorArg what = ErrorArg::text_of(argument_what(fn, i));
    if (args[i].dtype() != t.dtype)
      fail(fn.args[i].loc, RuntimeErrorId::argument_dtype,
           {what, ErrorArg::text_of(std::string(dtype_name(t.dtype))), ErrorArg::text_of(std::string(dtype_name(args[i].dtype())))});
    if (args[i].rank() != t.rank())
      fail(fn.args[i].loc, RuntimeErrorId::argument_rank,
           {what, ErrorArg::text_of(std::to_string(t.rank())), ErrorArg::text_of(t.str()), ErrorArg::number(args[i].rank())});
  }
}

SymbolValues check_arguments(const Function& fn, const std::vector<HostTensor>& args) {
  check_argument_types(fn, args);
  SymbolValues symbols;
  // A scalar integer parameter binds the symbol of its name.
  for (size_t i = 0; i < fn.args.size(); ++i) {
    const Type& t = fn.args[i].type;
    if (!t.is_scalar() || !is_int(t.dtype)) continue;
    symbols.symbols.emplace(fn.args[i].name, SymbolValues::Bound{args[i].get_as_int64(0), "parameter '" + fn.args[i].name + "'"});
  }
  for (size_t i = 0; i < fn.args.size(); ++i)
    check_value(fn.args[i].name, argument_what(fn, i), fn.args[i].type, args[i], fn.args[i].loc, symbols, true);
  return symbols;
}

void check_results(const Function& fn, const SymbolValues& symbols, const std::vector<HostTensor>& results) {
  SymbolValues s = symbols;
  for (size_t i = 0; i < fn.results.size(); ++i) {
    std::string what = fn.results.size() == 1 ? "the result of '" + fn.name + "'"
                                              : "result '" + fn.result_name(i) + "' of '" + fn.name + "'";
    check_value(fn.result_name(i), what, fn.results[i].type, results.at(i), fn.results[i].loc, s, false);
  }
}

std::vector<HostTensor> Interpreter::run(const Function& fn, const std::vector<HostTensor>& args) {
  return with_large_stack([&] { return run_on_this_thread(fn, args); });
}

std::vector<HostTensor> Interpreter::run_on_this_thread(const Function& fn, const std::vector<HostTensor>& args) {
  SymbolValues symbols = check_arguments(fn, args);
  RunState run;
  GraphEval eval(args, run);
  const std::vector<const Node*> order = topological_order(fn.graph);
  std::vector<HostTensor> results = eval.results(fn.graph, order, output_uses(fn.graph, order));
  check_results(fn, symbols, results);
  return results;
}

}  // namespace scangen::interp
