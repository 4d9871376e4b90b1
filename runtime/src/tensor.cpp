#include "scangen/runtime/tensor.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace scangen {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d == 0) n = 0;  // no elements, however large the other dimensions
  for (int64_t d : shape) {
    if (d < 0) throw std::length_error("negative dimension in shape " + shape_to_string(shape));
    if (n == 0) continue;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw std::length_error("shape " + shape_to_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::optional<int64_t> tensor_bytes(DType dtype, const Shape& shape) {
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) throw std::length_error("negative dimension in shape " + shape_to_string(shape));
    empty = empty || d == 0;
  }
  if (empty) return 0;  // however large the other dimensions
  const int64_t element = int64_t(dtype_size(dtype));
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (elements > kMaxTensorBytes / element / d) return std::nullopt;
    elements *= d;
  }
  return elements * element;
}

std::string allocation_failure(const std::string& what, DType dtype, const Shape& shape, std::optional<int64_t> bytes) {
  std::string size = bytes ? std::to_string(*bytes) + " bytes" : "more than " + std::to_string(kMaxTensorBytes) + " bytes";
  return "cannot allocate " + what + " (" + std::string(dtype_name(dtype)) + shape_to_string(shape) + ", " + size + ")";
}

AllocationError::AllocationError(DType dtype, Shape shape, std::optional<int64_t> bytes)
    : RuntimeError(allocation_failure("a tensor", dtype, shape, bytes)), dtype_(dtype), shape_(std::move(shape)), bytes_(bytes) {}

RuntimeError AllocationError::located(const std::string& what, int line, int column) const {
  return RuntimeError(allocation_failure(what, dtype_, shape_, bytes_), line, column);
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

struct HostTensor::Storage {
  void* owner = nullptr;
  void (*release)(void*) = nullptr;
  ~Storage() {
    if (owner && release) release(owner);
  }
};

namespace {
// Every buffer is 64-byte aligned so that emitted code may assume vector alignment.
constexpr size_t kAlignment = 64;
void free_aligned(void* p) { std::free(p); }
}  // namespace

HostTensor::HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  const std::optional<int64_t> bytes = tensor_bytes(dtype_, shape_);
  if (!bytes) throw AllocationError(dtype_, shape_, bytes);
  numel_ = *bytes / int64_t(dtype_size(dtype_));
  // kMaxTensorBytes leaves room for the rounding.
  size_t rounded = (size_t(*bytes) + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) throw AllocationError(dtype_, shape_, bytes);
  std::memset(p, 0, rounded);
  storage_ = std::make_shared<Storage>();
  storage_->owner = p;
  storage_->release = free_aligned;
  data_ = p;
}

HostTensor HostTensor::view(DType dtype, Shape shape, const void* data) {
  for (int64_t d : shape)
    if (d < 0) throw RuntimeError("a view of shape " + shape_to_string(shape) + ": a dimension is negative");
  const std::optional<int64_t> bytes = tensor_bytes(dtype, shape);
  if (!bytes) throw AllocationError(dtype, shape, bytes);
  if (!data && *bytes > 0)
    throw RuntimeError("a view of " + std::string(dtype_name(dtype)) + shape_to_string(shape) + " over a null pointer");
  if (reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) != 0)
    throw RuntimeError("a view of " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
                       " over memory not aligned for " + std::string(dtype_name(dtype)));
  // An empty tensor still needs an address: emitted code never reads it.
  static const int64_t empty_element = 0;
  const void* start = data ? data : &empty_element;
  return adopt(dtype, std::move(shape), const_cast<void*>(start), nullptr, nullptr);
}

HostTensor HostTensor::adopt(DType dtype, Shape shape, void* data, void* owner,
                             void (*release)(void*)) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  t.storage_ = std::make_shared<Storage>();
  t.storage_->owner = owner;
  t.storage_->release = release;
  t.data_ = data;
  return t;
}

double HostTensor::get_as_double(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(data<T>()[i]);
  });
}

int64_t HostTensor::get_as_int64(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(data<T>()[i]);
  });
}

HostTensor HostTensor::clone() const {
  HostTensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

HostTensor HostTensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel_)
    throw std::length_error("cannot reshape " + shape_to_string(shape_) + " to " +
                            shape_to_string(shape));
  HostTensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

bool identical(const HostTensor& a, const HostTensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

}  // namespace scangen
