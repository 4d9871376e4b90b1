#include "interpreter/selection.h"

#include <cstring>

#include "interpreter/failures.h"
#include "ir/shape_rules.h"
#include "scangen_scalar.h"

namespace scangen::interp {

using ir::ReduceOp;

namespace sc = scangen::scalar_v1;

namespace {

int64_t row_size(const HostTensor& x) {
  int64_t r = 1;
  for (int d = 1; d < x.rank(); ++d) r *= x.dim(d);
  return r;
}

}  // namespace

int64_t checked_index(int64_t given, int64_t n, size_t dim, const Loc& loc) {
  int64_t i = given < 0 ? given + n : given;
  if (i < 0 || i >= n)
    fail(loc, RuntimeErrorId::index_out_of_range,
         {ErrorArg::number(given), ErrorArg::text_of(std::to_string(dim)), ErrorArg::number(n)});
  return i;
}

HostTensor transpose(const HostTensor& x, const std::vector<int>& perm) {
  size_t rank = perm.size();
  const Shape shape = ir::transpose_shape(x.shape(), perm);
  std::vector<int64_t> in_strides(rank);
  int64_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = s;
    s *= x.dim(int(d));
  }
  const std::vector<int64_t> strides = ir::transpose_shape(in_strides, perm);
  HostTensor out(x.dtype(), shape);
  size_t elem = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> counter(rank, 0);
  int64_t offset = 0;
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    std::memcpy(dst + size_t(flat) * elem, src + size_t(offset) * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      offset += strides[d];
      if (++counter[d] < shape[d]) break;
      offset -= strides[d] * counter[d];
      counter[d] = 0;
    }
  }
  return out;
}

HostTensor gather(const HostTensor& x, const HostTensor& idx, const Loc& loc) {
  HostTensor out(x.dtype(), ir::gather_shape(x.shape(), idx.shape()));
  size_t row_bytes = size_t(row_size(x)) * dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t j = 0; j < idx.numel(); ++j) {
    int64_t row = checked_index(idx.get_as_int64(j), x.dim(0), 0, loc);
    if (row_bytes) std::memcpy(dst + size_t(j) * row_bytes, src + size_t(row) * row_bytes, row_bytes);
  }
  return out;
}

HostTensor scatter_add(const HostTensor& x, const HostTensor& idx, const HostTensor& v, const Loc& loc) {
  HostTensor out = x.clone();
  int64_t row = row_size(x);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T* o = out.data<T>();
      const T* pv = v.data<T>();
      for (int64_t j = 0; j < idx.numel(); ++j) {
        int64_t r = checked_index(idx.get_as_int64(j), x.dim(0), 0, loc);
        for (int64_t e = 0; e < row; ++e) o[r * row + e] = sc::add(o[r * row + e], pv[j * row + e]);
      }
    }
  });
  return out;
}

HostTensor arg_reduce(ReduceOp op, const HostTensor& x, std::optional<int> axis, const Loc& loc) {
  // View x as [outer, length, inner]; each output element walks its inputs in increasing k.
  int64_t outer = 1, length = x.numel(), inner = 1;
  if (axis) {
    for (int d = 0; d < *axis; ++d) outer *= x.dim(d);
    for (int d = *axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    length = x.dim(*axis);
  }
  if (length == 0 && outer * inner > 0)
    fail(loc, axis ? RuntimeErrorId::reduce_empty_axis : RuntimeErrorId::reduce_empty,
         {ErrorArg::text_of(op == ReduceOp::Max ? "argmax" : "argmin")});
  HostTensor out(DType::I64, ir::without_axis(x.shape(), axis));
  int64_t* o = out.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* a = x.data<T>();
      for (int64_t i = 0; i < outer; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          const T* p = a + i * length * inner + j;
          T best = p[0];
          int64_t at = 0;
          for (int64_t k = 1; k < length; ++k) {
            bool take = op == ReduceOp::Max ? sc::ranks_above(p[k * inner], best) : sc::ranks_below(p[k * inner], best);
            if (take) {
              best = p[k * inner];
              at = k;
            }
          }
          o[i * inner + j] = at;
        }
    }
  });
  return out;
}

HostTensor top_k(const HostTensor& x, int64_t k, const Loc& loc) {
  int64_t n = x.dim(x.rank() - 1);
  if (k < 0 || k > n) fail(loc, RuntimeErrorId::top_k_out_of_range, {ErrorArg::number(k), ErrorArg::number(n)});
  HostTensor out(DType::I64, ir::top_k_shape(x.shape(), k));
  int64_t rows = n ? x.numel() / n : 0;  // with n = 0, k is 0 too
  int64_t* o = out.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      std::vector<T> kept(static_cast<size_t>(k));
      for (int64_t r = 0; r < rows && k > 0; ++r) {
        const T* row = x.data<T>() + r * n;
        int64_t* at = o + r * k;
        // A sorted list of the best so far; a later equal element never displaces an earlier one.
        for (int64_t j = 0; j < n; ++j) {
          int64_t count = std::min(j, k);
          if (count == k && !sc::ranks_above(row[j], kept[size_t(k - 1)])) continue;
          int64_t p = 0;
          while (p < count && !sc::ranks_above(row[j], kept[size_t(p)])) ++p;
          for (int64_t q = std::min(count, k - 1); q > p; --q) {
            kept[size_t(q)] = kept[size_t(q - 1)];
            at[q] = at[q - 1];
          }
          kept[size_t(p)] = row[j];
          at[p] = j;
        }
      }
    }
  });
  return out;
}

void check_reshape(const HostTensor& x, const Shape& shape, const Loc& loc) {
  bool ok = true;
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) ok = false;
  }
  if (!ok || count != x.numel())
    fail(loc, RuntimeErrorId::reshape_count, {ErrorArg::number(x.numel()), ErrorArg::shape(shape)});
}

}  // namespace scangen::interp
