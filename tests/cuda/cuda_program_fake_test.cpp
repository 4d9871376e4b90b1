// scangen::CudaProgram, the JIT path of `scangen run --backend cuda`, without a GPU. NVRTC compiles
// each function's kernel on its first call, the fake libcuda (tests/unit/data/fake_libcuda.cpp)
// loads the binary and launches the kernel, and the same kernels built as the CPU emulation run it.
// That covers everything of the runtime between NVRTC and the GPU: the per-function compile, the
// module and function lookup, the driver's memory, the launch protocol with its relaunch for a
// larger arena, results and error messages. Skips without NVRTC.
#define BOOST_TEST_MODULE cuda_program_fake
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "../unit/nvrtc_found.h"
#include "../unit/scoped_env.h"
#include "../unit/temp_dir.h"
#include "codegen/backend.h"
#include "driver/driver.h"
#include "interpreter/interpreter.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/json_io.h"

namespace utf = boost::unit_test;
using namespace scangen;
using scangen::testing::ScopedEnv;

namespace {

using scangen::testing::nvrtc_found;

// A rank-`rank` argument from JSON, as `scangen run` reads it.
HostTensor tensor(const std::string& json, DType dtype, int rank) { return parse_argument(json, dtype, rank, "test"); }

std::string shown(const std::vector<HostTensor>& results) { return format_results(results); }

}  // namespace

BOOST_AUTO_TEST_CASE(functions_compile_alone_and_run_on_the_fake_device, *utf::precondition(nvrtc_found)) {
  driver::Options options;
  options.backends = {Backend::Cuda, Backend::CudaEmulation};
  options.layout = driver::Layout::Jit;
  driver::Compilation c = driver::Compilation::of_file(std::string(SCANGEN_SOURCE_DIR) + "/samples/tiles.scan", options);
  BOOST_REQUIRE(c.reach(driver::Stage::Sources));
  const std::vector<codegen::EmittedFile>& jit = c.targets().at(0).sources;
  const std::vector<codegen::EmittedFile>& emulated = c.targets().at(1).sources;
  CpuJit cpu_jit;
  std::shared_ptr<CpuModule> kernels = cpu_jit.compile_and_load(emulated.at(0).contents);

  ScopedEnv fake("SCANGEN_CUDA_DRIVER", SCANGEN_FAKE_LIBCUDA);
  ScopedEnv mode("FAKE_CUDA_MODE", std::nullopt);
  ScopedEnv run_by("FAKE_CUDA_KERNELS", kernels->path().string());
  scangen::testing::TempDir cache;
  CudaProgram cuda(cuda_device(0), jit.at(0).contents, jit.at(1).contents, CudaCompiler(cache.path));

  // One kernel per binary: the other function is not compiled until it is called.
  const CudaBinary& product = cuda.load("product");
  BOOST_TEST(product.image.find(std::string("scangen_kernel_1") + '\0') != std::string::npos);
  BOOST_TEST(product.image.find(std::string("scangen_kernel_0") + '\0') == std::string::npos);
  BOOST_TEST(&cuda.load("product") == &product);  // loaded once

  // 33 x 40 by 40 x 17, exact: several tiles, partial edges. The first call's results outgrow
  // the smallest arena, so it launches again; the second call knows the size.
  std::vector<HostTensor> a_b;
  {
    std::string a = "[", b = "[";
    for (int i = 0; i < 33; ++i) {
      a += (i ? ",[" : "[");
      for (int p = 0; p < 40; ++p) a += (p ? "," : "") + std::to_string((i * 7 + p * 3) % 19 - 9);
      a += "]";
    }
    for (int p = 0; p < 40; ++p) {
      b += (p ? ",[" : "[");
      for (int j = 0; j < 17; ++j) b += (j ? "," : "") + std::to_string((p * 5 + j * 11) % 17 - 8);
      b += "]";
    }
    a_b = {tensor(a + "]", DType::I64, 2), tensor(b + "]", DType::I64, 2)};
  }
  const ir::Function* product_fn = c.program().find("product");
  const std::string expected = shown(interp::Interpreter().run(*product_fn, a_b));
  BOOST_TEST(shown(cuda.call("product", a_b)) == expected);
  BOOST_TEST(cuda.last_launches() == 2);
  BOOST_TEST(shown(cuda.call("product", a_b)) == expected);
  BOOST_TEST(cuda.last_launches() == 1);

  // An error of the program: the message's numbers are printed by the host.
  try {
    cuda.call("product", {a_b[0], tensor("[[1,2],[3,4]]", DType::I64, 2)});
    BOOST_ERROR("no error");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()) == "argument 'b' of 'product': dimension 0 is 2 but K = 40 (dimension 1 of 'a')");
    BOOST_TEST(e.line() == 13);
    BOOST_TEST(e.column() == 26);
  }

  // The other function, compiled on its first call, in f32 with a time loop.
  const std::vector<HostTensor> rnn_args = {
      tensor("[[[0.5,-0.25],[1,0]],[[0.25,0.25],[-1,0.5]]]", DType::F32, 3), tensor("[[0,0.5,1],[1,-1,0]]", DType::F32, 2),
      tensor("[[1,0,-1],[0.5,0.5,0.5]]", DType::F32, 2), tensor("[[0,1,0],[0,0,1],[1,0,0]]", DType::F32, 2)};
  BOOST_TEST(shown(cuda.call("batch_rnn", rnn_args)) ==
             shown(interp::Interpreter().run(*c.program().find("batch_rnn"), rnn_args)));
  // T = 2, B = 2, H = 3: one block. The arena holds x @ W of all steps (T x B x H floats, at 0)
  // and the states (T rows of B x H floats, at 256; h[t-1] of step 0 is read from h0): 256 + 48
  // bytes. The step's h[t-1] @ U is in the block's shared memory; in the arena it would have ended
  // at 512 + 24.
  BOOST_TEST(cuda.arena_bytes("batch_rnn") == 256u + 48u);
  BOOST_TEST(cuda.load("batch_rnn").image.find(std::string("scangen_kernel_0") + '\0') != std::string::npos);
}

BOOST_AUTO_TEST_CASE(devices_before_volta_are_refused) {
  ScopedEnv fake("SCANGEN_CUDA_DRIVER", SCANGEN_FAKE_LIBCUDA);
  ScopedEnv mode("FAKE_CUDA_MODE", std::string("pascal"));
  const std::string manifest =
      R"({"format": "scangen-cuda-manifest", "version": 2, "source": "x.scan", "functions": []})";
  try {
    CudaProgram cuda(cuda_device(0), "", manifest);
    BOOST_ERROR("no error");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "scangen's CUDA kernels need a device of compute capability 7.0 or newer; CUDA device 0 "
               "(scangen fake GPU) has 6.1");
  }
}

BOOST_AUTO_TEST_CASE(the_devices_driver_decides_which_nvrtc_may_compile) {
  // A CUDA 12.4 driver and SCANGEN_NVRTC naming a fake NVRTC 13.1: the first call, which would
  // compile, says why that NVRTC's code would not load, before compiling or writing anything.
  const std::string nvrtc_13_1 = std::filesystem::canonical(SCANGEN_FAKE_NVRTC_DIR "/libnvrtc.so.13").string();
  ScopedEnv fake("SCANGEN_CUDA_DRIVER", SCANGEN_FAKE_LIBCUDA);
  ScopedEnv mode("FAKE_CUDA_MODE", std::nullopt);
  ScopedEnv version("FAKE_CUDA_DRIVER_VERSION", std::string("12040"));
  ScopedEnv nvrtc("SCANGEN_NVRTC", nvrtc_13_1);
  const std::string manifest = R"json({"format": "scangen-cuda-manifest", "version": 2, "source": "x.scan",
      "functions": [{"name": "f", "signature": "() -> ()", "kernel": "scangen_kernel_0", "kernel_index": 0,
                     "args": [], "results": [], "width": []}]})json";
  scangen::testing::TempDir cache;
  CudaProgram cuda(cuda_device(0), "", manifest, CudaCompiler(cache.path / "cuda"));
  try {
    cuda.load("f");
    BOOST_ERROR("no error");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()).rfind("NVRTC 13.1 (" + nvrtc_13_1 +
                                               "), named by SCANGEN_NVRTC, is newer than the CUDA driver, which "
                                               "supports CUDA 12.4: ",
                                           0) == 0u,
               e.what());
  }
  BOOST_TEST(!std::filesystem::exists(cache.path / "cuda"));
}
