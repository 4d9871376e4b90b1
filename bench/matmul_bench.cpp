// The matrix product of emitted CPU code (templates/cpu/scangen_cpu_matmul.h) against the kernel
// it replaced (kept below as legacy_matmul), the fast floating-point mode's FMA kernel
// (matmul_fast, templates/cpu/scangen_cpu_fast.h) and, when CMake found it, OpenBLAS's
// sgemm/dgemm on one thread, in the same run. Each entry is the fastest of several repetitions, in GFLOP/s
// (2*m*k*n / seconds of this thread's CPU time). Results and how to rerun them:
// docs/performance.md, "Matrix products".
//
// usage: scangen_matmul_bench [--quick]
#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "scangen_cpu_matmul.h"
#include "scangen_scalar.h"
#include "scangen_cpu_fast.h"

#if defined(SCANGEN_BENCH_OPENBLAS)
#include <cblas.h>
// OpenBLAS's, declared here: Debian's cblas.h may be another implementation's.
extern "C" void openblas_set_num_threads(int threads);
#endif

// SCANGEN_IVDEP of scangen_cpu_support.h.
#if defined(__clang__)
#define LEGACY_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define LEGACY_IVDEP _Pragma("GCC ivdep")
#endif

namespace {

// The kernel before issue 15: rows of b streamed in blocks of 256 columns, one output row at a
// time, the innermost loop over columns left to the auto-vectorizer.
template <class T>
void legacy_matmul(T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kColumnBlock = 256;
  for (int64_t i = 0; i < m * n; ++i) out[i] = T(0);
  for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
    const int64_t j1 = j0 + kColumnBlock < n ? j0 + kColumnBlock : n;
    for (int64_t i = 0; i < m; ++i) {
      T* __restrict row = out + i * n;
      const T* a_row = a + i * k;
      for (int64_t p = 0; p < k; ++p) {
        const T a_ip = a_row[p];
        const T* __restrict b_row = b + p * n;
        LEGACY_IVDEP
        for (int64_t j = j0; j < j1; ++j)
          row[j] = scangen::scalar_v1::add(row[j], scangen::scalar_v1::mul(a_ip, b_row[j]));
      }
    }
  }
}

#if defined(SCANGEN_BENCH_OPENBLAS)
void blas(float* out, const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(k), b,
              int(n), 0.0f, out, int(n));
}
void blas(double* out, const double* a, const double* b, int64_t m, int64_t k, int64_t n) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0, a, int(k), b,
              int(n), 0.0, out, int(n));
}
#endif

// CPU time of this thread: on a machine shared with builds, wall time counts the other processes'
// turns too.
double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The fastest of `repetitions` timed runs of `calls` calls each, in GFLOP/s.
template <class F>
double best_gflops(F&& product, double flops, int repetitions, int64_t calls) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const double start = thread_seconds();
    for (int64_t c = 0; c < calls; ++c) product();
    const double seconds = thread_seconds() - start;
    best = std::max(best, flops * double(calls) / seconds * 1e-9);
  }
  return best;
}

template <class T>
void run_shape(const char* type, int64_t m, int64_t kn, bool quick) {
  const int64_t k = kn, n = kn;
  std::mt19937 rng(15);
  std::uniform_real_distribution<T> unit(T(-1), T(1));
  std::vector<T> a(size_t(m * k)), b(size_t(k * n)), out(size_t(m * n)), check(size_t(m * n));
  for (T& x : a) x = unit(rng);
  for (T& x : b) x = unit(rng);
  const double flops = 2.0 * double(m) * double(k) * double(n);
  // About 20 ms per repetition (1 GFLOP/s floor), at least one call.
  const int64_t calls = std::max<int64_t>(1, int64_t((quick ? 2e7 : 5e7) / flops));
  const int repetitions = quick ? 3 : 7;
  const double fresh =
      best_gflops([&] { scangen_rt_v1::matmul(out.data(), a.data(), b.data(), m, k, n); }, flops,
                  repetitions, calls);
  const double legacy = best_gflops(
      [&] { legacy_matmul(check.data(), a.data(), b.data(), m, k, n); }, flops, repetitions, calls);
  if (std::memcmp(out.data(), check.data(), out.size() * sizeof(T)) != 0)
    std::printf("MISMATCH between the kernel and the legacy kernel at m=%" PRId64 " k=n=%" PRId64
                "\n",
                m, kn);
  std::vector<T> fast_out(out.size());
  const double fast = best_gflops(
      [&] { scangen_rt_v1::matmul_fast(fast_out.data(), a.data(), b.data(), m, k, n); }, flops, repetitions, calls);
  // The FMA kernel's results differ from the strict ones by rounding only: each is within
  // k eps sum |a b| <= k eps k of the exact sum (|a|, |b| <= 1).
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, double(std::abs(fast_out[i] - out[i])));
  if (worst > 2.0 * double(k) * double(k) * double(std::numeric_limits<T>::epsilon()))
    std::printf("MISMATCH between the fast and the strict kernel at m=%" PRId64 " k=n=%" PRId64 ": %g\n", m, kn, worst);
  std::printf("%-6s %6" PRId64 " %5" PRId64 " %9.1f %9.1f %7.2fx %9.1f", type, m, kn, legacy, fresh,
              fresh / legacy, fast);
#if defined(SCANGEN_BENCH_OPENBLAS)
  const double reference = best_gflops([&] { blas(check.data(), a.data(), b.data(), m, k, n); },
                                       flops, repetitions, calls);
  // Time ratios to OpenBLAS (below 1: faster), strict and fast.
  std::printf(" %9.1f %7.2f %7.2f", reference, reference / fresh, reference / fast);
#endif
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
#if defined(SCANGEN_BENCH_OPENBLAS)
  openblas_set_num_threads(1);
  std::printf("%-6s %6s %5s %9s %9s %8s %9s %9s %7s %7s\n", "type", "m", "k=n", "legacy", "strict",
              "speedup", "fast", "OpenBLAS", "strict/", "fast/");
#else
  std::printf("%-6s %6s %5s %9s %9s %8s %9s   (built without OpenBLAS)\n", "type", "m", "k=n", "legacy",
              "strict", "speedup", "fast");
#endif
  for (int64_t m : {1, 8, 32, 256, 512 * 32})
    for (int64_t kn : {128, 256, 512}) run_shape<float>("f32", m, kn, quick);
  for (int64_t m : {1, 8, 32, 256, 512 * 32})
    for (int64_t kn : {128, 256, 512}) run_shape<double>("f64", m, kn, quick);
  return 0;
}
