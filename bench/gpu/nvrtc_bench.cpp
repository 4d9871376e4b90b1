// NVRTC cold-compile and cache-hit times of the kernels of a .scan file, compiled as
// `scangen run --backend cuda` compiles them: the JIT source, one function's kernel at a time
// (-DSCANGEN_KERNEL=<index>). Needs NVRTC, not a GPU. Targets (issue 4): cold <= 100 ms per
// kernel, from the cache <= 5 ms. The whole module at once is printed for comparison.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/cuda_program.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
std::vector<double> times_ms(int repeats, F&& f) {
  std::vector<double> out;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    f();
    out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return out;
}

void report(const char* what, const std::vector<double>& ms, double target) {
  std::printf("  %-34s median %8.2f ms (min %8.2f) over %2zu   target <= %g ms: %s\n", what, median(ms),
              *std::min_element(ms.begin(), ms.end()), ms.size(), target, median(ms) <= target ? "met" : "NOT met");
}

}  // namespace

int run(int argc, char** argv) {
  scangen::driver::Options pipeline;
  pipeline.backends = {scangen::Backend::Cuda};
  pipeline.layout = scangen::driver::Layout::Jit;
  pipeline.stem = "kernels";
  auto c = scangen::driver::Compilation::of_file(argv[1], pipeline);
  if (!c.reach(scangen::driver::Stage::Sources)) {
    std::fprintf(stderr, "%s", c.rendered_diagnostics().c_str());
    return 1;
  }
  const std::vector<scangen::codegen::EmittedFile>& files = c.targets().at(0).sources;
  const std::string& source = files.at(0).contents;
  const std::vector<scangen::CudaFunctionInfo> functions = scangen::parse_cuda_manifest(files.at(1).contents);
  if (functions.empty()) {
    std::fprintf(stderr, "%s: no functions to compile\n", argv[1]);
    return 1;
  }
  const int arch = argc > 2 ? scangen::parse_cuda_arch(argv[2]) : 90;
  if (argc > 3) std::ofstream(argv[3]) << source;  // to time or read the kernels by hand

  const scangen::NvrtcInfo nvrtc = scangen::nvrtc_info();
  std::printf("source: %s (%zu bytes of CUDA, %zu kernels), NVRTC %d.%d, sm_%d, CUBIN\n", argv[1], source.size(),
              functions.size(), nvrtc.major, nvrtc.minor, arch);
  scangen::nvrtc_compile(source, scangen::kernel_compile_options(functions.at(0), arch));  // NVRTC's own start-up
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "scangen-nvrtc-bench";
  for (const scangen::CudaFunctionInfo& fn : functions) {
    const scangen::CudaCompileOptions options = scangen::kernel_compile_options(fn, arch);
    std::printf("%s (%s)\n", fn.name.c_str(), fn.kernel.c_str());
    report("nvrtc cold compile", times_ms(5, [&] { scangen::nvrtc_compile(source, options); }), 100);
    std::filesystem::remove_all(cache);
    scangen::CudaCompiler compiler(cache);
    compiler.compile(source, options);
    report("from the cache", times_ms(20, [&] {
             if (!compiler.compile(source, options).cache_hit) std::fprintf(stderr, "warning: no cache hit\n");
           }), 5);
    std::filesystem::remove_all(cache);
  }
  scangen::CudaCompileOptions whole;
  whole.arch = arch;
  std::printf("all kernels in one module (for comparison)\n");
  const std::vector<double> all = times_ms(3, [&] { scangen::nvrtc_compile(source, whole); });
  std::printf("  %-34s median %8.2f ms\n", "nvrtc cold compile", median(all));
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s FILE.scan [ARCH [SOURCE_OUT]]\n", argv[0]);
    return 2;
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // no NVRTC, a bad architecture, an unreadable file
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
