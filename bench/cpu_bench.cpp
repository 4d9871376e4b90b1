// CPU benchmarks: code scangen generates from recurrences.scan against hand-written loops doing
// the same arithmetic, in the same binary and with the same compiler flags, each with its result
// allocated per call and written into a reused buffer. After the runs it prints each
// generated/hand-written time ratio (the targets: within 1.05x for the element-wise recurrence; a
// scalar chain into the caller's memory at the hand-written loop's speed).
//
//   build/bin/scangen_cpu_bench                 # all
//   build/bin/scangen_cpu_bench --benchmark_filter=linear
#include <benchmark/benchmark.h>

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

// ---- benchmarks: each kernel in two forms, the result allocated by every call (memory fresh from
// the kernel, glibc's default heap) and written into one buffer the caller reuses (the generated
// API's form with a trailing result tensor); the generated code and the hand-written loop alike.

struct LinearInputs {
  std::vector<float> a = random_values(kSteps * kChannels, 0.5f, 1.0f, 1);
  std::vector<float> b = random_values(kSteps * kChannels, -1.0f, 1.0f, 2);
  std::vector<float> h0 = random_values(kChannels, -1.0f, 1.0f, 3);
};

const LinearInputs& linear_inputs() {
  static const LinearInputs inputs;
  return inputs;
}

// The caller's buffer of the "into" forms: allocated and touched once, reused by every call.
float* reused_buffer(int64_t n) {
  static std::map<int64_t, std::vector<float>> buffers;
  std::vector<float>& b = buffers[n];
  if (b.empty()) b.assign(size_t(n), 0.0f);
  return b.data();
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

void BM_generated_linear_into(benchmark::State& state) {
  const LinearInputs& in = linear_inputs();
  float* out = reused_buffer(kSteps * kChannels);
  for (auto _ : state) {
    bench::linear_recurrence({in.a.data(), {kSteps, kChannels}}, {in.b.data(), {kSteps, kChannels}},
                             {in.h0.data(), {kChannels}}, {out, {kSteps, kChannels}});
    benchmark::DoNotOptimize(out);
  }
  set_bytes(state, 3 * kSteps * kChannels * int64_t(sizeof(float)));
}

void BM_handwritten_linear_into(benchmark::State& state) {
  const LinearInputs& in = linear_inputs();
  float* out = reused_buffer(kSteps * kChannels);
  for (auto _ : state) {
    handwritten_linear(in.a.data(), in.b.data(), in.h0.data(), out, kSteps, kChannels);
    benchmark::DoNotOptimize(out);
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

void BM_generated_scalar_into(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  float* out = reused_buffer(kScalarSteps);
  for (auto _ : state) {
    bench::scalar_recurrence(0.999f, {u.data(), {kScalarSteps}}, 0.5f, {out, {kScalarSteps}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state);
}

void BM_handwritten_scalar_into(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  float* out = reused_buffer(kScalarSteps);
  for (auto _ : state) {
    handwritten_scalar(0.999f, u.data(), 0.5f, out, kScalarSteps);
    benchmark::DoNotOptimize(out);
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

void BM_generated_running_sum_into(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  float* out = reused_buffer(kScalarSteps);
  for (auto _ : state) {
    bench::running_sum({u.data(), {kScalarSteps}}, {out, {kScalarSteps}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state);
}

void BM_handwritten_running_sum_into(benchmark::State& state) {
  const std::vector<float>& u = scalar_inputs();
  float* out = reused_buffer(kScalarSteps);
  for (auto _ : state) {
    handwritten_running_sum(u.data(), out, kScalarSteps);
    benchmark::DoNotOptimize(out);
  }
  per_step(state);
}

SCANGEN_BENCHMARK(BM_generated_linear);
SCANGEN_BENCHMARK(BM_handwritten_linear);
SCANGEN_BENCHMARK(BM_generated_linear_into);
SCANGEN_BENCHMARK(BM_handwritten_linear_into);
SCANGEN_BENCHMARK(BM_generated_scalar);
SCANGEN_BENCHMARK(BM_handwritten_scalar);
SCANGEN_BENCHMARK(BM_generated_scalar_into);
SCANGEN_BENCHMARK(BM_handwritten_scalar_into);
SCANGEN_BENCHMARK(BM_generated_running_sum);
SCANGEN_BENCHMARK(BM_handwritten_running_sum);
SCANGEN_BENCHMARK(BM_generated_running_sum_into);
SCANGEN_BENCHMARK(BM_handwritten_running_sum_into);

void print_ratios(const scangen_bench::TimesReporter& times) {
  const char* kernels[] = {"linear", "scalar", "running_sum"};
  std::printf("\ngenerated / hand-written time, fastest repetitions (1.00 = as fast):\n");
  for (const char* form : {"", "_into"})
    for (const char* name : kernels) {
      const std::string kernel = std::string(name) + form;
      double g = times.time("BM_generated_" + kernel), h = times.time("BM_handwritten_" + kernel);
      if (g > 0 && h > 0) std::printf("  %-18s %.3f\n", kernel.c_str(), g / h);
    }
  std::printf("\ninto a reused buffer / allocating per call, same side:\n");
  for (const char* side : {"generated", "handwritten"})
    for (const char* name : kernels) {
      const std::string base = std::string("BM_") + side + "_" + name;
      double into = times.time(base + "_into"), allocating = times.time(base);
      if (into > 0 && allocating > 0) std::printf("  %-11s %-12s %.3f\n", side, name, into / allocating);
    }
  std::printf("\nns per step, fastest repetitions:\n");
  for (const char* side : {"generated", "handwritten"})
    for (const char* name : {"scalar", "running_sum"})
      for (const char* form : {"", "_into"}) {
        // Times are reported in milliseconds per iteration of kScalarSteps steps.
        double t = times.time(std::string("BM_") + side + "_" + name + form);
        if (t > 0)
          std::printf("  %-11s %-16s %.2f\n", side, (std::string(name) + form).c_str(), t * 1e6 / double(kScalarSteps));
      }
}

}  // namespace

// glibc's default heap: an allocating call pays for the fresh memory it gets, as in a program.
int main(int argc, char** argv) {
  return scangen_bench::run_comparison(argc, argv, print_ratios, scangen_bench::Heap::as_is);
}
