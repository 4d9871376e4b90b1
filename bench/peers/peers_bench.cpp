// The C++ side of bench/peers/run.sh: times scangen's generated code (samples/elman.scan,
// samples/lstm.scan, bench/recurrences.scan's linear_recurrence, compiled by
// scangen_add_library; the first two also in the fast floating-point mode, namespace peers_fast)
// and the hand-written OpenBLAS loops on the same inputs, after checking that they agree. Prints one tab-separated line per measurement for bench/peers/report.py:
//
//   workload  H  B  peer  threads  ms  repetitions
//
// (for the linear recurrence H is the channel count N and B is 1).
//
//   scangen_peers_bench --threads 1 [--quick] [--workload elman|lstm|linear] [--hidden H] [--batch B]
//
// With --threads 1, scangen's code compiled for one thread is timed ("scangen-strict"); with
// --threads N > 1, the same programs compiled with THREADS 0 (namespace peers_threads), run on N
// threads through SCANGEN_NUM_THREADS, after checking that their results are those of the
// one-thread code bit for bit (elman, linear) or close to the OpenBLAS loop's (lstm, whose
// one-thread call takes too long to repeat here).
#include <cblas.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

// Each sample four times (strict and fast, one and all threads): their include guards are named
// after the .scan file's stem only, hence the #undef between them.
#include "scangen_peers_kernels_scangen/elman.h"
#include "scangen_peers_kernels_scangen/lstm.h"
#include "scangen_bench_kernels_scangen/recurrences.h"
#undef SCANGEN_GENERATED_ELMAN_H
#undef SCANGEN_GENERATED_LSTM_H
#undef SCANGEN_GENERATED_RECURRENCES_H
#include "scangen_peers_fast_kernels_scangen/elman.h"
#include "scangen_peers_fast_kernels_scangen/lstm.h"
#undef SCANGEN_GENERATED_ELMAN_H
#undef SCANGEN_GENERATED_LSTM_H
#include "scangen_peers_threads_scangen/elman.h"
#include "scangen_peers_threads_scangen/lstm.h"
#include "scangen_peers_threads_scangen/recurrences.h"
#undef SCANGEN_GENERATED_ELMAN_H
#undef SCANGEN_GENERATED_LSTM_H
#include "scangen_peers_fast_threads_scangen/elman.h"
#include "scangen_peers_fast_threads_scangen/lstm.h"
#include "openblas_loops.h"

namespace {

constexpr int64_t kSteps = 512;
constexpr int kRepetitions = 5;
// A case stops repeating after this much measured time (the largest LSTM takes about 45 s per
// call in scangen's generated code): the fastest of fewer repetitions, said in the output.
constexpr double kCaseBudgetSeconds = 10.0;

struct Options {
  int threads = 1;
  bool quick = false;
  std::string workload;  // empty: all
  int64_t hidden = 0;    // --hidden H: only this H (0: all)
  int64_t batch = 0;     // --batch B: only this B (0: all)
};

std::vector<float> random_values(int64_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

double seconds_of(const std::function<void()>& call) {
  auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of up to kRepetitions calls (the machine only ever adds time), after the caller's
// warm-up; prints the measurement line.
void time_and_print(const char* workload, int64_t H, int64_t B, const char* peer, int threads,
                    const std::function<void()>& call) {
  double best = 1e300;
  double spent = 0;
  int reps = 0;
  while (reps < kRepetitions && (reps == 0 || spent < kCaseBudgetSeconds)) {
    double s = seconds_of(call);
    best = std::min(best, s);
    spent += s;
    ++reps;
  }
  std::printf("%s\t%lld\t%lld\t%s\t%d\t%.4f\t%d\n", workload, static_cast<long long>(H),
              static_cast<long long>(B), peer, threads, best * 1e3, reps);
  std::fflush(stdout);
}

// Fails the run when two results differ by more than tolerance (relative to max(1, |v|)): the
// OpenBLAS loops multiply in another order and with FMA, so they agree only approximately.
void check_close(const char* what, const float* expected, const float* actual, int64_t n,
                 float tolerance) {
  double worst = 0;
  int64_t where = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = std::fabs(double(expected[i]) - double(actual[i])) /
               std::max(1.0, std::fabs(double(expected[i])));
    if (!(d <= worst)) worst = d, where = i;  // also catches NaN
  }
  if (!(worst <= tolerance)) {
    std::fprintf(stderr, "%s: results differ at element %lld: scangen %.9g, peer %.9g\n", what,
                 static_cast<long long>(where), expected[where], actual[where]);
    std::exit(1);
  }
  std::fprintf(stderr, "checked %s: largest relative difference %.2g\n", what, worst);
}

std::vector<int64_t> hidden_sizes(const Options& o) {
  if (o.hidden > 0) return {o.hidden};
  return o.quick ? std::vector<int64_t>{256} : std::vector<int64_t>{256, 512};
}
std::vector<int64_t> batch_sizes(const Options& o) {
  if (o.batch > 0) return {o.batch};
  return o.quick ? std::vector<int64_t>{1, 32} : std::vector<int64_t>{1, 8, 32, 256};
}

void bench_elman(const Options& o, int64_t H, int64_t B) {
  const int64_t T = kSteps, I = H;
  float scale = 1.0f / std::sqrt(float(H));
  std::vector<float> x = random_values(T * B * I, -1, 1, 1), h0 = random_values(B * H, -1, 1, 2);
  std::vector<float> W_xh = random_values(I * H, -scale, scale, 3),
                     W_hh = random_values(H * H, -scale, scale, 4);
  std::vector<float> b = random_values(H, -0.1f, 0.1f, 5);
  std::vector<float> h(T * B * H);
  auto blas = [&] {
    peers::openblas_elman(x.data(), h0.data(), W_xh.data(), W_hh.data(), b.data(), h.data(), T, B,
                          I, H);
  };
  auto strict = [&] {
    return peers::elman({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {W_xh.data(), {I, H}},
                        {W_hh.data(), {H, H}}, {b.data(), {H}});
  };
  auto threaded = [&] {
    return peers_threads::elman({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {W_xh.data(), {I, H}},
                                {W_hh.data(), {H, H}}, {b.data(), {H}});
  };
  std::string what = "elman H=" + std::to_string(H) + " B=" + std::to_string(B);
  blas();  // the check doubles as both sides' warm-up
  scangen::Tensor<float> expected = strict();
  if (o.threads == 1) {
    check_close(what.c_str(), expected.data(), h.data(), T * B * H, 1e-3f);
    time_and_print("elman", H, B, "scangen-strict", o.threads, [&] { strict(); });
    auto fast = [&] {
      return peers_fast::elman({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {W_xh.data(), {I, H}},
                               {W_hh.data(), {H, H}}, {b.data(), {H}});
    };
    check_close((what + " fast").c_str(), expected.data(), fast().data(), T * B * H, 1e-3f);
    time_and_print("elman", H, B, "scangen-fast", o.threads, [&] { fast(); });
  } else {
    scangen::Tensor<float> got = threaded();
    check_close((what + " threads").c_str(), expected.data(), got.data(), T * B * H, 0.0f);
    time_and_print("elman", H, B, "scangen-strict", o.threads, [&] { threaded(); });
    auto fast = [&] {
      return peers_fast_threads::elman({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {W_xh.data(), {I, H}},
                                       {W_hh.data(), {H, H}}, {b.data(), {H}});
    };
    check_close((what + " fast threads").c_str(), expected.data(), fast().data(), T * B * H, 1e-3f);
    time_and_print("elman", H, B, "scangen-fast", o.threads, [&] { fast(); });
  }
  time_and_print("elman", H, B, "openblas", o.threads, blas);
}

// W: [4, I, H] as samples/lstm.scan takes it, into [I, 4H] as BLAS takes it.
std::vector<float> pack_gates(const std::vector<float>& W, int64_t rows, int64_t H) {
  std::vector<float> packed(rows * 4 * H);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(&packed[r * 4 * H + k * H], &W[(k * rows + r) * H], H * sizeof(float));
  return packed;
}

void bench_lstm(const Options& o, int64_t H, int64_t B) {
  const int64_t T = kSteps, I = H;
  float scale = 1.0f / std::sqrt(float(H));
  std::vector<float> x = random_values(T * B * I, -1, 1, 11), h0 = random_values(B * H, -1, 1, 12);
  std::vector<float> c0 = random_values(B * H, -1, 1, 13);
  std::vector<float> W = random_values(4 * I * H, -scale, scale, 14),
                     U = random_values(4 * H * H, -scale, scale, 15);
  std::vector<float> b = random_values(4 * H, -0.1f, 0.1f, 16);
  std::vector<float> W_packed = pack_gates(W, I, H), U_packed = pack_gates(U, H, H);
  std::vector<float> h(T * B * H), c(T * B * H), gates(T * B * 4 * H);
  peers::PackedLstmWeights packed{W_packed.data(), U_packed.data(), b.data()};  // b: [4, H] is [4H]
  auto blas = [&] {
    peers::openblas_lstm(x.data(), h0.data(), c0.data(), packed, h.data(), c.data(), gates.data(),
                         T, B, I, H);
  };
  auto strict = [&] {
    return peers::lstm({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {c0.data(), {B, H}},
                       {W.data(), {4, I, H}}, {U.data(), {4, H, H}}, {b.data(), {4, H}});
  };
  auto threaded = [&] {
    return peers_threads::lstm({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {c0.data(), {B, H}},
                               {W.data(), {4, I, H}}, {U.data(), {4, H, H}}, {b.data(), {4, H}});
  };
  std::string what = "lstm H=" + std::to_string(H) + " B=" + std::to_string(B);
  blas();
  if (o.threads == 1) {
    peers::lstm_results expected = strict();
    check_close((what + " h").c_str(), expected.h.data(), h.data(), T * B * H, 1e-3f);
    check_close((what + " c").c_str(), expected.c.data(), c.data(), T * B * H, 1e-3f);
    time_and_print("lstm", H, B, "scangen-strict", o.threads, [&] { strict(); });
    auto fast = [&] {
      return peers_fast::lstm({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {c0.data(), {B, H}},
                              {W.data(), {4, I, H}}, {U.data(), {4, H, H}}, {b.data(), {4, H}});
    };
    peers_fast::lstm_results fast_results = fast();
    check_close((what + " fast h").c_str(), expected.h.data(), fast_results.h.data(), T * B * H, 1e-3f);
    check_close((what + " fast c").c_str(), expected.c.data(), fast_results.c.data(), T * B * H, 1e-3f);
    time_and_print("lstm", H, B, "scangen-fast", o.threads, [&] { fast(); });
  } else {
    peers_threads::lstm_results got = threaded();
    check_close((what + " threads h").c_str(), got.h.data(), h.data(), T * B * H, 1e-3f);
    check_close((what + " threads c").c_str(), got.c.data(), c.data(), T * B * H, 1e-3f);
    time_and_print("lstm", H, B, "scangen-strict", o.threads, [&] { threaded(); });
    auto fast = [&] {
      return peers_fast_threads::lstm({x.data(), {T, B, I}}, {h0.data(), {B, H}}, {c0.data(), {B, H}},
                                      {W.data(), {4, I, H}}, {U.data(), {4, H, H}}, {b.data(), {4, H}});
    };
    peers_fast_threads::lstm_results fast_results = fast();
    check_close((what + " fast threads h").c_str(), h.data(), fast_results.h.data(), T * B * H, 1e-3f);
    check_close((what + " fast threads c").c_str(), c.data(), fast_results.c.data(), T * B * H, 1e-3f);
    time_and_print("lstm", H, B, "scangen-fast", o.threads, [&] { fast(); });
  }
  time_and_print("lstm", H, B, "openblas", o.threads, blas);
}

// bench/cpu_bench.cpp's linear recurrence: N = 4096 channels, T = 4096 steps.
void bench_linear(const Options& o) {
  const int64_t T = 4096, N = 4096;
  std::vector<float> a = random_values(T * N, 0.5f, 1.0f, 21), b = random_values(T * N, -1, 1, 22);
  std::vector<float> h0 = random_values(N, -1, 1, 23), h(T * N), out(T * N);
  auto loop = [&] {
    peers::handwritten_linear(a.data(), b.data(), h0.data(), h.data(), T, N, o.threads);
  };
  // Both sides write into a buffer reused from call to call (the generated API's form with the
  // result's memory as its last argument): the 64 MiB result's fresh pages would otherwise cost
  // more than the loop, and more again when two threads fault them in at once.
  auto strict = [&] {
    bench::linear_recurrence({a.data(), {T, N}}, {b.data(), {T, N}}, {h0.data(), {N}}, {out.data(), {T, N}});
  };
  auto threaded = [&] {
    peers_threads::linear_recurrence({a.data(), {T, N}}, {b.data(), {T, N}}, {h0.data(), {N}}, {out.data(), {T, N}});
  };
  loop();
  // The same arithmetic: bit for bit.
  if (o.threads == 1) {
    strict();
    check_close("linear", out.data(), h.data(), T * N, 0.0f);
    time_and_print("linear", N, 1, "scangen-strict", o.threads, strict);
  } else {
    threaded();
    check_close("linear threads", out.data(), h.data(), T * N, 0.0f);
    time_and_print("linear", N, 1, "scangen-strict", o.threads, threaded);
  }
  time_and_print("linear", N, 1, "handwritten", o.threads, loop);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc)
      o.threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--quick")
      o.quick = true;
    else if (arg == "--workload" && i + 1 < argc)
      o.workload = argv[++i];
    else if (arg == "--hidden" && i + 1 < argc)
      o.hidden = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--batch" && i + 1 < argc)
      o.batch = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--quick] [--workload elman|lstm|linear] [--hidden H] [--batch B]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  openblas_set_num_threads(o.threads);
  // The code compiled for every hardware thread runs on --threads threads (read on its first call).
  setenv("SCANGEN_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  // Keep freed blocks in the heap so that per-call result allocations do not time the kernel
  // zeroing fresh pages (as bench/cpu_bench.cpp does).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  bool all = o.workload.empty();
  for (int64_t H : hidden_sizes(o))
    for (int64_t B : batch_sizes(o)) {
      if (all || o.workload == "elman") bench_elman(o, H, B);
      if (all || o.workload == "lstm") bench_lstm(o, H, B);
    }
  if (all || o.workload == "linear") bench_linear(o);
  return 0;
}
