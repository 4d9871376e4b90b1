// GPU benchmark of the associative scan helper (templates/cuda/scangen_cuda_scan.h, issue 16),
// called by hand from a kernel as generated kernels call it: h[t] = a * h[t-1] + u[t] over
// 8 x 1024 channels, T = 65,536, f32, a invariant. Prints GB/s (u read once, h written once: the
// least a scan moves) and the ratio to the device-to-device copy bandwidth measured in the same
// run, for chunks of several lengths and for the serial strategy (one thread per channel). Each
// result is checked against a host computation first (within 2 T eps m_t, the bound of
// tests/unit/cuda_scan_test.cpp). `scan_bench [SUMMARY.json]` writes the times for compare.py
// (jax.lax.associative_scan on the same problem). Built and run by bench/gpu/run.sh, and by the
// test cuda.scan_bench.run (label gpu), which a machine without a device skips (exit 77).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scangen_cuda_abi.h"
#include "scangen_scalar.h"
#include "scangen_cuda_device.h"
#include "scangen_cuda_scan.h"

#define CHECK(call)                                                      \
  do {                                                                   \
    cudaError_t e = (call);                                              \
    if (e != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));    \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

namespace {

constexpr long long kLanes = 8 * 1024;
constexpr long long kSteps = 65536;
constexpr float kDecay = 0.999f;
constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE of cuda.scan_bench.run

// One call of the helper, as a generated kernel makes it: every thread, uniform arguments.
// chunk_min_steps 0 asks for the serial strategy.
__global__ void __launch_bounds__(SCANGEN_CUDA_BLOCK_THREADS)
    scan_kernel(scangen_cuda_launch* launch, const float* a, const float* u, const float* h0, float* h,
                long long chunk_min_steps, long long min_chunk, float* scratch) {
  scangen_cuda_v1::Context ctx(launch, nullptr);
  scangen_cuda_v1::scan_affine(ctx, h, kSteps, h0, a, 0, 0, u, kLanes, 1, kSteps, kLanes, chunk_min_steps,
                               kLanes, min_chunk, scratch);
}

std::string summary = "{";
void record(const std::string& key, double value) {
  summary += (summary.size() > 1 ? ", \"" : "\"") + key + "\": " + std::to_string(value);
}

template <class F>
float time_ms(F&& f, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  f();
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
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return best;
}

double copy_bandwidth_gbs() {
  const size_t bytes = size_t(1) << 30;
  void *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  const float ms = time_ms([&] { CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); }, 10);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

// The serial recurrence on the host: the last row of every channel, and every row of channel 0,
// with m_t (the recurrence on absolute values) for the tolerance.
struct Reference {
  std::vector<float> last, lane0;
  std::vector<double> last_scale, lane0_scale;
};
Reference reference(const std::vector<float>& u, const std::vector<float>& h0) {
  Reference r;
  r.last = h0;
  r.last_scale.resize(size_t(kLanes));
  for (long long l = 0; l < kLanes; ++l) r.last_scale[size_t(l)] = std::fabs(h0[size_t(l)]);
  for (long long t = 0; t < kSteps; ++t)
    for (long long l = 0; l < kLanes; ++l) {
      const float x = u[size_t(t * kLanes + l)];
      r.last[size_t(l)] = kDecay * r.last[size_t(l)] + x;
      r.last_scale[size_t(l)] = kDecay * r.last_scale[size_t(l)] + std::fabs(x);
      if (l == 0) {
        r.lane0.push_back(r.last[0]);
        r.lane0_scale.push_back(r.last_scale[0]);
      }
    }
  return r;
}

bool close(float got, float expected, double scale) {
  return std::fabs(double(got) - double(expected)) <= 2.0 * double(kSteps) * 1.1920929e-7 * scale;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return kSkipped;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  if (!prop.cooperativeLaunch) {
    std::fprintf(stderr, "%s has no cooperative launch\n", prop.name);
    return 1;
  }
  const double copy_gbs = copy_bandwidth_gbs();
  std::printf("device-to-device copy: %.0f GB/s\n", copy_gbs);

  const size_t n = size_t(kLanes * kSteps);
  std::vector<float> u(n), h0(static_cast<size_t>(kLanes));
  srand(5);
  for (float& x : u) x = -1.0f + 2.0f * float(rand()) / float(RAND_MAX);
  for (float& x : h0) x = -1.0f + 2.0f * float(rand()) / float(RAND_MAX);
  const Reference ref = reference(u, h0);

  float *du = nullptr, *dh0 = nullptr, *dh = nullptr, *da = nullptr, *scratch = nullptr;
  CHECK(cudaMalloc(&du, n * sizeof(float)));
  CHECK(cudaMalloc(&dh, n * sizeof(float)));
  CHECK(cudaMalloc(&dh0, size_t(kLanes) * sizeof(float)));
  CHECK(cudaMalloc(&da, sizeof(float)));
  CHECK(cudaMemcpy(du, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dh0, h0.data(), size_t(kLanes) * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(da, &kDecay, sizeof(float), cudaMemcpyHostToDevice));
  scangen_cuda_launch* launch = nullptr;
  CHECK(cudaMalloc(&launch, sizeof(scangen_cuda_launch)));

  // Every resident thread, as the launch of a function this wide would have (scangen_cuda_launch.h).
  const int block = SCANGEN_CUDA_BLOCK_THREADS;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scan_kernel, block, 0));
  const unsigned grid = unsigned(per_sm * prop.multiProcessorCount);
  std::printf("%s: %u blocks of %d threads (%d per SM)\n", prop.name, grid, block, per_sm);

  // min_chunk of each run; kSerial: the serial strategy.
  const long long kSerial = 0;
  for (long long min_chunk : {kSerial, 16LL, 32LL, 64LL, 128LL, 256LL}) {
    const long long chunk_min_steps = min_chunk == kSerial ? 0 : 2 * min_chunk;
    if (scratch) CHECK(cudaFree(scratch));
    scratch = nullptr;
    if (min_chunk != kSerial)  // what the generator allocates: 2 * lanes * ceil(steps / min_chunk)
      CHECK(cudaMalloc(&scratch, size_t(2 * kLanes * ((kSteps + min_chunk - 1) / min_chunk)) * sizeof(float)));
    auto run = [&] {
      CHECK(cudaMemset(launch, 0, sizeof(scangen_cuda_launch)));
      long long cms = chunk_min_steps, mc = min_chunk < 1 ? 1 : min_chunk;
      void* args[] = {&launch, &da, &du, &dh0, &dh, &cms, &mc, &scratch};
      CHECK(cudaLaunchCooperativeKernel((const void*)scan_kernel, dim3(grid), dim3(block), args, 0, nullptr));
      CHECK(cudaGetLastError());
    };
    CHECK(cudaMemset(dh, 0xFF, n * sizeof(float)));
    run();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> last(static_cast<size_t>(kLanes)), lane0(static_cast<size_t>(kSteps));
    CHECK(cudaMemcpy(last.data(), dh + (kSteps - 1) * kLanes, last.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy2D(lane0.data(), sizeof(float), dh, size_t(kLanes) * sizeof(float), sizeof(float), size_t(kSteps),
                       cudaMemcpyDeviceToHost));
    for (long long l = 0; l < kLanes; ++l)
      if (!close(last[size_t(l)], ref.last[size_t(l)], ref.last_scale[size_t(l)])) {
        std::printf("min_chunk %lld: WRONG at channel %lld: %g, expected %g\n", min_chunk, l, last[size_t(l)],
                    ref.last[size_t(l)]);
        return 1;
      }
    for (long long t = 0; t < kSteps; ++t)
      if (!close(lane0[size_t(t)], ref.lane0[size_t(t)], ref.lane0_scale[size_t(t)])) {
        std::printf("min_chunk %lld: WRONG at step %lld of channel 0: %g, expected %g\n", min_chunk, t,
                    lane0[size_t(t)], ref.lane0[size_t(t)]);
        return 1;
      }
    const float ms = time_ms(run, 5);
    const double gbs = 2.0 * double(n) * sizeof(float) / (ms * 1e-3) / 1e9;
    const std::string what = min_chunk == kSerial ? std::string("serial (a thread per channel)")
                                                  : "chunked, min_chunk " + std::to_string(min_chunk);
    std::printf("scan_affine %lld x %lld f32, %s: %.3f ms, %.0f GB/s = %.0f%% of copy (checked)\n", kLanes, kSteps,
                what.c_str(), ms, gbs, 100 * gbs / copy_gbs);
    const std::string key = "scan_affine_" + std::to_string(kLanes) + "_" + std::to_string(kSteps) +
                            (min_chunk == kSerial ? std::string("_serial") : "_chunk" + std::to_string(min_chunk));
    record(key + "_ms", ms);
    record(key + "_copy_percent", 100 * gbs / copy_gbs);
  }
  CHECK(cudaFree(scratch));
  CHECK(cudaFree(launch));
  CHECK(cudaFree(du));
  CHECK(cudaFree(dh));
  CHECK(cudaFree(dh0));
  CHECK(cudaFree(da));
  if (argc > 1) {
    FILE* f = std::fopen(argv[1], "w");
    if (!f || std::fprintf(f, "%s}\n", summary.c_str()) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", argv[1]);
      return 1;
    }
  }
  return 0;
}
