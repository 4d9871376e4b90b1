// NVRTC cold-compile and cache-hit times of the kernels of bench/gpu/gpu_bench.scan (the JIT
// source `scangen run --backend cuda` compiles). Needs NVRTC, not a GPU. Targets (issue 4):
// cold <= 100 ms, from the cache <= 5 ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "scangen/runtime/cuda.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.scan [ARCH]\n", argv[0]);
    return 2;
  }
  scangen::Driver driver;
  auto program = driver.load_file(argv[1]);
  if (!program) {
    std::fprintf(stderr, "%s", driver.rendered_diagnostics().c_str());
    return 1;
  }
  scangen::codegen::EmitOptions emit;
  emit.stem = "kernels";
  emit.single_translation_unit = true;
  std::string source = scangen::codegen::generate(*program, "cuda", emit).at(0).contents;
  scangen::CudaCompileOptions options;
  options.arch = argc > 2 ? scangen::parse_cuda_arch(argv[2]) : 90;
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> cold, hit;
  for (int i = 0; i < 5; ++i) {
    auto t0 = clock::now();
    scangen::nvrtc_compile(source, options);
    cold.push_back(ms(clock::now() - t0));
  }
  std::filesystem::path cache = std::filesystem::temp_directory_path() / "scangen-nvrtc-bench";
  std::filesystem::remove_all(cache);
  scangen::CudaCompiler compiler(cache);
  compiler.compile(source, options);
  for (int i = 0; i < 20; ++i) {
    auto t0 = clock::now();
    scangen::CudaBinary b = compiler.compile(source, options);
    hit.push_back(ms(clock::now() - t0));
    if (!b.cache_hit) std::fprintf(stderr, "warning: no cache hit\n");
  }
  std::filesystem::remove_all(cache);
  std::printf("source: %s (%zu bytes of CUDA, %s)\n", argv[1], source.size(), options.kind == scangen::CudaBinaryKind::Cubin ? "cubin" : "ptx");
  std::printf("nvrtc cold compile   median %.1f ms (min %.1f) over %zu   target <= 100 ms: %s\n", median(cold),
              *std::min_element(cold.begin(), cold.end()), cold.size(), median(cold) <= 100 ? "met" : "NOT met");
  std::printf("cache hit            median %.2f ms (min %.2f) over %zu   target <= 5 ms: %s\n", median(hit),
              *std::min_element(hit.begin(), hit.end()), hit.size(), median(hit) <= 5 ? "met" : "NOT met");
  return 0;
}
