// Public types of the C++ API that scangen emits for the CPU: every generated header starts with
// this text. Several generated headers may be included in one program: the guard keeps one copy.
#ifndef SCANGEN_CPU_API_V1_H
#define SCANGEN_CPU_API_V1_H

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scangen {

// A run-time error of a .scan program (a bad argument shape, an index out of range, ...), with the
// location in the .scan file it comes from (0 when none). The CUDA API header defines the same
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

// A view of caller-owned, dense, C-ordered elements: an argument of a generated function.
template <class T> class TensorRef {
 public:
  static constexpr int kMaxRank = 8;
  TensorRef(T* data, std::initializer_list<int64_t> shape) : data_(data), rank_(0) {
    if (shape.size() > size_t(kMaxRank)) throw Error("a tensor may have at most 8 dimensions", 0, 0);
    for (int64_t d : shape) shape_[rank_++] = d;
  }
  TensorRef(T* data, const int64_t* shape, int rank) : data_(data), rank_(rank) {
    if (rank < 0 || rank > kMaxRank) throw Error("a tensor may have at most 8 dimensions", 0, 0);
    for (int i = 0; i < rank; ++i) shape_[i] = shape[i];
  }
  T* data() const { return data_; }
  int rank() const { return rank_; }
  int64_t dim(int i) const { return shape_[i]; }

 private:
  T* data_;
  int64_t shape_[kMaxRank] = {};
  int rank_;
};

// Dense, C-ordered elements owned by the tensor (allocated with std::malloc): a result of a
// generated function.
template <class T> class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& o) noexcept : owner_(o.owner_), data_(o.data_), shape_(std::move(o.shape_)) {
    o.owner_ = nullptr;
    o.data_ = nullptr;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      std::free(owner_);
      owner_ = o.owner_;
      data_ = o.data_;
      shape_ = std::move(o.shape_);
      o.owner_ = nullptr;
      o.data_ = nullptr;
    }
    return *this;
  }
  ~Tensor() { std::free(owner_); }

  // Takes ownership of `owner` (freed with std::free); `data` points at the first element in it.
  static Tensor adopt(void* owner, T* data, std::vector<int64_t> shape) {
    Tensor t;
    t.owner_ = owner;
    t.data_ = data;
    t.shape_ = std::move(shape);
    return t;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return int(shape_.size()); }
  int64_t dim(int i) const { return shape_[size_t(i)]; }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
  }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  // Gives up ownership: the caller frees the returned pointer with std::free.
  void* release() {
    void* o = owner_;
    owner_ = nullptr;
    return o;
  }

 private:
  void* owner_ = nullptr;
  T* data_ = nullptr;
  std::vector<int64_t> shape_;
};

}  // namespace scangen

#endif  // SCANGEN_CPU_API_V1_H
