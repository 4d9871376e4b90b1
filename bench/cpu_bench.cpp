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

#include "recurrences.h"

namespace {

constexpr int64_t kChannels = 4096;
constexpr int64_t kSteps = 4096;
constexpr int64_t kScalarSteps = 10'000'000;

std::vector<float> random_values(int64_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Both sides allocate their result per call, the same way (64-byte aligned malloc).
float* allocate_result(int64_t n) {
  return static_cast<float*>(std::aligned_alloc(64, (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64));
}

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
    float* out = allocate_result(kSteps * kChannels);
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
    float* out = allocate_result(kScalarSteps);
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
    float* out = allocate_result(kScalarSteps);
    handwritten_running_sum(u.data(), out, kScalarSteps);
    benchmark::DoNotOptimize(out);
    std::free(out);
  }
  per_step(state);
}

// The fastest repetition estimates the time of the loop itself best: other work on the machine only
// ever adds time. Medians are reported too.
double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

#define SCANGEN_BENCH(fn) BENCHMARK(fn)->Unit(benchmark::kMillisecond)->UseRealTime()->ComputeStatistics("min", fastest)
SCANGEN_BENCH(BM_generated_linear);
SCANGEN_BENCH(BM_handwritten_linear);
SCANGEN_BENCH(BM_generated_scalar);
SCANGEN_BENCH(BM_handwritten_scalar);
SCANGEN_BENCH(BM_generated_running_sum);
SCANGEN_BENCH(BM_handwritten_running_sum);

// Prints as usual and remembers each benchmark's time, for the ratios at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    // With repetitions, the fastest of them; otherwise the single run.
    for (const Run& r : runs) {
      bool min = r.run_type == Run::RT_Aggregate && r.aggregate_name == "min";
      bool single = r.run_type == Run::RT_Iteration && !seconds_.count(r.run_name.function_name + "#min");
      if (min) seconds_[r.run_name.function_name + "#min"] = 1;
      if (min || single) seconds_[r.run_name.function_name] = r.GetAdjustedRealTime();
    }
  }
  void print_ratios() const {
    std::printf("\ngenerated / hand-written time, fastest repetitions (1.00 = as fast):\n");
    for (const char* name : {"linear", "scalar", "running_sum"}) {
      auto g = seconds_.find(std::string("BM_generated_") + name);
      auto h = seconds_.find(std::string("BM_handwritten_") + name);
      if (g == seconds_.end() || h == seconds_.end()) continue;
      std::printf("  %-12s %.3f\n", name, g->second / h->second);
    }
    for (const char* name : {"scalar", "running_sum"}) {
      auto g = seconds_.find(std::string("BM_generated_") + name);
      if (g == seconds_.end()) continue;
      // Times are reported in milliseconds per iteration of kScalarSteps steps.
      std::printf("  %-12s %.2f ns/step (generated)\n", name, g->second * 1e6 / double(kScalarSteps));
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  // Keep freed result buffers in the heap for both sides, so that the runs time the loops and not
  // the kernel zeroing fresh pages for every call.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // Defaults for a comparison worth reading: repetitions interleaved (so that drift and warm-up hit
  // both sides alike) and medians. Flags on the command line override them.
  std::vector<char*> args(argv, argv + argc);
  char repetitions[] = "--benchmark_repetitions=9";
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  char aggregates[] = "--benchmark_report_aggregates_only=true";
  args.insert(args.begin() + 1, {repetitions, interleave, aggregates});
  argc = int(args.size());
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
