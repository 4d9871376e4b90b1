// The result-shape rules of the node kinds that rearrange dimensions, written once for every
// kind of dimension D: a static ir::Dim (the builder), a size in int64_t (the interpreter), a
// loop-IR expression (the lowering). What differs by domain, a slice's length, comes from a
// small policy (index_shape's slice_length); Python's clamping on numbers is python_slice.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/ir.h"

namespace scangen::ir {

// transpose(x, perm): dimension i is x's dimension perm[i].
template <class D> std::vector<D> transpose_shape(const std::vector<D>& x, const std::vector<int>& perm) {
  std::vector<D> out;
  for (int p : perm) out.push_back(x.at(size_t(p)));
  return out;
}

// Rows of x picked by idx: idx's shape, then a row of x.
template <class D> std::vector<D> gather_shape(const std::vector<D>& x, std::vector<D> idx) {
  idx.insert(idx.end(), x.begin() + 1, x.end());
  return idx;
}

// The positions of the k largest along the last axis: x's shape with k last.
template <class D> std::vector<D> top_k_shape(std::vector<D> x, D k) {
  x.back() = std::move(k);
  return x;
}

// a @ b of ranks 1 or 2: a's rows, then b's columns (a vector contributes none).
template <class D> std::vector<D> matmul_shape(const std::vector<D>& a, const std::vector<D>& b) {
  std::vector<D> out;
  if (a.size() == 2) out.push_back(a[0]);
  if (b.size() == 2) out.push_back(b[1]);
  return out;
}

// A reduction's result: x without the axis, or a scalar when it reduces every element.
template <class D> std::vector<D> without_axis(std::vector<D> x, const std::optional<int>& axis) {
  if (!axis) return {};
  x.erase(x.begin() + *axis);
  return x;
}
// The same for a Reduce or ArgReduce node.
template <class D> std::vector<D> without_reduced_axis(const Node& n, std::vector<D> x) {
  return without_axis(std::move(x), reduced_axis(n));
}

// x[specs]: a scalar index drops its dimension, a whole slice (a:) keeps it, and a slice with a
// bound has the length slice_length(size, lo, hi) gives, lo and hi being the positions of its
// bounds among the index operands (-1 for a bound it lacks). Dimensions past the specs are kept.
template <class D, class SliceLength>
std::vector<D> index_shape(const std::vector<D>& x, const std::vector<IndexSpec>& specs, SliceLength&& slice_length) {
  std::vector<D> out;
  int op = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    if (d >= specs.size()) {
      out.push_back(x[d]);
      continue;
    }
    const IndexSpec& s = specs[d];
    if (s.kind == IndexSpec::Kind::Scalar) {
      ++op;
      continue;
    }
    if (!s.has_lo && !s.has_hi) {
      out.push_back(x[d]);
      continue;
    }
    const int lo = s.has_lo ? op++ : -1;
    const int hi = s.has_hi ? op++ : -1;
    out.push_back(slice_length(x[d], lo, hi));
  }
  return out;
}

// Python's slice [lo:hi] of a dimension of size n (a bound < 0 counts from the end; both are
// clamped to [0, n]): its first position and its length.
struct SliceBounds {
  int64_t start = 0;
  int64_t length = 0;
};
inline SliceBounds python_slice(int64_t n, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  auto clamp = [n](int64_t v) { return std::min(v < 0 ? std::max<int64_t>(v + n, 0) : v, n); };
  const int64_t start = lo ? clamp(*lo) : 0;
  const int64_t stop = hi ? clamp(*hi) : n;
  return {start, std::max<int64_t>(stop - start, 0)};
}

}  // namespace scangen::ir
