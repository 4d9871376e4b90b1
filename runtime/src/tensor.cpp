#include "scangen/runtime/tensor.h"

#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace scangen {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::length_error("negative dimension in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw std::length_error("shape " + shape_to_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
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

HostTensor::HostTensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)) {
  size_t bytes = static_cast<size_t>(numel_) * dtype_size(dtype_);
  if (numel_ != 0 && bytes / dtype_size(dtype_) != static_cast<size_t>(numel_))
    throw std::length_error("tensor of shape " + shape_to_string(shape_) + " is too large");
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  storage_ = std::make_shared<Storage>();
  storage_->owner = p;
  storage_->release = free_aligned;
  data_ = p;
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
