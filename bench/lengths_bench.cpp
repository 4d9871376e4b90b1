// Variable-length batches (issue 29, docs/performance.md "Variable-length batches"): an Elman
// network, f32, strict mode, one thread, H = I = 256, T = 256, B = 64, each row's last state.
//   - lengths drawn uniformly from 1..T (seed fixed) over the same batch with every length T:
//     target <= 0.6 (ideal 0.5: the real steps are half the padded ones);
//   - every length T over the plain scan without `lengths`: target <= 1.05.
//
//   build/bin/scangen_lengths_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <vector>

#include "bench_support.h"
#include "lengths.h"

namespace {

using scangen_bench::random_values;

constexpr int64_t kB = 64, kH = 256, kI = 256, kT = 256;

struct Inputs {
  std::vector<float> x = random_values(kT * kB * kI, -1.0f, 1.0f, 1);
  std::vector<float> w_xh = random_values(kI * kH, -0.05f, 0.05f, 2);
  std::vector<float> w_hh = random_values(kH * kH, -0.05f, 0.05f, 3);
  std::vector<float> h0 = random_values(kB * kH, -1.0f, 1.0f, 4);
  std::vector<int64_t> full = std::vector<int64_t>(size_t(kB), kT);
  std::vector<int64_t> uniform = draw_lengths();

  static std::vector<int64_t> draw_lengths() {
    std::mt19937 rng(29);
    std::uniform_int_distribution<int64_t> d(1, kT);
    std::vector<int64_t> l(static_cast<size_t>(kB));
    for (int64_t& v : l) v = d(rng);
    return l;
  }
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

void run_lengths(benchmark::State& state, const std::vector<int64_t>& lengths) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    auto h = bench::elman_lengths({in.x.data(), {kT, kB, kI}}, {in.w_xh.data(), {kI, kH}}, {in.w_hh.data(), {kH, kH}},
                                  {in.h0.data(), {kB, kH}}, {lengths.data(), {kB}});
    benchmark::DoNotOptimize(h.data());
  }
}

void BM_lengths_uniform(benchmark::State& state) { run_lengths(state, inputs().uniform); }
void BM_lengths_full(benchmark::State& state) { run_lengths(state, inputs().full); }

void BM_plain(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) {
    auto h = bench::elman_plain({in.x.data(), {kT, kB, kI}}, {in.w_xh.data(), {kI, kH}}, {in.w_hh.data(), {kH, kH}},
                                {in.h0.data(), {kB, kH}});
    benchmark::DoNotOptimize(h.data());
  }
}

SCANGEN_BENCHMARK(BM_lengths_uniform);
SCANGEN_BENCHMARK(BM_lengths_full);
SCANGEN_BENCHMARK(BM_plain);

void print_ratios(const scangen_bench::TimesReporter& times) {
  double uniform = times.time("BM_lengths_uniform"), full = times.time("BM_lengths_full"), plain = times.time("BM_plain");
  int64_t real = 0;
  for (int64_t l : inputs().uniform) real += l;
  std::printf("\nElman RNN, f32, B = %lld, H = I = %lld, T = %lld, one thread, fastest repetitions:\n", (long long)kB,
              (long long)kH, (long long)kT);
  std::printf("  real steps / padded steps of the uniform lengths: %.3f\n", double(real) / double(kT * kB));
  if (uniform > 0 && full > 0) std::printf("  lengths 1..T / every length T:       %.3f (target <= 0.6)\n", uniform / full);
  if (full > 0 && plain > 0) std::printf("  every length T / without lengths:    %.3f (target <= 1.05)\n", full / plain);
}

}  // namespace

int main(int argc, char** argv) { return scangen_bench::run_comparison(argc, argv, print_ratios); }
