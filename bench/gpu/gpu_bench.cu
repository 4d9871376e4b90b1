// GPU benchmarks of the offline CUDA API (bench/gpu/run.sh builds and runs this on a GPU):
//  - the linear recurrence h[t] = a[t] * h[t-1] + b[t], f32, 2^18 channels x T = 4096 and
//    8 x 1024 channels x T = 65536, as a percentage of the device-to-device copy bandwidth
//    measured in the same run (the recurrence moves 3 T N floats: reads a, b, writes h);
//  - a tiny-body scalar scan with T = 10^6, in ns per step.
// Each is also timed as a hand-written kernel doing the same arithmetic (one thread per channel,
// __restrict__ pointers, output allocated once), and the ratio printed. Every result is checked
// against a host computation of the same recurrence first. `gpu_bench [SUMMARY.json]` also writes
// the times for compare.py, which prints the ratios against PyTorch and JAX.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
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

// What a person would write: one thread per channel, the state in a register.
__global__ void handwritten_linear(const float* __restrict__ a, const float* __restrict__ b,
                                   const float* __restrict__ h0, float* __restrict__ h, long long n, long long t) {
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n; c += (long long)gridDim.x * blockDim.x) {
    float x = h0[c];
    for (long long s = 0; s < t; ++s) {
      x = a[s * n + c] * x + b[s * n + c];
      h[s * n + c] = x;
    }
  }
}

__global__ void handwritten_tiny(const float* __restrict__ u, float h0, long long t, float* __restrict__ out) {
  float h = h0;
  for (long long s = 0; s < t; ++s) h = 0.5f * h + u[s];
  *out = h;
}

std::string summary = "{";
void record(const std::string& key, double value) {
  summary += (summary.size() > 1 ? ", \"" : "\"") + key + "\": " + std::to_string(value);
}

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

  float* dh = nullptr;
  CHECK(cudaMalloc(&dh, n * sizeof(float)));
  const unsigned blocks = unsigned((N + 255) / 256);
  auto handwritten = [&] {
    handwritten_linear<<<blocks, 256>>>(da, db, dh0, dh, N, T);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  handwritten();
  std::vector<float> hand_last(static_cast<size_t>(N));
  CHECK(cudaMemcpy(hand_last.data(), dh + (T - 1) * N, size_t(N) * sizeof(float), cudaMemcpyDeviceToHost));
  if (hand_last != ref) {
    std::printf("linear N=%lld T=%lld: the hand-written kernel is WRONG\n", N, T);
    std::exit(1);
  }
  float hand_ms = time_ms(handwritten, 5);
  CHECK(cudaFree(dh));
  std::printf("linear recurrence N=%lld T=%lld: %.3f ms, %.0f GB/s = %.0f%% of copy bandwidth (checked); "
              "hand-written %.3f ms (%.0f%%); scangen / hand-written = %.2f\n",
              N, T, ms, gbs, 100 * gbs / copy_gbs, hand_ms, 100 * (3.0 * double(n) * 4 / (hand_ms * 1e-3) / 1e9) / copy_gbs,
              ms / hand_ms);
  const std::string key = "linear_" + std::to_string(N) + "_" + std::to_string(T);
  record(key + "_ms", ms);
  record(key + "_handwritten_ms", hand_ms);
  record(key + "_copy_percent", 100 * gbs / copy_gbs);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dh0));
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
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
  float* dout = nullptr;
  CHECK(cudaMalloc(&dout, sizeof(float)));
  auto handwritten = [&] {
    handwritten_tiny<<<1, 1>>>(du, 0.25f, T, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  handwritten();
  float hand = 0;
  CHECK(cudaMemcpy(&hand, dout, sizeof(float), cudaMemcpyDeviceToHost));
  if (hand != ref) {
    std::printf("tiny: the hand-written kernel is WRONG: %g, expected %g\n", hand, ref);
    return 1;
  }
  float hand_ms = time_ms(handwritten, 5);
  CHECK(cudaFree(dout));
  std::printf("tiny body T=%lld: %.3f ms = %.1f ns/step (checked); hand-written %.1f ns/step; "
              "scangen / hand-written = %.2f\n",
              T, ms, ms * 1e6 / double(T), hand_ms * 1e6 / double(T), ms / hand_ms);
  record("tiny_ns_per_step", ms * 1e6 / double(T));
  record("tiny_handwritten_ns_per_step", hand_ms * 1e6 / double(T));
  CHECK(cudaFree(du));
  if (argc > 1) {
    FILE* f = std::fopen(argv[1], "w");
    if (!f || std::fprintf(f, "%s}\n", summary.c_str()) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", argv[1]);
      return 1;
    }
  }
  return 0;
}
