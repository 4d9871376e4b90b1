// The device layer: the CUDA driver API behind CudaDevice, CudaBuffer, CudaModule, CudaFunction.
// Every driver call is checked; a failure names the call and the driver's error name and text.
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "cuda_api.h"
#include "jit_util.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/errors.h"

namespace scangen {
using namespace cuda_api;

namespace {

// Failures the user can do something about (the machine, the driver, the choice of architecture
// or of the problem's size), as opposed to scangen's own mistakes.
bool is_user_error(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void fail(const Driver& driver, CUresult result, const std::string& what,
                       const std::string& details = "") {
  std::string message = what + " failed: " + driver.describe(result) + details;
  if (is_user_error(result)) throw RuntimeError(message);
  throw InternalError(message);
}

std::string dims(const CudaDim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

// cuInit on every call: it is cheap once the driver is up, and a driver that failed to start
// (no device yet) is asked again.
std::shared_ptr<const Driver> initialized_driver() {
  std::shared_ptr<const Driver> driver = load_driver();
  if (CUresult result = driver->Init(0); result != CUDA_SUCCESS)
    throw RuntimeError("no CUDA device: cuInit failed: " + driver->describe(result) + " (CUDA driver " +
                       driver->path + ")");
  return driver;
}

int device_count(const Driver& driver) {
  int count = 0;
  if (CUresult result = driver.DeviceGetCount(&count); result != CUDA_SUCCESS)
    throw RuntimeError("no CUDA device: cuDeviceGetCount failed: " + driver.describe(result));
  return count;
}

}  // namespace

struct CudaDevice::Impl {
  std::shared_ptr<const Driver> driver;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string label;  // "CUDA device 0 (NVIDIA H100, sm_90)"

  void check(CUresult result, const std::string& what) const {
    if (result != CUDA_SUCCESS) fail(*driver, result, what);
  }
  void make_current() const { check(driver->CtxSetCurrent(context), "cuCtxSetCurrent on " + label); }
};

// ---------------------------------------------------------------------------------------------
// Devices

int cuda_device_count() { return device_count(*initialized_driver()); }

std::shared_ptr<CudaDevice> cuda_device(int ordinal) {
  std::shared_ptr<const Driver> driver = initialized_driver();
  const int count = device_count(*driver);
  int version = 0;
  if (CUresult result = driver->DriverGetVersion(&version); result != CUDA_SUCCESS)
    fail(*driver, result, "cuDriverGetVersion");
  if (count == 0)
    throw RuntimeError("no CUDA device: the CUDA driver (" + driver->path + ", CUDA " + cuda_version_text(version) +
                       ") reports no devices");
  if (ordinal < 0 || ordinal >= count)
    throw RuntimeError("no CUDA device: there is no device " + std::to_string(ordinal) + "; the driver reports " +
                       std::to_string(count) + (count == 1 ? " device" : " devices"));

  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, std::weak_ptr<CudaDevice>> open_devices;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = open_devices[{driver->path, ordinal}];
  if (std::shared_ptr<CudaDevice> device = slot.lock()) return device;

  auto impl = std::make_unique<CudaDevice::Impl>();
  impl->driver = driver;
  impl->label = "CUDA device " + std::to_string(ordinal);
  impl->check(driver->DeviceGet(&impl->device, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  info.driver_version = version;
  char name[256] = {};
  impl->check(driver->DeviceGetName(name, sizeof name - 1, impl->device), "cuDeviceGetName on " + impl->label);
  info.name = name;
  auto attribute = [&](CUdevice_attribute which, const char* what) {
    int value = 0;
    impl->check(driver->DeviceGetAttribute(&value, which, impl->device),
                std::string("cuDeviceGetAttribute(") + what + ") on " + impl->label);
    return value;
  };
  info.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  info.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR");
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK");
  info.cooperative_launch = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "COOPERATIVE_LAUNCH") != 0;
  impl->check(driver->DeviceTotalMem(&info.total_memory, impl->device), "cuDeviceTotalMem on " + impl->label);
  impl->label += " (" + info.name + ", sm_" + std::to_string(info.arch()) + ")";
  impl->check(driver->DevicePrimaryCtxRetain(&impl->context, impl->device),
              "cuDevicePrimaryCtxRetain on " + impl->label);

  std::shared_ptr<CudaDevice> device(new CudaDevice(std::move(impl), std::move(info)));
  slot = device;
  return device;
}

CudaDevice::CudaDevice(std::unique_ptr<Impl> impl, CudaDeviceInfo info)
    : impl_(std::move(impl)), info_(std::move(info)) {}

CudaDevice::~CudaDevice() {
  if (impl_->context) impl_->driver->DevicePrimaryCtxRelease(impl_->device);
}

void CudaDevice::synchronize() {
  impl_->make_current();
  impl_->check(impl_->driver->CtxSynchronize(), "cuCtxSynchronize on " + impl_->label);
}

CudaBuffer CudaDevice::allocate(std::size_t bytes) {
  impl_->make_current();
  CUdeviceptr pointer = 0;
  // cuMemAlloc refuses 0 bytes; an empty buffer still gets a valid address.
  impl_->check(impl_->driver->MemAlloc(&pointer, bytes == 0 ? 1 : bytes),
               "cuMemAlloc of " + std::to_string(bytes) + " bytes on " + impl_->label);
  return CudaBuffer(shared_from_this(), pointer, bytes);
}

std::shared_ptr<CudaModule> CudaDevice::load_module(const CudaBinary& binary) {
  if (binary.image.empty()) throw InternalError("cannot load an empty CUDA module on " + impl_->label);
  impl_->make_current();
  std::string log(16 * 1024, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
  CUmodule module = nullptr;
  // c_str(): PTX must end with a NUL; a CUBIN is recognized by its ELF header.
  const CUresult result = impl_->driver->ModuleLoadDataEx(&module, binary.image.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    if (std::size_t end = log.find('\0'); end != std::string::npos) log.resize(end);
    std::string details;
    if (result == CUDA_ERROR_NO_BINARY_FOR_GPU)
      details = "; " + binary.target() + " code cannot run on sm_" + std::to_string(info_.arch()) +
                ": compile for sm_" + std::to_string(info_.arch()) + " or an older compute_XY";
    else if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      details = "; the PTX comes from an NVRTC newer than this CUDA driver (CUDA " +
                cuda_version_text(info_.driver_version) +
                "): update the NVIDIA driver, compile to CUBIN, or set SCANGEN_NVRTC to an older NVRTC";
    if (!log.empty()) details += "\n" + log;
    fail(*impl_->driver, result, "cuModuleLoadData of a " + binary.target() + " module on " + impl_->label, details);
  }
  return std::shared_ptr<CudaModule>(new CudaModule(shared_from_this(), module, binary.target()));
}

// ---------------------------------------------------------------------------------------------
// Buffers

CudaBuffer::~CudaBuffer() { release(); }

CudaBuffer::CudaBuffer(CudaBuffer&& other) noexcept
    : device_(std::move(other.device_)),
      pointer_(std::exchange(other.pointer_, 0)),
      size_(std::exchange(other.size_, 0)) {}

CudaBuffer& CudaBuffer::operator=(CudaBuffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::move(other.device_);
    pointer_ = std::exchange(other.pointer_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void CudaBuffer::release() noexcept {
  if (pointer_ && device_) {
    const CudaDevice::Impl& impl = *device_->impl_;
    // Errors are ignored: a destructor cannot report them, and after a fault in a kernel the
    // context refuses everything.
    if (impl.driver->CtxSetCurrent(impl.context) == CUDA_SUCCESS) impl.driver->MemFree(pointer_);
  }
  pointer_ = 0;
  size_ = 0;
  device_.reset();
}

namespace {

void check_range(const CudaBuffer& buffer, std::size_t bytes, std::size_t offset, const char* what) {
  if (!buffer) throw InternalError(std::string(what) + " of an empty CudaBuffer");
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    throw InternalError(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(offset) + " is outside the device buffer of " +
                        std::to_string(buffer.size()) + " bytes");
}

}  // namespace

void CudaBuffer::upload(const void* source, std::size_t bytes, std::size_t offset) {
  check_range(*this, bytes, offset, "a copy to the device");
  if (bytes == 0) return;
  const CudaDevice::Impl& impl = *device_->impl_;
  impl.make_current();
  impl.check(impl.driver->MemcpyHtoD(pointer_ + offset, source, bytes),
             "cuMemcpyHtoD of " + std::to_string(bytes) + " bytes on " + impl.label);
}

void CudaBuffer::download(void* destination, std::size_t bytes, std::size_t offset) const {
  check_range(*this, bytes, offset, "a copy from the device");
  if (bytes == 0) return;
  const CudaDevice::Impl& impl = *device_->impl_;
  impl.make_current();
  impl.check(impl.driver->MemcpyDtoH(destination, pointer_ + offset, bytes),
             "cuMemcpyDtoH of " + std::to_string(bytes) + " bytes on " + impl.label);
}

void CudaBuffer::fill_bytes(unsigned char value) {
  check_range(*this, 0, 0, "a fill");
  if (size_ == 0) return;
  const CudaDevice::Impl& impl = *device_->impl_;
  impl.make_current();
  impl.check(impl.driver->MemsetD8(pointer_, value, size_),
             "cuMemsetD8 of " + std::to_string(size_) + " bytes on " + impl.label);
}

// ---------------------------------------------------------------------------------------------
// Modules and functions

CudaModule::CudaModule(std::shared_ptr<CudaDevice> device, void* module, std::string target)
    : device_(std::move(device)), module_(module), target_(std::move(target)) {}

CudaModule::~CudaModule() {
  const CudaDevice::Impl& impl = *device_->impl_;
  if (impl.driver->CtxSetCurrent(impl.context) == CUDA_SUCCESS)
    impl.driver->ModuleUnload(static_cast<CUmodule>(module_));
}

CudaFunction CudaModule::function(const std::string& name) {
  const CudaDevice::Impl& impl = *device_->impl_;
  impl.make_current();
  CUfunction function = nullptr;
  const CUresult result = impl.driver->ModuleGetFunction(&function, static_cast<CUmodule>(module_), name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    throw InternalError("the CUDA module (" + target_ + ") has no kernel '" + name + "' (" +
                        impl.driver->describe(result) + ")");
  if (result != CUDA_SUCCESS) fail(*impl.driver, result, "cuModuleGetFunction('" + name + "') on " + impl.label);
  return CudaFunction(shared_from_this(), function, name);
}

void CudaFunction::launch(const CudaLaunchConfig& config, void** params) const {
  const CudaDevice& device = *module_->device();
  const CudaDevice::Impl& impl = *device.impl_;
  const std::string what = std::string(config.cooperative ? "cooperative launch" : "launch") + " of kernel '" +
                           name_ + "' (grid " + dims(config.grid) + ", block " + dims(config.block) + ", " +
                           std::to_string(config.shared_bytes) + " bytes of shared memory) on " + impl.label;
  const CudaDim3& g = config.grid;
  const CudaDim3& b = config.block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) throw InternalError(what + ": an empty grid or block");
  if (config.cooperative && !device.info().cooperative_launch)
    throw RuntimeError(what + ": the device does not support cooperative launches");
  impl.make_current();
  const CUfunction function = static_cast<CUfunction>(function_);
  const CUresult result =
      config.cooperative
          ? impl.driver->LaunchCooperativeKernel(function, g.x, g.y, g.z, b.x, b.y, b.z, config.shared_bytes,
                                                 nullptr, params)
          : impl.driver->LaunchKernel(function, g.x, g.y, g.z, b.x, b.y, b.z, config.shared_bytes, nullptr,
                                      params, nullptr);
  impl.check(result, what);
}

unsigned CudaFunction::max_cooperative_blocks(unsigned block_threads, unsigned shared_bytes) const {
  const CudaDevice& device = *module_->device();
  const CudaDevice::Impl& impl = *device.impl_;
  impl.make_current();
  int blocks = 0;
  impl.check(impl.driver->OccupancyMaxActiveBlocksPerMultiprocessor(
                 &blocks, static_cast<CUfunction>(function_), static_cast<int>(block_threads), shared_bytes),
             "cuOccupancyMaxActiveBlocksPerMultiprocessor('" + name_ + "', " + std::to_string(block_threads) +
                 " threads) on " + impl.label);
  return static_cast<unsigned>(blocks) * static_cast<unsigned>(device.info().multiprocessors);
}

}  // namespace scangen
