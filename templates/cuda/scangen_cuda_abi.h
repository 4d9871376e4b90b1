/* The C ABI between a CUDA kernel that scangen emits and the host code that launches it: the
 * scangen runtime (JIT), the host glue of an offline .cu, and the CPU emulation of the tests.
 *
 * Every emitted kernel has the signature
 *     extern "C" __global__ void scangen_kernel_<n>(scangen_cuda_launch* launch,
 *                                                   scangen_cuda_tensor* tensors);
 * Both point into one device allocation: the launch record, then the function's arguments and
 * results (tensors[0, num_args) and tensors[num_args, num_args + num_results)). A result record
 * the host fills before the launch with `scalar` = 1, `data` and `shape` asks for the result in
 * that memory (the caller's; the form of the typed API with trailing result tensors); the host
 * leaves the records zero otherwise. The kernel runs a
 * whole function; buffers it needs are carved out of the arena the host gives it. When the arena
 * is too small the kernel stops early with SCANGEN_CUDA_NEEDS_ARENA and says how many bytes it
 * needed so far; the host launches again with a larger arena (scangen_cuda_launch.h). Embedded
 * verbatim into emitted code; keep it plain C and free of standard headers (NVRTC has none). */
#ifndef SCANGEN_CUDA_ABI_H
#define SCANGEN_CUDA_ABI_H

#define SCANGEN_CUDA_ABI_VERSION 6
#define SCANGEN_CUDA_MAX_RANK 8
/* The most threads of a block: launches use at most this many, and kernels may say so in
 * __launch_bounds__ (a launch of more threads than a kernel declares fails). */
#define SCANGEN_CUDA_BLOCK_THREADS 256
#define SCANGEN_CUDA_ERROR_CAPACITY 1024
/* Numbers in an error message: the kernel writes the mark in their place and the number into
 * error_numbers; the host prints them. The most a message has: two shapes of rank 8 (shapes that
 * cannot be broadcast together). */
#define SCANGEN_CUDA_ERROR_NUMBERS 16
#define SCANGEN_CUDA_ERROR_NUMBER_MARK '\x01'
/* The alignment of every buffer carved out of the arena (bytes). */
#define SCANGEN_CUDA_ARENA_ALIGNMENT 256
/* A cache line of the GPU's L1 and L2 (bytes). The launch record starts at an address aligned to
 * SCANGEN_CUDA_ARENA_ALIGNMENT (device allocations are). */
#define SCANGEN_CUDA_LINE_BYTES 128

/* status */
#define SCANGEN_CUDA_RUNNING 0 /* set by the host; still 0 after a kernel that finished well */
#define SCANGEN_CUDA_USER_ERROR 1
#define SCANGEN_CUDA_NEEDS_ARENA 2

typedef struct scangen_cuda_tensor {
  unsigned long long data;  /* device address of the first element; rank 0: unused */
  unsigned long long scalar; /* rank 0: the value's bytes, in the low bytes */
  long long shape[SCANGEN_CUDA_MAX_RANK];
  int rank;
  int dtype; /* enum scangen_dtype of scangen_abi.h */
} scangen_cuda_tensor;

typedef struct scangen_cuda_launch {
  /* The grid barrier: arrivals of this round, and rounds completed; zero at launch. Each has a
   * cache line of its own: the block leaders that wait poll barrier_round, and would otherwise
   * slow the atomic arrivals and every access to the fields below. */
  unsigned int barrier_arrived;
  unsigned int barrier_arrived_line[SCANGEN_CUDA_LINE_BYTES / sizeof(unsigned int) - 1];
  unsigned int barrier_round;
  unsigned int barrier_round_line[SCANGEN_CUDA_LINE_BYTES / sizeof(unsigned int) - 1];
  int abi_version;
  int num_args;
  int num_results;
  int status;
  unsigned long long arena;           /* device address */
  unsigned long long arena_capacity;  /* bytes */
  unsigned long long arena_needed;    /* NEEDS_ARENA: bytes the kernel needed when it stopped; the
                                       * error fields then say which allocation it was (the error
                                       * the host reports when it cannot have that many) */
  unsigned long long arena_used;      /* bytes used by a kernel that finished */
  /* The error: several threads may fail at once; the one with the smallest key (the element
   * index in its loop, 0 outside element loops) is kept, under error_lock. */
  unsigned int error_lock;
  int error_line;
  int error_column;
  /* Bytes of dynamic shared memory each block has (the launch's sharedMemBytes); the kernel keeps
   * buffers there when the launch is one block (scangen_cuda_device.h, Storage). */
  unsigned int shared_capacity;
  /* Whether a thread failed in a phase (the code between two barriers), by the phase's parity:
   * after a barrier, threads ask whether the phase before it failed, and a fast thread's failure
   * in the next phase goes to the other slot, so a slow thread cannot mistake it for this one's
   * (scangen_cuda_device.h, Context::failed). */
  unsigned int phase_failed[2];
  unsigned long long error_key;
  long long error_numbers[SCANGEN_CUDA_ERROR_NUMBERS];
  char error_message[SCANGEN_CUDA_ERROR_CAPACITY];
} scangen_cuda_launch;

#endif /* SCANGEN_CUDA_ABI_H */
