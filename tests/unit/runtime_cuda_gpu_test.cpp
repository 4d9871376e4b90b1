// Kernels on a real CUDA device: compiled with NVRTC, loaded, launched, checked. Without a device
// (or without NVRTC) the program prints why and exits with 77, which ctest reports as skipped
// (SKIP_RETURN_CODE in tests/unit/CMakeLists.txt).
#define BOOST_TEST_MODULE runtime_cuda_gpu
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "scangen/runtime/cuda.h"
#include "scangen/runtime/errors.h"
#include "temp_dir.h"

using namespace scangen;

namespace {

constexpr int kSkip = 77;

const std::string kKernels = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Every block adds its share, then the grid waits for all before block 0 sums the partial sums:
// correct only when all blocks run at once (a cooperative launch), as scangen's scans will need.
extern "C" __global__ void cooperative_sum(const float* x, float* partial, unsigned* arrived,
                                           float* total, int n) {
  __shared__ float block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&block_sum, x[i]);
  __syncthreads();
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = block_sum;
    __threadfence();
    atomicAdd(arrived, 1u);
    if (blockIdx.x == 0) {
      while (atomicAdd(arrived, 0u) < gridDim.x) {}
      __threadfence();
      float sum = 0;
      for (unsigned b = 0; b < gridDim.x; ++b) sum += ((volatile float*)partial)[b];
      *total = sum;
    }
  }
}
)";

struct Gpu {
  std::shared_ptr<CudaDevice> device = cuda_device();
  scangen::testing::TempDir cache{"scangen-cuda-gpu-test"};
  CudaCompiler compiler{cache.path};

  std::shared_ptr<CudaModule> module(CudaBinaryKind kind) {
    CudaCompileOptions options;
    options.kind = kind;
    options.arch = device->info().arch();
    CudaBinary binary = compiler.compile(kKernels, options);
    BOOST_TEST_MESSAGE("compiled for " << binary.target() << " (device sm_" << device->info().arch() << ")");
    return device->load_module(binary);
  }
};

void check_vector_add(CudaDevice& device, const CudaFunction& add, int n) {
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.25f * i;
    b[i] = 3.0f - i;
  }
  CudaBuffer da = device.allocate(n * sizeof(float));
  CudaBuffer db = device.allocate(n * sizeof(float));
  CudaBuffer dc = device.allocate(n * sizeof(float));
  da.upload(a);
  db.upload(b);
  dc.fill_bytes(0);
  CudaLaunchConfig config;
  config.block.x = 256;
  config.grid.x = (n + 255) / 256;
  add(config, da, db, dc, n);
  device.synchronize();
  std::vector<float> c = dc.download_as<float>(n);
  for (int i = 0; i < n; ++i) BOOST_TEST_REQUIRE(c[i] == a[i] + b[i]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(vector_add_from_cubin) {
  Gpu gpu;
  BOOST_TEST_MESSAGE("device: " << gpu.device->info().name << ", sm_" << gpu.device->info().arch());
  check_vector_add(*gpu.device, gpu.module(CudaBinaryKind::Cubin)->function("vector_add"), 100000);
}

BOOST_AUTO_TEST_CASE(vector_add_from_ptx) {
  Gpu gpu;
  check_vector_add(*gpu.device, gpu.module(CudaBinaryKind::Ptx)->function("vector_add"), 1000);
}

BOOST_AUTO_TEST_CASE(vector_add_from_the_cache) {
  Gpu gpu;
  gpu.module(CudaBinaryKind::Cubin);
  CudaCompileOptions options;
  options.arch = gpu.device->info().arch();
  CudaBinary cached = gpu.compiler.compile(kKernels, options);
  BOOST_TEST(cached.cache_hit);
  check_vector_add(*gpu.device, gpu.device->load_module(cached)->function("vector_add"), 777);
}

BOOST_AUTO_TEST_CASE(cooperative_launch) {
  Gpu gpu;
  if (!gpu.device->info().cooperative_launch) {
    BOOST_TEST_MESSAGE("skipped: the device has no cooperative launches");
    return;
  }
  CudaFunction sum = gpu.module(CudaBinaryKind::Cubin)->function("cooperative_sum");
  const unsigned blocks = sum.max_cooperative_blocks(128);
  BOOST_TEST_REQUIRE(blocks >= 1u);
  const int n = 1 << 16;
  std::vector<float> x(n, 1.0f);
  CudaBuffer dx = gpu.device->allocate(n * sizeof(float));
  CudaBuffer partial = gpu.device->allocate(blocks * sizeof(float));
  CudaBuffer arrived = gpu.device->allocate(sizeof(unsigned));
  CudaBuffer total = gpu.device->allocate(sizeof(float));
  dx.upload(x);
  arrived.fill_bytes(0);
  CudaLaunchConfig config;
  config.cooperative = true;
  config.grid.x = blocks;
  config.block.x = 128;
  sum(config, dx, partial, arrived, total, n);
  gpu.device->synchronize();
  BOOST_TEST(total.download_as<float>(1)[0] == float(n));

  config.grid.x = blocks + 1;  // more than the device holds at once
  BOOST_TEST_CHECK([&] {
    try {
      sum(config, dx, partial, arrived, total, n);
    } catch (const InternalError& e) {
      return std::string(e.what()).find("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE") != std::string::npos;
    }
    return false;
  }());
}

BOOST_AUTO_TEST_CASE(errors_on_a_real_device) {
  Gpu gpu;
  std::shared_ptr<CudaModule> module = gpu.module(CudaBinaryKind::Cubin);
  try {
    module->function("missing");
    BOOST_ERROR("no error for a missing kernel");
  } catch (const InternalError& e) {
    BOOST_TEST(std::string(e.what()).find("has no kernel 'missing'") != std::string::npos);
  }
  try {
    gpu.device->allocate(std::size_t(1) << 52);  // 4 PiB
    BOOST_ERROR("no error for an impossible allocation");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
  }
}

int main(int argc, char* argv[]) {
  std::string why;
  try {
    std::shared_ptr<CudaDevice> device = cuda_device();
    if (!nvrtc_available(&why)) why = "NVRTC not found: " + why;
  } catch (const RuntimeError& e) {
    why = e.what();
  }
  if (!why.empty()) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return kSkip;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
