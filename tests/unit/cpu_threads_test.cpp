// The thread pool of emitted CPU code (templates/cpu/scangen_cpu_threads.h): many short parallel
// loops in a row, chunks that cover the range once, small ranges kept on the calling thread,
// errors raised in chunks (the lowest chunk's, every time, and the pool still works after),
// nested and concurrent loops (run serially, never deadlocked), and the row-split product against
// the serial one, bit for bit.
#define BOOST_TEST_MODULE cpu_threads
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "scangen_cpu_api.h"
#include "scangen_scalar.h"
#include "scangen_cpu_support.h"
#include "scangen_cpu_matmul.h"
#include "scangen_cpu_scan.h"
#include "scangen_cpu_threads.h"
#include "scangen/scangen.h"

namespace {

namespace rt = scangen_rt_v1;

static_assert(rt::threads_v1::kMaxThreads == scangen::kMaxThreads,
              "the pool's bound and the one the CLI and the JIT check must agree");

BOOST_AUTO_TEST_CASE(many_short_loops_cover_each_iteration_once) {
  constexpr int64_t kSize = 200;
  std::vector<std::atomic<int>> visits(kSize);
  std::atomic<int> bad_chunks{0};  // (Boost.Test's checks are not for other threads)
  for (int round = 0; round < 20000; ++round) {
    const int threads = 2 + round % 2;
    const int64_t begin = round % 7, end = kSize - round % 5;
    rt::parallel_for(threads, begin, end, 16, 16, [&](int64_t lo, int64_t hi) {
      if (lo >= hi || (lo - begin) % 16 != 0) bad_chunks.fetch_add(1);
      for (int64_t i = lo; i < hi; ++i) visits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
    });
    for (int64_t i = 0; i < kSize; ++i) {
      const int want = i >= begin && i < end ? 1 : 0;
      if (visits[size_t(i)].exchange(0) != want) BOOST_FAIL("round " << round << ": iteration " << i << " ran wrong");
    }
  }
  BOOST_TEST(bad_chunks.load() == 0);
}

// Chunks of a grain each, a few per thread, claimed by whichever thread is free: the other
// threads take some of them (the caller alone could take all if the workers were slow to wake,
// hence the rounds).
BOOST_AUTO_TEST_CASE(work_reaches_other_threads) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0}, chunks{0};
  for (int round = 0; round < 200 && elsewhere.load() == 0; ++round)
    rt::parallel_for(3, 0, 12 * 1024, 1024, 16, [&](int64_t lo, int64_t hi) {
      if (hi - lo != 1024) chunks.fetch_add(1000);
      chunks.fetch_add(1);
      if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      volatile double sink = 0;  // some work, so that the workers wake before it is all done
      for (int i = 0; i < 20000; ++i) sink = sink + 1;
    });
  BOOST_TEST(elsewhere.load() > 0);
  BOOST_TEST(chunks.load() % 12 == 0);  // 12 chunks of 1024 per round (3 threads x 4)
}

BOOST_AUTO_TEST_CASE(small_ranges_stay_on_the_calling_thread) {
  int calls = 0;
  const std::thread::id caller = std::this_thread::get_id();
  rt::parallel_for(4, 5, 40, 32, 16, [&](int64_t lo, int64_t hi) {
    ++calls;
    BOOST_TEST(lo == 5);
    BOOST_TEST(hi == 40);
    BOOST_TEST((std::this_thread::get_id() == caller));
  });
  BOOST_TEST(calls == 1);
  rt::parallel_for(4, 7, 7, 1, 1, [&](int64_t, int64_t) { ++calls; });
  BOOST_TEST(calls == 1);  // an empty range runs nothing
  rt::parallel_for(1, 0, 1 << 20, 1, 1, [&](int64_t lo, int64_t hi) {
    ++calls;
    BOOST_TEST((lo == 0 && hi == (1 << 20)));
  });
  BOOST_TEST(calls == 2);  // one thread asked for: one call
}

// A failed check in two chunks: the error of the lower one, as the serial loop would raise first.
BOOST_AUTO_TEST_CASE(the_lowest_chunks_error_comes_back) {
  for (int round = 0; round < 2000; ++round) {
    try {
      rt::parallel_for(3, 0, 3000, 16, 16, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          if (i == 2500 || i == 1500 || (round % 2 == 0 && i == 700))
            rt::fail(3, 14, "index ", i, " is out of range");
      });
      BOOST_FAIL("no error");
    } catch (const scangen::Error& e) {
      const std::string want = round % 2 == 0 ? "index 700 is out of range" : "index 1500 is out of range";
      if (e.what() != want || e.line() != 3 || e.column() != 14) BOOST_FAIL("round " << round << ": " << e.what());
    }
  }
  // The pool still runs loops after errors.
  std::atomic<int64_t> sum{0};
  rt::parallel_for(3, 0, 3000, 16, 16, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum.fetch_add(i);
  });
  BOOST_TEST(sum.load() == 3000 * 2999 / 2);
}

BOOST_AUTO_TEST_CASE(nested_and_concurrent_loops_run_serially_inside) {
  std::atomic<int64_t> inner{0};
  rt::parallel_for(2, 0, 64, 16, 16, [&](int64_t lo, int64_t hi) {
    rt::parallel_for(2, 0, 64, 16, 16, [&](int64_t a, int64_t b) { inner.fetch_add((b - a) * (hi - lo)); });
  });
  BOOST_TEST(inner.load() == 64 * 64);
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int round = 0; round < 2000; ++round)
      rt::parallel_for(2, 0, 256, 16, 16, [&](int64_t lo, int64_t hi) { total.fetch_add(hi - lo); });
  };
  std::thread other(caller);
  caller();
  other.join();
  BOOST_TEST(total.load() == 2 * 2000 * 256);
}

template <class T> void check_parallel_matmul(int64_t m, int64_t k, int64_t n, int threads) {
  std::mt19937 random(unsigned(m * 131 + k * 7 + n));
  std::uniform_real_distribution<double> value(-2, 2);
  std::vector<T> a(size_t(m * k)), b(size_t(k * n)), serial(size_t(m * n)), parallel(size_t(m * n));
  for (T& x : a) x = T(value(random));
  for (T& x : b) x = T(value(random));
  rt::matmul(serial.data(), a.data(), b.data(), m, k, n);
  rt::parallel_matmul(threads, parallel.data(), a.data(), b.data(), m, k, n);
  BOOST_TEST(std::memcmp(serial.data(), parallel.data(), serial.size() * sizeof(T)) == 0,
             "m=" << m << " k=" << k << " n=" << n << " threads=" << threads);
}

BOOST_AUTO_TEST_CASE(parallel_matmul_gives_the_serial_bits) {
  for (int threads : {2, 3})
    for (int64_t m : {1, 2, 7, 33, 100, 301})
      for (int64_t kn : {16, 100, 256}) {
        check_parallel_matmul<float>(m, kn, kn, threads);
        check_parallel_matmul<double>(m, kn, kn + 3, threads);
        check_parallel_matmul<int32_t>(m, kn, kn, threads);
      }
}

}  // namespace
