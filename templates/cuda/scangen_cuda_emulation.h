// The CUDA emulation (`scangen run --backend cuda-emulation`): the kernels the CUDA backend emits,
// compiled as host C++ with this text in front, run on the CPU with one std::thread per CUDA
// thread. Barriers, atomics and the grid barrier are real, so the kernels' distribution of work
// and their barriers are exercised without a GPU; only speed and device math differ (host libm).
#ifndef SCANGEN_CUDA_EMULATION_V1_H
#define SCANGEN_CUDA_EMULATION_V1_H

#include <math.h>  // C++'s overloads in the global namespace (sqrt(float)), as NVRTC declares them
#include <stdlib.h>  // for the imported headers, which call CUDA's math functions unqualified

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __device__
#define __global__ __attribute__((visibility("default")))
#define __host__
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

struct scangen_emulation_dim3 {
  unsigned int x = 1, y = 1, z = 1;
};
// __syncthreads() of one block (C++17: the JIT's flags). A thread that returned drops out.
class scangen_emulation_barrier {
 public:
  explicit scangen_emulation_barrier(unsigned count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    unsigned round = round_;
    if (++arrived_ >= count_) return next_round();
    changed_.wait(lock, [&] { return round_ != round; });
  }
  void drop() {
    std::unique_lock<std::mutex> lock(mutex_);
    --count_;
    if (arrived_ > 0 && arrived_ >= count_) next_round();
  }

 private:
  void next_round() {
    arrived_ = 0;
    ++round_;
    changed_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  unsigned count_;
  unsigned arrived_ = 0;
  unsigned round_ = 0;
};

static thread_local scangen_emulation_dim3 threadIdx, blockIdx, blockDim, gridDim;
static thread_local scangen_emulation_barrier* scangen_emulation_block_barrier = nullptr;
// The block's shared memory for matmul's tiles (a __shared__ array on the device).
static thread_local double* scangen_emulation_matmul_scratch = nullptr;
#define SCANGEN_CUDA_MATMUL_SCRATCH() scangen_emulation_matmul_scratch
// The block's dynamic shared memory (extern __shared__ on the device).
static thread_local unsigned char* scangen_emulation_shared_pool = nullptr;
#define SCANGEN_CUDA_SHARED_POOL() scangen_emulation_shared_pool

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
// $SCANGEN_CUDA_EMULATION_STAGGER_US: after every __syncthreads(), block b waits b times that many
// microseconds, so later blocks lag behind (as blocks released one after another from a grid
// barrier do on a GPU). Tests use it to find a thread's reads racing with the next phase's writes.
static std::atomic<unsigned> scangen_emulation_stagger_us{0};
// $SCANGEN_CUDA_EMULATION_DELAY_US: random delays where threads of a GPU drift apart. At every
// SCANGEN_CUDA_RACE_POINT() (the CUDA backend prints one before each statement of uniform code
// that loads or stores memory the kernel writes) and after every __syncthreads(), a thread sleeps
// up to that many microseconds one time in two, else it yields. Each thread draws from a
// generator of its own, seeded by $SCANGEN_CUDA_EMULATION_DELAY_SEED (default 1) and its rank, so
// a seed gives every thread the same draws on every run. A load that should wait at a barrier for
// other threads' stores then often meets a slower thread's older store, as it may on a GPU.
static std::atomic<unsigned> scangen_emulation_delay_us{0};
static thread_local unsigned long long scangen_emulation_random = 0;  // the thread's generator
inline unsigned long long scangen_emulation_mix(unsigned long long x) {  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline void scangen_emulation_delay() {
  const unsigned most = scangen_emulation_delay_us.load(std::memory_order_relaxed);
  if (most == 0) return;
  scangen_emulation_random += 0x9e3779b97f4a7c15ULL;
  const unsigned long long draw = scangen_emulation_mix(scangen_emulation_random);
  if (draw & 1u) return std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::microseconds(1 + (draw >> 1) % most));
}
#define SCANGEN_CUDA_RACE_POINT() scangen_emulation_delay()
inline void __syncthreads() {
  scangen_emulation_block_barrier->arrive_and_wait();
  const unsigned stagger = scangen_emulation_stagger_us.load(std::memory_order_relaxed);
  if (stagger > 0 && blockIdx.x > 0) std::this_thread::sleep_for(std::chrono::microseconds(stagger * blockIdx.x));
  scangen_emulation_delay();
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// The grid barrier's backoff: there are more emulated threads than cores, so give the core away.
inline void __nanosleep(unsigned int) { std::this_thread::yield(); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicExch(unsigned int* p, unsigned int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicCAS(unsigned int* p, unsigned int expected, unsigned int desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
inline float __int_as_float(int bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline double __longlong_as_double(long long bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
// A spinning thread gives the core away: there are more emulated threads than cores.
inline unsigned int scangen_emulation_load(const void* p) {
  std::this_thread::yield();
  return __atomic_load_n(static_cast<const unsigned int*>(p), __ATOMIC_SEQ_CST);
}
inline unsigned long long scangen_emulation_load64(const void* p) {
  return __atomic_load_n(static_cast<const unsigned long long*>(p), __ATOMIC_SEQ_CST);
}
#define SCANGEN_CUDA_LOAD_VOLATILE(p) scangen_emulation_load(p)
#define SCANGEN_CUDA_LOAD_VOLATILE64(p) scangen_emulation_load64(p)
#define SCANGEN_CUDA_STORE_VOLATILE64(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

typedef void (*scangen_emulation_kernel)(struct scangen_cuda_launch*, struct scangen_cuda_tensor*);

// Runs `kernel` with grid x block threads, and `shared_bytes` of dynamic shared memory per block,
// to completion.
extern "C" __attribute__((visibility("default"))) void scangen_emulation_launch(
    scangen_emulation_kernel kernel, unsigned grid, unsigned block, unsigned shared_bytes,
    struct scangen_cuda_launch* launch, struct scangen_cuda_tensor* tensors) {
  const char* stagger = std::getenv("SCANGEN_CUDA_EMULATION_STAGGER_US");
  scangen_emulation_stagger_us.store(stagger ? unsigned(std::strtoul(stagger, nullptr, 10)) : 0u);
  const char* delay = std::getenv("SCANGEN_CUDA_EMULATION_DELAY_US");
  const unsigned delay_us = delay ? unsigned(std::strtoul(delay, nullptr, 10)) : 0u;
  scangen_emulation_delay_us.store(delay_us);
  const char* seed_text = std::getenv("SCANGEN_CUDA_EMULATION_DELAY_SEED");
  const unsigned long long seed = seed_text ? std::strtoull(seed_text, nullptr, 10) : 1ull;
  std::vector<std::unique_ptr<scangen_emulation_barrier>> barriers;
  for (unsigned b = 0; b < grid; ++b) barriers.push_back(std::make_unique<scangen_emulation_barrier>(block));
  // Shared memory starts with what an earlier kernel left there on a GPU: all-ones bytes here
  // (NaN, -1), so that a read before a write shows instead of finding zeros.
  const double garbage = __longlong_as_double(-1LL);
  std::vector<std::vector<double>> scratch(grid, std::vector<double>(3 * 16 * 16, garbage));
  std::vector<std::vector<double>> pools(grid, std::vector<double>(shared_bytes / sizeof(double) + 1, garbage));
  std::vector<std::thread> threads;
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([=, &barriers, &scratch, &pools] {
        threadIdx.x = t;
        blockIdx.x = b;
        blockDim.x = block;
        gridDim.x = grid;
        scangen_emulation_block_barrier = barriers[b].get();
        scangen_emulation_matmul_scratch = scratch[b].data();
        scangen_emulation_shared_pool = reinterpret_cast<unsigned char*>(pools[b].data());
        scangen_emulation_random = scangen_emulation_mix(seed * 1000003u + b * block + t);
        kernel(launch, tensors);
        // A thread that returned early still counts at its block's barriers.
        scangen_emulation_block_barrier->drop();
      });
  for (std::thread& t : threads) t.join();
}

// The JIT loads a module through its module symbol (scangen_abi.h, embedded before this text):
// this one has no functions of its own.
extern "C" __attribute__((visibility("default"))) const scangen_module_info* scangen_module_v1(void) {
  static const scangen_module_info info = {SCANGEN_ABI_VERSION, "cuda-emulation", 0, nullptr, nullptr};
  return &info;
}

#endif  // SCANGEN_CUDA_EMULATION_V1_H
