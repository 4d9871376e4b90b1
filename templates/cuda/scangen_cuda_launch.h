// The host side of running one emitted kernel (scangen_cuda_abi.h): choosing the grid, the launch
// record, the arena, and launching again with a larger arena when the kernel asks for one.
//
// One implementation for every host: the scangen runtime (CUDA driver API), the host glue of an
// offline .cu (CUDA runtime API) and the CPU emulation of the tests each supply `Ops`:
//   unsigned long long allocate(size_t bytes);       device memory (throws when there is none)
//   void release(unsigned long long address);
//   void upload(unsigned long long to, const void* from, size_t bytes);
//   void download(void* to, unsigned long long from, size_t bytes);
//   unsigned max_blocks(unsigned block);             blocks of `block` threads resident at once
//   void launch(const LaunchShape&, unsigned long long launch, unsigned long long tensors);
//                                                    runs the kernel to completion
// Host C++17; embedded into offline .cu files after scangen_cuda_abi.h.
#ifndef SCANGEN_CUDA_LAUNCH_V1_H
#define SCANGEN_CUDA_LAUNCH_V1_H

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace scangen_cuda_launch_v1 {

// The grid barrier's counters on cache lines of their own (the record starts line-aligned).
static_assert(offsetof(scangen_cuda_launch, barrier_arrived) == 0 &&
                  offsetof(scangen_cuda_launch, barrier_round) == SCANGEN_CUDA_LINE_BYTES &&
                  offsetof(scangen_cuda_launch, abi_version) == 2 * SCANGEN_CUDA_LINE_BYTES,
              "the grid barrier's counters share a cache line");

struct LaunchShape {
  unsigned grid = 1;
  unsigned block = 32;
  bool cooperative = false;  // several blocks: all resident, for the grid barrier
  unsigned shared_bytes = 0;  // dynamic shared memory per block
};

// The dynamic shared memory of a launch of one block, where the kernel keeps the buffers a step
// reads back (states' rows, a step's temporaries) while they fit. With the 6 KB of matmul's tiles
// it stays under the 48 KB a kernel may use without opting in. Launches of several blocks get
// none: a buffer in one block's shared memory is not visible to the others.
constexpr unsigned kBlockSharedBytes = 32 * 1024;

// Threads for `width` parallel elements (the largest element loop of the function, computed on
// the host from the argument shapes): one warp at least, blocks of up to `block_limit` threads,
// and no more blocks than the device holds at once (`max_blocks(block)`).
template <class MaxBlocks>
LaunchShape launch_shape(long long width, MaxBlocks&& max_blocks, unsigned block_limit = SCANGEN_CUDA_BLOCK_THREADS) {
  if (block_limit > SCANGEN_CUDA_BLOCK_THREADS) block_limit = SCANGEN_CUDA_BLOCK_THREADS;
  LaunchShape s;
  unsigned long long threads = width < 1 ? 1ull : (unsigned long long)width;
  unsigned long long block = (threads + 31) / 32 * 32;
  s.block = unsigned(block < block_limit ? block : block_limit);
  unsigned long long blocks = (threads + s.block - 1) / s.block;
  if (blocks > 1) {
    unsigned resident = max_blocks(s.block);
    if (resident < 1) resident = 1;
    if (blocks > resident) blocks = resident;
  }
  s.grid = unsigned(blocks);
  s.cooperative = s.grid > 1;
  s.shared_bytes = s.grid == 1 ? kBlockSharedBytes : 0;
  return s;
}

struct Outcome {
  bool ok = false;
  // When not ok: the error of the .scan program.
  int line = 0;
  int column = 0;
  std::string message;
  // When ok: the arena the results point into (now the caller's to release) and the results.
  unsigned long long arena = 0;
  std::vector<scangen_cuda_tensor> results;
  int launches = 0;
};

// The message of a failed launch, its numbers printed in place of their marks.
inline std::string error_text(const scangen_cuda_launch& launch) {
  std::string text;
  int number = 0;
  for (const char* c = launch.error_message; *c; ++c) {
    if (*c == SCANGEN_CUDA_ERROR_NUMBER_MARK && number < SCANGEN_CUDA_ERROR_NUMBERS)
      text += std::to_string(launch.error_numbers[number++]);
    else
      text += *c;
  }
  return text;
}

// Runs the kernel on `args` (device addresses, shapes and scalar values filled in). `arena_hint`
// is the arena to start with, and is raised to what the function used, so the next call with the
// same shapes launches once. `block_limit`: the most threads of a block (the emulation uses few).
// `outs`: the result records that ask for the results in the caller's memory (scangen_cuda_abi.h),
// or null.
template <class Ops>
Outcome run(Ops& ops, const std::vector<scangen_cuda_tensor>& args, int num_results, long long width,
            unsigned long long& arena_hint, unsigned block_limit = SCANGEN_CUDA_BLOCK_THREADS,
            const std::vector<scangen_cuda_tensor>* outs = nullptr) {
  const size_t count = args.size() + size_t(num_results);
  const size_t tensors_offset = (sizeof(scangen_cuda_launch) + 255) / 256 * 256;
  const size_t record_bytes = tensors_offset + count * sizeof(scangen_cuda_tensor);
  std::vector<unsigned char> host(record_bytes, 0);
  auto* launch = reinterpret_cast<scangen_cuda_launch*>(host.data());
  auto* tensors = reinterpret_cast<scangen_cuda_tensor*>(host.data() + tensors_offset);
  struct Memory {
    Ops& ops;
    unsigned long long address = 0;
    ~Memory() {
      if (address) ops.release(address);
    }
  };
  Memory record{ops};
  record.address = ops.allocate(record_bytes);
  const LaunchShape shape = launch_shape(width, [&](unsigned block) { return ops.max_blocks(block); }, block_limit);
  unsigned long long capacity = arena_hint < 4096 ? 4096 : arena_hint;
  Outcome out;
  // The allocation that asked for a larger arena, reported when there is no such memory.
  Outcome wanted;
  for (;;) {
    Memory arena{ops};
    try {
      arena.address = ops.allocate(size_t(capacity));
    } catch (const std::exception& e) {
      if (wanted.message.empty()) throw;
      wanted.message += std::string(": ") + e.what();
      return wanted;
    }
    std::memset(host.data(), 0, host.size());
    launch->abi_version = SCANGEN_CUDA_ABI_VERSION;
    launch->num_args = int(args.size());
    launch->num_results = num_results;
    launch->arena = arena.address;
    launch->arena_capacity = capacity;
    launch->shared_capacity = shape.shared_bytes;
    launch->error_key = ~0ull;
    for (size_t i = 0; i < args.size(); ++i) tensors[i] = args[i];
    if (outs)
      for (size_t i = 0; i < outs->size() && i < size_t(num_results); ++i) tensors[args.size() + i] = (*outs)[i];
    ops.upload(record.address, host.data(), host.size());
    ops.launch(shape, record.address, record.address + tensors_offset);
    ++out.launches;
    ops.download(host.data(), record.address, host.size());
    if (launch->status == SCANGEN_CUDA_NEEDS_ARENA) {
      // Each launch gets further than the last: the arena grows past what it stopped at.
      if (launch->arena_needed <= capacity || out.launches > 64)
        throw std::logic_error("scangen kernel: the arena protocol did not progress");
      unsigned long long twice = capacity * 2;
      capacity = launch->arena_needed > twice ? launch->arena_needed : twice;
      wanted.line = launch->error_line;
      wanted.column = launch->error_column;
      launch->error_message[SCANGEN_CUDA_ERROR_CAPACITY - 1] = '\0';
      wanted.message = error_text(*launch);
      continue;
    }
    if (launch->status == SCANGEN_CUDA_USER_ERROR) {
      out.line = launch->error_line;
      out.column = launch->error_column;
      launch->error_message[SCANGEN_CUDA_ERROR_CAPACITY - 1] = '\0';
      out.message = error_text(*launch);
      return out;
    }
    if (launch->status != SCANGEN_CUDA_RUNNING)
      throw std::logic_error("scangen kernel: unknown status " + std::to_string(launch->status));
    if (launch->arena_used > arena_hint) arena_hint = launch->arena_used;
    out.ok = true;
    out.arena = arena.address;
    arena.address = 0;
    out.results.assign(tensors + args.size(), tensors + count);
    return out;
  }
}

}  // namespace scangen_cuda_launch_v1

#endif  // SCANGEN_CUDA_LAUNCH_V1_H
