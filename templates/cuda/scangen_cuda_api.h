// Public types of the C++ API that scangen emits for CUDA (`scangen compile --target cuda`): every
// generated .cuh starts with this text. Functions take device pointers and a stream, and return
// results in device memory. Several generated headers may be included in one program.
#ifndef SCANGEN_CUDA_API_V1_H
#define SCANGEN_CUDA_API_V1_H

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scangen {

// A run-time error of a .scan program (a bad argument shape, an index out of range, ...), with the
// location in the .scan file it comes from (0 when none). The CPU API header defines the same
// class under the same guard, so both headers may be included together.
#ifndef SCANGEN_ERROR_V1_DEFINED
#define SCANGEN_ERROR_V1_DEFINED
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, int line, int column)
      : std::runtime_error(message), line_(line), column_(column) {}
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }

 private:
  int line_;
  int column_;
};
#endif

namespace cuda {

// A CUDA call that failed (no device, out of device memory, a fault): the call and CUDA's words.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A view of caller-owned, dense, C-ordered elements in device memory: an argument.
template <class T> class DeviceTensorRef {
 public:
  static constexpr int kMaxRank = 8;
  DeviceTensorRef(T* data, std::initializer_list<int64_t> shape) : data_(data), rank_(0) {
    if (shape.size() > size_t(kMaxRank)) throw Error("a tensor may have at most 8 dimensions", 0, 0);
    for (int64_t d : shape) shape_[rank_++] = d;
  }
  T* data() const { return data_; }
  int rank() const { return rank_; }
  int64_t dim(int i) const { return shape_[i]; }

 private:
  T* data_;
  int64_t shape_[kMaxRank] = {};
  int rank_;
};

// Dense, C-ordered elements in device memory: a result. The results of one call share one
// allocation, freed when the last of them goes.
template <class T> class DeviceTensor {
 public:
  DeviceTensor() = default;
  DeviceTensor(std::shared_ptr<void> owner, T* data, std::vector<int64_t> shape)
      : owner_(std::move(owner)), data_(data), shape_(std::move(shape)) {}
  T* data() const { return data_; }
  int rank() const { return int(shape_.size()); }
  int64_t dim(int i) const { return shape_.at(size_t(i)); }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const {  // the number of elements, as scangen::Tensor::size()
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
  }

 private:
  std::shared_ptr<void> owner_;
  T* data_ = nullptr;
  std::vector<int64_t> shape_;
};

}  // namespace cuda
}  // namespace scangen

#endif  // SCANGEN_CUDA_API_V1_H
