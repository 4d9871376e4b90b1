// The CUDA runtime: compiles CUDA C++ with NVRTC (to CUBIN, or PTX), caches the binaries on disk,
// and runs them through the CUDA driver API: devices, modules, device memory, launches.
//
// Neither library is linked: libnvrtc and libcuda.so.1 are loaded with dlopen on first use, so
// scangen builds and runs without the CUDA toolkit, and this header includes no CUDA header.
//
// NVRTC is searched for in this order (the first that loads is used, and when the CUDA version of
// the driver that will load the code is known, the first whose major version is not newer than
// the driver's: code from a newer major version may not load):
//   1. $SCANGEN_NVRTC if set and non-empty, and then nothing else: a path or a library name;
//   2. libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 (the dynamic loader's search path);
//   3. the toolkit's libnvrtc found when scangen was built (when CMake found a CUDA toolkit).
// The driver is $SCANGEN_CUDA_DRIVER if set and non-empty, else libcuda.so.1.
//
// Errors (scangen/runtime/errors.h):
//   RuntimeError  what the user can change: NVRTC not found, or not NVRTC, or without its builtins
//                 library, or newer than the driver (no NVRTC found that the driver supports; PTX
//                 from an NVRTC newer than the driver); an architecture this NVRTC cannot compile
//                 for; "CUDA driver not found (libcuda.so.1): ..."; "no CUDA device: ..."; a binary
//                 the device or driver cannot run (code for another architecture, PTX newer than
//                 the driver); device memory exhausted; a cooperative launch on a device without
//                 them; the cache directory not writable, or refused (someone else's, or writable
//                 by others).
//   InternalError scangen's own mistakes: NVRTC rejecting the source or its options (the source
//                 is code scangen emitted; the message holds NVRTC's log, the options, and where
//                 the source was kept); any other failing CUDA call (a refused launch, a fault in
//                 a kernel, a missing kernel, a cooperative grid larger than the device holds),
//                 named with the driver's error name and description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace scangen {

// ---------------------------------------------------------------------------------------------
// NVRTC

struct NvrtcInfo {
  std::filesystem::path library;     // the file loaded, symbolic links resolved
  int major = 0;                     // nvrtcVersion()
  int minor = 0;
  std::vector<int> supported_archs;  // 75, 80, 86, ...; empty if this NVRTC cannot tell (< 11.2)
};

// Loads NVRTC (once per process, value of $SCANGEN_NVRTC and major version of the driver; it is
// never unloaded): the one chosen for code that a driver of CUDA version `driver_version` will load
// (CudaDeviceInfo::driver_version, 12040 for 12.4; 0 when unknown: the first that loads). Throws
// RuntimeError: "NVRTC not found (tried libnvrtc.so, ...): <reason>; install the CUDA toolkit or
// set SCANGEN_NVRTC to the path of libnvrtc.so", "cannot load NVRTC from SCANGEN_NVRTC='<path>':
// <reason>; set SCANGEN_NVRTC to the path of libnvrtc.so, or unset it", "'<path>' is not a
// usable NVRTC library: it has no <symbol>", "no NVRTC that the CUDA driver supports: the driver
// supports CUDA 12.4, ...; found NVRTC 13.0 (<path>); install ..." or "NVRTC 13.0 (<path>), named by
// SCANGEN_NVRTC, is newer than the CUDA driver, which supports CUDA 12.4: ...".
NvrtcInfo nvrtc_info(int driver_version = 0);
// Whether nvrtc_info() succeeds; if not and `why` is given, the error's message goes there.
bool nvrtc_available(std::string* why = nullptr);

enum class CudaBinaryKind { Cubin, Ptx };
const char* to_string(CudaBinaryKind kind);  // "cubin", "ptx"

// Architectures are compute capabilities written as one number, 10 * major + minor: 80 is sm_80
// (CUBIN) or compute_80 (PTX). parse_cuda_arch accepts "sm_86", "compute_86", "86" and "8.6";
// anything else is a RuntimeError. Architecture-specific variants (sm_90a) are not supported.
int parse_cuda_arch(std::string_view text);
// "sm_86" for CUBIN, "compute_86" for PTX.
std::string cuda_arch_name(CudaBinaryKind kind, int arch);

struct CudaCompileOptions {
  int arch = 80;
  CudaBinaryKind kind = CudaBinaryKind::Cubin;
  // When this NVRTC cannot compile for `arch` (say sm_120 with NVRTC 12.4): PTX for the newest
  // architecture it supports below `arch` instead, which the driver compiles for the device. When
  // false, or when NVRTC supports nothing at or below `arch`, a RuntimeError.
  bool allow_ptx_fallback = true;
  // NVRTC options after -arch (which compile() adds). The defaults: -std=c++17 --fmad=false
  // (no a*b+c contracted into an FMA: results must match the reference interpreter bit for bit).
  std::vector<std::string> options = default_options();
  std::string program_name = "scangen_kernels.cu";  // the file name NVRTC's messages use
  // The CUDA version of the driver that will load the code (CudaDeviceInfo::driver_version), 0 when
  // unknown. When known, NVRTC is chosen among those found for one whose major version the driver
  // supports (see nvrtc_info), and PTX from an NVRTC newer than the driver (say 12.8 for a 12.4
  // driver, whose PTX compiler cannot read it) is a RuntimeError; CUBIN from a newer minor version
  // of the driver's major version loads (CUDA's minor version compatibility).
  int driver_version = 0;

  static std::vector<std::string> default_options();
};

struct CudaBinary {
  CudaBinaryKind kind = CudaBinaryKind::Cubin;
  int arch = 0;       // the architecture compiled for (lower than asked after a PTX fallback)
  std::string image;  // the CUBIN's bytes or the PTX text (no terminating NUL)
  std::string log;    // NVRTC's log of the compilation (warnings); empty when it said nothing
  // Filled by CudaCompiler::compile:
  bool cache_hit = false;
  double compile_seconds = 0;         // time spent in NVRTC; 0 on a cache hit
  std::filesystem::path cache_entry;  // the entry's file

  std::string target() const { return cuda_arch_name(kind, arch); }
};

// The target `options` asks for, as this NVRTC can honour it (the PTX fallback applied): a
// CudaBinary with only kind and arch set. Loads NVRTC; throws RuntimeError if the target cannot
// be compiled for, or is PTX that the driver of options.driver_version could not read.
CudaBinary resolve_cuda_target(const CudaCompileOptions& options);

// Compiles `source` with NVRTC (no cache). NVRTC's rejection of the source or of the options is
// an InternalError holding the options and NVRTC's log (first 200 lines).
CudaBinary nvrtc_compile(const std::string& source, const CudaCompileOptions& options);

// default_cache_dir() / "cuda": $XDG_CACHE_HOME/scangen/cuda, else ~/.cache/scangen/cuda.
std::filesystem::path default_cuda_cache_dir();

// nvrtc_compile with an on-disk cache. Thread-safe; any number of processes of one user may share
// a cache directory. An entry is <key>.bin, key = SHA-256 of the source, the resolved target (kind and
// architecture), the options, the program name and NVRTC's version and file. The file holds a
// header (format version, SHA-256 of the rest, kind, architecture, sizes), NVRTC's log and the
// image; it is written to a unique temporary file renamed into place, and an entry whose
// checksum or header does not match is rebuilt, never used. <key>.cu keeps the source for people
// to read (and for bug reports when NVRTC rejects it). The cache trusts only a directory of the
// current user that no one else can write (created with mode 0700) and entries that are regular
// files of the user's that no one else can write; anything else is a RuntimeError, never used
// (runtime/src/cache_dir.h, docs/cli.md "Whom the cache trusts").
class CudaCompiler {
 public:
  explicit CudaCompiler(std::filesystem::path cache_dir = default_cuda_cache_dir());

  CudaBinary compile(const std::string& source, const CudaCompileOptions& options) const;
  std::string cache_key(const std::string& source, const CudaCompileOptions& options) const;
  std::filesystem::path entry_path(const std::string& key) const;  // <cache_dir>/<key>.bin
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

 private:
  std::filesystem::path cache_dir_;
};

// ---------------------------------------------------------------------------------------------
// Devices

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0;  // compute capability
  int minor = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  bool cooperative_launch = false;
  std::size_t total_memory = 0;
  int driver_version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0

  int arch() const { return 10 * major + minor; }
};

class CudaModule;
class CudaBuffer;

// A device with its primary context, retained while the object lives. Every call makes the
// context current on the calling thread first, so a device may be used from any thread.
class CudaDevice : public std::enable_shared_from_this<CudaDevice> {
 public:
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaDeviceInfo& info() const { return info_; }

  // Loads a compiled module (PTX is compiled for the device by the driver).
  std::shared_ptr<CudaModule> load_module(const CudaBinary& binary);
  // Device memory of `bytes` bytes (at least one byte is allocated), uninitialized.
  CudaBuffer allocate(std::size_t bytes);
  // Waits for all work of the device's context; reports faults of earlier launches.
  void synchronize();

  struct Impl;  // the driver, the device and its context (cuda_device.cpp)

 private:
  friend std::shared_ptr<CudaDevice> cuda_device(int);
  friend class CudaBuffer;
  friend class CudaModule;
  friend class CudaFunction;
  CudaDevice(std::unique_ptr<Impl> impl, CudaDeviceInfo info);

  std::unique_ptr<Impl> impl_;
  CudaDeviceInfo info_;
};

// Loads the driver, initializes it (cuInit, once per process) and returns device `ordinal`, the
// same object while someone holds it. Throws RuntimeError "CUDA driver not found (libcuda.so.1):
// <dlerror>" when the driver cannot be loaded, "no CUDA device: ..." when cuInit fails (with the
// driver's error), the driver reports no devices, or there is no device `ordinal`.
std::shared_ptr<CudaDevice> cuda_device(int ordinal = 0);
// The number of devices (cuDeviceGetCount); the errors of cuda_device() but none for 0 devices.
int cuda_device_count();

// Device memory, freed when the object goes (move-only). Holds its device.
class CudaBuffer {
 public:
  CudaBuffer() = default;
  ~CudaBuffer();
  CudaBuffer(CudaBuffer&& other) noexcept;
  CudaBuffer& operator=(CudaBuffer&& other) noexcept;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  std::size_t size() const { return size_; }
  std::uint64_t device_pointer() const { return pointer_; }  // a CUdeviceptr
  explicit operator bool() const { return pointer_ != 0; }

  // Copies `bytes` bytes to or from the buffer at `offset`; a range outside the buffer is an
  // InternalError. Synchronous.
  void upload(const void* source, std::size_t bytes, std::size_t offset = 0);
  void download(void* destination, std::size_t bytes, std::size_t offset = 0) const;
  void fill_bytes(unsigned char value);  // every byte of the buffer

  template <class T>
  void upload(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    upload(values.data(), values.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download_as(std::size_t count) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> values(count);
    download(values.data(), count * sizeof(T));
    return values;
  }

 private:
  friend class CudaDevice;
  CudaBuffer(std::shared_ptr<CudaDevice> device, std::uint64_t pointer, std::size_t size)
      : device_(std::move(device)), pointer_(pointer), size_(size) {}
  void release() noexcept;

  std::shared_ptr<CudaDevice> device_;
  std::uint64_t pointer_ = 0;
  std::size_t size_ = 0;
};

struct CudaDim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct CudaLaunchConfig {
  CudaDim3 grid;
  CudaDim3 block;
  unsigned shared_bytes = 0;  // dynamic shared memory per block
  bool cooperative = false;   // cuLaunchCooperativeKernel: all blocks resident (grid.sync())
};

class CudaFunction;

// A loaded module, unloaded when the last holder (including its functions) goes.
class CudaModule : public std::enable_shared_from_this<CudaModule> {
 public:
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // The kernel `name` (an extern "C" __global__ function); InternalError if there is none.
  CudaFunction function(const std::string& name);
  const std::shared_ptr<CudaDevice>& device() const { return device_; }
  const std::string& target() const { return target_; }  // "sm_90", "compute_80"

 private:
  friend class CudaDevice;
  CudaModule(std::shared_ptr<CudaDevice> device, void* module, std::string target);

  std::shared_ptr<CudaDevice> device_;
  void* module_;  // CUmodule
  std::string target_;
};

namespace detail {
// What a kernel receives for a launch argument: the device pointer of a buffer, else the value.
template <class T>
const T& kernel_argument(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "kernel arguments must be trivially copyable");
  static_assert(!std::is_pointer_v<T>, "pass a CudaBuffer or its device_pointer(), not a host pointer");
  return value;
}
inline std::uint64_t kernel_argument(const CudaBuffer& buffer) { return buffer.device_pointer(); }
}  // namespace detail

class CudaFunction {
 public:
  const std::string& name() const { return name_; }
  const std::shared_ptr<CudaModule>& module() const { return module_; }

  // Launches asynchronously on the default stream; `params` holds one pointer per kernel
  // parameter, pointing at its value (cuLaunchKernel's kernelParams). A launch the driver refuses
  // is an InternalError, a cooperative grid larger than the device holds at once included (size
  // it with max_cooperative_blocks); a cooperative launch on a device without support is a
  // RuntimeError. Faults inside the kernel show at the next synchronize().
  void launch(const CudaLaunchConfig& config, void** params) const;

  // launch() with the arguments' values; a CudaBuffer passes its device pointer.
  template <class... Args>
  void operator()(const CudaLaunchConfig& config, const Args&... args) const {
    auto values = std::make_tuple(detail::kernel_argument(args)...);
    std::apply(
        [&](auto&... value) {
          void* params[] = {static_cast<void*>(&value)..., nullptr};
          launch(config, params);
        },
        values);
  }

  // cuOccupancyMaxActiveBlocksPerMultiprocessor times the multiprocessors: the largest grid a
  // cooperative launch of this function with `block_threads` threads per block can have.
  unsigned max_cooperative_blocks(unsigned block_threads, unsigned shared_bytes = 0) const;

 private:
  friend class CudaModule;
  CudaFunction(std::shared_ptr<CudaModule> module, void* function, std::string name)
      : module_(std::move(module)), function_(function), name_(std::move(name)) {}

  std::shared_ptr<CudaModule> module_;
  void* function_;  // CUfunction
  std::string name_;
};

}  // namespace scangen
