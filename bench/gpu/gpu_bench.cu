// GPU benchmarks of the offline CUDA API (bench/gpu/run.sh builds and runs this on a GPU):
//  - the linear recurrence h[t] = a[t] * h[t-1] + b[t], f32, 2^18 channels x T = 4096 and
//    8 x 1024 channels x T = 65536, as a percentage of the device-to-device copy bandwidth
//    measured in the same run (the recurrence moves 3 T N floats: reads a, b, writes h);
//  - a tiny-body scalar scan with T = 10^6, in ns per step.
// Every result is checked against a host computation of the same recurrence first.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpu_bench.cuh"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e = (call);                                                             \
    if (e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                   \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace gen = scangen_generated::cuda;

template <class F> float time_ms(F&& f, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  f();  // warm-up (and the arena size)
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    f();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best) best = ms;
  }
  return best;
}

float* device_random(size_t n, float lo, float hi, unsigned seed, std::vector<float>* host) {
  std::vector<float> v(n);
  srand(seed);
  for (float& x : v) x = lo + (hi - lo) * float(rand()) / float(RAND_MAX);
  float* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMemcpy(d, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  if (host) *host = std::move(v);
  return d;
}

void linear(long long N, long long T, double copy_gbs) {
  size_t n = size_t(N * T);
  std::vector<float> a, b, h0;
  float* da = device_random(n, 0.5f, 1.0f, 1, &a);
  float* db = device_random(n, -1.0f, 1.0f, 2, &b);
  float* dh0 = device_random(size_t(N), -1.0f, 1.0f, 3, &h0);
  auto run = [&] {
    return gen::linear_recurrence({da, {T, N}}, {db, {T, N}}, {dh0, {N}});
  };
  // Check: every channel of the last step, and all steps of a few channels.
  auto h = run();
  std::vector<float> last(static_cast<size_t>(N));
  CHECK(cudaMemcpy(last.data(), h.data() + (T - 1) * N, size_t(N) * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> ref = h0;
  for (long long t = 0; t < T; ++t)
    for (long long c = 0; c < N; ++c) ref[size_t(c)] = a[size_t(t * N + c)] * ref[size_t(c)] + b[size_t(t * N + c)];
  for (long long c = 0; c < N; ++c)
    if (last[size_t(c)] != ref[size_t(c)]) {
      std::printf("linear N=%lld T=%lld: WRONG at channel %lld: %g, expected %g\n", N, T, c, last[size_t(c)], ref[size_t(c)]);
      std::exit(1);
    }
  float ms = time_ms([&] { (void)run(); }, 5);
  double gbs = 3.0 * double(n) * 4 / (ms * 1e-3) / 1e9;
  std::printf("linear recurrence N=%lld T=%lld: %.3f ms, %.0f GB/s = %.0f%% of copy bandwidth (checked)\n", N, T, ms,
              gbs, 100 * gbs / copy_gbs);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dh0));
}

int main() {
  // Device-to-device copy bandwidth: read + write of 1 GiB.
  size_t bytes = size_t(1) << 30;
  void *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  float copy_ms = time_ms([&] { CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); }, 10);
  double copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e-3) / 1e9;
  std::printf("device-to-device copy: %.0f GB/s\n", copy_gbs);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));

  linear(1 << 18, 4096, copy_gbs);
  linear(8 * 1024, 65536, copy_gbs);

  long long T = 1000000;
  std::vector<float> u;
  float* du = device_random(size_t(T), -1.0f, 1.0f, 4, &u);
  float got = gen::tiny({du, {T}}, 0.25f);
  float ref = 0.25f;
  for (long long t = 0; t < T; ++t) ref = 0.5f * ref + u[size_t(t)];
  if (got != ref) {
    std::printf("tiny: WRONG: %g, expected %g\n", got, ref);
    return 1;
  }
  float ms = time_ms([&] { (void)gen::tiny({du, {T}}, 0.25f); }, 5);
  std::printf("tiny body T=%lld: %.3f ms = %.1f ns/step (checked)\n", T, ms, ms * 1e6 / double(T));
  CHECK(cudaFree(du));
  return 0;
}
