// The few NVRTC and CUDA driver entry points the CUDA runtime uses, declared here with their
// documented C signatures so that building scangen needs neither CUDA headers nor CUDA libraries:
// both libraries are loaded with dlopen at run time (cuda_loader.cpp). Not part of the public API.
//
// Driver entry points whose cuda.h name is a macro for a versioned symbol (cuMemAlloc ->
// cuMemAlloc_v2 and so on) are looked up under the versioned name, as cuda.h would call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace scangen::cuda_api {

// ---------------------------------------------------------------------------------------------
// NVRTC (nvrtc.h)

using nvrtcResult = int;
using nvrtcProgram = struct NvrtcProgramImpl*;

constexpr nvrtcResult NVRTC_SUCCESS = 0;
constexpr nvrtcResult NVRTC_ERROR_OUT_OF_MEMORY = 1;
constexpr nvrtcResult NVRTC_ERROR_INVALID_OPTION = 5;
constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;
constexpr nvrtcResult NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7;

using nvrtcGetErrorString_t = const char* (*)(nvrtcResult result);
using nvrtcVersion_t = nvrtcResult (*)(int* major, int* minor);
using nvrtcGetNumSupportedArchs_t = nvrtcResult (*)(int* num_archs);
using nvrtcGetSupportedArchs_t = nvrtcResult (*)(int* supported_archs);
using nvrtcCreateProgram_t = nvrtcResult (*)(nvrtcProgram* prog, const char* src, const char* name,
                                             int num_headers, const char* const* headers,
                                             const char* const* include_names);
using nvrtcDestroyProgram_t = nvrtcResult (*)(nvrtcProgram* prog);
using nvrtcCompileProgram_t = nvrtcResult (*)(nvrtcProgram prog, int num_options,
                                              const char* const* options);
using nvrtcGetSize_t = nvrtcResult (*)(nvrtcProgram prog, std::size_t* size);  // PTX, CUBIN, log
using nvrtcGetBytes_t = nvrtcResult (*)(nvrtcProgram prog, char* bytes);

// "12.4" for a CUDA version counted as cuDriverGetVersion does (12040).
std::string cuda_version_text(int version);

struct Nvrtc {
  std::filesystem::path path;  // the file that was loaded, symbolic links resolved
  int major = 0;
  int minor = 0;
  int version() const { return 1000 * major + 10 * minor; }  // counted as cuDriverGetVersion does
  std::string version_text() const { return cuda_version_text(version()); }
  std::vector<int> supported_archs;  // empty when this NVRTC cannot list them (before 11.2)

  nvrtcGetErrorString_t GetErrorString = nullptr;
  nvrtcVersion_t Version = nullptr;
  nvrtcCreateProgram_t CreateProgram = nullptr;
  nvrtcDestroyProgram_t DestroyProgram = nullptr;
  nvrtcCompileProgram_t CompileProgram = nullptr;
  nvrtcGetSize_t GetProgramLogSize = nullptr;
  nvrtcGetBytes_t GetProgramLog = nullptr;
  nvrtcGetSize_t GetPTXSize = nullptr;
  nvrtcGetBytes_t GetPTX = nullptr;
  nvrtcGetSize_t GetCUBINSize = nullptr;
  nvrtcGetBytes_t GetCUBIN = nullptr;

  // "NVRTC_ERROR_COMPILATION" and the like.
  std::string error_name(nvrtcResult result) const;
};

// The NVRTC of this process for the current value of $SCANGEN_NVRTC and for code that a driver of
// CUDA version `driver_version` will load (cuDriverGetVersion; 0 when unknown), loaded on first
// use and never unloaded: the first candidate (see cuda.h for the search order) whose major
// version the driver supports. Throws RuntimeError when none can be loaded, or none is old enough.
std::shared_ptr<const Nvrtc> load_nvrtc(int driver_version = 0);

// ---------------------------------------------------------------------------------------------
// The CUDA driver API (cuda.h)

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUdevice_attribute = int;
using CUjit_option = int;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_DEVICE_UNAVAILABLE = 46;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_DEVICE_NOT_LICENSED = 102;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_JIT_COMPILATION_DISABLED = 223;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr CUresult CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
constexpr CUresult CUDA_ERROR_SYSTEM_NOT_READY = 802;
constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
constexpr CUresult CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;
constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95;

constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

struct Driver {
  std::string path;  // what was passed to dlopen: "libcuda.so.1" or $SCANGEN_CUDA_DRIVER
  void* handle = nullptr;

  CUresult (*Init)(unsigned int flags) = nullptr;
  CUresult (*DriverGetVersion)(int* version) = nullptr;
  CUresult (*GetErrorName)(CUresult error, const char** text) = nullptr;
  CUresult (*GetErrorString)(CUresult error, const char** text) = nullptr;
  CUresult (*DeviceGetCount)(int* count) = nullptr;
  CUresult (*DeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*DeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*DeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
  CUresult (*DeviceTotalMem)(std::size_t* bytes, CUdevice device) = nullptr;           // _v2
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*DevicePrimaryCtxRelease)(CUdevice device) = nullptr;                      // _v2
  CUresult (*CtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*ModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options,
                               CUjit_option* options, void** option_values) = nullptr;
  CUresult (*ModuleUnload)(CUmodule module) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;              // _v2
  CUresult (*MemFree)(CUdeviceptr pointer) = nullptr;                                   // _v2
  CUresult (*MemcpyHtoD)(CUdeviceptr destination, const void* source, std::size_t bytes) = nullptr;  // _v2
  CUresult (*MemcpyDtoH)(void* destination, CUdeviceptr source, std::size_t bytes) = nullptr;        // _v2
  CUresult (*MemsetD8)(CUdeviceptr destination, unsigned char value, std::size_t count) = nullptr;  // _v2
  CUresult (*LaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                           unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                           unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                           void** params, void** extra) = nullptr;
  CUresult (*LaunchCooperativeKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                                      unsigned int grid_z, unsigned int block_x,
                                      unsigned int block_y, unsigned int block_z,
                                      unsigned int shared_bytes, CUstream stream,
                                      void** params) = nullptr;
  CUresult (*StreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function,
                                                        int block_size,
                                                        std::size_t shared_bytes) = nullptr;

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)": the driver's name and description, or scangen's
  // own names where the driver gives none (the toolkit's stub libcuda.so answers nothing).
  std::string describe(CUresult result) const;
};

// The CUDA driver for the current value of $SCANGEN_CUDA_DRIVER (default libcuda.so.1), loaded on
// first use and never unloaded. Throws RuntimeError("CUDA driver not found (libcuda.so.1): ...").
std::shared_ptr<const Driver> load_driver();

}  // namespace scangen::cuda_api
