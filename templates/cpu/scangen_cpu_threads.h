// The thread pool of emitted CPU code compiled with threads (scangen --threads N): the loops that
// the loop-IR pass `threads` made parallel run through parallel_for, the products it made
// parallel through parallel_matmul, the associative scans through parallel_scan_*. Every
// generated source embeds this text after scangen_cpu_matmul.h and scangen_cpu_scan.h; code
// compiled with one thread calls none of it.
//
// The pool is created once per process, on the first parallel loop, and never destroyed: its
// workers are detached and sleep when idle, so no step and no call creates a thread, and the
// process exits without waiting for them. Since they run code of the object that holds this text
// (a shared object the JIT loaded, say), that object is marked never to be unloaded. A parallel
// loop is a fork-join: the caller publishes the job, and it and the workers claim its chunks one
// at a time until none is left, then the caller waits until every worker has acknowledged it.
// Chunk c of n is the c-th of n contiguous ranges of iterations, a few per thread, so that a
// thread the machine delays (a shared machine, more threads than cores) does not hold the others
// up; whichever thread runs a chunk, every iteration is computed by one thread in its own order:
// the results are those of the serial loop, bit for bit, for any thread count.
//
// Errors: an exception thrown in a chunk (a failed check of the program) is kept per chunk; after
// every chunk has finished, the one of the lowest chunk is rethrown on the calling thread. The
// iterations before it all ran, in order, in the same chunk or in lower ones, which finished, so
// the error is the one the serial loop would have raised first.
//
// The loop body reaches the workers through a function pointer (call_chunk<F>), here in the pool,
// never written inside a generated time loop (scangen-codecheck checks the code written there);
// the body itself is a lambda the generated code calls directly.
#ifndef SCANGEN_CPU_THREADS_V1_H
#define SCANGEN_CPU_THREADS_V1_H

#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace scangen_rt_v1 {
namespace threads_v1 {

// The most threads a parallel loop uses: scangen::kMaxThreads of the JIT API (a unit test checks
// that they agree), which the CLI and the JIT refuse to exceed.
inline constexpr int kMaxThreads = 256;
// Spins of a waiting thread before it sleeps (workers) or yields (the caller).
inline constexpr int kSpins = 4000;
// Chunks per thread of an element loop at most: enough that a delayed thread's share is taken
// over by the others, few enough that claiming them costs nothing.
inline constexpr int kChunksPerThread = 4;
inline constexpr int kMaxChunks = kMaxThreads * kChunksPerThread;

// The thread count a loop asks for: SCANGEN_NUM_THREADS if set (read once per process), else the
// count the code was compiled with; 0 means every hardware thread. A value of the variable that
// is not a whole number from 0 to kMaxThreads is an error of the run.
inline int resolve_threads(int compiled) {
  static const int from_environment = [] {
    const char* text = std::getenv("SCANGEN_NUM_THREADS");
    if (text == nullptr || *text == '\0') return -1;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 0 || value > kMaxThreads) return -2;
    return int(value);
  }();
  if (from_environment == -2)
    fail(0, 0, "SCANGEN_NUM_THREADS must be a whole number from 0 (every hardware thread) to ", int64_t(kMaxThreads));
  int threads = from_environment >= 0 ? from_environment : compiled;
  if (threads == 0) threads = int(std::thread::hardware_concurrency());
  if (threads < 1) threads = 1;
  return threads > kMaxThreads ? kMaxThreads : threads;
}

// SCANGEN_PARALLEL_GRAIN, for tests and tuning: when set (read once per process), every parallel
// loop splits into chunks of at least that many iterations at any boundary, instead of what the
// compiler chose, so that small inputs run on several threads too. -1 when unset.
inline int64_t forced_grain() {
  static const int64_t from_environment = [] {
    const char* text = std::getenv("SCANGEN_PARALLEL_GRAIN");
    if (text == nullptr || *text == '\0') return int64_t(-1);
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    if (*end != '\0' || value < 1) return int64_t(-2);
    return int64_t(value);
  }();
  if (from_environment == -2) fail(0, 0, "SCANGEN_PARALLEL_GRAIN must be a whole number of at least 1");
  return from_environment;
}

class Pool {
 public:
  // The one pool of the process, never destroyed (see the header comment).
  static Pool& instance() {
    static Pool* pool = [] {
      keep_loaded();
      return new Pool();
    }();
    return *pool;
  }

  // Runs run(context, lo, hi) over `chunks` contiguous parts of [begin, end) (at most
  // kMaxChunks) on `threads` threads, the calling one included. Returns false, having run nothing,
  // when the pool is in use (by another thread, or by this one in a chunk): the caller then runs
  // the loop itself.
  bool run(void (*run)(void*, int64_t, int64_t), void* context, int64_t begin, int64_t end, int64_t alignment,
           int threads, int chunks) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    struct Release {
      std::atomic<bool>& busy;
      ~Release() { busy.store(false, std::memory_order_release); }
    } release{busy_};
    add_workers(threads - 1);
    job_ = {run, context, begin, end, alignment, threads, chunks};
    for (int c = 0; c < chunks; ++c) errors_[c] = nullptr;
    next_chunk_.store(0, std::memory_order_relaxed);
    pending_.store(workers_, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    run_chunks();
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins)
      if (spins >= kSpins) std::this_thread::yield();
    for (int c = 0; c < chunks; ++c)
      if (errors_[c]) std::rethrow_exception(errors_[c]);
    return true;
  }

 private:
  struct Job {
    void (*run)(void*, int64_t, int64_t) = nullptr;
    void* context = nullptr;
    int64_t begin = 0, end = 0;
    int64_t alignment = 1;  // chunk boundaries are this many iterations apart from begin
    int threads = 0;        // the threads that claim chunks (the caller is thread 0)
    int chunks = 0;
  };

  Pool() = default;

  // Marks the object this code is in RTLD_NODELETE (the main program is never unloaded anyway:
  // there the call finds nothing to do).
  static void keep_loaded() {
    static const char anchor = 0;
    Dl_info info;
    if (dladdr(&anchor, &info) != 0 && info.dli_fname != nullptr)
      static_cast<void>(dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE));
  }

  // Claims and runs chunks until none is left.
  void run_chunks() {
    for (int c; (c = next_chunk_.fetch_add(1, std::memory_order_relaxed)) < job_.chunks;) run_chunk(c);
  }

  void run_chunk(int c) {
    const int64_t total = job_.end - job_.begin;
    const int64_t blocks = (total + job_.alignment - 1) / job_.alignment;
    const int64_t lo = job_.begin + blocks * c / job_.chunks * job_.alignment;
    int64_t hi = job_.begin + blocks * (c + 1) / job_.chunks * job_.alignment;
    if (hi > job_.end) hi = job_.end;
    if (lo >= hi) return;
    try {
      job_.run(job_.context, lo, hi);
    } catch (...) {
      errors_[c] = std::current_exception();
    }
  }

  // Starts workers until there are `wanted`. Only the caller holding busy_ gets here, while every
  // worker waits for the next generation.
  void add_workers(int wanted) {
    for (; workers_ < wanted; ++workers_) {
      const uint64_t seen = generation_.load(std::memory_order_relaxed);
      std::thread([this, index = workers_ + 1, seen] { work(index, seen); }).detach();
    }
  }

  void work(int index, uint64_t seen) {
    for (;;) {
      seen = wait_for_job(seen);
      if (index < job_.threads) run_chunks();
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  uint64_t wait_for_job(uint64_t seen) {
    for (int spins = 0; spins < kSpins; ++spins) {
      const uint64_t now = generation_.load(std::memory_order_acquire);
      if (now != seen) return now;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lock, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return generation_.load(std::memory_order_acquire);
  }

  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> next_chunk_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  int workers_ = 0;  // started so far (the caller is thread 0)
  Job job_;
  std::exception_ptr errors_[kMaxChunks];
};

template <class F> void call_chunk(void* body, int64_t lo, int64_t hi) { (*static_cast<F*>(body))(lo, hi); }

}  // namespace threads_v1

namespace threads_v1 {

// parallel_for with at most `chunks_per_thread` chunks per thread.
template <class F>
inline void parallel_chunks(int threads, int64_t begin, int64_t end, int64_t grain, int64_t alignment,
                            int chunks_per_thread, F&& body) {
  const int64_t total = end - begin;
  const int64_t workers = resolve_threads(threads);
  int64_t chunks = workers * chunks_per_thread;
  if (const int64_t forced = threads_v1::forced_grain(); forced > 0) {
    grain = forced;
    alignment = 1;
  }
  if (alignment < 1) alignment = 1;
  if (grain < alignment) grain = alignment;
  if (total / grain < chunks) chunks = total / grain;
  if (chunks >= 2 && workers >= 2) {
    using Body = std::remove_reference_t<F>;
    if (Pool::instance().run(&call_chunk<Body>, static_cast<void*>(&body), begin, end, alignment,
                             int(workers < chunks ? workers : chunks), int(chunks)))
      return;
  }
  if (total > 0) body(begin, end);
}

}  // namespace threads_v1

// Runs body(lo, hi) over contiguous chunks of [begin, end) on up to `threads` threads (resolved by
// resolve_threads), a few chunks per thread, at least `grain` iterations per chunk, chunk
// boundaries `alignment` iterations apart; a range too small for two chunks runs on the calling
// thread, as one call body(begin, end).
template <class F>
inline void parallel_for(int threads, int64_t begin, int64_t end, int64_t grain, int64_t alignment, F&& body) {
  threads_v1::parallel_chunks(threads, begin, end, grain, alignment, threads_v1::kChunksPerThread,
                              std::forward<F>(body));
}

// The fewest multiply-adds of a product worth a thread of its own.
inline constexpr int64_t kMatmulWorkPerThread = int64_t(1) << 17;

// A product kernel split by rows of out over the pool: every output element is still one sum in
// increasing k, computed by one thread (see scangen_cpu_matmul.h and scangen_cpu_fast.h), so the
// bits do not depend on the split. `kernel(out, a, b, m, k, n)` is matmul or matmul_fast.
template <class T, class Kernel>
inline void parallel_rows_of_product(int64_t threads, Kernel&& kernel, T* out, const T* a, const T* b, int64_t m,
                                     int64_t k, int64_t n) {
  const int64_t row_work = (k > 0 ? k : 1) * n;
  const int64_t forced = threads_v1::forced_grain();
  // One block of rows per thread: each block is one kernel call, which packs b again when its rows
  // are many (scangen_cpu_matmul.h), so fewer, larger blocks.
  const int64_t grain = forced > 0 ? forced : row_work > 0 ? (kMatmulWorkPerThread + row_work - 1) / row_work : m;
  if (m < 2 || m < 2 * grain) return kernel(out, a, b, m, k, n);
  threads_v1::parallel_chunks(int(threads), 0, m, grain, 1, 1, [&](int64_t lo, int64_t hi) {
    kernel(out + lo * n, a + lo * k, b, hi - lo, k, n);
  });
}

template <class T>
inline void parallel_matmul(int64_t threads, T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  parallel_rows_of_product(threads, [](T* o, const T* x, const T* y, int64_t r, int64_t d, int64_t c) {
    matmul(o, x, y, r, d, c);
  }, out, a, b, m, k, n);
}

// The associative scans of scangen_cpu_scan.h (embedded before this text) over the pool: chunks
// of steps when the call allows reassociating, else bands of lanes (each band's bits are the
// serial loop's). Chunks are at least SCANGEN_PARALLEL_GRAIN steps (or lanes) when it is set, so
// that tests split small inputs too.
namespace scan_v1 {
struct PoolRunner {
  int threads;
  int64_t workers() const { return threads_v1::resolve_threads(threads); }
  int64_t forced_grain() const { return threads_v1::forced_grain(); }
  template <class F> void for_each(int64_t begin, int64_t end, int64_t grain, int64_t alignment, F&& body) const {
    parallel_for(threads, begin, end, grain, alignment, std::forward<F>(body));
  }
};
}  // namespace scan_v1

#define SCANGEN_PARALLEL_SCAN_ENTRY(name, op)                                                                  \
  template <class T>                                                                                           \
  inline void parallel_##name(int64_t threads, T* out, int64_t out_rows, const T* init, const T* a,            \
                              int64_t a_step, int64_t a_lane, const T* b, int64_t b_step, int64_t b_lane,      \
                              int64_t steps, int64_t lanes, int64_t chunk_min_steps, int64_t chunk_max_lanes,  \
                              int64_t min_chunk, T* scratch) {                                                 \
    scan_v1::run_call<scan_v1::Op::op>(scan_v1::PoolRunner{int(threads)}, out, out_rows, init, a, a_step,      \
                                       a_lane, b, b_step, b_lane, steps, lanes, chunk_min_steps,               \
                                       chunk_max_lanes, min_chunk, scratch);                                   \
  }
SCANGEN_PARALLEL_SCAN_ENTRY(scan_affine, Affine)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_add_mul, AddMul)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_add, Add)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_mul, Mul)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_max, Max)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_min, Min)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_max_new_first, MaxNewFirst)
SCANGEN_PARALLEL_SCAN_ENTRY(scan_min_new_first, MinNewFirst)
#undef SCANGEN_PARALLEL_SCAN_ENTRY

// The fast mode's kernel (scangen_cpu_fast.h, which emitted code embeds before this text when the
// fast passes ran) split the same way.
#ifdef SCANGEN_CPU_FAST_V1_H
template <class T>
inline void parallel_matmul_fast(int64_t threads, T* out, const T* a, const T* b, int64_t m, int64_t k, int64_t n) {
  parallel_rows_of_product(threads, [](T* o, const T* x, const T* y, int64_t r, int64_t d, int64_t c) {
    matmul_fast(o, x, y, r, d, c);
  }, out, a, b, m, k, n);
}
#endif

}  // namespace scangen_rt_v1

#endif  // SCANGEN_CPU_THREADS_V1_H
