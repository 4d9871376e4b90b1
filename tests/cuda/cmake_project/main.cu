// Calls the CUDA API of two .scan files (built by scangen_add_library with TARGET cpu,cuda) and
// compares each result with the CPU API's on the same inputs. Exits 77 (skipped) without a CUDA
// device, 1 on a difference.
#include <cmath>
#include <cstdio>
#include <vector>

#include "channels.cuh"
#include "channels.h"
#include "power.cuh"
#include "power.h"

namespace {

int failures = 0;

template <class T>
std::vector<T> download(const scangen::cuda::DeviceTensor<T>& t) {
  std::vector<T> host(size_t(t.size()));
  if (cudaMemcpy(host.data(), t.data(), host.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw scangen::cuda::CudaError("cudaMemcpy of a result failed");
  return host;
}

template <class T>
T* upload(const std::vector<T>& host) {
  void* device = nullptr;
  if (cudaMalloc(&device, host.size() * sizeof(T)) != cudaSuccess ||
      cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
    throw scangen::cuda::CudaError("cudaMalloc/cudaMemcpy of an argument failed");
  return static_cast<T*>(device);
}

// Elements equal bit for bit (both sides are IEEE arithmetic without contraction), but for CUDA's
// math library, which these programs do not call.
template <class T>
void compare(const char* what, const std::vector<T>& gpu, const T* cpu, size_t count) {
  if (gpu.size() != count) {
    std::printf("FAIL %s: %zu elements on the GPU, %zu on the CPU\n", what, gpu.size(), count);
    ++failures;
    return;
  }
  for (size_t i = 0; i < count; ++i)
    if (!(gpu[i] == cpu[i])) {
      std::printf("FAIL %s: element %zu is %g on the GPU, %g on the CPU\n", what, i, double(gpu[i]), double(cpu[i]));
      ++failures;
      return;
    }
  std::printf("ok %s (%zu elements)\n", what, count);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 77;
  }
  try {
    const int64_t T = 50, B = 3, C = 300;
    std::vector<float> x(size_t{T * B * C}), decay(size_t{C}), h0(size_t{B * C});
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.37 * double(i)));
    for (size_t i = 0; i < decay.size(); ++i) decay[i] = 0.5f + 0.4f * float(i % 7) / 7.0f;
    for (size_t i = 0; i < h0.size(); ++i) h0[i] = float(i % 5) - 2.0f;
    float* x_d = upload(x);
    float* decay_d = upload(decay);
    float* h0_d = upload(h0);
    auto gpu = filters::cuda::iir({x_d, {T, B, C}}, {decay_d, {C}}, {h0_d, {B, C}});
    auto cpu = filters::iir({x.data(), {T, B, C}}, {decay.data(), {C}}, {h0.data(), {B, C}});
    compare("iir last", download(gpu.last), cpu.last.data(), size_t(cpu.last.size()));
    compare("iir energy", download(gpu.energy), cpu.energy.data(), size_t(cpu.energy.size()));
    compare("iir mean", download(gpu.mean), cpu.mean.data(), size_t(cpu.mean.size()));

    std::vector<float> a(1000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) * 0.25f;
    float* a_d = upload(a);
    compare("power", download(filters::cuda::power({a_d, {int64_t(a.size())}}, 5)),
            filters::power({a.data(), {int64_t(a.size())}}, 5).data(), a.size());

    // An error of the program: a shape that does not match, reported with its .scan location.
    try {
      filters::cuda::iir({x_d, {T, B, C}}, {decay_d, {C - 1}}, {h0_d, {B, C}});
      std::printf("FAIL iir with a bad shape did not throw\n");
      ++failures;
    } catch (const scangen::Error& e) {
      std::printf("ok error at %d:%d: %s\n", e.line(), e.column(), e.what());
    }
    for (float* p : {x_d, decay_d, h0_d, a_d}) cudaFree(p);
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
