// Gradient benchmarks (docs/performance.md, "Gradients"): an Elman network, f32, B = 32,
// H = I = 256, T = 512, loss = the sum of every h.
//   - forward + backward (grad of the weights) over forward alone: target <= 3.0x;
//   - both against hand-written loops with the same matrix product (blocked i-p-j loops, as the
//     generated code's), the backward pass written the usual way (h kept, W_hh transposed once).
// Then, outside Google Benchmark, the memory of a gradient with checkpoint = 64 against without:
// T = 4096, H = I = 256, B = 16, peak resident memory added by one call (VmHWM after resetting it
// through /proc/self/clear_refs) and the fastest of 3 calls; targets: at most 1/8 of the memory,
// at most 1.5x the time.
//
//   build/bin/scangen_gradient_bench
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_support.h"
#include "gradients.h"

namespace {

using scangen_bench::random_values;

constexpr int64_t kB = 32, kH = 256, kI = 256, kT = 512;

// out[m, n] (+)= a[m, k] @ b[k, n], blocked over columns like the generated code's matmul.
void matmul(float* out, const float* a, const float* b, int64_t m, int64_t k, int64_t n, bool accumulate) {
  if (!accumulate) std::memset(out, 0, size_t(m * n) * sizeof(float));
  for (int64_t i = 0; i < m; ++i) {
    float* __restrict row = out + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a[i * k + p];
      const float* __restrict b_row = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a_ip * b_row[j];
    }
  }
}

// out[k, n] += a[m, k]^T @ g[m, n]
void matmul_at(float* out, const float* a, const float* g, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a[i * k + p];
      float* __restrict row = out + p * n;
      const float* __restrict g_row = g + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a_ip * g_row[j];
    }
}

struct Inputs {
  std::vector<float> x = random_values(kT * kB * kI, -1.0f, 1.0f, 1);
  std::vector<float> w_xh = random_values(kI * kH, -0.05f, 0.05f, 2);
  std::vector<float> w_hh = random_values(kH * kH, -0.05f, 0.05f, 3);
  std::vector<float> h0 = random_values(kB * kH, -1.0f, 1.0f, 4);
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

// The forward pass: every h kept (the backward pass reads them); returns the loss.
float handwritten_forward(const Inputs& in, std::vector<float>& h) {
  h.assign(size_t(kT * kB * kH), 0.0f);
  std::vector<float> a(size_t(kB * kH));
  float loss = 0;
  for (int64_t t = 0; t < kT; ++t) {
    const float* prev = t == 0 ? in.h0.data() : h.data() + (t - 1) * kB * kH;
    matmul(a.data(), in.x.data() + t * kB * kI, in.w_xh.data(), kB, kI, kH, false);
    matmul(a.data(), prev, in.w_hh.data(), kB, kH, kH, true);
    float* ht = h.data() + t * kB * kH;
    for (int64_t i = 0; i < kB * kH; ++i) ht[i] = std::tanh(a[size_t(i)]), loss += ht[i];
  }
  return loss;
}

void handwritten_gradient(const Inputs& in, std::vector<float>& d_xh, std::vector<float>& d_hh) {
  std::vector<float> h;
  handwritten_forward(in, h);
  std::vector<float> w_hh_t(size_t(kH * kH));
  for (int64_t i = 0; i < kH; ++i)
    for (int64_t j = 0; j < kH; ++j) w_hh_t[size_t(j * kH + i)] = in.w_hh[size_t(i * kH + j)];
  d_xh.assign(size_t(kI * kH), 0.0f);
  d_hh.assign(size_t(kH * kH), 0.0f);
  std::vector<float> carried(size_t(kB * kH), 0.0f), da(size_t(kB * kH));
  for (int64_t t = kT - 1; t >= 0; --t) {
    const float* ht = h.data() + t * kB * kH;
    const float* prev = t == 0 ? in.h0.data() : h.data() + (t - 1) * kB * kH;
    for (int64_t i = 0; i < kB * kH; ++i) da[size_t(i)] = (1.0f + carried[size_t(i)]) * (1.0f - ht[i] * ht[i]);
    matmul_at(d_xh.data(), in.x.data() + t * kB * kI, da.data(), kB, kI, kH);
    matmul_at(d_hh.data(), prev, da.data(), kB, kH, kH);
    matmul(carried.data(), da.data(), w_hh_t.data(), kB, kH, kH, false);
  }
}

void BM_generated_forward(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    float loss = bench::elman_loss({in.x.data(), {kT, kB, kI}}, {in.w_xh.data(), {kI, kH}},
                                   {in.w_hh.data(), {kH, kH}}, {in.h0.data(), {kB, kH}});
    benchmark::DoNotOptimize(loss);
  }
}

void BM_generated_gradient(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    auto r = bench::elman_gradient({in.x.data(), {kT, kB, kI}}, {in.w_xh.data(), {kI, kH}},
                                   {in.w_hh.data(), {kH, kH}}, {in.h0.data(), {kB, kH}});
    benchmark::DoNotOptimize(r.d_hh.data());
  }
}

void BM_handwritten_forward(benchmark::State& state) {
  std::vector<float> h;
  for (auto _ : state) benchmark::DoNotOptimize(handwritten_forward(inputs(), h));
}

void BM_handwritten_gradient(benchmark::State& state) {
  std::vector<float> d_xh, d_hh;
  for (auto _ : state) {
    handwritten_gradient(inputs(), d_xh, d_hh);
    benchmark::DoNotOptimize(d_hh.data());
  }
}

SCANGEN_BENCHMARK(BM_generated_forward);
SCANGEN_BENCHMARK(BM_generated_gradient);
SCANGEN_BENCHMARK(BM_handwritten_forward);
SCANGEN_BENCHMARK(BM_handwritten_gradient);

// ---- memory of checkpointing

int64_t status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field)));
  return -1;
}

template <class Call> std::pair<double, double> peak_mib_and_seconds(Call call) {
  double best = 1e30;
  int64_t peak = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    int64_t before = status_kib("VmRSS:");
    auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    peak = std::max(peak, status_kib("VmHWM:") - before);
    malloc_trim(0);
  }
  return {double(peak) / 1024.0, best};
}

void checkpoint_memory() {
  constexpr int64_t T = 4096, B = 16, H = 256, I = 256;
  std::vector<float> x = random_values(T * B * I, -1.0f, 1.0f, 5), w_xh = random_values(I * H, -0.05f, 0.05f, 6),
                     w_hh = random_values(H * H, -0.05f, 0.05f, 7), h0 = random_values(B * H, -1.0f, 1.0f, 8);
  auto args = [&] {
    return std::make_tuple(scangen::TensorRef<const float>{x.data(), {T, B, I}},
                           scangen::TensorRef<const float>{w_xh.data(), {I, H}},
                           scangen::TensorRef<const float>{w_hh.data(), {H, H}},
                           scangen::TensorRef<const float>{h0.data(), {B, H}});
  };
  float loss_plain = 0, loss_checkpointed = 0;
  // The generated functions are overloaded (the form writing into the caller's tensors): std::apply
  // gets lambdas that pick the allocating one.
  auto gradient = [](auto... a) { return bench::running_loss_gradient(a...); };
  auto gradient_checkpointed = [](auto... a) { return bench::running_loss_gradient_checkpointed(a...); };
  auto plain = peak_mib_and_seconds([&] { loss_plain = std::apply(gradient, args()).loss; });
  auto checkpointed = peak_mib_and_seconds([&] { loss_checkpointed = std::apply(gradient_checkpointed, args()).loss; });
  std::printf("\ngradient of an Elman network, T = %lld, B = %lld, H = I = %lld (loss %g and %g):\n", (long long)T,
              (long long)B, (long long)H, double(loss_plain), double(loss_checkpointed));
  std::printf("  without checkpoint:  %8.1f MiB added at the peak, %.3f s\n", plain.first, plain.second);
  std::printf("  checkpoint = 64:     %8.1f MiB added at the peak, %.3f s\n", checkpointed.first, checkpointed.second);
  std::printf("  memory %.3f of without (target <= 0.125), time %.2fx (target <= 1.5x)\n",
              checkpointed.first / plain.first, checkpointed.second / plain.second);
}

void print_ratios(const scangen_bench::TimesReporter& times) {
  double gf = times.time("BM_generated_forward"), gg = times.time("BM_generated_gradient");
  double hf = times.time("BM_handwritten_forward"), hg = times.time("BM_handwritten_gradient");
  std::printf("\nElman RNN, f32, B = %lld, H = I = %lld, T = %lld, fastest repetitions:\n", (long long)kB,
              (long long)kH, (long long)kT);
  if (gf > 0 && gg > 0) std::printf("  generated forward + backward / forward:     %.2f (target <= 3.0)\n", gg / gf);
  if (hf > 0 && hg > 0) std::printf("  hand-written forward + backward / forward:  %.2f\n", hg / hf);
  if (gg > 0 && hg > 0) std::printf("  generated / hand-written, forward+backward: %.2f\n", gg / hg);
  if (gf > 0 && hf > 0) std::printf("  generated / hand-written, forward:          %.2f\n", gf / hf);
}

}  // namespace

int main(int argc, char** argv) {
  return scangen_bench::run_comparison(argc, argv, [](const scangen_bench::TimesReporter& times) {
    print_ratios(times);
    // Freed memory must go back to the system between the calls measured.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    checkpoint_memory();
  });
}
