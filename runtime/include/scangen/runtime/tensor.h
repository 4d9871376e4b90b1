// HostTensor: a dense, C-ordered tensor in host memory. It is the value type of the interpreter,
// of the CLI's arguments and results, and of the JIT's calls into emitted code.
//
// Copies are shallow (the element storage is shared); the interpreter treats tensors as
// immutable values and makes a new one for every result, so sharing is safe. Use clone() for a
// deep copy that may be written.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scangen/runtime/dtype.h"
#include "scangen/runtime/errors.h"

namespace scangen {

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar). Throws std::length_error on overflow.
int64_t shape_numel(const Shape& shape);
// "[2, 3]" (and "[]" for a scalar).
std::string shape_to_string(const Shape& shape);

// The most bytes one tensor may take. Larger requests are refused before anything is allocated,
// by every backend alike (emitted code checks the same limit), so that sizes never overflow.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 62;
// The bytes of a tensor of `shape` (dimensions >= 0), or nullopt when they exceed kMaxTensorBytes
// (the element count may overflow too: it is never computed past the limit).
std::optional<int64_t> tensor_bytes(DType dtype, const Shape& shape);
// "cannot allocate <what> (f32[2, 3], 24 bytes)", or "(f32[...], more than 4611686018427387904
// bytes)" without `bytes`: the message every backend gives for a tensor it cannot allocate.
std::string allocation_failure(const std::string& what, DType dtype, const Shape& shape, std::optional<int64_t> bytes);

// A tensor too large to allocate (a user error: the program asked for it).
class AllocationError : public RuntimeError {
 public:
  AllocationError(DType dtype, Shape shape, std::optional<int64_t> bytes);
  // The same failure said of `what` ("the value"), at a location of the .scan program.
  RuntimeError located(const std::string& what, int line, int column) const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // The bytes asked for, or nullopt when they exceed kMaxTensorBytes.
  const std::optional<int64_t>& bytes() const { return bytes_; }

 private:
  DType dtype_;
  Shape shape_;
  std::optional<int64_t> bytes_;
};

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled tensor. Throws AllocationError when it is larger than kMaxTensorBytes or the
  // memory cannot be had, std::length_error for a negative dimension.
  HostTensor(DType dtype, Shape shape);
  // Takes ownership of `owner` (released with `release(owner)`); `data` points at the first element.
  static HostTensor adopt(DType dtype, Shape shape, void* data, void* owner, void (*release)(void*));

  // A tensor over memory the caller keeps alive (nothing frees it; nothing writes to it). Throws
  // RuntimeError when `data` is null (with elements) or not aligned for the dtype.
  static HostTensor view(DType dtype, Shape shape, const void* data);

  template <class T> static HostTensor scalar(T value) {
    HostTensor t(dtype_of<T>(), {});
    *t.data<T>() = value;
    return t;
  }
  template <class T> static HostTensor from_vector(const std::vector<T>& values, Shape shape);

  bool valid() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_.at(static_cast<size_t>(axis)); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <class T> T* data() { return static_cast<T*>(data_); }
  template <class T> const T* data() const { return static_cast<const T*>(data_); }

  // Element i (flat, C order) converted to double / int64 (bool gives 0 or 1).
  double get_as_double(int64_t i) const;
  int64_t get_as_int64(int64_t i) const;

  // A deep copy with its own storage.
  HostTensor clone() const;
  // Same elements, another shape with the same number of elements (shares storage).
  HostTensor reshaped(Shape shape) const;

 private:
  struct Storage;
  std::shared_ptr<Storage> storage_;
  void* data_ = nullptr;
  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numel_ = 0;
};

template <class T> HostTensor HostTensor::from_vector(const std::vector<T>& values, Shape shape) {
  HostTensor t(dtype_of<T>(), std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::length_error("HostTensor::from_vector: element count does not match the shape");
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

// Exact equality of dtype, shape and elements (NaN equals NaN with the same bits).
bool identical(const HostTensor& a, const HostTensor& b);

}  // namespace scangen
