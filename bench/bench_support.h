// What the benchmarks share: the fastest-repetition statistic, a reporter that remembers each
// benchmark's time for the ratios printed at the end, and the default flags of a comparison.
#pragma once

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <map>
#include <string>
#include <vector>

namespace scangen_bench {

// The fastest repetition estimates the time of the code itself best: other work on the machine
// only ever adds time.
inline double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// n floats uniform in [lo, hi), the same for the same seed.
inline std::vector<float> random_values(int64_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// n floats, 64-byte aligned (free with std::free): how the hand-written sides allocate their
// results per call.
inline float* allocate_floats(int64_t n) {
  return static_cast<float*>(std::aligned_alloc(64, (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64));
}

// Prints as usual and remembers each benchmark's time (in its display unit): the fastest
// repetition with repetitions, otherwise the single run.
class TimesReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      bool min = r.run_type == Run::RT_Aggregate && r.aggregate_name == "min";
      bool single = r.run_type == Run::RT_Iteration && !times_.count(r.run_name.function_name + "#min");
      if (min) times_[r.run_name.function_name + "#min"] = 1;
      if (min || single) times_[r.run_name.function_name] = r.GetAdjustedRealTime();
    }
  }
  // The time of a benchmark, or 0 when it did not run (filtered out).
  double time(const std::string& name) const {
    auto it = times_.find(name);
    return it == times_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> times_;
};

// Defaults for a comparison worth reading, before the command line's flags (which override them):
// repetitions interleaved at random (drift and warm-up hit all sides alike), aggregates only.
inline void add_default_flags(std::vector<char*>& args) {
  static char repetitions[] = "--benchmark_repetitions=9";
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  static char aggregates[] = "--benchmark_report_aggregates_only=true";
  args.insert(args.begin() + 1, {repetitions, interleave, aggregates});
}

// What the heap does with the large blocks that results free. `keep_freed_blocks`: they stay in
// the heap for every side, so that the runs time the loops, not the kernel zeroing fresh pages (a
// comparison of loops that both allocate alike). `as_is`: glibc's defaults (large blocks are mapped
// and unmapped per call), what a program gets, so an allocating call pays for its fresh memory.
enum class Heap { keep_freed_blocks, as_is };

// The main of a comparison: the heap's policy, the default flags, the runs, then `report` with each
// benchmark's time.
template <class Report> int run_comparison(int argc, char** argv, Report report, Heap heap = Heap::keep_freed_blocks) {
  if (heap == Heap::keep_freed_blocks) {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  std::vector<char*> args(argv, argv + argc);
  add_default_flags(args);
  argc = int(args.size());
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TimesReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  report(reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace scangen_bench

#define SCANGEN_BENCHMARK(fn) \
  BENCHMARK(fn)->Unit(benchmark::kMillisecond)->UseRealTime()->ComputeStatistics("min", scangen_bench::fastest)
