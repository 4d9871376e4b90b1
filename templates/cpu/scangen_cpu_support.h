// Helpers of emitted CPU code: failures with a location, buffers that keep their capacity and
// copies. Every generated source embeds this text (after scangen_cpu_api.h and scangen_scalar.h),
// followed by the matrix product, scangen_cpu_matmul.h.
#ifndef SCANGEN_CPU_SUPPORT_V1_H
#define SCANGEN_CPU_SUPPORT_V1_H

#include <cstring>
#include <new>

// Tells the compiler an innermost element loop carries no dependence, so it vectorizes.
#if defined(__clang__)
#define SCANGEN_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define SCANGEN_IVDEP _Pragma("GCC ivdep")
#else
#define SCANGEN_IVDEP
#endif

namespace scangen_rt_v1 {

inline void append_part(std::string& s, const char* text) { s += text; }
inline void append_part(std::string& s, int64_t v) { s += std::to_string(v); }

// Raises the run-time error of the .scan program at line:column.
template <class... Parts>
[[noreturn]] __attribute__((noinline, cold)) void fail(int line, int column, const Parts&... parts) {
  std::string message;
  (append_part(message, parts), ...);
  throw scangen::Error(message, line, column);
}

// A buffer that keeps its capacity: ensure() allocates only when asked for more than it has, so a
// buffer reused by every step of a loop is allocated once.
template <class T> class Storage {
 public:
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() { std::free(data_); }

  // Room for `count` elements, or null when there is no memory. Callers check first that the
  // bytes are within the limit of every backend (kMaxTensorBytes, 2^62), so they never overflow.
  T* ensure(int64_t count) {
    if (count > capacity_) {
      std::free(data_);
      data_ = nullptr;
      capacity_ = 0;
      size_t bytes = (size_t(count) * sizeof(T) + 63) / 64 * 64;
      data_ = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (!data_) return nullptr;
      capacity_ = count;
    }
    return data_ ? data_ : reinterpret_cast<T*>(&empty_);
  }
  // Room for `count` elements keeping the first `keep`: the result buffers of a scan that stops on
  // `until` grow this way (by doubling, so a few times in all) instead of holding the largest
  // number of steps up front. Null when there is no memory (the buffer is then left as it was).
  T* grow(int64_t count, int64_t keep) {
    if (count <= capacity_) return data_;
    size_t bytes = (size_t(count) * sizeof(T) + 63) / 64 * 64;
    T* bigger = static_cast<T*>(std::aligned_alloc(64, bytes));
    if (!bigger) return nullptr;
    if (keep > 0) std::memcpy(static_cast<void*>(bigger), data_, size_t(keep) * sizeof(T));
    std::free(data_);
    data_ = bigger;
    capacity_ = count;
    return data_;
  }
  // The caller's memory `p`, with room for `capacity` elements, as this buffer's `count` elements:
  // a result computed where the caller asked (the typed API's form with trailing result tensors).
  // The storage neither owns nor frees it. Null when the caller's room is too small, which the
  // checks of the caller's shapes rule out before.
  T* lend(T* p, int64_t capacity, int64_t count) const {
    if (count > capacity) return nullptr;
    return p ? p : reinterpret_cast<T*>(&empty_);
  }
  // Hands the buffer over (the receiver frees it with std::free).
  void* release() {
    void* p = data_ ? data_ : std::malloc(64);
    if (!p) throw std::bad_alloc();
    data_ = nullptr;
    capacity_ = 0;
    return p;
  }

 private:
  T* data_ = nullptr;
  int64_t capacity_ = 0;
  alignas(64) static inline char empty_[64] = {};
};

template <class T> inline void copy(T* dst, const T* src, int64_t count) {
  if (count > 0) std::memcpy(static_cast<void*>(dst), src, size_t(count) * sizeof(T));
}

// The bytes a caller's tensor spans (0 when a dimension is 0 or negative, saturated at 2^62:
// its shape is checked later, with the other shapes).
template <class T> inline int64_t span_bytes(const scangen::TensorRef<T>& t) {
  int64_t bytes = int64_t(sizeof(T));
  for (int i = 0; i < t.rank(); ++i) {
    if (t.dim(i) <= 0) return 0;
    bytes = t.dim(i) > (int64_t(1) << 62) / bytes ? int64_t(1) << 62 : bytes * t.dim(i);
  }
  return bytes;
}

// A result written into the caller's memory must not overlap an argument (which would be read
// after it was overwritten) or another result.
template <class T, class U>
inline void check_disjoint(const char* what, const scangen::TensorRef<T>& out, const char* other,
                           const scangen::TensorRef<U>& t, int line, int column) {
  const auto a = reinterpret_cast<uintptr_t>(out.data()), b = reinterpret_cast<uintptr_t>(t.data());
  const int64_t a_bytes = span_bytes(out), b_bytes = span_bytes(t);
  if (a_bytes > 0 && b_bytes > 0 && a < b + uint64_t(b_bytes) && b < a + uint64_t(a_bytes))
    fail(line, column, what, " overlaps ", other, ": a result must be written to memory of its own");
}

}  // namespace scangen_rt_v1

#endif  // SCANGEN_CPU_SUPPORT_V1_H
