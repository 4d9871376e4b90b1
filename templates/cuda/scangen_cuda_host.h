// Host glue of an offline .cu (`scangen compile --backend cuda`): the Ops of scangen_cuda_launch.h
// over the CUDA runtime API, on the caller's stream. Embedded after scangen_cuda_api.h,
// scangen_cuda_abi.h and scangen_cuda_launch.h; built by nvcc with the kernels.
#ifndef SCANGEN_CUDA_HOST_V1_H
#define SCANGEN_CUDA_HOST_V1_H

namespace scangen_cuda_host_v1 {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw scangen::cuda::CudaError(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                                   cudaGetErrorString(status));
}

class RuntimeOps {
 public:
  RuntimeOps(const void* kernel, cudaStream_t stream) : kernel_(kernel), stream_(stream) {}

  // Device memory through the cache of scangen_cuda_api.h: calls after the first allocate nothing.
  unsigned long long allocate(size_t bytes) {
    void* p = nullptr;
    const char* call = "";
    cudaError_t status = memory().take(&p, bytes, &call);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw scangen::Error("out of device memory (" + std::to_string(bytes) + " bytes)", 0, 0);
    }
    check(status, call);
    return reinterpret_cast<unsigned long long>(p);
  }
  // The launch record and a too small arena: this call's own work on them is done (launch()
  // synchronized the stream), so the next user need not wait for the device.
  void release(unsigned long long address) { memory().give_back(reinterpret_cast<void*>(address), false); }
  static scangen::cuda::detail::DeviceMemoryCacheV1& memory() {
    return scangen::cuda::detail::DeviceMemoryCacheV1::instance();
  }
  void upload(unsigned long long to, const void* from, size_t bytes) {
    check(cudaMemcpyAsync(reinterpret_cast<void*>(to), from, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
  }
  void download(void* to, unsigned long long from, size_t bytes) {
    check(cudaMemcpyAsync(to, reinterpret_cast<const void*>(from), bytes, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  unsigned max_blocks(unsigned block) {
    int device = 0, sms = 0, cooperative = 0, per_sm = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), "cudaDeviceGetAttribute");
    if (!cooperative) return 1;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, int(block), 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return unsigned(sms * per_sm);
  }
  void launch(const scangen_cuda_launch_v1::LaunchShape& shape, unsigned long long record,
              unsigned long long tensors) {
    void* launch_record = reinterpret_cast<void*>(record);
    void* tensor_records = reinterpret_cast<void*>(tensors);
    void* params[] = {&launch_record, &tensor_records};
    if (shape.cooperative)
      check(cudaLaunchCooperativeKernel(kernel_, dim3(shape.grid), dim3(shape.block), params, shape.shared_bytes, stream_),
            "cudaLaunchCooperativeKernel");
    else
      check(cudaLaunchKernel(kernel_, dim3(shape.grid), dim3(shape.block), params, shape.shared_bytes, stream_),
            "cudaLaunchKernel");
    check(cudaStreamSynchronize(stream_), "the scangen kernel");
  }

 private:
  const void* kernel_;
  cudaStream_t stream_;
};

template <class T>
scangen_cuda_tensor tensor_arg(const scangen::cuda::DeviceTensorRef<const T>& t, int dtype) {
  scangen_cuda_tensor a{};
  a.data = reinterpret_cast<unsigned long long>(t.data());
  a.rank = t.rank();
  a.dtype = dtype;
  for (int d = 0; d < t.rank(); ++d) a.shape[d] = t.dim(d);
  return a;
}
template <class T> scangen_cuda_tensor scalar_arg(T value, int dtype) {
  scangen_cuda_tensor a{};
  std::memcpy(&a.scalar, &value, sizeof(T));
  a.dtype = dtype;
  return a;
}
inline long long dims_product(std::initializer_list<long long> dims) {
  long long n = 1;
  for (long long d : dims) n = d > 0 && n > (1ll << 62) / d ? (1ll << 62) : n * d;
  return n;
}

// Runs `kernel`; throws scangen::Error for an error of the .scan program. The results own the
// arena together. With `outs` (out_record()), the tensor results are written there.
inline std::pair<std::shared_ptr<void>, std::vector<scangen_cuda_tensor>> run(
    const void* kernel, cudaStream_t stream, const std::vector<scangen_cuda_tensor>& args, int num_results,
    long long width, unsigned long long& arena_hint, const std::vector<scangen_cuda_tensor>* outs = nullptr) {
  RuntimeOps ops(kernel, stream);
  scangen_cuda_launch_v1::Outcome out =
      scangen_cuda_launch_v1::run(ops, args, num_results, width, arena_hint, SCANGEN_CUDA_BLOCK_THREADS, outs);
  if (!out.ok) throw scangen::Error(out.message, out.line, out.column);
  std::shared_ptr<void> arena(reinterpret_cast<void*>(out.arena), [](void* p) { RuntimeOps::memory().give_back(p); });
  return {arena, out.results};
}

template <class T>
scangen::cuda::DeviceTensor<T> tensor_result(const std::shared_ptr<void>& arena, const scangen_cuda_tensor& r) {
  return scangen::cuda::DeviceTensor<T>(arena, reinterpret_cast<T*>(r.data),
                                        std::vector<int64_t>(r.shape, r.shape + r.rank));
}
template <class T> T scalar_result(const scangen_cuda_tensor& r) {
  T value;
  std::memcpy(&value, &r.scalar, sizeof(T));
  return value;
}

// The record asking for a result in the caller's device memory (scangen_cuda_abi.h).
template <class T> scangen_cuda_tensor out_record(const scangen::cuda::DeviceTensorRef<T>& t, int dtype) {
  scangen_cuda_tensor r{};
  r.data = reinterpret_cast<unsigned long long>(t.data());
  r.scalar = 1;
  r.rank = t.rank();
  r.dtype = dtype;
  for (int d = 0; d < t.rank(); ++d) r.shape[d] = t.dim(d);
  return r;
}
// A scalar result stored into the caller's device memory.
template <class T>
void store_scalar(const scangen::cuda::DeviceTensorRef<T>& out, const scangen_cuda_tensor& r, cudaStream_t stream) {
  T value = scalar_result<T>(r);
  check(cudaMemcpyAsync(out.data(), &value, sizeof(T), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// The bytes a caller's tensor spans (0 when a dimension is 0 or negative, saturated at 2^62).
template <class Ref> long long span_bytes(const Ref& t, size_t element) {
  long long bytes = (long long)element;
  for (int i = 0; i < t.rank(); ++i) {
    if (t.dim(i) <= 0) return 0;
    bytes = t.dim(i) > (1ll << 62) / bytes ? 1ll << 62 : bytes * t.dim(i);
  }
  return bytes;
}
// A result written into the caller's memory must not overlap an argument or another result.
template <class T, class U>
void check_disjoint(const char* what, const scangen::cuda::DeviceTensorRef<T>& out, const char* other,
                    const scangen::cuda::DeviceTensorRef<U>& t, int line, int column) {
  const auto a = reinterpret_cast<unsigned long long>(out.data()), b = reinterpret_cast<unsigned long long>(t.data());
  const long long a_bytes = span_bytes(out, sizeof(T)), b_bytes = span_bytes(t, sizeof(U));
  if (a_bytes > 0 && b_bytes > 0 && a < b + (unsigned long long)b_bytes && b < a + (unsigned long long)a_bytes)
    throw scangen::Error(std::string(what) + " overlaps " + other + ": a result must be written to memory of its own",
                         line, column);
}

inline void append_part(std::string& s, const char* text) { s += text; }
inline void append_part(std::string& s, int64_t v) { s += std::to_string(v); }

// Raises the run-time error of the .scan program at line:column (a caller's tensor of another
// rank); emitted code formats the message's parts.
template <class... Parts> [[noreturn]] void fail(int line, int column, const Parts&... parts) {
  std::string message;
  (append_part(message, parts), ...);
  throw scangen::Error(message, line, column);
}

}  // namespace scangen_cuda_host_v1

#endif  // SCANGEN_CUDA_HOST_V1_H
