// A stand-in for libcuda.so.1 with the entry points scangen's CUDA runtime binds, so that its
// device layer (initialization errors, buffers, modules, launches, error reporting, releases) is
// tested on machines without a GPU. Loaded through $SCANGEN_CUDA_DRIVER.
//
// $FAKE_CUDA_DRIVER_VERSION is the CUDA version cuDriverGetVersion reports (as it counts: 12040
// for 12.4; default 13000, for CUDA 13.0). $FAKE_CUDA_MODE picks the machine: "no_device" (cuInit fails with CUDA_ERROR_NO_DEVICE),
// "zero_devices", "oom" (every allocation fails), "pascal" (one device of compute capability
// 6.1), anything else one device, sm_86 with 4 multiprocessors. Device memory is host memory. A module is an image holding ".target sm_XY"
// (PTX, refused when XY is above the device's) or starting with an ELF header (CUBIN); its
// kernels are the names in the image among vector_add (float* a, float* b, float* c, int n:
// run on the host) and fault (reports CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization).
// Kernels of scangen's CUDA backend (scangen_kernel_<n>, where the image defines them) run through
// $FAKE_CUDA_KERNELS: a module built from the same program's emulated kernels
// (scangen_cuda_emulation.h), launched with the launch's grid and block.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidImage = 200;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kNoBinaryForGpu = 209;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;
constexpr CUresult kIllegalAddress = 700;
constexpr CUresult kCooperativeTooLarge = 720;

constexpr int kMultiprocessors = 4;
constexpr int kBlocksPerMultiprocessor = 2;

struct Module {
  std::string image;
};
struct Function {
  std::string name;
};

std::mutex mutex;
bool initialized = false;
int retained_contexts = 0;
CUresult sticky_error = kSuccess;
std::map<CUdeviceptr, std::size_t> allocations;
std::set<Module*> modules;
std::set<Function*> functions;
int context_object = 0;  // its address is the one context

std::string mode() {
  const char* value = std::getenv("FAKE_CUDA_MODE");
  return value ? value : "";
}

int device_count() {
  std::string m = mode();
  return m == "zero_devices" ? 0 : 1;
}

bool valid_device(int device) { return device >= 0 && device < device_count(); }

int arch() { return mode() == "pascal" ? 61 : 86; }

}  // namespace

extern "C" {

// Counters for the tests.
int fake_cuda_live_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  return static_cast<int>(allocations.size());
}
int fake_cuda_live_modules() {
  std::lock_guard<std::mutex> lock(mutex);
  return static_cast<int>(modules.size());
}
int fake_cuda_retained_contexts() {
  std::lock_guard<std::mutex> lock(mutex);
  return retained_contexts;
}

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  if (mode() == "no_device") return kNoDevice;
  std::lock_guard<std::mutex> lock(mutex);
  initialized = true;
  return kSuccess;
}

CUresult cuDriverGetVersion(int* version) {
  if (!version) return kInvalidValue;
  const char* value = std::getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = value ? std::atoi(value) : 13000;
  return kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char** text) {
  switch (error) {
    case kSuccess: *text = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *text = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kOutOfMemory: *text = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case kNotInitialized: *text = "CUDA_ERROR_NOT_INITIALIZED"; return kSuccess;
    case kNoDevice: *text = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
    case kInvalidDevice: *text = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidImage: *text = "CUDA_ERROR_INVALID_IMAGE"; return kSuccess;
    case kInvalidContext: *text = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
    case kNoBinaryForGpu: *text = "CUDA_ERROR_NO_BINARY_FOR_GPU"; return kSuccess;
    case kInvalidHandle: *text = "CUDA_ERROR_INVALID_HANDLE"; return kSuccess;
    case kNotFound: *text = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
    case kIllegalAddress: *text = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kSuccess;
    case kCooperativeTooLarge: *text = "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"; return kSuccess;
    default: *text = nullptr; return kInvalidValue;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  switch (error) {
    case kOutOfMemory: *text = "out of memory"; return kSuccess;
    case kNoDevice: *text = "no CUDA-capable device is detected"; return kSuccess;
    case kInvalidImage: *text = "device kernel image is invalid"; return kSuccess;
    case kNoBinaryForGpu: *text = "no kernel image is available for execution on the device"; return kSuccess;
    case kNotFound: *text = "named symbol not found"; return kSuccess;
    case kIllegalAddress: *text = "an illegal memory access was encountered"; return kSuccess;
    case kCooperativeTooLarge: *text = "too many blocks in cooperative launch"; return kSuccess;
    default: return cuGetErrorName(error, text);
  }
}

CUresult cuDeviceGetCount(int* count) {
  if (!initialized) return kNotInitialized;
  *count = device_count();
  return kSuccess;
}

CUresult cuDeviceGet(int* device, int ordinal) {
  if (!valid_device(ordinal)) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

CUresult cuDeviceGetName(char* name, int length, int device) {
  if (!valid_device(device) || length <= 0) return kInvalidValue;
  std::strncpy(name, "scangen fake GPU", static_cast<std::size_t>(length));
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!valid_device(device)) return kInvalidDevice;
  switch (attribute) {
    case 1: *value = 1024; return kSuccess;  // MAX_THREADS_PER_BLOCK
    case 16: *value = kMultiprocessors; return kSuccess;
    case 75: *value = arch() / 10; return kSuccess;
    case 76: *value = arch() % 10; return kSuccess;
    case 95: *value = 1; return kSuccess;  // COOPERATIVE_LAUNCH
    default: return kInvalidValue;
  }
}

CUresult cuDeviceTotalMem_v2(std::size_t* bytes, int device) {
  if (!valid_device(device)) return kInvalidDevice;
  *bytes = std::size_t(1) << 30;
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(void** context, int device) {
  if (!valid_device(device)) return kInvalidDevice;
  std::lock_guard<std::mutex> lock(mutex);
  ++retained_contexts;
  *context = &context_object;
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  if (!valid_device(device)) return kInvalidDevice;
  std::lock_guard<std::mutex> lock(mutex);
  if (retained_contexts == 0) return kInvalidContext;
  // The last release destroys the context, and with it an error a kernel left behind.
  if (--retained_contexts == 0) sticky_error = kSuccess;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void* context) {
  return context == nullptr || context == &context_object ? kSuccess : kInvalidContext;
}

CUresult cuCtxSynchronize() {
  std::lock_guard<std::mutex> lock(mutex);
  return sticky_error;
}

CUresult cuStreamSynchronize(void*) { return cuCtxSynchronize(); }

CUresult cuModuleLoadDataEx(void** module, const void* image, unsigned int num_options, int* options,
                            void** values) {
  const char* text = static_cast<const char*>(image);
  std::string contents = std::memcmp(text, "\x7f" "ELF", 4) == 0 ? std::string(text, 4) : std::string(text);
  bool cubin = contents == "\x7f" "ELF";
  std::size_t target = contents.find(".target sm_");
  if (!cubin && target == std::string::npos) {
    for (unsigned i = 0; i < num_options; ++i)
      if (options[i] == 5) std::strcpy(static_cast<char*>(values[i]), "fake ptxas: not PTX");
    return kInvalidImage;
  }
  if (!cubin && std::atoi(contents.c_str() + target + 11) > arch()) return kNoBinaryForGpu;
  if (cubin) {
    // The whole ELF file (its section headers come last), for the kernel names in its string
    // tables; and a CUBIN has vector_add and fault.
    std::uint64_t section_headers = 0;
    std::uint16_t entry_size = 0, count = 0;
    std::memcpy(&section_headers, text + 0x28, 8);
    std::memcpy(&entry_size, text + 0x3A, 2);
    std::memcpy(&count, text + 0x3C, 2);
    contents = std::string(text, section_headers + std::uint64_t(entry_size) * count) + " vector_add fault";
  }
  std::lock_guard<std::mutex> lock(mutex);
  Module* created = new Module{contents};
  modules.insert(created);
  *module = created;
  return kSuccess;
}

CUresult cuModuleUnload(void* module) {
  std::lock_guard<std::mutex> lock(mutex);
  Module* m = static_cast<Module*>(module);
  if (!modules.erase(m)) return kInvalidHandle;
  delete m;
  return kSuccess;
}

CUresult cuModuleGetFunction(void** function, void* module, const char* name) {
  std::lock_guard<std::mutex> lock(mutex);
  Module* m = static_cast<Module*>(module);
  if (!modules.count(m)) return kInvalidHandle;
  std::string wanted = name;
  const bool scangen_kernel = wanted.compare(0, 15, "scangen_kernel_") == 0;
  if (scangen_kernel ? m->image.find(wanted + std::string(1, '\0')) == std::string::npos &&
                           m->image.find(".entry " + wanted + "(") == std::string::npos
                     : (wanted != "vector_add" && wanted != "fault") || m->image.find(wanted) == std::string::npos)
    return kNotFound;
  Function* created = new Function{wanted};  // leaked, as a driver's functions live with the module
  functions.insert(created);
  *function = created;
  return kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, std::size_t bytes) {
  if (bytes == 0) return kInvalidValue;
  if (mode() == "oom" || bytes > (std::size_t(1) << 30)) return kOutOfMemory;
  void* memory = std::calloc(bytes, 1);
  if (!memory) return kOutOfMemory;
  std::lock_guard<std::mutex> lock(mutex);
  *pointer = reinterpret_cast<std::uintptr_t>(memory);
  allocations[*pointer] = bytes;
  return kSuccess;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!allocations.erase(pointer)) return kInvalidValue;
  std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(pointer)));
  return kSuccess;
}

namespace {
// The allocation holding [pointer, pointer + bytes), or false.
bool inside_allocation(CUdeviceptr pointer, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.upper_bound(pointer);
  if (it == allocations.begin()) return false;
  --it;
  return pointer + bytes <= it->first + it->second;
}
void* host(CUdeviceptr pointer) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(pointer)); }
}  // namespace

CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, std::size_t bytes) {
  if (!inside_allocation(destination, bytes)) return kInvalidValue;
  std::memcpy(host(destination), source, bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, std::size_t bytes) {
  if (!inside_allocation(source, bytes)) return kInvalidValue;
  std::memcpy(destination, host(source), bytes);
  return kSuccess;
}

CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, std::size_t count) {
  if (!inside_allocation(destination, count)) return kInvalidValue;
  std::memset(host(destination), value, count);
  return kSuccess;
}

namespace {
// A scangen kernel, run by the emulated module $FAKE_CUDA_KERNELS names.
CUresult run_emulated(const std::string& name, unsigned grid, unsigned block, unsigned shared_bytes, void** params) {
  using Kernel = void (*)(void*, void*);
  using Launcher = void (*)(Kernel, unsigned, unsigned, unsigned, void*, void*);
  const char* path = std::getenv("FAKE_CUDA_KERNELS");
  void* handle = path ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!handle) return kNotFound;
  auto launcher = reinterpret_cast<Launcher>(::dlsym(handle, "scangen_emulation_launch"));
  auto kernel = reinterpret_cast<Kernel>(::dlsym(handle, name.c_str()));
  if (launcher && kernel)
    launcher(kernel, grid, block, shared_bytes, host(*static_cast<CUdeviceptr*>(params[0])),
             host(*static_cast<CUdeviceptr*>(params[1])));
  ::dlclose(handle);
  return launcher && kernel ? kSuccess : kNotFound;
}

CUresult run(void* function, unsigned grid, unsigned block, unsigned shared_bytes, void** params) {
  // More than 48 KB of shared memory needs an opt-in (cuFuncSetAttribute) scangen does not make.
  if (shared_bytes > 48 * 1024) return kInvalidValue;
  const unsigned threads = grid * block;
  Function* f = static_cast<Function*>(function);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!functions.count(f)) return kInvalidHandle;
    if (sticky_error != kSuccess) return sticky_error;
    if (f->name == "fault") {
      sticky_error = kIllegalAddress;
      return kSuccess;
    }
  }
  if (!params) return kInvalidValue;
  if (f->name != "vector_add") return run_emulated(f->name, grid, block, shared_bytes, params);
  auto pointer = [&](int i) { return static_cast<float*>(host(*static_cast<CUdeviceptr*>(params[i]))); };
  const float* a = pointer(0);
  const float* b = pointer(1);
  float* c = pointer(2);
  const int n = *static_cast<int*>(params[3]);
  for (int i = 0; i < n && static_cast<unsigned>(i) < threads; ++i) c[i] = a[i] + b[i];
  return kSuccess;
}
}  // namespace

CUresult cuLaunchKernel(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                        unsigned block_y, unsigned block_z, unsigned shared_bytes, void*, void** params,
                        void** extra) {
  if (extra) return kInvalidValue;
  return run(function, grid_x * grid_y * grid_z, block_x * block_y * block_z, shared_bytes, params);
}

CUresult cuLaunchCooperativeKernel(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                   unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                                   void*, void** params) {
  if (grid_x * grid_y * grid_z > unsigned(kMultiprocessors * kBlocksPerMultiprocessor))
    return kCooperativeTooLarge;
  return run(function, grid_x * grid_y * grid_z, block_x * block_y * block_z, shared_bytes, params);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void*, int block_size, std::size_t) {
  if (block_size <= 0 || block_size > 1024) return kInvalidValue;
  *blocks = kBlocksPerMultiprocessor;
  return kSuccess;
}

}  // extern "C"
