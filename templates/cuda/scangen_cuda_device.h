// Device helpers of emitted CUDA kernels: one thread's view of the launch (its rank among all
// threads, barriers, the arena buffers come from, failures), buffers that keep their capacity,
// and the copy and matrix product spread over the threads. Every emitted .cu embeds this text
// after scangen_cuda_abi.h and scangen_scalar.h. It compiles with NVRTC (no standard headers) and
// nvcc, and as host C++ under the emulation of the tests (tests/cuda_emulation/).
//
// The execution model (docs/cuda.md): every thread of the grid runs the whole function. Code
// outside element loops is uniform: every thread computes the same scalars and stores the same
// values, so no thread waits for another to learn them. An element loop gives each thread the
// elements rank, rank + width, ...; a barrier follows it before anyone reads what it wrote.
#ifndef SCANGEN_CUDA_DEVICE_V1_H
#define SCANGEN_CUDA_DEVICE_V1_H

// Threads of a warp wait for each other in spin loops (the failure lock, the grid barrier), which
// needs the independent thread scheduling of Volta and newer; before it, they could spin forever.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "scangen's CUDA kernels need a device of compute capability 7.0 or newer"
#endif

// Reads of words other threads write, not cached in a register (the emulation replaces them).
#ifndef SCANGEN_CUDA_LOAD_VOLATILE
#define SCANGEN_CUDA_LOAD_VOLATILE(p) (*(volatile const unsigned int*)(p))
#define SCANGEN_CUDA_LOAD_VOLATILE64(p) (*(volatile const unsigned long long*)(p))
#define SCANGEN_CUDA_STORE_VOLATILE64(p, v) (*(volatile unsigned long long*)(p) = (v))
#endif

// Where a thread of uniform code loads or stores memory the kernel writes: nothing on a GPU. The
// emulation delays threads there at random (scangen_cuda_emulation.h) to show missing barriers.
#ifndef SCANGEN_CUDA_RACE_POINT
#define SCANGEN_CUDA_RACE_POINT()
#endif

// The threads an SM holds at once (the CUDA C++ Programming Guide's table), and so the blocks of
// SCANGEN_CUDA_BLOCK_THREADS: kernels that stream independent lanes ask for that many blocks in
// __launch_bounds__, which caps their registers at 65536 / (threads held) (docs/cuda.md). An
// architecture not listed gets 1536, which every one since Volta but Turing holds.
#if !defined(__CUDA_ARCH__)
#define SCANGEN_CUDA_SM_THREADS 2048
#elif __CUDA_ARCH__ == 750
#define SCANGEN_CUDA_SM_THREADS 1024
#elif __CUDA_ARCH__ == 700 || __CUDA_ARCH__ == 720 || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
#define SCANGEN_CUDA_SM_THREADS 2048
#else
#define SCANGEN_CUDA_SM_THREADS 1536
#endif
#define SCANGEN_CUDA_LANE_BLOCKS (SCANGEN_CUDA_SM_THREADS / SCANGEN_CUDA_BLOCK_THREADS)

namespace scangen_cuda_v1 {

// The block's dynamic shared memory (launch->shared_capacity bytes). The emulation gives each
// emulated block its own buffer instead.
#ifndef SCANGEN_CUDA_SHARED_POOL
#define SCANGEN_CUDA_SHARED_POOL() ::scangen_cuda_v1::detail::shared_pool()
namespace detail {
__device__ inline unsigned char* shared_pool() {
  extern __shared__ double scangen_shared_pool[];  // double: 8-byte aligned for every element type
  return (unsigned char*)scangen_shared_pool;
}
}  // namespace detail
#endif

namespace detail {
// The bytes of a value, without memcpy (NVRTC has no <cstring>).
__device__ inline void copy_bytes(void* to, const void* from, unsigned count) {
  for (unsigned i = 0; i < count; ++i) ((unsigned char*)to)[i] = ((const unsigned char*)from)[i];
}

// The grid-wide half of Context::barrier(), after the block's __syncthreads(): block leaders meet
// in the launch record. Out of line, as it is the same at every barrier.
__device__ __noinline__ inline void grid_barrier(scangen_cuda_launch* launch) {
  if (threadIdx.x == 0) {
    // The round is read before arriving: it cannot advance until this block has arrived.
    unsigned int round = SCANGEN_CUDA_LOAD_VOLATILE(&launch->barrier_round);
    __threadfence();
    if (atomicAdd(&launch->barrier_arrived, 1u) == gridDim.x - 1) {
      atomicExch(&launch->barrier_arrived, 0u);
      __threadfence();
      atomicAdd(&launch->barrier_round, 1u);
    } else {
      // Waiting leaders poll less and less often (32 ns, doubling up to 256 ns), leaving the
      // memory system to the blocks still working and arriving; 256 ns keeps what a barrier
      // loses to the last sleep small beside its own cost.
      unsigned int pause = 32;
      while (SCANGEN_CUDA_LOAD_VOLATILE(&launch->barrier_round) == round) {
        __nanosleep(pause);
        if (pause < 256) pause *= 2;
      }
    }
    __threadfence();
  }
  __syncthreads();
}

// One piece of an error message: text, or (text null) a number. Numbers are written by the host
// (scangen_cuda_launch.h): 64-bit decimal printing in every kernel made NVRTC several times slower.
struct Part {
  __device__ Part(const char* t) : text(t), number(0) {}
  __device__ Part(long long v) : text(nullptr), number(v) {}
  __device__ Part(long v) : text(nullptr), number(v) {}
  const char* text;
  long long number;
};
template <class T>
struct IsText {
  static constexpr bool value = false;
};
template <decltype(sizeof(0)) N>
struct IsText<char[N]> {
  static constexpr bool value = true;
};
template <>
struct IsText<const char*> {
  static constexpr bool value = true;
};
template <class... Parts>
struct NumberCount {
  static constexpr int value = 0;
};
template <class Part, class... Parts>
struct NumberCount<Part, Parts...> {
  static constexpr int value = (IsText<Part>::value ? 0 : 1) + NumberCount<Parts...>::value;
};

// The message of a failure (or of the allocation that stopped a launch) into the launch record.
__device__ __noinline__ inline void write_message(scangen_cuda_launch* launch, int line, int column, const Part* parts,
                                                  int count) {
  launch->error_line = line;
  launch->error_column = column;
  int n = 0, numbers = 0;
  for (int i = 0; i < count && n + 1 < SCANGEN_CUDA_ERROR_CAPACITY; ++i) {
    if (!parts[i].text) {
      launch->error_numbers[numbers++] = parts[i].number;
      launch->error_message[n++] = SCANGEN_CUDA_ERROR_NUMBER_MARK;
      continue;
    }
    for (const char* c = parts[i].text; *c && n + 1 < SCANGEN_CUDA_ERROR_CAPACITY; ++c)
      launch->error_message[n++] = *c;
  }
  launch->error_message[n] = '\0';
}

// Out of line, once per module: failures are rare, and a message inlined at every check made the
// kernels large and slow to compile.
__device__ __noinline__ inline void record_failure(scangen_cuda_launch* launch, long long key, int line, int column,
                                            const Part* parts, int count) {
  // The kept key only decreases: a failure that cannot win need not queue for the lock (when
  // every element fails, most of them).
  if ((unsigned long long)key >= SCANGEN_CUDA_LOAD_VOLATILE64(&launch->error_key)) return;
  while (atomicCAS(&launch->error_lock, 0u, 1u) != 0u) {
  }
  __threadfence();
  if ((unsigned long long)key < launch->error_key) {
    // Read without the lock by other threads' early-out above.
    SCANGEN_CUDA_STORE_VOLATILE64(&launch->error_key, (unsigned long long)key);
    write_message(launch, line, column, parts, count);
    launch->status = SCANGEN_CUDA_USER_ERROR;
  }
  __threadfence();
  atomicExch(&launch->error_lock, 0u);
}
}  // namespace detail

// One thread's view of the launch. Its arena cursor is uniform: every thread carves the same
// buffers in the same order, so they agree on every address without talking.
class Context {
 public:
  __device__ Context(scangen_cuda_launch* launch, scangen_cuda_tensor* tensors)
      : launch_(launch),
        tensors_(tensors),
        rank_((long long)blockIdx.x * blockDim.x + threadIdx.x),
        width_((long long)gridDim.x * blockDim.x) {}

  __device__ long long rank() const { return rank_; }
  __device__ long long width() const { return width_; }
  __device__ bool leader() const { return rank_ == 0; }

  // Every thread of the grid waits here for all others: __syncthreads() for one block, else a
  // barrier over a cooperative launch (all blocks resident), counted in the launch record. Each
  // barrier ends a phase; every thread passes the same barriers, so phase_ is uniform.
  __device__ void barrier() {
    __syncthreads();
    if (gridDim.x > 1) detail::grid_barrier(launch_);
    ++phase_;
  }

  // Records the error of the .scan program at line:column. Of several failing threads, the one
  // with the smallest key (the element index; 0 in uniform code) wins, as in sequential order.
  // The caller then skips to the element loop's barrier, after which every thread returns.
  template <class... Parts>
  __device__ void fail(long long key, int line, int column, const Parts&... parts) {
    static_assert(detail::NumberCount<Parts...>::value <= SCANGEN_CUDA_ERROR_NUMBERS,
                  "an error message with more numbers than the launch record holds");
    launch_->phase_failed[phase_ & 1u] = 1u;
    const detail::Part list[] = {detail::Part(parts)...};
    detail::record_failure(launch_, key, line, column, list, int(sizeof...(Parts)));
  }
  // A failure of uniform code, which every thread meets alike and then returns: one records it.
  template <class... Parts>
  __device__ void fail_uniform(int line, int column, const Parts&... parts) {
    if (leader()) fail(0, line, column, parts...);
  }
  // After take() found the arena full: which allocation it was, at line:column, in the words every
  // backend uses for a value it cannot allocate. The host reports it when it cannot have the
  // larger arena; otherwise it launches again. Uniform, like take().
  template <class... Parts>
  __device__ void arena_full(int line, int column, const Parts&... parts) {
    static_assert(detail::NumberCount<Parts...>::value <= SCANGEN_CUDA_ERROR_NUMBERS,
                  "an error message with more numbers than the launch record holds");
    if (!leader() || launch_->status != SCANGEN_CUDA_NEEDS_ARENA) return;
    const detail::Part list[] = {detail::Part(parts)...};
    detail::write_message(launch_, line, column, list, int(sizeof...(Parts)));
  }
  // After a barrier: whether any thread failed in the phase the barrier ended (all threads see the
  // same answer). Not the launch's status: a thread that passed the barrier early may already
  // have failed in the next phase, and a slower one would return here while the others go on to
  // wait for it at the next barrier.
  __device__ bool failed() const { return SCANGEN_CUDA_LOAD_VOLATILE(&launch_->phase_failed[(phase_ - 1u) & 1u]) != 0u; }

  // `bytes` of the arena, aligned; null (and the launch asks for a larger arena) when it is full.
  __device__ void* take(unsigned long long bytes) {
    unsigned long long start = 0;
    if (!carve(used_, launch_->arena_capacity, SCANGEN_CUDA_ARENA_ALIGNMENT, bytes, start)) {
      if (leader()) {
        launch_->arena_needed = start + bytes < start ? ~0ull : start + bytes;
        launch_->status = SCANGEN_CUDA_NEEDS_ARENA;
      }
      return nullptr;
    }
    return (void*)(launch_->arena + start);
  }
  // `bytes` of the block's shared memory when the launch is one block and they fit, else of the
  // arena. Uniform like take(): every thread takes the same buffers from the same pool.
  __device__ void* take_block_shared(unsigned long long bytes) {
    unsigned long long start = 0;
    if (gridDim.x == 1 && carve(shared_used_, launch_->shared_capacity, 16, bytes, start))
      return (void*)(SCANGEN_CUDA_SHARED_POOL() + start);
    return take(bytes);
  }
  // A valid address for a buffer of no elements.
  __device__ void* empty() const { return (void*)launch_->arena; }

  template <class T, class... Dims>
  __device__ void result(int index, const T* data, Dims... dims) {
    if (!leader()) return;
    scangen_cuda_tensor& r = tensors_[launch_->num_args + index];
    long long shape[] = {(long long)dims...};
    r.data = (unsigned long long)data;
    r.rank = int(sizeof...(Dims));
    for (int d = 0; d < r.rank; ++d) r.shape[d] = shape[d];
  }
  template <class T>
  __device__ void result(int index, T value) {
    if (!leader()) return;
    scangen_cuda_tensor& r = tensors_[launch_->num_args + index];
    unsigned long long bits = 0;
    detail::copy_bytes(&bits, &value, sizeof(T));
    r.scalar = bits;
    r.rank = 0;
  }
  // The end of a function that ran to completion.
  __device__ void finish() {
    if (leader()) launch_->arena_used = used_;
  }

 private:
  scangen_cuda_launch* launch_;
  scangen_cuda_tensor* tensors_;
  long long rank_;
  long long width_;
  // Takes `bytes` at `alignment` from a pool of `capacity` bytes whose first `used` are taken:
  // `start` is their offset, or, when they do not fit, where they would have begun.
  __device__ static bool carve(unsigned long long& used, unsigned long long capacity, unsigned long long alignment,
                               unsigned long long bytes, unsigned long long& start) {
    start = (used + alignment - 1) / alignment * alignment;
    if (bytes > capacity || start > capacity - bytes) return false;
    used = start + bytes;
    return true;
  }

  unsigned long long used_ = 0;
  unsigned long long shared_used_ = 0;
  unsigned int phase_ = 0;  // barriers passed
};

// Arguments, as the kernel receives them.
template <class T>
__device__ inline const T* tensor_arg(const scangen_cuda_tensor& t) {
  return (const T*)t.data;
}
// A result record the host filled with the caller's memory (the form that writes the results
// there): its `scalar` is 1 (scangen_cuda_abi.h).
__device__ inline bool into_caller_memory(const scangen_cuda_tensor& result) { return result.scalar != 0; }
template <class T>
__device__ inline T* caller_memory(const scangen_cuda_tensor& result) {
  return (T*)result.data;
}
template <class T>
__device__ inline T scalar_arg(const scangen_cuda_tensor& t) {
  T value;
  detail::copy_bytes(&value, &t.scalar, sizeof(T));
  return value;
}

// A load of an argument. Arguments are never written while the kernel runs, so __ldg may read
// them through the read-only cache; and the compiler may issue such loads ahead of earlier stores
// (it reorders no plain load across a store it cannot prove disjoint: a time loop would wait for
// each step's loads in turn).
template <class T>
__device__ inline T input(const T* p) {
  return __ldg(p);
}
template <>
__device__ inline bool input(const bool* p) {
  return __ldg((const unsigned char*)p) != 0;
}

// Where a Storage takes its buffers: the arena, or the block's shared memory while the launch is
// one block and they fit (for buffers a step reads back and no result owns; else the arena).
enum class Place { Arena, BlockShared };

// A buffer that keeps its capacity (as the CPU backend's Storage): ensure() carves a new one only
// when asked for more than it holds. Calls are uniform; null means the arena is full.
template <class T>
class Storage {
 public:
  Storage() = default;
  __device__ explicit Storage(Place place) : place_(place) {}

  __device__ T* ensure(Context& ctx, long long count) {
    if (count > capacity_) {
      if ((unsigned long long)count > ~0ull / sizeof(T)) return nullptr;
      const unsigned long long bytes = (unsigned long long)count * sizeof(T);
      T* p = (T*)(place_ == Place::BlockShared ? ctx.take_block_shared(bytes) : ctx.take(bytes));
      if (!p) return nullptr;
      data_ = p;
      capacity_ = count;
    }
    return data_ ? data_ : (T*)ctx.empty();
  }
  // The caller's memory `p` (room for `capacity` elements) as this buffer's `count` elements: a
  // result computed where the caller asked. Null when the room is too small, which the checks of
  // the caller's shapes rule out before.
  __device__ T* lend(Context& ctx, T* p, long long capacity, long long count) const {
    if (count > capacity) return nullptr;
    return p ? p : (T*)ctx.empty();
  }
  // Room for `count` elements keeping the first `keep` (the results of a scan with `until`).
  __device__ T* grow(Context& ctx, long long count, long long keep) {
    if (count <= capacity_) return data_;
    T* old = data_;
    if (!ensure(ctx, count)) return nullptr;
    #pragma unroll 1  // a few iterations per thread: unrolling only adds code
    for (long long i = ctx.rank(); i < keep; i += ctx.width()) data_[i] = old[i];
    ctx.barrier();
    return data_;
  }

 private:
  Place place_ = Place::Arena;
  T* data_ = nullptr;
  long long capacity_ = 0;
};

template <class T>
__device__ inline void copy(Context& ctx, T* dst, const T* src, long long count) {
  #pragma unroll 1  // a few iterations per thread: unrolling only adds code
  for (long long i = ctx.rank(); i < count; i += ctx.width()) dst[i] = src[i];
  ctx.barrier();
}

// Shared memory of the block for matmul's tiles: three tiles of up to 8-byte elements. The
// emulation gives each emulated block its own buffer instead.
#ifndef SCANGEN_CUDA_MATMUL_SCRATCH
#define SCANGEN_CUDA_MATMUL_SCRATCH() ::scangen_cuda_v1::detail::matmul_scratch()
namespace detail {
__device__ inline double* matmul_scratch() {
  __shared__ double tiles[3 * 16 * 16];
  return tiles;
}
}  // namespace detail
#endif

// out[m x n] = a[m x k] @ b[k x n]. Every element's products are summed in increasing k from zero,
// as the interpreter does (with --fmad=false: the same bits), whichever way the work is spread:
// - both sides at least half a tile (16 x 16): each block computes whole output tiles, staging
//   16 x 16 tiles of a and b in shared memory, so every loaded element serves 16 products
//   (the pushed-out products of a batch or of all steps: x @ W);
// - else one output element per thread, which for a vector (m or n small: h @ W in a step) reads
//   b's rows coalesced and wastes no thread on empty tile rows.
namespace detail {
// matmul's work, out of line: one copy per element type however many products a kernel has (each
// inlined copy cost NVRTC about 50 ms), and a call per product costs nothing beside its loops.
template <class T>
__device__ __noinline__ void matmul_spread(long long rank, long long width, T* out, const T* a, const T* b,
                                           long long m, long long k, long long n) {
  constexpr int kTile = 16;
  if (m < kTile / 2 || n < kTile / 2) {
    const long long count = m * n;
    #pragma unroll 1  // a few iterations per thread: unrolling only adds code
    for (long long e = rank; e < count; e += width) {
      const long long i = e / n, j = e - i * n;
      T acc = T(0);
      for (long long p = 0; p < k; ++p)
        acc = scangen::scalar_v1::add(acc, scangen::scalar_v1::mul(a[i * k + p], b[p * n + j]));
      out[e] = acc;
    }
    return;
  }
  T* const a_tile = (T*)SCANGEN_CUDA_MATMUL_SCRATCH();
  T* const b_tile = a_tile + kTile * kTile;
  T* const sums = b_tile + kTile * kTile;  // the output tile's running sums
  const long long tiles_n = (n + kTile - 1) / kTile;
  const long long tiles = (m + kTile - 1) / kTile * tiles_n;
  // Tiles go to blocks, so the loops below are uniform within a block (its __syncthreads()).
  #pragma unroll 1
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long i0 = tile / tiles_n * kTile, j0 = tile % tiles_n * kTile;
    // A thread keeps the same elements of the tile throughout: the sums need no barrier.
    #pragma unroll 1
    for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) sums[e] = T(0);
    #pragma unroll 1
    for (long long p0 = 0; p0 < k; p0 += kTile) {
      #pragma unroll 1
      for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) {
        const int r = e / kTile, c = e % kTile;
        a_tile[e] = i0 + r < m && p0 + c < k ? a[(i0 + r) * k + p0 + c] : T(0);
        b_tile[e] = p0 + r < k && j0 + c < n ? b[(p0 + r) * n + j0 + c] : T(0);
      }
      __syncthreads();
      const int depth = k - p0 < kTile ? int(k - p0) : kTile;  // no padding enters a sum
      #pragma unroll 1
      for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) {
        const int r = e / kTile, c = e % kTile;
        T acc = sums[e];
        for (int q = 0; q < depth; ++q)
          acc = scangen::scalar_v1::add(acc, scangen::scalar_v1::mul(a_tile[r * kTile + q], b_tile[q * kTile + c]));
        sums[e] = acc;
      }
      __syncthreads();  // before the next tiles overwrite these
    }
    #pragma unroll 1
    for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) {
      const int r = e / kTile, c = e % kTile;
      if (i0 + r < m && j0 + c < n) out[(i0 + r) * n + j0 + c] = sums[e];
    }
  }
}
}  // namespace detail

template <class T>
__device__ inline void matmul(Context& ctx, T* out, const T* a, const T* b, long long m, long long k,
                              long long n) {
  detail::matmul_spread(ctx.rank(), ctx.width(), out, a, b, m, k, n);
  ctx.barrier();
}

}  // namespace scangen_cuda_v1

#endif  // SCANGEN_CUDA_DEVICE_V1_H
