// Associative scans (issue 16, the rewrite parallel-scan): the code scangen generates from
// parallel_scans.scan, compiled for 1 and for 2 threads, against the same recurrence with the
// steps in order (what scangen generated before) and against hand-written sequential loops, all
// writing into a reused buffer. It prints ns per step and the ratios the targets speak of:
//
// - one channel, f32, T = 10^7, h = a * h + u[t]: <= 0.5 ns/step on one core, <= 0.3 on two;
// - 4096 channels x 4096 steps: no slower than the steps in order (the lanes are already
//   parallel);
// - an i64 running sum and an f32 running maximum (exact, so always marked).
//
//   build/bin/scangen_parallel_scan_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

// Both libraries are compiled from parallel_scans.scan: the headers have the same name (in
// per-target directories) and the same include guard, hence the #undef between them.
#include "bench_support.h"
#include "scangen_scan_kernels_1t_scangen/parallel_scans.h"
#undef SCANGEN_GENERATED_PARALLEL_SCANS_H
#include "scangen_scan_kernels_2t_scangen/parallel_scans.h"

namespace {

using scangen_bench::random_values;

constexpr int64_t kLong = 10'000'000;
constexpr int64_t kChannels = 4096;
constexpr int64_t kSteps = 4096;

const std::vector<float>& long_input() {
  static const std::vector<float> u = random_values(kLong, -1.0f, 1.0f, 7);
  return u;
}

const std::vector<int64_t>& long_integers() {
  static const std::vector<int64_t> x = [] {
    std::vector<int64_t> v(static_cast<size_t>(kLong));
    const std::vector<float>& u = long_input();
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(u[i] * 1000.0f);
    return v;
  }();
  return x;
}

struct ChannelInputs {
  std::vector<float> a = random_values(kSteps * kChannels, 0.5f, 1.0f, 1);
  std::vector<float> b = random_values(kSteps * kChannels, -1.0f, 1.0f, 2);
  std::vector<float> h0 = random_values(kChannels, -1.0f, 1.0f, 3);
};

const ChannelInputs& channel_inputs() {
  static const ChannelInputs inputs;
  return inputs;
}

template <class T> T* reused(int64_t n) {
  static std::map<int64_t, std::vector<T>> buffers;
  std::vector<T>& b = buffers[n];
  if (b.empty()) b.assign(size_t(n), T(0));
  return b.data();
}

void per_step(benchmark::State& state, int64_t steps) {
  state.counters["ns_per_step"] = benchmark::Counter(double(steps) * double(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---- hand-written sequential loops

void handwritten_iir(const float* u, float a, float h0, float* out, int64_t steps) {
  float h = h0;
  for (int64_t t = 0; t < steps; ++t) out[t] = h = a * h + u[t];
}

void handwritten_cumsum(const int64_t* x, int64_t* out, int64_t steps) {
  int64_t s = 0;
  for (int64_t t = 0; t < steps; ++t) out[t] = s += x[t];
}

// ---- one channel

#define IIR_BENCH(name, call)                               \
  void name(benchmark::State& state) {                      \
    const std::vector<float>& u = long_input();             \
    float* out = reused<float>(kLong);                      \
    for (auto _ : state) {                                  \
      call;                                                 \
      benchmark::DoNotOptimize(out);                        \
    }                                                       \
    per_step(state, kLong);                                 \
  }

IIR_BENCH(BM_iir_parallel_1t, scan1::iir({u.data(), {kLong}}, 0.999f, 0.5f, {out, {kLong}}))
IIR_BENCH(BM_iir_parallel_2t, scan2::iir({u.data(), {kLong}}, 0.999f, 0.5f, {out, {kLong}}))
IIR_BENCH(BM_iir_in_order, scan1::iir_in_order({u.data(), {kLong}}, 0.999f, 0.5f, {out, {kLong}}))
IIR_BENCH(BM_iir_handwritten, handwritten_iir(u.data(), 0.999f, 0.5f, out, kLong))

// ---- many channels

#define CHANNELS_BENCH(name, fn)                                                                        \
  void name(benchmark::State& state) {                                                                  \
    const ChannelInputs& in = channel_inputs();                                                         \
    float* out = reused<float>(kSteps * kChannels);                                                     \
    for (auto _ : state) {                                                                              \
      fn({in.a.data(), {kSteps, kChannels}}, {in.b.data(), {kSteps, kChannels}}, {in.h0.data(), {kChannels}}, \
         {out, {kSteps, kChannels}});                                                                   \
      benchmark::DoNotOptimize(out);                                                                    \
    }                                                                                                   \
    per_step(state, kSteps);                                                                            \
  }

CHANNELS_BENCH(BM_channels_parallel_1t, scan1::channels)
CHANNELS_BENCH(BM_channels_in_order_1t, scan1::channels_in_order)
CHANNELS_BENCH(BM_channels_parallel_2t, scan2::channels)
CHANNELS_BENCH(BM_channels_in_order_2t, scan2::channels_in_order)

// ---- exact scans

void BM_cumsum_1t(benchmark::State& state) {
  const std::vector<int64_t>& x = long_integers();
  int64_t* out = reused<int64_t>(kLong);
  for (auto _ : state) {
    scan1::int_cumsum({x.data(), {kLong}}, {out, {kLong}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state, kLong);
}

void BM_cumsum_2t(benchmark::State& state) {
  const std::vector<int64_t>& x = long_integers();
  int64_t* out = reused<int64_t>(kLong);
  for (auto _ : state) {
    scan2::int_cumsum({x.data(), {kLong}}, {out, {kLong}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state, kLong);
}

void BM_cumsum_handwritten(benchmark::State& state) {
  const std::vector<int64_t>& x = long_integers();
  int64_t* out = reused<int64_t>(kLong);
  for (auto _ : state) {
    handwritten_cumsum(x.data(), out, kLong);
    benchmark::DoNotOptimize(out);
  }
  per_step(state, kLong);
}

void BM_running_max_1t(benchmark::State& state) {
  const std::vector<float>& x = long_input();
  float* out = reused<float>(kLong);
  for (auto _ : state) {
    scan1::running_max({x.data(), {kLong}}, {out, {kLong}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state, kLong);
}

void BM_running_max_2t(benchmark::State& state) {
  const std::vector<float>& x = long_input();
  float* out = reused<float>(kLong);
  for (auto _ : state) {
    scan2::running_max({x.data(), {kLong}}, {out, {kLong}});
    benchmark::DoNotOptimize(out);
  }
  per_step(state, kLong);
}

SCANGEN_BENCHMARK(BM_iir_parallel_1t);
SCANGEN_BENCHMARK(BM_iir_parallel_2t);
SCANGEN_BENCHMARK(BM_iir_in_order);
SCANGEN_BENCHMARK(BM_iir_handwritten);
SCANGEN_BENCHMARK(BM_channels_parallel_1t);
SCANGEN_BENCHMARK(BM_channels_in_order_1t);
SCANGEN_BENCHMARK(BM_channels_parallel_2t);
SCANGEN_BENCHMARK(BM_channels_in_order_2t);
SCANGEN_BENCHMARK(BM_cumsum_1t);
SCANGEN_BENCHMARK(BM_cumsum_2t);
SCANGEN_BENCHMARK(BM_cumsum_handwritten);
SCANGEN_BENCHMARK(BM_running_max_1t);
SCANGEN_BENCHMARK(BM_running_max_2t);

void print_ratios(const scangen_bench::TimesReporter& r) {
  auto ns_per_step = [&](const char* name, int64_t steps) { return r.time(name) * 1e6 / double(steps); };
  auto ratio = [&](const char* a, const char* b) {
    const double x = r.time(a), y = r.time(b);
    if (x > 0 && y > 0) std::printf("  %-28s / %-26s %6.2fx\n", a, b, x / y);
  };
  std::printf("\nns per step (fastest repetition):\n");
  for (const char* name : {"BM_iir_parallel_1t", "BM_iir_parallel_2t", "BM_iir_in_order", "BM_iir_handwritten",
                           "BM_cumsum_1t", "BM_cumsum_2t", "BM_cumsum_handwritten", "BM_running_max_1t",
                           "BM_running_max_2t"})
    if (r.time(name) > 0) std::printf("  %-28s %7.3f ns  (target for iir: <= 0.5 on 1 core, <= 0.3 on 2)\n", name,
                                      ns_per_step(name, kLong));
  std::printf("\nratios (time / time):\n");
  ratio("BM_iir_parallel_1t", "BM_iir_handwritten");
  ratio("BM_iir_parallel_2t", "BM_iir_handwritten");
  ratio("BM_iir_parallel_1t", "BM_iir_in_order");
  ratio("BM_channels_parallel_1t", "BM_channels_in_order_1t");
  ratio("BM_channels_parallel_2t", "BM_channels_in_order_2t");
  ratio("BM_cumsum_1t", "BM_cumsum_handwritten");
  ratio("BM_cumsum_2t", "BM_cumsum_handwritten");
}

}  // namespace

int main(int argc, char** argv) { return scangen_bench::run_comparison(argc, argv, print_ratios); }
