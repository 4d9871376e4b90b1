// The CUDA runtime without a GPU: NVRTC (skipped where libnvrtc cannot be found), the cache, the
// driver's absence, and the device layer against a fake libcuda (data/fake_libcuda.cpp).
// runtime_cuda_gpu_test runs kernels on a real device.
#define BOOST_TEST_MODULE runtime_cuda
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scangen/runtime/cuda.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/process.h"
#include "cache_trust.h"
#include "child_processes.h"
#include "nvrtc_found.h"
#include "scoped_env.h"
#include "temp_dir.h"

#if !defined(SCANGEN_FAKE_LIBCUDA) || !defined(SCANGEN_FAKE_NVRTC_DIR)
#error "SCANGEN_FAKE_LIBCUDA (the fake driver) and SCANGEN_FAKE_NVRTC_DIR (the fake NVRTCs) must be defined"
#endif

using namespace scangen;
namespace fs = std::filesystem;
namespace utf = boost::unit_test;

namespace {

using scangen::testing::ScopedEnv;

struct TempDir : scangen::testing::TempDir {
  TempDir() : scangen::testing::TempDir("scangen-cuda-test") {}
};

using scangen::testing::nvrtc_found;

const std::string kVectorAdd = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

CudaCompileOptions options_for(CudaBinaryKind kind, int arch) {
  CudaCompileOptions options;
  options.kind = kind;
  options.arch = arch;
  return options;
}

template <class Error, class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    BOOST_ERROR("an exception of another type was thrown: " << e.what());
    return "";
  }
  BOOST_ERROR("the expected exception was not thrown");
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void replace_file(const fs::path& path, const std::string& contents) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << contents;
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& prefix = "", const std::string& extension = "") {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (starts_with(name, prefix) && (extension.empty() || entry.path().extension() == extension))
      found.push_back(entry.path());
  }
  return found;
}

// The counters of the fake driver (loaded by the runtime from the same path).
int fake_counter(const char* name) {
  void* handle = ::dlopen(SCANGEN_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(handle != nullptr);
  auto counter = reinterpret_cast<int (*)()>(::dlsym(handle, name));
  BOOST_TEST_REQUIRE(counter != nullptr);
  int value = counter();
  ::dlclose(handle);
  return value;
}

// The fake driver for one scope, with $FAKE_CUDA_MODE set to `mode`.
struct FakeDriver {
  explicit FakeDriver(std::optional<std::string> mode = std::nullopt)
      : driver("SCANGEN_CUDA_DRIVER", SCANGEN_FAKE_LIBCUDA), fake_mode("FAKE_CUDA_MODE", std::move(mode)) {}
  ScopedEnv driver;
  ScopedEnv fake_mode;
};

// PTX as the fake driver understands it (a real driver would refuse it).
CudaBinary fake_ptx(int arch, const std::string& kernels = "vector_add fault") {
  CudaBinary binary;
  binary.kind = CudaBinaryKind::Ptx;
  binary.arch = arch;
  binary.image = ".version 8.0\n.target sm_" + std::to_string(arch) + "\n// " + kernels + "\n";
  return binary;
}

// a + b on the device through `function`, n elements.
std::vector<float> add_on_device(CudaDevice& device, const CudaFunction& function, int n,
                                 CudaLaunchConfig config = {}) {
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - i;
  }
  CudaBuffer da = device.allocate(n * sizeof(float));
  CudaBuffer db = device.allocate(n * sizeof(float));
  CudaBuffer dc = device.allocate(n * sizeof(float));
  da.upload(a);
  db.upload(b);
  dc.fill_bytes(0);
  if (config.grid.x == 1 && config.block.x == 1) {
    config.block.x = 128;
    config.grid.x = (n + 127) / 128;
  }
  function(config, da, db, dc, n);
  device.synchronize();
  return dc.download_as<float>(n);
}

void check_sums(const std::vector<float>& c) {
  for (std::size_t i = 0; i < c.size(); ++i) BOOST_TEST_REQUIRE(c[i] == 0.5f * i + (1000.0f - i));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(architectures)

BOOST_AUTO_TEST_CASE(parse_and_name) {
  BOOST_TEST(parse_cuda_arch("sm_80") == 80);
  BOOST_TEST(parse_cuda_arch("compute_90") == 90);
  BOOST_TEST(parse_cuda_arch("86") == 86);
  BOOST_TEST(parse_cuda_arch("8.6") == 86);
  BOOST_TEST(parse_cuda_arch("12.0") == 120);
  BOOST_TEST(parse_cuda_arch("sm_100") == 100);
  for (const char* bad : {"", "sm_", "sm80", "sm_8", "sm_90a", "8.", "8.66", "compute_8.6", "x86", "1000", "09"})
    BOOST_TEST_CONTEXT(bad) {
      std::string message = error_message<RuntimeError>([&] { parse_cuda_arch(bad); });
      BOOST_TEST(starts_with(message, "invalid CUDA architecture '" + std::string(bad) + "'"));
    }
  BOOST_TEST(cuda_arch_name(CudaBinaryKind::Cubin, 90) == "sm_90");
  BOOST_TEST(cuda_arch_name(CudaBinaryKind::Ptx, 80) == "compute_80");
  BOOST_TEST(std::string(to_string(CudaBinaryKind::Ptx)) == "ptx");
  const std::vector<std::string> expected_defaults = {"-std=c++17", "--fmad=false"};
  BOOST_TEST(CudaCompileOptions().options == expected_defaults, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(nvrtc_library)

BOOST_AUTO_TEST_CASE(found_library_reports_version_and_architectures, *utf::precondition(nvrtc_found)) {
  NvrtcInfo info = nvrtc_info();
  BOOST_TEST_MESSAGE("NVRTC " << info.major << "." << info.minor << " at " << info.library);
  BOOST_TEST(info.major >= 11);
  BOOST_TEST(fs::exists(info.library));
  BOOST_TEST(info.library.is_absolute());
  if (!info.supported_archs.empty()) {
    std::set<int> archs(info.supported_archs.begin(), info.supported_archs.end());
    BOOST_TEST(archs.count(80) == 1u);
    if (info.major >= 12) BOOST_TEST(archs.count(90) == 1u);
  }
}

BOOST_AUTO_TEST_CASE(scangen_nvrtc_with_a_bad_path_is_a_clear_error) {
  ScopedEnv nvrtc("SCANGEN_NVRTC", "/nonexistent/libnvrtc.so.13");
  const std::string message = error_message<RuntimeError>([] { nvrtc_info(); });
  BOOST_TEST(starts_with(message, "cannot load NVRTC from SCANGEN_NVRTC='/nonexistent/libnvrtc.so.13': "));
  BOOST_TEST(contains(message, "No such file or directory"));
  BOOST_TEST(contains(message, "set SCANGEN_NVRTC to the path of libnvrtc.so, or unset it"));
  std::string why;
  BOOST_TEST(!nvrtc_available(&why));
  BOOST_TEST(why == message);
  // Every entry point that needs NVRTC says the same.
  TempDir dir;
  BOOST_TEST(error_message<RuntimeError>([&] { CudaCompiler(dir.path).compile(kVectorAdd, {}); }) == message);
  BOOST_TEST(error_message<RuntimeError>([&] { nvrtc_compile(kVectorAdd, {}); }) == message);
  BOOST_TEST(files_in(dir.path).empty());
}

BOOST_AUTO_TEST_CASE(scangen_nvrtc_naming_another_library_is_a_clear_error) {
  ScopedEnv nvrtc("SCANGEN_NVRTC", SCANGEN_FAKE_LIBCUDA);
  const std::string message = error_message<RuntimeError>([] { nvrtc_info(); });
  BOOST_TEST(contains(message, "is not a usable NVRTC library: it has no nvrtcGetErrorString"));
  BOOST_TEST(contains(message, fs::path(SCANGEN_FAKE_LIBCUDA).filename().string()));
}

BOOST_AUTO_TEST_CASE(scangen_nvrtc_with_a_full_path_compiles, *utf::precondition(nvrtc_found)) {
  // By its path, NVRTC finds libnvrtc-builtins in its own directory even where that directory is
  // not on the loader's search path (the runtime loads the builtins from there first).
  const NvrtcInfo found = nvrtc_info();
  ScopedEnv nvrtc("SCANGEN_NVRTC", found.library.string());
  const NvrtcInfo info = nvrtc_info();
  BOOST_TEST(info.library == found.library);
  BOOST_TEST(!nvrtc_compile(kVectorAdd, options_for(CudaBinaryKind::Ptx, 80)).image.empty());
}

BOOST_AUTO_TEST_CASE(nvrtc_by_path_needs_no_loader_cache, *utf::precondition(nvrtc_found)) {
  // The test above again, in a child whose dynamic loader ignores /etc/ld.so.cache: NVRTC's
  // directory is then on no search path, and only the runtime's loading of libnvrtc-builtins
  // from NVRTC's own directory lets NVRTC compile.
  const fs::path loader = "/lib64/ld-linux-x86-64.so.2";
  if (!fs::exists(loader)) {
    BOOST_TEST_MESSAGE("skipped: no " << loader);
    return;
  }
  ScopedEnv nvrtc("SCANGEN_NVRTC", nvrtc_info().library.string());
  ProcessResult child = run_process({loader.string(), "--inhibit-cache", fs::read_symlink("/proc/self/exe").string(),
                                     "--run_test=nvrtc_library/scangen_nvrtc_with_a_full_path_compiles"});
  BOOST_TEST(child.exit_code == 0, child.output);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// The choice of an NVRTC that the driver supports, with fake NVRTCs (data/fake_nvrtc.cpp) that only
// report a version: in SCANGEN_FAKE_NVRTC_DIR, libnvrtc.so and libnvrtc.so.13 report 13.1,
// libnvrtc.so.12 reports 12.6.

BOOST_AUTO_TEST_SUITE(nvrtc_choice)

fs::path fake_nvrtc(const std::string& name) { return fs::canonical(fs::path(SCANGEN_FAKE_NVRTC_DIR) / name); }

BOOST_AUTO_TEST_CASE(scangen_nvrtc_newer_than_the_driver_is_a_clear_error) {
  const fs::path nvrtc_13_1 = fake_nvrtc("libnvrtc.so.13");
  ScopedEnv nvrtc("SCANGEN_NVRTC", nvrtc_13_1.string());
  BOOST_TEST(nvrtc_info().minor == 1);  // no driver to suit: taken
  BOOST_TEST(error_message<RuntimeError>([] { nvrtc_info(12040); }) ==
             "NVRTC 13.1 (" + nvrtc_13_1.string() +
                 "), named by SCANGEN_NVRTC, is newer than the CUDA driver, which supports CUDA 12.4: code from an "
                 "NVRTC of a newer major version than the driver's does not load; install the NVRTC of a CUDA 12.x "
                 "toolkit or older (libnvrtc.so.12) and set SCANGEN_NVRTC to it if it is not on the loader's search "
                 "path, or update the NVIDIA driver, or unset SCANGEN_NVRTC");
  // Every entry point that compiles for a driver says the same, before writing anything.
  TempDir dir;
  CudaCompileOptions for_12_4 = options_for(CudaBinaryKind::Cubin, 80);
  for_12_4.driver_version = 12040;
  const std::string message = error_message<RuntimeError>([] { nvrtc_info(12040); });
  BOOST_TEST(error_message<RuntimeError>([&] { resolve_cuda_target(for_12_4); }) == message);
  BOOST_TEST(error_message<RuntimeError>([&] { nvrtc_compile(kVectorAdd, for_12_4); }) == message);
  BOOST_TEST(error_message<RuntimeError>([&] { CudaCompiler(dir / "cuda").compile(kVectorAdd, for_12_4); }) == message);
  BOOST_TEST(!fs::exists(dir / "cuda"));
  // A newer minor version of the driver's major version: its CUBIN loads (minor version
  // compatibility), and so does everything on a newer driver.
  BOOST_TEST(nvrtc_info(13000).minor == 1);
  BOOST_TEST(nvrtc_info(14020).minor == 1);
}

BOOST_AUTO_TEST_CASE(ptx_newer_than_the_driver_is_a_clear_error) {
  const fs::path nvrtc_13_1 = fake_nvrtc("libnvrtc.so.13");
  ScopedEnv nvrtc("SCANGEN_NVRTC", nvrtc_13_1.string());
  CudaCompileOptions cubin = options_for(CudaBinaryKind::Cubin, 80);
  cubin.driver_version = 13000;
  BOOST_TEST(resolve_cuda_target(cubin).target() == "sm_80");
  CudaCompileOptions ptx = options_for(CudaBinaryKind::Ptx, 80);
  ptx.driver_version = 13000;
  const std::string newer = "PTX (compute_80) from NVRTC 13.1 (" + nvrtc_13_1.string() +
                            ") needs a driver for CUDA 13.1 or newer, and the CUDA driver supports CUDA 13.0; compile "
                            "to CUBIN for the device, set SCANGEN_NVRTC to an NVRTC no newer than 13.0, or update the "
                            "NVIDIA driver";
  BOOST_TEST(error_message<RuntimeError>([&] { resolve_cuda_target(ptx); }) == newer);
  TempDir dir;
  BOOST_TEST(error_message<RuntimeError>([&] { CudaCompiler(dir / "cuda").compile(kVectorAdd, ptx); }) == newer);
  BOOST_TEST(!fs::exists(dir / "cuda"));
  // The PTX fallback for an architecture this NVRTC does not know (it knows up to sm_90) is PTX too.
  CudaCompileOptions future = options_for(CudaBinaryKind::Cubin, 100);
  future.driver_version = 13000;
  BOOST_TEST(starts_with(error_message<RuntimeError>([&] { resolve_cuda_target(future); }),
                         "PTX (compute_90) from NVRTC 13.1 ("));
  // A driver as new as NVRTC, or unknown, reads it.
  ptx.driver_version = 13010;
  BOOST_TEST(resolve_cuda_target(ptx).target() == "compute_80");
  ptx.driver_version = 0;
  BOOST_TEST(resolve_cuda_target(ptx).target() == "compute_80");
}

// Set in the child that the_first_nvrtc_that_the_driver_supports_is_chosen starts.
constexpr const char* kFakesFirst = "SCANGEN_TEST_FAKE_NVRTCS_FIRST";

boost::test_tools::assertion_result fakes_first_on_the_search_path(utf::test_unit_id) {
  boost::test_tools::assertion_result result(std::getenv(kFakesFirst) != nullptr);
  result.message() << "runs only in the child of the_first_nvrtc_that_the_driver_supports_is_chosen";
  return result;
}

BOOST_AUTO_TEST_CASE(the_first_nvrtc_that_the_driver_supports_is_chosen) {
  // The case below, in a child whose dynamic loader searches the fakes' directory first
  // (LD_LIBRARY_PATH is read when a process starts).
  ScopedEnv nvrtc("SCANGEN_NVRTC", std::nullopt);
  ProcessResult child = run_process({"env", "LD_LIBRARY_PATH=" + std::string(SCANGEN_FAKE_NVRTC_DIR),
                                     std::string(kFakesFirst) + "=1", fs::read_symlink("/proc/self/exe").string(),
                                     "--run_test=nvrtc_choice/with_the_fakes_first_on_the_search_path",
                                     "--report_level=short"});
  BOOST_TEST(child.exit_code == 0, child.output);
  // It ran, and was not skipped.
  BOOST_TEST(std::regex_search(child.output, std::regex("\\b1 test case out of [0-9]+ passed")), child.output);
}

BOOST_AUTO_TEST_CASE(with_the_fakes_first_on_the_search_path, *utf::precondition(fakes_first_on_the_search_path)) {
  // Without a driver to suit: the first that loads.
  BOOST_TEST(nvrtc_info().library == fake_nvrtc("libnvrtc.so"));
  // A CUDA 12 driver: libnvrtc.so and libnvrtc.so.13 (13.1) are too new; libnvrtc.so.12 is taken.
  const NvrtcInfo for_12 = nvrtc_info(12040);
  BOOST_TEST(for_12.library == fake_nvrtc("libnvrtc.so.12"));
  BOOST_TEST(for_12.major == 12);
  BOOST_TEST(for_12.minor == 6);
  // A CUDA 13.0 driver takes 13.1: a CUBIN of a newer minor version loads.
  BOOST_TEST(nvrtc_info(13000).library == fake_nvrtc("libnvrtc.so"));
  // Older than every NVRTC found: the driver's version, what was found (the toolkit's NVRTC too,
  // when scangen was built with one), and what to do.
  const std::string message = error_message<RuntimeError>([] { nvrtc_info(11080); });
  BOOST_TEST(starts_with(message, "no NVRTC that the CUDA driver supports: the driver supports CUDA 11.8, and code from "
                                  "an NVRTC of a newer major version does not load; found NVRTC 13.1 (" +
                                      fake_nvrtc("libnvrtc.so").string() + "), NVRTC 13.1 (" +
                                      fake_nvrtc("libnvrtc.so.13").string() + "), NVRTC 12.6 (" +
                                      fake_nvrtc("libnvrtc.so.12").string() + ")"));
  BOOST_TEST(contains(message, "; install the NVRTC of a CUDA 11.x toolkit or older (libnvrtc.so.11) and set "
                               "SCANGEN_NVRTC to it if it is not on the loader's search path, or update the NVIDIA "
                               "driver"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(nvrtc_compile_tests, *utf::precondition(nvrtc_found))

BOOST_AUTO_TEST_CASE(ptx_for_compute_80_and_90) {
  for (int arch : {80, 90})
    BOOST_TEST_CONTEXT("compute_" << arch) {
      CudaBinary ptx = nvrtc_compile(kVectorAdd, options_for(CudaBinaryKind::Ptx, arch));
      BOOST_TEST((ptx.kind == CudaBinaryKind::Ptx));
      BOOST_TEST(ptx.arch == arch);
      BOOST_TEST(ptx.target() == "compute_" + std::to_string(arch));
      BOOST_TEST(contains(ptx.image, ".target sm_" + std::to_string(arch)));
      BOOST_TEST(contains(ptx.image, ".entry vector_add"));
      BOOST_TEST(ptx.image.find('\0') == std::string::npos);
      BOOST_TEST(!ptx.cache_hit);
      BOOST_TEST(ptx.compile_seconds > 0);
    }
}

BOOST_AUTO_TEST_CASE(cubin_for_sm_80_and_90) {
  for (int arch : {80, 90})
    BOOST_TEST_CONTEXT("sm_" << arch) {
      CudaBinary cubin = nvrtc_compile(kVectorAdd, options_for(CudaBinaryKind::Cubin, arch));
      BOOST_TEST((cubin.kind == CudaBinaryKind::Cubin));
      BOOST_TEST(cubin.arch == arch);
      BOOST_TEST_REQUIRE(cubin.image.size() > 4u);
      BOOST_TEST(cubin.image.compare(0, 4, "\x7f" "ELF") == 0);
      BOOST_TEST(contains(cubin.image, "vector_add"));
    }
}

BOOST_AUTO_TEST_CASE(warnings_come_back_in_the_log) {
  CudaBinary binary = nvrtc_compile("extern \"C\" __global__ void k(int* x) { int unused = 1; }\n",
                                    options_for(CudaBinaryKind::Ptx, 80));
  BOOST_TEST_MESSAGE("log: " << binary.log);
  BOOST_TEST(contains(binary.log, "unused"));
}

BOOST_AUTO_TEST_CASE(syntax_error_is_an_internal_error_with_the_log) {
  const std::string source = "extern \"C\" __global__ void broken(float* x) {\n  x[0] = 1.0f\n}\n";
  CudaCompileOptions options = options_for(CudaBinaryKind::Cubin, 80);
  options.program_name = "broken_kernel.cu";
  const std::string message = error_message<InternalError>([&] { nvrtc_compile(source, options); });
  BOOST_TEST_MESSAGE(message);
  BOOST_TEST(starts_with(message, "NVRTC rejected the CUDA code scangen emitted (a scangen bug; please report it): "
                                  "NVRTC_ERROR_COMPILATION"));
  BOOST_TEST(contains(message, "program: broken_kernel.cu"));
  BOOST_TEST(contains(message, "options: -arch=sm_80 -std=c++17 --fmad=false"));
  // NVRTC's own line: file(line): error: ... (the missing ';' is noticed at the next line's '}')
  BOOST_TEST(contains(message, "broken_kernel.cu(3): error: expected a \";\""));
}

BOOST_AUTO_TEST_CASE(invalid_option_is_an_internal_error) {
  CudaCompileOptions options = options_for(CudaBinaryKind::Ptx, 80);
  options.options.push_back("--no-such-option");
  const std::string message = error_message<InternalError>([&] { nvrtc_compile(kVectorAdd, options); });
  BOOST_TEST(contains(message, "NVRTC_ERROR_INVALID_OPTION"));
  BOOST_TEST(contains(message, "--no-such-option"));
}

BOOST_AUTO_TEST_CASE(architectures_this_nvrtc_cannot_compile_for) {
  const NvrtcInfo info = nvrtc_info();
  if (info.supported_archs.empty()) return;  // an NVRTC before 11.2 cannot tell
  const int oldest = *std::min_element(info.supported_archs.begin(), info.supported_archs.end());
  const int newest = *std::max_element(info.supported_archs.begin(), info.supported_archs.end());

  // Older than anything NVRTC knows: no fallback can help.
  const std::string old_message = error_message<RuntimeError>(
      [&] { nvrtc_compile(kVectorAdd, options_for(CudaBinaryKind::Cubin, oldest - 1)); });
  BOOST_TEST(contains(old_message, "cannot compile for sm_" + std::to_string(oldest - 1)));
  BOOST_TEST(contains(old_message, "it supports sm_" + std::to_string(oldest)));

  // Newer than anything NVRTC knows: PTX for the newest it knows, which the driver compiles on.
  const int future = newest + 10;
  CudaBinary fallback = nvrtc_compile(kVectorAdd, options_for(CudaBinaryKind::Cubin, future));
  BOOST_TEST((fallback.kind == CudaBinaryKind::Ptx));
  BOOST_TEST(fallback.arch == newest);
  BOOST_TEST(contains(fallback.image, ".entry vector_add"));
  const CudaBinary resolved = resolve_cuda_target(options_for(CudaBinaryKind::Cubin, future));
  BOOST_TEST(resolved.target() == "compute_" + std::to_string(newest));
  // Supported architectures resolve to themselves.
  BOOST_TEST(resolve_cuda_target(options_for(CudaBinaryKind::Cubin, newest)).target() ==
             "sm_" + std::to_string(newest));

  CudaCompileOptions strict = options_for(CudaBinaryKind::Cubin, future);
  strict.allow_ptx_fallback = false;
  BOOST_TEST(contains(error_message<RuntimeError>([&] { nvrtc_compile(kVectorAdd, strict); }),
                      "cannot compile for sm_" + std::to_string(future)));
}

BOOST_AUTO_TEST_CASE(no_fma_contraction_by_default) {
  const std::string source =
      "extern \"C\" __global__ void axpy(float a, const float* x, float* y) {\n"
      "  y[threadIdx.x] = a * x[threadIdx.x] + y[threadIdx.x];\n}\n";
  CudaCompileOptions options = options_for(CudaBinaryKind::Ptx, 80);
  const std::string exact = nvrtc_compile(source, options).image;
  BOOST_TEST(!contains(exact, "fma.rn.f32"));
  BOOST_TEST(contains(exact, "mul.rn.f32"));
  options.options = {};
  BOOST_TEST(contains(nvrtc_compile(source, options).image, "fma.rn.f32"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(cuda_cache, *utf::precondition(nvrtc_found))

BOOST_AUTO_TEST_CASE(second_compile_is_a_cache_hit) {
  TempDir dir;
  CudaCompiler compiler(dir.path / "cuda");
  const CudaCompileOptions options = options_for(CudaBinaryKind::Cubin, 80);
  const CudaBinary first = compiler.compile(kVectorAdd, options);
  BOOST_TEST(!first.cache_hit);
  BOOST_TEST(first.compile_seconds > 0);
  const std::string key = compiler.cache_key(kVectorAdd, options);
  BOOST_TEST(first.cache_entry == dir / "cuda" / (key + ".bin"));
  BOOST_TEST(compiler.entry_path(key) == first.cache_entry);
  BOOST_TEST(read_text(dir / "cuda" / (key + ".cu")) == kVectorAdd);
  BOOST_TEST(files_in(dir / "cuda", "tmp-").empty());
  BOOST_TEST(starts_with(read_text(first.cache_entry), "scangen-cuda-cache 1\nsha256 "));

  const CudaBinary second = compiler.compile(kVectorAdd, options);
  BOOST_TEST(second.cache_hit);
  BOOST_TEST(second.compile_seconds == 0);
  BOOST_TEST(second.image == first.image);
  BOOST_TEST(second.log == first.log);
  BOOST_TEST((second.kind == first.kind));
  BOOST_TEST(second.arch == first.arch);

  // Another compiler on the directory (another process) hits as well.
  BOOST_TEST(CudaCompiler(dir.path / "cuda").compile(kVectorAdd, options).cache_hit);

  // What decides the bytes decides the key.
  std::set<std::string> keys{key};
  keys.insert(compiler.cache_key(kVectorAdd + "\n", options));
  keys.insert(compiler.cache_key(kVectorAdd, options_for(CudaBinaryKind::Cubin, 90)));
  keys.insert(compiler.cache_key(kVectorAdd, options_for(CudaBinaryKind::Ptx, 80)));
  CudaCompileOptions with_option = options;
  with_option.options.push_back("-lineinfo");
  keys.insert(compiler.cache_key(kVectorAdd, with_option));
  CudaCompileOptions renamed = options;
  renamed.program_name = "other.cu";
  keys.insert(compiler.cache_key(kVectorAdd, renamed));
  BOOST_TEST(keys.size() == 6u);

  const CudaBinary ptx = compiler.compile(kVectorAdd, options_for(CudaBinaryKind::Ptx, 80));
  BOOST_TEST(!ptx.cache_hit);
  BOOST_TEST((ptx.kind == CudaBinaryKind::Ptx));
  BOOST_TEST(compiler.compile(kVectorAdd, options_for(CudaBinaryKind::Ptx, 80)).image == ptx.image);
  BOOST_TEST(files_in(dir / "cuda", "", ".bin").size() == 2u);
}

BOOST_AUTO_TEST_CASE(damaged_entries_are_rebuilt) {
  TempDir dir;
  CudaCompiler compiler(dir.path);
  const CudaCompileOptions options = options_for(CudaBinaryKind::Cubin, 80);
  const CudaBinary good = compiler.compile(kVectorAdd, options);
  const fs::path entry = good.cache_entry;
  const std::string good_entry = read_text(entry);
  // A sound entry of another target, for the "right checksum, wrong target" case.
  const std::string other_entry = read_text(compiler.compile(kVectorAdd, options_for(CudaBinaryKind::Cubin, 90)).cache_entry);

  auto flipped = [&](std::size_t position) {
    std::string bytes = good_entry;
    bytes[position] ^= 0x5a;
    return bytes;
  };
  struct Damage {
    const char* what;
    std::function<void()> apply;
  };
  const std::size_t arch_digit = good_entry.find("\narch 80\n") + 6;
  const Damage damages[] = {
      {"truncated", [&] { replace_file(entry, good_entry.substr(0, good_entry.size() / 2)); }},
      {"one byte missing", [&] { replace_file(entry, good_entry.substr(0, good_entry.size() - 1)); }},
      {"flipped byte in the image", [&] { replace_file(entry, flipped(good_entry.size() - 10)); }},
      {"flipped byte in the header", [&] { replace_file(entry, flipped(arch_digit)); }},
      {"flipped byte in the checksum", [&] { replace_file(entry, flipped(good_entry.find("sha256 ") + 9)); }},
      {"another format version", [&] { replace_file(entry, "scangen-cuda-cache 2" + good_entry.substr(20)); }},
      {"empty file", [&] { replace_file(entry, ""); }},
      {"garbage", [&] { replace_file(entry, "not a cache entry\n"); }},
      {"a sound entry of another target", [&] { replace_file(entry, other_entry); }},
      {"trailing bytes", [&] { replace_file(entry, good_entry + "x"); }},
  };
  for (const Damage& damage : damages) {
    BOOST_TEST_CONTEXT(damage.what) {
      damage.apply();
      const CudaBinary rebuilt = compiler.compile(kVectorAdd, options);
      BOOST_TEST(!rebuilt.cache_hit);
      BOOST_TEST(rebuilt.image == good.image);
      BOOST_TEST(read_text(entry) == good_entry);
      BOOST_TEST(files_in(dir.path, "tmp-").empty());
      BOOST_TEST(compiler.compile(kVectorAdd, options).cache_hit);
    }
  }
}

BOOST_AUTO_TEST_CASE(concurrent_threads_share_one_entry) {
  TempDir dir;
  const CudaCompiler compiler(dir.path);
  const CudaCompileOptions options = options_for(CudaBinaryKind::Cubin, 90);
  constexpr int kThreads = 4;
  std::vector<CudaBinary> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        results[i] = compiler.compile(kVectorAdd, options);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    BOOST_TEST(errors[i] == "");
    BOOST_TEST(results[i].image == results[0].image);
    BOOST_TEST(!results[i].image.empty());
  }
  BOOST_TEST(files_in(dir.path, "", ".bin").size() == 1u);
  BOOST_TEST(files_in(dir.path, "tmp-").empty());
  BOOST_TEST(compiler.compile(kVectorAdd, options).cache_hit);
}

BOOST_AUTO_TEST_CASE(concurrent_processes_share_one_entry) {
  TempDir dir;
  const CudaCompileOptions options = options_for(CudaBinaryKind::Ptx, 90);
  constexpr int kProcesses = 3;
  for (int status : scangen::testing::run_in_children(kProcesses, [&](int) {
         CudaBinary binary = CudaCompiler(dir.path).compile(kVectorAdd, options);
         return binary.image.find(".entry vector_add") != std::string::npos;
       }))
    BOOST_TEST(status == 0);
  BOOST_TEST(files_in(dir.path, "", ".bin").size() == 1u);
  BOOST_TEST(files_in(dir.path, "tmp-").empty());
  BOOST_TEST(CudaCompiler(dir.path).compile(kVectorAdd, options).cache_hit);
}

BOOST_AUTO_TEST_CASE(rejected_source_is_kept_for_the_report) {
  TempDir dir;
  CudaCompiler compiler(dir.path);
  const std::string source = "extern \"C\" __global__ void broken() { undeclared(); }\n";
  const CudaCompileOptions options = options_for(CudaBinaryKind::Cubin, 80);
  const std::string message = error_message<InternalError>([&] { compiler.compile(source, options); });
  const fs::path kept = dir / (compiler.cache_key(source, options) + ".cu");
  BOOST_TEST(contains(message, "source: " + kept.string()));
  BOOST_TEST(contains(message, "identifier \"undeclared\" is undefined"));
  BOOST_TEST(read_text(kept) == source);
  BOOST_TEST(files_in(dir.path, "", ".bin").empty());
  BOOST_TEST(files_in(dir.path, "tmp-").empty());
}

BOOST_AUTO_TEST_CASE(cache_directory_that_cannot_be_made_is_a_runtime_error) {
  TempDir dir;
  replace_file(dir / "file", "x");
  const std::string message =
      error_message<RuntimeError>([&] { CudaCompiler(dir / "file" / "cuda").compile(kVectorAdd, {}); });
  BOOST_TEST(starts_with(message, "cannot create the CUDA cache directory '" + (dir / "file" / "cuda").string() + "'"));
}

BOOST_AUTO_TEST_CASE(default_cache_directory) {
  ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
  BOOST_TEST(default_cuda_cache_dir() == fs::path("/x/cache/scangen/cuda"));
  BOOST_TEST(CudaCompiler().cache_dir() == fs::path("/x/cache/scangen/cuda"));
  ScopedEnv unset_xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", "/home/someone");
  BOOST_TEST(default_cuda_cache_dir() == fs::path("/home/someone/.cache/scangen/cuda"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Whom the cache trusts: the same rule as the CPU JIT's cache (runtime/src/cache_dir.h), held to
// the same cases (cache_trust.h).

BOOST_AUTO_TEST_SUITE(cuda_cache_trust, *utf::precondition(nvrtc_found))

using scangen::testing::directory_refusal;
using scangen::testing::entry_refusal;
using scangen::testing::for_each_case;
using scangen::testing::Tampering;

const CudaCompileOptions kTrustOptions = options_for(CudaBinaryKind::Cubin, 80);

BOOST_AUTO_TEST_CASE(cache_directories_and_entries_are_created_private) {
  TempDir dir;
  const fs::path cache = dir / "a" / "cuda";
  {
    scangen::testing::ScopedUmask group_writable(002);
    CudaCompiler(cache).compile(kVectorAdd, kTrustOptions);
  }
  const std::string key = CudaCompiler(cache).cache_key(kVectorAdd, kTrustOptions);
  BOOST_TEST(scangen::testing::permissions_of(dir / "a") == 0700u);
  BOOST_TEST(scangen::testing::permissions_of(cache) == 0700u);
  BOOST_TEST(scangen::testing::permissions_of(cache / (key + ".bin")) == 0600u);
  BOOST_TEST(scangen::testing::permissions_of(cache / (key + ".cu")) == 0600u);
  BOOST_TEST(CudaCompiler(cache).compile(kVectorAdd, kTrustOptions).cache_hit);
}

BOOST_AUTO_TEST_CASE(untrusted_directories_are_refused) {
  for_each_case(scangen::testing::untrusted_directories(), [](const Tampering& tampering) {
    TempDir dir;
    const fs::path cache = dir / "cuda";
    CudaCompiler(cache).compile(kVectorAdd, kTrustOptions);  // a sound entry: a hit, were it trusted
    tampering.apply(cache);
    BOOST_TEST(starts_with(error_message<RuntimeError>([&] { CudaCompiler(cache).compile(kVectorAdd, kTrustOptions); }),
                           directory_refusal("CUDA cache", cache, tampering)));
    BOOST_TEST(files_in(cache, "tmp-").empty());
  });
}

BOOST_AUTO_TEST_CASE(a_planted_entry_is_used_only_from_a_trusted_directory) {
  // A sound entry of other code, put under the key of the program the victim compiles.
  const std::string planted_source = "extern \"C\" __global__ void planted_kernel(int* x) { x[0] = 1; }\n";
  TempDir elsewhere;
  const std::string planted = read_text(CudaCompiler(elsewhere.path).compile(planted_source, kTrustOptions).cache_entry);
  auto plant = [&](const fs::path& cache) {
    fs::create_directories(cache);
    std::ofstream(cache / (CudaCompiler(cache).cache_key(kVectorAdd, kTrustOptions) + ".bin"), std::ios::binary)
        << planted;
  };
  for_each_case(scangen::testing::untrusted_directories(), [&](const Tampering& tampering) {
    TempDir dir;
    plant(dir / "cuda");
    tampering.apply(dir / "cuda");
    BOOST_TEST(starts_with(error_message<RuntimeError>([&] { CudaCompiler(dir / "cuda").compile(kVectorAdd, kTrustOptions); }),
                           directory_refusal("CUDA cache", dir / "cuda", tampering)));
  });
  // In a directory of ours that no one else can write, the plant is used: the refusals above are
  // what stops it.
  TempDir dir;
  plant(dir / "cuda");
  fs::permissions(dir / "cuda", fs::perms::owner_all);
  const CudaBinary binary = CudaCompiler(dir / "cuda").compile(kVectorAdd, kTrustOptions);
  BOOST_TEST(binary.cache_hit);
  BOOST_TEST(contains(binary.image, "planted_kernel"));
}

BOOST_AUTO_TEST_CASE(untrusted_entries_are_refused) {
  for_each_case(scangen::testing::untrusted_entries(), [](const Tampering& tampering) {
    TempDir dir;
    const CudaCompiler compiler(dir.path);
    const fs::path entry = compiler.compile(kVectorAdd, kTrustOptions).cache_entry;
    tampering.apply(entry);
    BOOST_TEST(error_message<RuntimeError>([&] { compiler.compile(kVectorAdd, kTrustOptions); }) ==
               entry_refusal("CUDA cache", entry, tampering));
    BOOST_TEST(fs::exists(fs::symlink_status(entry)));  // never deleted behind the user's back
    fs::remove(entry);
    BOOST_TEST(!compiler.compile(kVectorAdd, kTrustOptions).cache_hit);
  });
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(cuda_driver)

BOOST_AUTO_TEST_CASE(default_driver_reports_why_there_is_no_device) {
  ScopedEnv driver("SCANGEN_CUDA_DRIVER", std::nullopt);
  void* libcuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (libcuda) ::dlclose(libcuda);
  std::shared_ptr<CudaDevice> device;
  std::string message;
  try {
    device = cuda_device();
  } catch (const RuntimeError& e) {
    message = e.what();
  }
  BOOST_TEST_MESSAGE((device ? "device: " + device->info().name : "no device: " + message));
  if (!libcuda) {
    // This machine has no driver at all.
    BOOST_TEST(starts_with(message, "CUDA driver not found (libcuda.so.1): libcuda.so.1: cannot open shared object file"));
    BOOST_TEST(error_message<RuntimeError>([] { cuda_device_count(); }) == message);
  } else if (!device) {
    BOOST_TEST(starts_with(message, "no CUDA device: "));
  } else {
    BOOST_TEST(device->info().major >= 3);
    BOOST_TEST(cuda_device() == device);
  }
}

BOOST_AUTO_TEST_CASE(driver_given_by_a_bad_path) {
  ScopedEnv driver("SCANGEN_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  const std::string message = error_message<RuntimeError>([] { cuda_device(); });
  BOOST_TEST(starts_with(message, "CUDA driver not found (/nonexistent/libcuda.so.1): "));
  BOOST_TEST(contains(message, "No such file or directory"));
}

BOOST_AUTO_TEST_CASE(toolkit_stub_library_is_no_device) {
  const fs::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) {
    BOOST_TEST_MESSAGE("skipped: no " << stub);
    return;
  }
  ScopedEnv driver("SCANGEN_CUDA_DRIVER", stub.string());
  const std::string message = error_message<RuntimeError>([] { cuda_device(); });
  BOOST_TEST(message == "no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY (the CUDA toolkit's stub "
                        "libcuda.so was loaded instead of the NVIDIA driver's libcuda.so.1) (CUDA driver " +
                            stub.string() + ")");
}

BOOST_AUTO_TEST_CASE(fake_driver_without_devices) {
  {
    FakeDriver fake("no_device");
    BOOST_TEST(error_message<RuntimeError>([] { cuda_device(); }) ==
               "no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected) "
               "(CUDA driver " SCANGEN_FAKE_LIBCUDA ")");
    BOOST_TEST(starts_with(error_message<RuntimeError>([] { cuda_device_count(); }), "no CUDA device: cuInit failed"));
  }
  {
    FakeDriver fake("zero_devices");
    BOOST_TEST(cuda_device_count() == 0);
    BOOST_TEST(error_message<RuntimeError>([] { cuda_device(); }) ==
               "no CUDA device: the CUDA driver (" SCANGEN_FAKE_LIBCUDA ", CUDA 13.0) reports no devices");
    ScopedEnv older("FAKE_CUDA_DRIVER_VERSION", std::string("12040"));
    BOOST_TEST(error_message<RuntimeError>([] { cuda_device(); }) ==
               "no CUDA device: the CUDA driver (" SCANGEN_FAKE_LIBCUDA ", CUDA 12.4) reports no devices");
  }
  {
    FakeDriver fake;
    BOOST_TEST(cuda_device_count() == 1);
    BOOST_TEST(error_message<RuntimeError>([] { cuda_device(3); }) ==
               "no CUDA device: there is no device 3; the driver reports 1 device");
    BOOST_TEST(starts_with(error_message<RuntimeError>([] { cuda_device(-1); }), "no CUDA device: there is no device -1"));
  }
  BOOST_TEST(fake_counter("fake_cuda_retained_contexts") == 0);
}

BOOST_AUTO_TEST_CASE(fake_device_and_buffers) {
  FakeDriver fake;
  {
    std::shared_ptr<CudaDevice> device = cuda_device();
    const CudaDeviceInfo& info = device->info();
    BOOST_TEST(info.name == "scangen fake GPU");
    BOOST_TEST(info.arch() == 86);
    BOOST_TEST(info.multiprocessors == 4);
    BOOST_TEST(info.max_threads_per_block == 1024);
    BOOST_TEST(info.cooperative_launch);
    BOOST_TEST(info.driver_version == 13000);
    BOOST_TEST(info.total_memory == std::size_t(1) << 30);
    BOOST_TEST(cuda_device() == device);  // one object while it is held
    BOOST_TEST(fake_counter("fake_cuda_retained_contexts") == 1);

    CudaBuffer buffer = device->allocate(4 * sizeof(int));
    BOOST_TEST(buffer.size() == 4 * sizeof(int));
    BOOST_TEST(static_cast<bool>(buffer));
    buffer.upload(std::vector<int>{1, 2, 3, 4});
    BOOST_TEST(buffer.download_as<int>(4) == (std::vector<int>{1, 2, 3, 4}), boost::test_tools::per_element());
    const int seven = 7;
    buffer.upload(&seven, sizeof seven, 2 * sizeof(int));
    BOOST_TEST(buffer.download_as<int>(4) == (std::vector<int>{1, 2, 7, 4}), boost::test_tools::per_element());
    int last = 0;
    buffer.download(&last, sizeof last, 3 * sizeof(int));
    BOOST_TEST(last == 4);
    buffer.fill_bytes(0xff);
    BOOST_TEST(buffer.download_as<int>(1)[0] == -1);

    BOOST_TEST(contains(error_message<InternalError>([&] { buffer.upload(&seven, sizeof seven, 4 * sizeof(int)); }),
                        "a copy to the device of 4 bytes at offset 16 is outside the device buffer of 16 bytes"));
    BOOST_TEST(contains(error_message<InternalError>([&] { buffer.download_as<int>(5); }), "outside the device buffer"));
    BOOST_TEST(contains(error_message<InternalError>([&] { buffer.upload(&seven, 1, std::size_t(-1)); }),
                        "outside the device buffer"));

    CudaBuffer moved = std::move(buffer);
    BOOST_TEST(!buffer);  // NOLINT(bugprone-use-after-move): moved-from buffers are empty
    BOOST_TEST(moved.download_as<int>(1)[0] == -1);
    BOOST_TEST(contains(error_message<InternalError>([&] { buffer.download_as<int>(1); }), "an empty CudaBuffer"));
    CudaBuffer empty = device->allocate(0);
    BOOST_TEST(empty.size() == 0u);
    empty.upload(std::vector<int>{});
    BOOST_TEST(fake_counter("fake_cuda_live_allocations") == 2);
    moved = std::move(empty);
    BOOST_TEST(fake_counter("fake_cuda_live_allocations") == 1);
  }
  // Buffers and the context are released with the last holder.
  BOOST_TEST(fake_counter("fake_cuda_live_allocations") == 0);
  BOOST_TEST(fake_counter("fake_cuda_retained_contexts") == 0);
}

BOOST_AUTO_TEST_CASE(fake_out_of_memory_is_a_runtime_error) {
  FakeDriver fake("oom");
  std::shared_ptr<CudaDevice> device = cuda_device();
  const std::string message = error_message<RuntimeError>([&] { device->allocate(1000); });
  BOOST_TEST(message == "cuMemAlloc of 1000 bytes on CUDA device 0 (scangen fake GPU, sm_86) failed: "
                        "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

BOOST_AUTO_TEST_CASE(fake_modules_and_launches) {
  FakeDriver fake;
  {
    std::shared_ptr<CudaDevice> device = cuda_device();
    std::shared_ptr<CudaModule> module = device->load_module(fake_ptx(80));
    BOOST_TEST(module->target() == "compute_80");
    BOOST_TEST(fake_counter("fake_cuda_live_modules") == 1);
    CudaFunction add = module->function("vector_add");
    BOOST_TEST(add.name() == "vector_add");
    check_sums(add_on_device(*device, add, 1000));

    // Cooperative launches: within what the device holds at once, and beyond.
    BOOST_TEST(add.max_cooperative_blocks(128) == 8u);
    CudaLaunchConfig cooperative;
    cooperative.cooperative = true;
    cooperative.grid.x = 8;
    cooperative.block.x = 128;
    check_sums(add_on_device(*device, add, 1000, cooperative));
    cooperative.grid.x = 9;
    BOOST_TEST(contains(error_message<InternalError>([&] { add_on_device(*device, add, 1000, cooperative); }),
                        "cooperative launch of kernel 'vector_add' (grid 9x1x1, block 128x1x1, 0 bytes of shared "
                        "memory) on CUDA device 0 (scangen fake GPU, sm_86) failed: "
                        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (too many blocks in cooperative launch)"));
    CudaLaunchConfig empty_grid;
    empty_grid.grid.x = 0;
    BOOST_TEST(contains(error_message<InternalError>([&] { add.launch(empty_grid, nullptr); }),
                        "an empty grid or block"));

    BOOST_TEST(error_message<InternalError>([&] { module->function("missing"); }) ==
               "the CUDA module (compute_80) has no kernel 'missing' (CUDA_ERROR_NOT_FOUND (named symbol not found))");

    // Code for a newer device, and an image that is no module.
    const std::string newer = error_message<RuntimeError>([&] { device->load_module(fake_ptx(90)); });
    BOOST_TEST(starts_with(newer, "cuModuleLoadData of a compute_90 module on CUDA device 0 (scangen fake GPU, sm_86) "
                                  "failed: CUDA_ERROR_NO_BINARY_FOR_GPU"));
    BOOST_TEST(contains(newer, "compute_90 code cannot run on sm_86"));
    CudaBinary garbage = fake_ptx(80);
    garbage.image = "garbage";
    const std::string invalid = error_message<InternalError>([&] { device->load_module(garbage); });
    BOOST_TEST(contains(invalid, "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)\nfake ptxas: not PTX"));
    BOOST_TEST(contains(error_message<InternalError>([&] { device->load_module(CudaBinary{}); }), "empty CUDA module"));
    BOOST_TEST(fake_counter("fake_cuda_live_modules") == 1);

    // A fault in a kernel shows at the next synchronization.
    module->function("fault")({}, 1);
    BOOST_TEST(contains(error_message<InternalError>([&] { device->synchronize(); }),
                        "cuCtxSynchronize on CUDA device 0 (scangen fake GPU, sm_86) failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
  }
  // The function holds its module, the module its device: all gone now.
  BOOST_TEST(fake_counter("fake_cuda_live_modules") == 0);
  BOOST_TEST(fake_counter("fake_cuda_live_allocations") == 0);
  BOOST_TEST(fake_counter("fake_cuda_retained_contexts") == 0);
}

BOOST_AUTO_TEST_CASE(nvrtc_output_runs_on_the_fake_device, *utf::precondition(nvrtc_found)) {
  // The whole path without a GPU: NVRTC's PTX and CUBIN, loaded and launched (on the host).
  FakeDriver fake;
  TempDir dir;
  std::shared_ptr<CudaDevice> device = cuda_device();
  for (CudaBinaryKind kind : {CudaBinaryKind::Ptx, CudaBinaryKind::Cubin})
    BOOST_TEST_CONTEXT(to_string(kind)) {
      CudaBinary binary = CudaCompiler(dir.path).compile(kVectorAdd, options_for(kind, device->info().arch()));
      std::shared_ptr<CudaModule> module = device->load_module(binary);
      check_sums(add_on_device(*device, module->function("vector_add"), 300));
    }
}

BOOST_AUTO_TEST_SUITE_END()
