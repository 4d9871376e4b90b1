// The associative scans of emitted CPU code (templates/cpu/scangen_cpu_scan.h, issue 16) against
// hand-written sequential loops, in the same run and with the flags of emitted code. Each entry is
// the fastest of several repetitions in wall time (the threaded forms need wall time), in ns per
// step (per step and lane for the many-lane case), with its ratio to the hand-written loop.
// Results and how to rerun them: docs/performance.md, "Parallel scan (issue 16): CPU kernel".
//
// usage: scangen_assoc_scan_bench [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scangen_cpu_api.h"
#include "scangen_scalar.h"
#include "scangen_cpu_support.h"
#include "scangen_cpu_matmul.h"
#include "scangen_cpu_scan.h"
#include "scangen_cpu_threads.h"

namespace {

namespace rt = scangen_rt_v1;
namespace sg = scangen::scalar_v1;

int g_repetitions = 25;

// The fastest of g_repetitions runs of f, in seconds.
double fastest_seconds(const std::function<void()>& f) {
  f();  // warm: pages touched, the pool's threads started
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < g_repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

template <class T> std::vector<T> random_vector(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = T(dist(rng));
  return v;
}

// Prints one row: the hand-written loop's time and the scan's, per unit of work.
void report(const char* what, double units, double hand, double scan) {
  std::printf("%-62s hand %7.3f ns  scan %7.3f ns  ratio %5.2f\n", what, hand / units * 1e9, scan / units * 1e9,
              scan / hand);
}

// Scratch of a chunked call (the generator's rule: 2 * lanes * ceil(steps / min_chunk)).
constexpr int64_t kMinChunk = 4096;

// (a) and (b): one channel, f32, h = a * h + u[t] with a invariant or per step.
void one_channel_affine(int64_t steps, bool per_step_a) {
  const std::vector<float> u = random_vector<float>(steps, -1, 1, 1);
  const std::vector<float> a = random_vector<float>(per_step_a ? steps : 1, 0.9, 0.999, 2);
  std::vector<float> out(static_cast<size_t>(steps)), scratch(static_cast<size_t>(2 * ((steps + kMinChunk - 1) / kMinChunk)));
  const float init = 0.5f;
  const int64_t a_step = per_step_a ? 1 : 0;
  const double hand = fastest_seconds([&] {
    float h = init;
    const float* ap = a.data();
    float* o = out.data();
    for (int64_t t = 0; t < steps; ++t) o[t] = h = sg::add(sg::mul(ap[t * a_step], h), u[size_t(t)]);
  });
  const std::string name = std::string("affine, 1 lane, f32, a ") + (per_step_a ? "per step" : "invariant");
  for (int threads : {1, 2}) {
    const double scan = fastest_seconds([&] {
      rt::parallel_scan_affine<float>(threads, out.data(), steps, &init, a.data(), a_step, 0, u.data(), 1, 0, steps,
                                      1, 1, 1, kMinChunk, scratch.data());
    });
    report((name + ", " + std::to_string(threads) + " thread(s)").c_str(), double(steps), hand, scan);
  }
}

// (c) many lanes: the serial path (chunking not allowed) against the plain loop.
void many_lanes(int64_t lanes, int64_t steps) {
  const std::vector<float> a = random_vector<float>(lanes * steps, 0.5, 1.0, 3);
  const std::vector<float> b = random_vector<float>(lanes * steps, -1, 1, 4);
  const std::vector<float> init = random_vector<float>(lanes, -1, 1, 5);
  std::vector<float> out(static_cast<size_t>(lanes * steps));
  const double hand = fastest_seconds([&] {
    for (int64_t t = 0; t < steps; ++t) {
      const float* prev = t == 0 ? init.data() : out.data() + (t - 1) * lanes;
      float* row = out.data() + t * lanes;
      const float* at = a.data() + t * lanes;
      const float* bt = b.data() + t * lanes;
      SCANGEN_IVDEP
      for (int64_t l = 0; l < lanes; ++l) row[l] = sg::add(sg::mul(at[l], prev[l]), bt[l]);
    }
  });
  for (int threads : {1, 2}) {
    const double scan = fastest_seconds([&] {
      rt::parallel_scan_affine<float>(threads, out.data(), steps, init.data(), a.data(), lanes, 1, b.data(), lanes, 1,
                                      steps, lanes, 0, 0, 1, nullptr);
    });
    report(("affine, 4096 lanes x 4096 steps, serial path, " + std::to_string(threads) + " thread(s)").c_str(),
           double(steps * lanes), hand, scan);
  }
}

// (d) an i64 running sum and an f32 running max, one lane.
template <class T, class Hand, class Scan>
void one_channel_reduction(const char* what, int64_t steps, Hand&& step, Scan&& scan_call) {
  const std::vector<T> u = random_vector<T>(steps, -1000, 1000, 6);
  std::vector<T> out(static_cast<size_t>(steps)), scratch(static_cast<size_t>(2 * ((steps + kMinChunk - 1) / kMinChunk)));
  const T init = T(0);
  const double hand = fastest_seconds([&] {
    T h = init;
    for (int64_t t = 0; t < steps; ++t) out[size_t(t)] = h = step(h, u[size_t(t)]);
  });
  for (int threads : {1, 2}) {
    const double scan = fastest_seconds([&] {
      scan_call(threads, out.data(), steps, &init, u.data(), u.data(), steps, scratch.data());
    });
    report((std::string(what) + ", " + std::to_string(threads) + " thread(s)").c_str(), double(steps), hand, scan);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (quick) g_repetitions = 3;
  const int64_t long_steps = quick ? 1000000 : 10000000;
  std::printf("fastest of %d repetitions, wall time; ratio = scan / hand-written (below 1: the scan is faster)\n",
              g_repetitions);
  one_channel_affine(long_steps, false);
  one_channel_affine(long_steps, true);
  many_lanes(4096, quick ? 1024 : 4096);
  one_channel_reduction<int64_t>(
      "running sum, 1 lane, i64", long_steps, [](int64_t h, int64_t x) { return sg::add(h, x); },
      [](int threads, int64_t* out, int64_t steps, const int64_t* init, const int64_t* a, const int64_t* b,
         int64_t n, int64_t* scratch) {
        rt::parallel_scan_add<int64_t>(threads, out, steps, init, a, 0, 0, b, 1, 0, n, 1, 1, 1, kMinChunk, scratch);
      });
  one_channel_reduction<float>(
      "running max, 1 lane, f32", long_steps, [](float h, float x) { return sg::max(h, x); },
      [](int threads, float* out, int64_t steps, const float* init, const float* a, const float* b, int64_t n,
         float* scratch) {
        rt::parallel_scan_max<float>(threads, out, steps, init, a, 0, 0, b, 1, 0, n, 1, 1, 1, kMinChunk, scratch);
      });
  return 0;
}
