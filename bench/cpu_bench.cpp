// CPU benchmarks: code scangen generates from recurrences.scan against hand-written loops doing
// the same arithmetic, in the same binary and with the same compiler flags. After the runs it
// prints each generated/hand-written time ratio (the targets: within 1.05x for the element-wise
// recurrence; at most 2 ns per step for a scalar one).
//
//   build/bin/scangen_cpu_bench                 # all
//   build/bin/scangen_cpu_bench --benchmark_filter=linear
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"
#include "recurrences.h"

namespace {

using scangen_bench::allocate_floats;
using scangen_bench::random_values;

constexpr int64_t kChannels = 4096;
constexpr int64_t kSteps = 4096;
constexpr int64_t kScalarSteps = 10'000'000;

// ---- hand-written baselines

void handwritten_linear(const float* a, const float* b, const float* h0, float* out, int64_t steps, int64_t n) {
  const float* prev = h0;
  for (int64_t t = 0; t < steps; ++t) {
    const float* __restrict at = a + t * n;
    const float* __restrict bt = b + t * n;
    float* __restrict ht = out + t * n;
    for (int64_t i = 0; i < n; ++i) ht[i] = at[i] * prev[i] + bt[i];
    prev = ht;
  }
}

void handwritten_scalar(float a, const float* u, float h0, float* out, int64_t steps) {
  float h = h0;
  for (int64_t t = 0; t < steps; ++t) {
    h = a * h + u[t];
    out[t] = h;
  }
}

void handwritten_running_sum(const float* u, float* out, int64_t steps) {
  float s = 0.0f;
  for (int64_t t = 0; t < steps; ++t) {
    s = s + u[t];
    out[t] = s;
  }
}

// ---- benchmarks

struct LinearInputs {
  std::vector<float> a = random_values(kSteps * kChannels, 0.5f, 1.0f, 1);
  std::vector<float> b = random_values(kSteps * kChannels, -1.0f, 1.0f, 2);
  std::vector<float> h0 = random_values(kChannels, -1.0f, 1.0f, 3);
};

const LinearInputs& linear_inputs() {
  static const LinearInputs inputs;
  return inputs;
}

void set_bytes(benchmark::State& state, int64_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
}

void BM_generated_linear(benchmark::State& state) {
  const LinearInputs& in = linear_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> h = bench::linear_recurrence({in.a.data(), {kSteps, kChannels}},
                                                        {in.b.data(), {kSteps, kChannels}}, {in.h0.data(), {kChannels}});
    benchmark::DoNotOptimize(h.data());
  }
  set_bytes(state, 3 * kSteps * kChannels * int64_t(sizeof(float)));
}

void BM_handwritten_linear(benchmark::State& state) {
  const LinearInputs& in = linear_inputs();
  for (auto _ : state) {
    float* out = allocate_floats(kSteps * kChannels);
    handwritten_linear(in.a.data(), in.b.data(), in.h0.data(), out, kSteps, kChannels);
    benchmark::DoNotOptimize(out);
    std::free(out);
  }
  set_bytes(state, 3 * kSteps * kChannels * int64_t(sizeof(float)));
}

const std::vector<float>& scalar_inputs() {
  static const std::vector<float> u = random_values(kScalarSteps, -1.0f, 1.0f, 4);
  return u;
}

void per_step(benchmark::State& state) {
  state.counters["ns_per_step"] = benchmark::Counter(double(kScalarSteps) * double(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_generated_scalar(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> h = bench::scalar_recurrence(0.999f, {u.data(), {kScalarSteps}}, 0.5f);
    benchmark::DoNotOptimize(h.data());
  }
  per_step(state);
}

void BM_handwritten_scalar(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  for (auto _ : state) {
    float* out = allocate_floats(kScalarSteps);
    handwritten_scalar(0.999f, u.data(), 0.5f, out, kScalarSteps);
    benchmark::DoNotOptimize(out);
    std::free(out);
  }
  per_step(state);
}

void BM_generated_running_sum(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> s = bench::running_sum({u.data(), {kScalarSteps}});
    benchmark::DoNotOptimize(s.data());
  }
  per_step(state);
}

void BM_handwritten_running_sum(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  for (auto _ : state) {
    float* out = allocate_floats(kScalarSteps);
    handwritten_running_sum(u.data(), out, kScalarSteps);
    benchmark::DoNotOptimize(out);
    std::free(out);
  }
  per_step(state);
}

SCANGEN_BENCHMARK(BM_generated_linear);
SCANGEN_BENCHMARK(BM_handwritten_linear);
SCANGEN_BENCHMARK(BM_generated_scalar);
SCANGEN_BENCHMARK(BM_handwritten_scalar);
SCANGEN_BENCHMARK(BM_generated_running_sum);
SCANGEN_BENCHMARK(BM_handwritten_running_sum);

void print_ratios(const scangen_bench::TimesReporter& times) {
  std::printf("\ngenerated / hand-written time, fastest repetitions (1.00 = as fast):\n");
  for (const char* name : {"linear", "scalar", "running_sum"}) {
    double g = times.time(std::string("BM_generated_") + name), h = times.time(std::string("BM_handwritten_") + name);
    if (g > 0 && h > 0) std::printf("  %-12s %.3f\n", name, g / h);
  }
  for (const char* name : {"scalar", "running_sum"}) {
    // Times are reported in milliseconds per iteration of kScalarSteps steps.
    double g = times.time(std::string("BM_generated_") + name);
    if (g > 0) std::printf("  %-12s %.2f ns/step (generated)\n", name, g * 1e6 / double(kScalarSteps));
  }
}

}  // namespace

int main(int argc, char** argv) { return scangen_bench::run_comparison(argc, argv, print_ratios); }
