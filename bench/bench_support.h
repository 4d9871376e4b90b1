// What the benchmarks share: the fastest-repetition statistic, a reporter that remembers each
// benchmark's time for the ratios printed at the end, and the default flags of a comparison.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace scangen_bench {

// The fastest repetition estimates the time of the code itself best: other work on the machine
// only ever adds time.
inline double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

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

}  // namespace scangen_bench

#define SCANGEN_BENCHMARK(fn) \
  BENCHMARK(fn)->Unit(benchmark::kMillisecond)->UseRealTime()->ComputeStatistics("min", scangen_bench::fastest)
