// Loading libnvrtc and libcuda.so.1 with dlopen, and binding the entry points of cuda_api.h.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <system_error>

#include "cuda_api.h"
#include "jit_util.h"
#include "scangen/runtime/errors.h"

namespace scangen::cuda_api {
namespace fs = std::filesystem;

namespace {

std::string last_dlerror(const char* fallback) {
  const char* reason = ::dlerror();
  return reason ? reason : fallback;
}

// The file a handle was loaded from, as the dynamic loader found it ("" if it cannot tell).
fs::path loaded_from(void* handle) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return {};
}

fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::canonical(path, error);
  return error ? path : canonical;
}

// The NVRTC candidates after $SCANGEN_NVRTC: names for the loader's search path, then the
// toolkit's library found at build time.
std::vector<std::string> default_nvrtc_candidates() {
  std::vector<std::string> candidates = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
#ifdef SCANGEN_CUDA_TOOLKIT_NVRTC
  candidates.push_back(SCANGEN_CUDA_TOOLKIT_NVRTC);
#endif
  return candidates;
}

std::string comma_separated(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

template <class Pointer>
void bind(void* handle, const char* symbol, Pointer& target, const std::string& not_usable) {
  ::dlerror();
  void* address = ::dlsym(handle, symbol);
  if (!address) throw RuntimeError(not_usable + symbol);
  target = reinterpret_cast<Pointer>(address);
}

template <class Pointer>
void bind_optional(void* handle, const char* symbol, Pointer& target) {
  ::dlerror();
  target = reinterpret_cast<Pointer>(::dlsym(handle, symbol));
}

// NVRTC loads libnvrtc-builtins.so.<major>.<minor> by name when it first compiles, which finds
// it only on the loader's search path. Loading it first from NVRTC's own directory makes that
// name lookup find the library already loaded, so that an NVRTC given by its path (outside the
// search path) works without LD_LIBRARY_PATH. A missing builtins library is left for NVRTC to
// report when it compiles.
void preload_builtins(const Nvrtc& nvrtc, const fs::path& as_loaded) {
  const std::string name =
      "libnvrtc-builtins.so." + std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor);
  for (const fs::path& directory : {as_loaded.parent_path(), nvrtc.path.parent_path()}) {
    if (directory.empty()) continue;
    std::error_code error;
    const fs::path builtins = directory / name;
    if (!fs::exists(builtins, error)) continue;
    if (::dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL)) return;
  }
}

// Binds the entry points and asks the version; throws RuntimeError if it is no NVRTC.
std::shared_ptr<Nvrtc> bind_nvrtc(void* handle, const std::string& origin) {
  auto nvrtc = std::make_shared<Nvrtc>();
  const fs::path as_loaded = loaded_from(handle);
  nvrtc->path = resolved(as_loaded.empty() ? fs::path(origin) : as_loaded);
  const std::string not_usable =
      detail::single_quoted(nvrtc->path.string()) + " is not a usable NVRTC library: it has no ";
  bind(handle, "nvrtcGetErrorString", nvrtc->GetErrorString, not_usable);
  bind(handle, "nvrtcVersion", nvrtc->Version, not_usable);
  bind(handle, "nvrtcCreateProgram", nvrtc->CreateProgram, not_usable);
  bind(handle, "nvrtcDestroyProgram", nvrtc->DestroyProgram, not_usable);
  bind(handle, "nvrtcCompileProgram", nvrtc->CompileProgram, not_usable);
  bind(handle, "nvrtcGetProgramLogSize", nvrtc->GetProgramLogSize, not_usable);
  bind(handle, "nvrtcGetProgramLog", nvrtc->GetProgramLog, not_usable);
  bind(handle, "nvrtcGetPTXSize", nvrtc->GetPTXSize, not_usable);
  bind(handle, "nvrtcGetPTX", nvrtc->GetPTX, not_usable);
  bind(handle, "nvrtcGetCUBINSize", nvrtc->GetCUBINSize, not_usable);
  bind(handle, "nvrtcGetCUBIN", nvrtc->GetCUBIN, not_usable);
  nvrtcGetNumSupportedArchs_t get_count = nullptr;
  nvrtcGetSupportedArchs_t get_archs = nullptr;
  bind_optional(handle, "nvrtcGetNumSupportedArchs", get_count);
  bind_optional(handle, "nvrtcGetSupportedArchs", get_archs);

  if (nvrtc->Version(&nvrtc->major, &nvrtc->minor) != NVRTC_SUCCESS)
    throw RuntimeError(detail::single_quoted(nvrtc->path.string()) +
                       " is not a usable NVRTC library: nvrtcVersion failed");
  int count = 0;
  if (get_count && get_archs && get_count(&count) == NVRTC_SUCCESS && count > 0) {
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (get_archs(archs.data()) == NVRTC_SUCCESS) nvrtc->supported_archs = std::move(archs);
  }
  return nvrtc;
}

// An NVRTC that dlopen found, bound. A library that loads but is no NVRTC is a RuntimeError.
struct Candidate {
  void* handle = nullptr;
  std::shared_ptr<Nvrtc> nvrtc;

  Candidate(void* loaded, const std::string& origin) : handle(loaded) {
    try {
      nvrtc = bind_nvrtc(handle, origin);
    } catch (...) {
      ::dlclose(handle);
      throw;
    }
  }
  // For a candidate not taken (it has compiled nothing, so unloading it is safe).
  void unload() { ::dlclose(handle); }
};

// Code from NVRTC of a newer major version than the driver's may not load: a CUBIN's format and
// the PTX ISA are only promised to the driver's own major version and older (CUDA's minor version
// compatibility covers CUBIN within a major version; PTX is checked in resolve_target).
bool driver_supports(const Nvrtc& nvrtc, int driver_version) {
  return driver_version <= 0 || nvrtc.major <= driver_version / 1000;
}

std::string describe(const Nvrtc& nvrtc) { return "NVRTC " + nvrtc.version_text() + " (" + nvrtc.path.string() + ")"; }

// What to do when the driver is older than every NVRTC found.
std::string install_advice(int driver_version) {
  const std::string major = std::to_string(driver_version / 1000);
  return "install the NVRTC of a CUDA " + major + ".x toolkit or older (libnvrtc.so." + major +
         ") and set SCANGEN_NVRTC to it if it is not on the loader's search path, or update the NVIDIA "
         "driver";
}

Candidate from_environment(const std::string& origin, int driver_version) {
  void* handle = ::dlopen(origin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw RuntimeError("cannot load NVRTC from SCANGEN_NVRTC=" + detail::single_quoted(origin) + ": " +
                       last_dlerror("dlopen failed") + "; set SCANGEN_NVRTC to the path of libnvrtc.so, or unset it");
  Candidate candidate(handle, origin);
  if (!driver_supports(*candidate.nvrtc, driver_version)) {
    const std::string what = describe(*candidate.nvrtc);
    candidate.unload();
    throw RuntimeError(what + ", named by SCANGEN_NVRTC, is newer than the CUDA driver, which supports CUDA " +
                       cuda_version_text(driver_version) +
                       ": code from an NVRTC of a newer major version than the driver's does not load; " +
                       install_advice(driver_version) + ", or unset SCANGEN_NVRTC");
  }
  return candidate;
}

// The first of the default candidates that loads and that the driver supports.
Candidate from_default_candidates(int driver_version) {
  const std::vector<std::string> candidates = default_nvrtc_candidates();
  std::string reason;
  std::vector<std::string> too_new;
  for (const std::string& name : candidates) {
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      reason = last_dlerror("dlopen failed");
      continue;
    }
    Candidate candidate(handle, name);
    if (driver_supports(*candidate.nvrtc, driver_version)) return candidate;
    const std::string found = describe(*candidate.nvrtc);
    if (std::find(too_new.begin(), too_new.end(), found) == too_new.end()) too_new.push_back(found);
    candidate.unload();
  }
  if (too_new.empty())
    throw RuntimeError("NVRTC not found (tried " + comma_separated(candidates) + "): " + reason +
                       "; install the CUDA toolkit or set SCANGEN_NVRTC to the path of libnvrtc.so");
  throw RuntimeError("no NVRTC that the CUDA driver supports: the driver supports CUDA " +
                     cuda_version_text(driver_version) +
                     ", and code from an NVRTC of a newer major version does not load; found " +
                     comma_separated(too_new) + "; " + install_advice(driver_version));
}

}  // namespace

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string Nvrtc::error_name(nvrtcResult result) const {
  const char* name = GetErrorString ? GetErrorString(result) : nullptr;
  return name ? name : "NVRTC error " + std::to_string(result);
}

std::shared_ptr<const Nvrtc> load_nvrtc(int driver_version) {
  static std::mutex mutex;
  // By the value of $SCANGEN_NVRTC ("" when unset) and the driver's major version (0 when
  // unknown); failures are not remembered.
  static std::map<std::pair<std::string, int>, std::shared_ptr<const Nvrtc>> loaded;
  const char* named = detail::environment("SCANGEN_NVRTC");
  const std::pair<std::string, int> key{named ? named : "", driver_version > 0 ? driver_version / 1000 : 0};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  // The library taken is never unloaded: NVRTC keeps state (its builtins, threads) that dlclose
  // would pull from under it, and a process loads it once.
  Candidate chosen = named ? from_environment(named, driver_version) : from_default_candidates(driver_version);
  preload_builtins(*chosen.nvrtc, loaded_from(chosen.handle));
  loaded.emplace(key, chosen.nvrtc);
  return chosen.nvrtc;
}

// ---------------------------------------------------------------------------------------------
// The driver

namespace {

struct KnownError {
  CUresult code;
  const char* name;
  const char* description;
};

// For drivers that cannot name their errors (the toolkit's stub library answers every call with
// CUDA_ERROR_STUB_LIBRARY, cuGetErrorName included).
constexpr KnownError kKnownErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "the CUDA toolkit's stub libcuda.so was loaded instead of the NVIDIA driver's libcuda.so.1"},
    {CUDA_ERROR_INSUFFICIENT_DRIVER, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "the installed NVIDIA driver is too old"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is unavailable"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const KnownError* known_error(CUresult result) {
  for (const KnownError& known : kKnownErrors)
    if (known.code == result) return &known;
  return nullptr;
}

}  // namespace

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* description = nullptr;
  if (GetErrorName && GetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (GetErrorString && GetErrorString(result, &description) != CUDA_SUCCESS) description = nullptr;
  const KnownError* known = known_error(result);
  std::string text = name ? name : known ? known->name : "CUDA error " + std::to_string(result);
  if (!description && known) description = known->description;
  if (description) text += std::string(" (") + description + ")";
  return text;
}

std::shared_ptr<const Driver> load_driver() {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Driver>> loaded;
  const char* from_environment = detail::environment("SCANGEN_CUDA_DRIVER");
  const std::string path = from_environment ? from_environment : "libcuda.so.1";
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;

  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw RuntimeError("CUDA driver not found (" + path + "): " + last_dlerror("dlopen failed"));
  struct CloseOnError {
    void* handle;
    ~CloseOnError() {
      if (handle) ::dlclose(handle);
    }
  } close_on_error{handle};
  auto driver = std::make_shared<Driver>();
  driver->path = path;
  driver->handle = handle;
  const std::string not_usable =
      "the CUDA driver " + detail::single_quoted(path) + " is too old or not a CUDA driver: it has no ";
  bind(handle, "cuInit", driver->Init, not_usable);
  bind(handle, "cuDriverGetVersion", driver->DriverGetVersion, not_usable);
  bind(handle, "cuGetErrorName", driver->GetErrorName, not_usable);
  bind(handle, "cuGetErrorString", driver->GetErrorString, not_usable);
  bind(handle, "cuDeviceGetCount", driver->DeviceGetCount, not_usable);
  bind(handle, "cuDeviceGet", driver->DeviceGet, not_usable);
  bind(handle, "cuDeviceGetName", driver->DeviceGetName, not_usable);
  bind(handle, "cuDeviceGetAttribute", driver->DeviceGetAttribute, not_usable);
  bind(handle, "cuDeviceTotalMem_v2", driver->DeviceTotalMem, not_usable);
  bind(handle, "cuDevicePrimaryCtxRetain", driver->DevicePrimaryCtxRetain, not_usable);
  bind(handle, "cuDevicePrimaryCtxRelease_v2", driver->DevicePrimaryCtxRelease, not_usable);
  bind(handle, "cuCtxSetCurrent", driver->CtxSetCurrent, not_usable);
  bind(handle, "cuCtxSynchronize", driver->CtxSynchronize, not_usable);
  bind(handle, "cuModuleLoadDataEx", driver->ModuleLoadDataEx, not_usable);
  bind(handle, "cuModuleUnload", driver->ModuleUnload, not_usable);
  bind(handle, "cuModuleGetFunction", driver->ModuleGetFunction, not_usable);
  bind(handle, "cuMemAlloc_v2", driver->MemAlloc, not_usable);
  bind(handle, "cuMemFree_v2", driver->MemFree, not_usable);
  bind(handle, "cuMemcpyHtoD_v2", driver->MemcpyHtoD, not_usable);
  bind(handle, "cuMemcpyDtoH_v2", driver->MemcpyDtoH, not_usable);
  bind(handle, "cuMemsetD8_v2", driver->MemsetD8, not_usable);
  bind(handle, "cuLaunchKernel", driver->LaunchKernel, not_usable);
  bind(handle, "cuLaunchCooperativeKernel", driver->LaunchCooperativeKernel, not_usable);
  bind(handle, "cuStreamSynchronize", driver->StreamSynchronize, not_usable);
  bind(handle, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
       driver->OccupancyMaxActiveBlocksPerMultiprocessor, not_usable);
  close_on_error.handle = nullptr;
  loaded.emplace(path, driver);
  return driver;
}

}  // namespace scangen::cuda_api
