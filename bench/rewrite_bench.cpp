// Benchmarks of the IR rewrites (`-O2`, the default, against `-O0`): bench/rewrites.scan compiled
// twice, into two libraries (namespaces rewrite_o2 and rewrite_o0), plus hand-written C++.
//
//  1. Elman RNN forward, h[t] = tanh(x[t] @ W_xh + h[t-1] @ W_hh + b), batch 32, hidden 256,
//     input 256, 512 steps, f32: time at -O2 (push-out-seq: x @ W_xh for all steps as one product
//     before the loop), at -O0 (both products in every step), and of a hand-written loop that does
//     what -O2 does (the one input product first, then per step h @ W_hh, + xW[t], + b, tanh)
//     with the same arithmetic, so that all three agree bit for bit (checked once at startup; the
//     program aborts if they do not). The two halves of the -O2 program (bench/rewrite_parts.scan)
//     are timed separately too, to show where the time goes.
//  2. Peak memory of `power` (A**k element-wise, only acc[-1] used; save-mem keeps a window of one
//     row instead of all k rows) with n = 10^4, k = 10^6 at -O2, and -O0 against -O2 at k = 1000,
//     measured in forked child processes (see measure_power_memory()).
//
//   build/bin/scangen_rewrite_bench                          # memory, then all timings, ratios
//   build/bin/scangen_rewrite_bench --skip_memory            # timings only
//   build/bin/scangen_rewrite_bench --memory_only            # memory only
//   build/bin/scangen_rewrite_bench --benchmark_filter=elman
//
// Results and their analysis: docs/performance.md, "Rewrites".
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

// Both libraries are compiled from bench/rewrites.scan, so both headers are named rewrites.h, in
// per-target directories (cmake/ScangenFunctions.cmake). Their include guard is named after the
// stem only, hence the #undef between them.
#include "bench_support.h"
#include "scangen_rewrite_o2_scangen/rewrites.h"
#undef SCANGEN_GENERATED_REWRITES_H
#include "scangen_rewrite_o0_scangen/rewrites.h"
#include "scangen_rewrite_parts_scangen/rewrite_parts.h"

namespace {

using scangen_bench::allocate_floats;
using scangen_bench::random_values;

// ---- sizes

constexpr int64_t kSteps = 512;
constexpr int64_t kBatch = 32;
constexpr int64_t kInput = 256;
constexpr int64_t kHidden = 256;
constexpr int64_t kStepElems = kBatch * kHidden;     // one h[t]
constexpr int64_t kAllElems = kSteps * kStepElems;   // all of h, or all of x @ W_xh
// Multiply-adds of the products: x @ W_xh over all steps, and h[t-1] @ W_hh over all steps.
constexpr double kProjectionMacs = double(kSteps * kBatch) * kInput * kHidden;
constexpr double kRecurrentMacs = double(kSteps * kBatch) * kHidden * kHidden;

constexpr int64_t kPowerN = 10'000;
constexpr int32_t kPowerK = 1'000'000;
constexpr int32_t kPowerSmallK = 1'000;

// ---- hand-written Elman RNN
//
// The arithmetic of the generated code, operation for operation (compiled with -ffp-contract=off
// as it is): every element of a product starts at 0 and adds its products in increasing k, and
// the step computes tanh((xW[t] + h[t-1] @ W_hh) + b) with std::tanh.

// The sizes are run-time values here as they are in the generated code (which is compiled for any
// T, B, I, H): these functions are `noipa`, so that the compiler does not specialize them for the
// constants below (it would otherwise know every loop's trip count, a help the generated code does
// not get).
struct Dims {
  int64_t steps, batch, input, hidden;
};

// out[m x n] = a[m x k] @ b[k x n], a plain i-k-j loop: the innermost loop over the columns of a
// row of the output vectorizes. (scangen_rt_v1::matmul is the same loop, with the columns cut in
// blocks of 256: one block at these sizes.)
__attribute__((noipa)) void matmul_ikj(float* out, const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* __restrict row = out + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    const float* a_row = a + i * k;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a_row[p];
      const float* __restrict b_row = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] = row[j] + a_ip * b_row[j];
    }
  }
}

// xw = x[T*B, I] @ W_xh, one product for all steps.
__attribute__((noipa)) void handwritten_projection(const Dims& d, const float* x, const float* W_xh, float* xw) {
  matmul_ikj(xw, x, W_xh, d.steps * d.batch, d.input, d.hidden);
}

// The loop: h[t] = tanh(xw[t] + h[t-1] @ W_hh + b); `tmp` holds one step's product.
__attribute__((noipa)) void handwritten_steps(const Dims& d, const float* xw, const float* h0, const float* W_hh,
                                              const float* b, float* h, float* tmp) {
  const int64_t H = d.hidden, row = d.batch * d.hidden;
  const float* prev = h0;
  for (int64_t t = 0; t < d.steps; ++t) {
    matmul_ikj(tmp, prev, W_hh, d.batch, H, H);
    const float* __restrict xw_t = xw + t * row;
    float* __restrict h_t = h + t * row;
    for (int64_t i = 0; i < d.batch; ++i)
      for (int64_t j = 0; j < H; ++j) h_t[i * H + j] = std::tanh((xw_t[i * H + j] + tmp[i * H + j]) + b[j]);
    prev = h_t;
  }
}

struct ElmanInputs {
  Dims dims{kSteps, kBatch, kInput, kHidden};
  // Weights scaled by 1/sqrt(fan-in) so that the pre-activations stay in tanh's working range.
  std::vector<float> x = random_values(kAllElems / kHidden * kInput, -1.0f, 1.0f, 11);
  std::vector<float> h0 = random_values(kStepElems, -1.0f, 1.0f, 12);
  std::vector<float> W_xh = random_values(kInput * kHidden, -0.0625f, 0.0625f, 13);
  std::vector<float> W_hh = random_values(kHidden * kHidden, -0.0625f, 0.0625f, 14);
  std::vector<float> b = random_values(kHidden, -0.1f, 0.1f, 15);
  std::vector<float> xw;       // x @ W_xh, for the benchmarks of the loop alone
  std::vector<float> h;        // the result, for the benchmark of the per-step products alone
};

ElmanInputs& elman_inputs() {
  static ElmanInputs inputs;
  return inputs;
}

scangen::Tensor<float> elman_o2(const ElmanInputs& in) {
  return rewrite_o2::elman({in.x.data(), {kSteps, kBatch, kInput}}, {in.h0.data(), {kBatch, kHidden}},
                           {in.W_xh.data(), {kInput, kHidden}}, {in.W_hh.data(), {kHidden, kHidden}},
                           {in.b.data(), {kHidden}});
}

scangen::Tensor<float> elman_o0(const ElmanInputs& in) {
  return rewrite_o0::elman({in.x.data(), {kSteps, kBatch, kInput}}, {in.h0.data(), {kBatch, kHidden}},
                           {in.W_xh.data(), {kInput, kHidden}}, {in.W_hh.data(), {kHidden, kHidden}},
                           {in.b.data(), {kHidden}});
}

scangen::Tensor<float> projection_generated(const ElmanInputs& in) {
  return rewrite_parts::input_projection({in.x.data(), {kSteps * kBatch, kInput}}, {in.W_xh.data(), {kInput, kHidden}});
}

scangen::Tensor<float> steps_generated(const ElmanInputs& in) {
  return rewrite_parts::elman_steps({in.xw.data(), {kSteps, kBatch, kHidden}}, {in.h0.data(), {kBatch, kHidden}},
                                    {in.W_hh.data(), {kHidden, kHidden}}, {in.b.data(), {kHidden}});
}

// What the hand-written side allocates per call, like the generated code: the result, x @ W_xh
// and one step's product.
float* elman_handwritten(const ElmanInputs& in) {
  float* h = allocate_floats(kAllElems);
  float* xw = allocate_floats(kAllElems);
  float* tmp = allocate_floats(kStepElems);
  handwritten_projection(in.dims, in.x.data(), in.W_xh.data(), xw);
  handwritten_steps(in.dims, xw, in.h0.data(), in.W_hh.data(), in.b.data(), h, tmp);
  std::free(tmp);
  std::free(xw);
  return h;
}

bool same_bits(const float* a, const float* b, int64_t n, const char* what) {
  if (std::memcmp(a, b, size_t(n) * sizeof(float)) == 0) return true;
  int64_t i = 0;
  while (std::memcmp(a + i, b + i, sizeof(float)) == 0) ++i;
  std::fprintf(stderr, "MISMATCH: %s differ first at element %lld: %.9g vs %.9g\n", what, (long long)i, double(a[i]),
               double(b[i]));
  return false;
}

// Runs every variant once and aborts unless all give the same bits. Also fills in.xw and in.h.
void check_elman_results() {
  ElmanInputs& in = elman_inputs();
  scangen::Tensor<float> o2 = elman_o2(in);
  scangen::Tensor<float> o0 = elman_o0(in);
  float* hand = elman_handwritten(in);
  scangen::Tensor<float> proj = projection_generated(in);
  in.xw.assign(proj.data(), proj.data() + proj.size());
  std::vector<float> hand_xw(static_cast<size_t>(kAllElems));
  handwritten_projection(in.dims, in.x.data(), in.W_xh.data(), hand_xw.data());
  scangen::Tensor<float> steps = steps_generated(in);
  bool ok = o2.size() == kAllElems && o0.size() == kAllElems && proj.size() == kAllElems &&
            steps.size() == kAllElems;
  ok = ok && same_bits(o2.data(), hand, kAllElems, "elman -O2 and hand-written");
  ok = ok && same_bits(o0.data(), hand, kAllElems, "elman -O0 and hand-written");
  ok = ok && same_bits(proj.data(), hand_xw.data(), kAllElems, "input projections, generated and hand-written");
  ok = ok && same_bits(steps.data(), hand, kAllElems, "elman_steps and hand-written");
  bool finite = true;
  double sum_abs = 0;
  for (int64_t i = 0; i < kAllElems; ++i) {
    finite = finite && std::isfinite(hand[i]);
    sum_abs += std::fabs(hand[i]);
  }
  in.h.assign(hand, hand + kAllElems);
  std::free(hand);
  if (!ok || !finite) {
    std::fprintf(stderr, "elman: results differ; the comparison would be meaningless\n");
    std::abort();
  }
  std::printf("elman: -O2, -O0, hand-written and the two halves agree bit for bit (%lld values, mean |h| = %.3f)\n\n",
              (long long)kAllElems, sum_abs / double(kAllElems));
}

// ---- Elman benchmarks

void BM_elman_O2(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> h = elman_o2(in);
    benchmark::DoNotOptimize(h.data());
  }
}

void BM_elman_O0(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> h = elman_o0(in);
    benchmark::DoNotOptimize(h.data());
  }
}

void BM_elman_handwritten(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    float* h = elman_handwritten(in);
    benchmark::DoNotOptimize(h);
    std::free(h);
  }
}

// The halves of -O2: the input projection (one [16384 x 256] @ [256 x 256] product) ...
void BM_projection_generated(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> xw = projection_generated(in);
    benchmark::DoNotOptimize(xw.data());
  }
}

void BM_projection_handwritten(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    float* xw = allocate_floats(kAllElems);
    handwritten_projection(in.dims, in.x.data(), in.W_xh.data(), xw);
    benchmark::DoNotOptimize(xw);
    std::free(xw);
  }
}

// ... and the loop given x @ W_xh (512 steps of a [32 x 256] @ [256 x 256] product, adds, tanh).
void BM_steps_generated(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    scangen::Tensor<float> h = steps_generated(in);
    benchmark::DoNotOptimize(h.data());
  }
}

void BM_steps_handwritten(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    float* h = allocate_floats(kAllElems);
    float* tmp = allocate_floats(kStepElems);
    handwritten_steps(in.dims, in.xw.data(), in.h0.data(), in.W_hh.data(), in.b.data(), h, tmp);
    benchmark::DoNotOptimize(h);
    std::free(tmp);
    std::free(h);
  }
}

// Only the 512 per-step products h[t-1] @ W_hh of the loop (on the real hidden states), without
// the adds and tanh: the rest of the loop's time is the element-wise part.
void BM_step_products_handwritten(benchmark::State& state) {
  const ElmanInputs& in = elman_inputs();
  for (auto _ : state) {
    float* tmp = allocate_floats(kStepElems);
    for (int64_t t = 0; t < kSteps; ++t) {
      const float* prev = t == 0 ? in.h0.data() : in.h.data() + (t - 1) * kStepElems;
      matmul_ikj(tmp, prev, in.W_hh.data(), in.dims.batch, in.dims.hidden, in.dims.hidden);
      benchmark::DoNotOptimize(tmp);
      benchmark::ClobberMemory();
    }
    std::free(tmp);
  }
}

SCANGEN_BENCHMARK(BM_elman_O2);
SCANGEN_BENCHMARK(BM_elman_O0);
SCANGEN_BENCHMARK(BM_elman_handwritten);
SCANGEN_BENCHMARK(BM_projection_generated);
SCANGEN_BENCHMARK(BM_projection_handwritten);
SCANGEN_BENCHMARK(BM_steps_generated);
SCANGEN_BENCHMARK(BM_steps_handwritten);
SCANGEN_BENCHMARK(BM_step_products_handwritten);

// The ratios and where the time goes, from the benchmarks' times (ms).
void print_summary(const scangen_bench::TimesReporter& times) {
  const double o2 = times.time("BM_elman_O2"), o0 = times.time("BM_elman_O0"), hand = times.time("BM_elman_handwritten");
  std::printf("\nElman RNN forward, T = %lld steps, B = %lld, I = %lld, H = %lld, f32; fastest repetitions:\n",
              (long long)kSteps, (long long)kBatch, (long long)kInput, (long long)kHidden);
  if (o2 > 0 && o0 > 0)
    std::printf("  -O0 / -O2 time (speed-up of the rewrites)   %6.2f   target: at least 2      %s\n", o0 / o2,
                o0 / o2 >= 2.0 ? "met" : "NOT met");
  if (o2 > 0 && hand > 0)
    std::printf("  -O2 / hand-written time                     %6.2f   target: at most 1.1     %s\n", o2 / hand,
                o2 / hand <= 1.1 ? "met" : "NOT met");
  const double pg = times.time("BM_projection_generated"), ph = times.time("BM_projection_handwritten");
  const double sg = times.time("BM_steps_generated"), sh = times.time("BM_steps_handwritten");
  const double prod = times.time("BM_step_products_handwritten");
  std::printf("\nWhere the time goes (ms per call; ns per step = / %lld):\n", (long long)kSteps);
  if (o2 > 0) std::printf("  elman -O2                           %8.1f ms\n", o2);
  if (o0 > 0) std::printf("  elman -O0                           %8.1f ms   %8.0f ns/step\n", o0, o0 * 1e6 / kSteps);
  if (pg > 0)
    std::printf("  input projection, generated         %8.1f ms   %8.0f ns/step   %5.1f GFLOP/s\n", pg,
                pg * 1e6 / kSteps, 2 * kProjectionMacs / (pg * 1e6));
  if (ph > 0)
    std::printf("  input projection, hand-written      %8.1f ms   %8.0f ns/step   %5.1f GFLOP/s\n", ph,
                ph * 1e6 / kSteps, 2 * kProjectionMacs / (ph * 1e6));
  if (sg > 0) std::printf("  loop given x @ W_xh, generated      %8.1f ms   %8.0f ns/step\n", sg, sg * 1e6 / kSteps);
  if (sh > 0) std::printf("  loop given x @ W_xh, hand-written   %8.1f ms   %8.0f ns/step\n", sh, sh * 1e6 / kSteps);
  if (prod > 0)
    std::printf("  of which h @ W_hh (hand-written)    %8.1f ms   %8.0f ns/step   %5.1f GFLOP/s\n", prod,
                prod * 1e6 / kSteps, 2 * kRecurrentMacs / (prod * 1e6));
  if (sh > 0 && prod > 0)
    std::printf("  of which + xW[t] + b, tanh          %8.1f ms   %8.0f ns/step\n", sh - prod, (sh - prod) * 1e6 / kSteps);
  if (o2 > 0 && pg > 0 && sg > 0)
    std::printf("  projection + loop (generated)       %8.1f ms   (elman -O2 measured: %.1f ms)\n", pg + sg, o2);
  if (o0 > 0 && o2 > 0 && pg > 0 && sg > 0) {
    // -O0 does the projection's work inside the loop, one [32 x 256] @ [256 x 256] product per step.
    const double in_loop = o0 - sg;
    std::printf("  x[t] @ W_xh inside the -O0 loop     %8.1f ms   %8.0f ns/step   (= -O0 - loop; as one product: %.1f ms)\n",
                in_loop, in_loop * 1e6 / kSteps, pg);
    std::printf("  best -O0 / -O2 with a free input projection: %.2f (= -O0 / loop)\n", o0 / sg);
  }
  if (pg > 0 && ph > 0) std::printf("  projection generated / hand-written %8.2f\n", pg / ph);
  if (sg > 0 && sh > 0) std::printf("  loop generated / hand-written       %8.2f\n", sg / sh);
}

// ---- power: peak memory, in forked children
//
// Each measurement runs in a child forked from this process before it has allocated anything big
// (no freed blocks in its heap for the call to reuse). The child:
//   1. makes every allocation come from the brk heap and never go back to the system
//      (M_MMAP_THRESHOLD 1 GiB, M_TRIM_THRESHOLD 1 TiB, M_TOP_PAD 0), then trims the heap's top, so
//      the heap grows exactly when the live blocks need more room than it has: its size after the
//      call minus its size before is the call's peak of allocated bytes (to a page, plus malloc's
//      16-byte block headers). glibc's own count (mallinfo2().arena), no malloc hooks;
//   2. allocates and fills the input A (n floats);
//   3. reads the heap size and ru_maxrss, calls power(A, k), keeps the result, reads them again.
// A second child does the same without the call. Its ru_maxrss growth is not 0: after fork, the
// child faults the program's code pages back in as it runs (64 KiB at a time, fault-around), a few
// hundred KiB; the table prints each call's ru_maxrss growth minus that child's, as a cross-check
// of the heap's count at page resolution (the brief's method; coarse at n = 10^4, where the input
// is 40 KB).

struct MemoryReport {
  int64_t heap_bytes = -1;    // growth of the heap over the call
  int64_t maxrss_kib = -1;    // growth of ru_maxrss over the call
  double seconds = 0;         // the call
  double loop_seconds = 0;    // the hand-written loop, in place: acc[i] = acc[i] * A[i], k times
  int matches = 0;            // result equal, bit for bit, to a hand-written loop
};

int64_t heap_size() { return int64_t(mallinfo2().arena); }

int64_t maxrss_kib() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss;
}

enum class PowerVariant { none, o2, o0 };

MemoryReport power_child(PowerVariant variant, int32_t k) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  pid_t pid = fork();
  if (pid < 0) std::abort();
  if (pid == 0) {
    close(fds[0]);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, int(~0u >> 1));
    mallopt(M_TOP_PAD, 0);
    malloc_trim(0);
    MemoryReport rep;
    // Values near 1, so that A**k stays a normal float (no denormals, no infinities) for k = 10^6.
    std::vector<float> A = random_values(kPowerN, 1.0f - 4e-5f, 1.0f + 4e-5f, 21);
    const int64_t heap0 = heap_size();
    const int64_t rss0 = maxrss_kib();
    const auto start = std::chrono::steady_clock::now();
    scangen::Tensor<float> r;
    if (variant == PowerVariant::o2) r = rewrite_o2::power({A.data(), {kPowerN}}, k);
    if (variant == PowerVariant::o0) r = rewrite_o0::power({A.data(), {kPowerN}}, k);
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rep.heap_bytes = heap_size() - heap0;
    rep.maxrss_kib = maxrss_kib() - rss0;
    if (variant != PowerVariant::none) {
      // acc = ((1 * A) * A) * ... as the scan does it.
      std::vector<float> acc(static_cast<size_t>(kPowerN), 1.0f);
      const auto loop_start = std::chrono::steady_clock::now();
      float* __restrict a = acc.data();
      const float* __restrict x = A.data();
      for (int32_t t = 0; t < k; ++t)
        for (int64_t i = 0; i < kPowerN; ++i) a[i] = a[i] * x[i];
      benchmark::DoNotOptimize(a);
      rep.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
      rep.matches = r.size() == kPowerN && std::memcmp(r.data(), acc.data(), sizeof(float) * kPowerN) == 0;
    }
    ssize_t written = write(fds[1], &rep, sizeof rep);
    _exit(written == ssize_t(sizeof rep) ? 0 : 1);
  }
  close(fds[1]);
  MemoryReport rep;
  ssize_t got = read(fds[0], &rep, sizeof rep);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != ssize_t(sizeof rep) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "power: the measuring child failed\n");
    std::abort();
  }
  return rep;
}

bool measure_power_memory() {
  const double input_bytes = double(kPowerN) * sizeof(float);  // A; k is one 4-byte scalar
  std::printf("power(A: f32[n], k) = A**k, only acc[-1] returned; n = %lld, so the input A is %.0f bytes (%.1f KiB).\n",
              (long long)kPowerN, input_bytes, input_bytes / 1024);
  std::printf("Measured, in a forked child per row: peak alloc = bytes the heap had to grow by during the call,\n"
              "i.e. the peak of memory allocated by the call, its result included (glibc's heap size, every\n"
              "block on the heap, none returned to the system; to within a page or two), and that as a\n"
              "multiple of the input's size; ru_maxrss = the child's peak-RSS growth over the call minus that\n"
              "of the child without the call (a coarse cross-check: +-a few hundred KiB); time = the call, and a\n"
              "hand-written loop doing the same multiplies in place. Without save-mem the call holds all k\n"
              "rows: k * n * 4 bytes.\n\n");
  std::printf("  %-24s %14s %10s %12s %10s %10s %s\n", "call", "peak alloc", "x inputs", "ru_maxrss", "time",
              "hand loop", "result");
  struct Case {
    const char* name;
    PowerVariant variant;
    int32_t k;
  };
  const Case cases[] = {
      {"inputs only (no call)", PowerVariant::none, 0},
      {"-O2, k = 1000", PowerVariant::o2, kPowerSmallK},
      {"-O0, k = 1000", PowerVariant::o0, kPowerSmallK},
      {"-O2, k = 1000000", PowerVariant::o2, kPowerK},
  };
  bool ok = true;
  double big_ratio = 0;
  int64_t baseline_kib = 0;
  for (const Case& c : cases) {
    MemoryReport rep = power_child(c.variant, c.k);
    const double ratio = double(rep.heap_bytes) / input_bytes;
    if (c.k == kPowerK) big_ratio = ratio;
    if (c.variant == PowerVariant::none) {
      baseline_kib = rep.maxrss_kib;
      std::printf("  %-24s %14lld %10.2f %8s KiB  (its own ru_maxrss growth: %lld KiB, subtracted below)\n", c.name,
                  (long long)rep.heap_bytes, ratio, "0", (long long)rep.maxrss_kib);
      continue;
    }
    if (!rep.matches) ok = false;
    std::printf("  %-24s %14lld %10.2f %8lld KiB %8.3f s %8.3f s %s\n", c.name, (long long)rep.heap_bytes, ratio,
                (long long)(rep.maxrss_kib - baseline_kib), rep.seconds, rep.loop_seconds,
                rep.matches ? "bit-exact" : "WRONG");
  }
  std::printf("\n  -O0 at k = 1000000 is not run: it would hold %.0f GB.\n", double(kPowerK) * input_bytes / 1e9);
  std::printf("  -O2, k = 10^6: peak %.2f x the inputs; target: at most 2   %s\n\n", big_ratio,
              big_ratio <= 2.0 ? "met" : "NOT met");
  return ok;
}

bool take_flag(std::vector<char*>& args, const char* flag) {
  for (auto it = args.begin() + 1; it != args.end(); ++it)
    if (std::strcmp(*it, flag) == 0) {
      args.erase(it);
      return true;
    }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  const bool skip_memory = take_flag(args, "--skip_memory");
  const bool memory_only = take_flag(args, "--memory_only");
  // First, while this process has allocated nothing big, the memory measurements (each in a child).
  if (!skip_memory && !measure_power_memory()) {
    std::fprintf(stderr, "power: a result differs from the hand-written loop's\n");
    return 1;
  }
  if (memory_only) return 0;

  // Keep freed buffers in the heap for all sides, so that the runs time the loops and not the
  // kernel zeroing fresh pages for every call.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, int(~0u >> 1));
  scangen_bench::add_default_flags(args);
  argc = int(args.size());
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  check_elman_results();
  scangen_bench::TimesReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter);
  benchmark::Shutdown();
  return 0;
}
