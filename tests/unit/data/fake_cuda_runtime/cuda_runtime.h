// A stand-in for the CUDA runtime API's header with the calls that scangen's CUDA API header
// (templates/cuda/scangen_cuda_api.h) makes, over host memory, so that its device memory cache is
// tested on machines without CUDA. Counters and knobs for the tests are in fake_cuda_runtime.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <set>

enum cudaError_t { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorIllegalAddress = 700 };
typedef struct fake_stream* cudaStream_t;

namespace fake_cuda_runtime {
inline int current_device = 0;
inline int mallocs = 0, frees = 0, synchronizations = 0;
inline std::size_t capacity = ~std::size_t(0);  // bytes that may be allocated at once
inline std::size_t allocated = 0;
inline cudaError_t synchronize_status = cudaSuccess;
inline cudaError_t last_error = cudaSuccess;
inline std::set<void*> live;
inline void reset();
}  // namespace fake_cuda_runtime

inline cudaError_t cudaGetDevice(int* device) {
  *device = fake_cuda_runtime::current_device;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  namespace f = fake_cuda_runtime;
  if (bytes > f::capacity - f::allocated) return f::last_error = cudaErrorMemoryAllocation;
  ++f::mallocs;
  // The size in front of the block, for cudaFree's accounting.
  auto* block = static_cast<std::size_t*>(std::malloc(bytes + sizeof(std::size_t)));
  *block = bytes;
  f::allocated += bytes;
  *p = block + 1;
  f::live.insert(*p);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) {
  namespace f = fake_cuda_runtime;
  if (!f::live.erase(p)) return cudaErrorIllegalAddress;
  ++f::frees;
  std::size_t* block = static_cast<std::size_t*>(p) - 1;
  f::allocated -= *block;
  std::free(block);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  ++fake_cuda_runtime::synchronizations;
  return fake_cuda_runtime::synchronize_status;
}
inline cudaError_t cudaGetLastError() {
  cudaError_t e = fake_cuda_runtime::last_error;
  fake_cuda_runtime::last_error = cudaSuccess;
  return e;
}

// A fresh machine: what earlier tests left allocated is freed, the counters are zero.
inline void fake_cuda_runtime::reset() {
  while (!live.empty()) cudaFree(*live.begin());
  current_device = mallocs = frees = synchronizations = 0;
  capacity = ~std::size_t(0);
  synchronize_status = last_error = cudaSuccess;
}
