// Rows of f32 batches for the tests of variable-length batches (tests/unit/lengths_test.cpp,
// tests/equivalence/lengths_programs_test.cpp): random data, one row of a batch as a batch of
// one, and rows of results compared bit for bit.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "scangen/runtime/tensor.h"

namespace scangen::testing {

inline HostTensor random_f32(std::mt19937& rng, Shape shape, float scale = 1) {
  HostTensor t(DType::F32, std::move(shape));
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Row b of a batch: of t [R, B, ...] (batch_axis 1) rows [0, rows) as [rows, 1, ...]; of
// t [B, ...] (batch_axis 0) row b as [1, ...].
inline HostTensor row_of(const HostTensor& t, int batch_axis, int64_t b, int64_t rows) {
  Shape shape = t.shape();
  shape[size_t(batch_axis)] = 1;
  if (batch_axis == 1) shape[0] = rows;
  else rows = 1;
  int64_t inner = 1;
  for (int d = batch_axis + 1; d < t.rank(); ++d) inner *= t.dim(d);
  HostTensor out(t.dtype(), shape);
  for (int64_t i = 0; i < rows; ++i) {
    int64_t from = batch_axis == 1 ? (i * t.dim(1) + b) * inner : b * inner;
    std::memcpy(out.data<float>() + i * inner, t.data<float>() + from, size_t(inner) * sizeof(float));
  }
  return out;
}

// Row b of step t of a [steps, B, H] result.
inline std::vector<float> at(const HostTensor& r, int64_t t, int64_t b) {
  const float* p = r.data<float>() + (t * r.dim(1) + b) * r.dim(2);
  return {p, p + r.dim(2)};
}

// Row b of a [B, H] value.
inline std::vector<float> row(const HostTensor& r, int64_t b) {
  const float* p = r.data<float>() + b * r.dim(r.rank() - 1);
  return {p, p + r.dim(r.rank() - 1)};
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace scangen::testing
