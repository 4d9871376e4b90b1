// Public types of the C++ API that scangen emits for CUDA (`scangen compile --backend cuda`): every
// generated .cuh starts with this text. Functions take device pointers and a stream, and return
// results in device memory. Several generated headers may be included in one program.
#ifndef SCANGEN_CUDA_API_V1_H
#define SCANGEN_CUDA_API_V1_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
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

namespace detail {

// Device memory that calls of generated functions gave back (the launch record, and the arena of
// results that are gone), kept for the next calls: cudaMalloc and cudaFree of the gigabytes that a
// long scan's results take cost milliseconds, as much as the scan itself, and code written by hand
// would allocate once. One cache serves every generated .cu linked into a program. A block that
// results gave back is handed out again only after the device has finished all its work
// (cudaDeviceSynchronize), as cudaFree waits for it: work on any stream still reading the old
// results is done before the memory is written again. At most kMaxKept blocks are kept, for their
// own device, and a block is never used for less than half its size. After cudaDeviceReset the
// kept addresses are stale: call release_cached_memory() before it.
class DeviceMemoryCacheV1 {
 public:
  static constexpr size_t kMaxKept = 8;

  // Never destroyed: results may be let go after static destructors have run.
  static DeviceMemoryCacheV1& instance() {
    static DeviceMemoryCacheV1* cache = new DeviceMemoryCacheV1();
    return *cache;
  }

  DeviceMemoryCacheV1() { kept_.reserve(kMaxKept + 1); }  // give_back never allocates

  // At least `bytes` of memory of the current device in *p: a kept block, or a new one (when
  // cudaMalloc finds no room, the kept blocks of the device are freed and it is asked again).
  // On failure, `*failed_call` names the CUDA call.
  cudaError_t take(void** p, size_t bytes, const char** failed_call = nullptr) {
    const char* ignored = nullptr;
    const char*& call = failed_call ? *failed_call : ignored;
    call = "cudaGetDevice";
    int device = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status != cudaSuccess) return status;
    if (bytes == 0) bytes = 1;
    bool settle = false;
    if (take_kept(p, bytes, device, settle)) {
      call = "cudaDeviceSynchronize (before reusing device memory that results gave back)";
      status = settle ? cudaDeviceSynchronize() : cudaSuccess;
      if (status != cudaSuccess) give_back(*p, settle);
      return status;
    }
    call = "cudaMalloc";
    status = cudaMalloc(p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release(device);
      status = cudaMalloc(p, bytes);
    }
    if (status != cudaSuccess) return status;
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      live_[*p] = Block{device, *p, bytes, false};
    } catch (...) {  // no host memory for the entry
      (void)cudaFree(*p);
      return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
  }

  // Keeps a block take() gave. `device_may_read`: work on the device may still read it (results'
  // memory: the next user waits for the device first); false when the giver knows its own work
  // on it is done (a call's launch record). The oldest kept block beyond kMaxKept is freed.
  // Anything else is ignored. Never throws: it runs in destructors.
  void give_back(void* p, bool device_may_read = true) noexcept {
    void* freed = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(p);
      if (it == live_.end()) return;
      Block block = it->second;
      block.settle = device_may_read;
      live_.erase(it);
      kept_.push_back(block);  // within the capacity reserved
      if (kept_.size() > kMaxKept) {
        freed = kept_.front().address;
        kept_.erase(kept_.begin());
      }
    }
    if (freed) (void)cudaFree(freed);
  }

  // Frees the kept blocks of `device`, or of every device when it is -1.
  void release(int device = -1) {
    std::vector<void*> freed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = kept_.size(); i-- > 0;)
        if (device < 0 || kept_[i].device == device) {
          freed.push_back(kept_[i].address);
          kept_.erase(kept_.begin() + std::ptrdiff_t(i));
        }
    }
    for (void* p : freed) (void)cudaFree(p);
  }

  size_t kept_blocks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size();
  }

 private:
  struct Block {
    int device = 0;
    void* address = nullptr;
    size_t bytes = 0;
    bool settle = false;  // wait for the device before reuse
  };

  // The smallest kept block of `device` that holds `bytes` and is at most twice that.
  bool take_kept(void** p, size_t bytes, int device, bool& settle) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t best = kept_.size();
    for (size_t i = 0; i < kept_.size(); ++i) {
      const Block& b = kept_[i];
      if (b.device == device && b.bytes >= bytes && b.bytes / 2 <= bytes &&
          (best == kept_.size() || b.bytes < kept_[best].bytes))
        best = i;
    }
    if (best == kept_.size()) return false;
    *p = kept_[best].address;
    settle = kept_[best].settle;
    live_[*p] = kept_[best];
    kept_.erase(kept_.begin() + std::ptrdiff_t(best));
    return true;
  }

  mutable std::mutex mutex_;
  std::vector<Block> kept_;       // oldest first
  std::map<void*, Block> live_;  // handed out by take()
};

}  // namespace detail

// Frees the device memory that generated functions keep for their next calls (the arenas of
// results that are gone), on every device. Results still alive are not affected.
inline void release_cached_memory() { detail::DeviceMemoryCacheV1::instance().release(); }

}  // namespace cuda
}  // namespace scangen

#endif  // SCANGEN_CUDA_API_V1_H
