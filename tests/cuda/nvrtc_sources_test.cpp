// Every .scan file given on the command line: the CUDA source the JIT would compile (the CUDA
// backend's single translation unit, at -O2 and -O0) compiles with NVRTC to PTX for sm_80 and
// sm_90, with no warning; and at -O2 each function's kernel compiles alone, as CudaProgram
// compiles it, to PTX holding that kernel only. Kernels that ask for every resident thread
// (__launch_bounds__ with SCANGEN_CUDA_LANE_BLOCKS) also compile to CUBIN for every architecture
// this NVRTC supports without a warning from ptxas, which warns when the blocks asked for exceed
// what the architecture holds. Needs NVRTC, not a GPU; exits 77 (ctest: skipped) without NVRTC.
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "common/test_scope.h"
#include "driver/driver.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/errors.h"

namespace {

// The architectures the kernels that ask for every resident thread compile for: every one NVRTC
// lists from Volta on (scangen's kernels refuse older ones) in the long run, the oldest and the
// newest of them in CI (docs/testing.md).
std::vector<int> tested_archs() {
  std::vector<int> archs;
  for (int arch : scangen::nvrtc_info().supported_archs)
    if (arch >= 70) archs.push_back(arch);
  if (!scangen::testing::long_tests() && archs.size() > 2) archs = {archs.front(), archs.back()};
  return archs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!scangen::nvrtc_available(&why)) {
    std::cout << "skipped: " << why << "\n";
    return 77;
  }
  int failures = 0, compiled = 0, bounded_compilations = 0;
  // Compiles `source` with `o`; fails on an error, on any word in NVRTC's log, and on what
  // `wrong` says of the binary (empty: nothing).
  auto expect_clean = [&](const std::string& where, const std::string& source, const scangen::CudaCompileOptions& o,
                          const std::function<std::string(const scangen::CudaBinary&)>& wrong) {
    try {
      scangen::CudaBinary b = scangen::nvrtc_compile(source, o);
      std::string problem = !b.log.empty() ? "NVRTC warned:\n" + b.log : wrong ? wrong(b) : "";
      if (problem.empty()) {
        ++compiled;
        return;
      }
      std::cout << "FAIL " << where << ": " << problem << "\n";
    } catch (const std::exception& e) {
      std::cout << "FAIL " << where << ": " << e.what() << "\n";
    }
    ++failures;
  };
  for (int i = 1; i < argc; ++i) {
    for (int opt : {2, 0}) {
      scangen::driver::Options options = scangen::driver::at_level(opt);
      options.backends = {scangen::Backend::Cuda};
      options.layout = scangen::driver::Layout::Jit;
      options.stem = "kernels";
      auto c = scangen::driver::Compilation::of_file(argv[i], options);
      if (!c.reach(scangen::driver::Stage::Sources)) {
        std::cout << "FAIL " << argv[i] << ": does not load\n" << c.rendered_diagnostics();
        ++failures;
        continue;
      }
      const std::vector<scangen::codegen::EmittedFile>& files = c.targets().at(0).sources;
      const std::string& source = files.at(0).contents;
      if (opt == 2) {
        const std::vector<scangen::CudaFunctionInfo> functions = scangen::parse_cuda_manifest(files.at(1).contents);
        for (const scangen::CudaFunctionInfo& fn : functions) {
          const std::string kernel = std::string(argv[i]) + " kernel of '" + fn.name + "'";
          const std::string bounded =
              "__launch_bounds__(SCANGEN_CUDA_BLOCK_THREADS, SCANGEN_CUDA_LANE_BLOCKS) " + fn.kernel + "(";
          if (source.find(bounded) != std::string::npos) {
            for (int arch : tested_archs()) {
              ++bounded_compilations;
              scangen::CudaCompileOptions o = scangen::kernel_compile_options(fn, arch);
              o.kind = scangen::CudaBinaryKind::Cubin;
              o.allow_ptx_fallback = false;
              expect_clean(kernel + " for sm_" + std::to_string(arch), source, o, nullptr);
            }
          }
          scangen::CudaCompileOptions o = scangen::kernel_compile_options(fn, 90);
          o.kind = scangen::CudaBinaryKind::Ptx;
          expect_clean(kernel + " alone", source, o, [&](const scangen::CudaBinary& b) {
            int entries = 0;
            for (size_t at = b.image.find(".entry "); at != std::string::npos; at = b.image.find(".entry ", at + 1))
              ++entries;
            if (entries == 1 && b.image.find(".entry " + fn.kernel + "(") != std::string::npos) return std::string();
            return "the PTX has " + std::to_string(entries) + " kernels, not just " + fn.kernel;
          });
        }
      }
      // The whole source for sm_90 (and sm_80 in the long run, docs/testing.md).
      for (int arch : scangen::testing::long_tests() ? std::vector<int>{80, 90} : std::vector<int>{90}) {
        scangen::CudaCompileOptions o;
        o.kind = scangen::CudaBinaryKind::Ptx;
        o.arch = arch;
        o.allow_ptx_fallback = false;
        expect_clean(std::string(argv[i]) + " -O" + std::to_string(opt) + " compute_" + std::to_string(arch), source, o,
                     nullptr);
      }
    }
  }
  if (bounded_compilations == 0) {  // the check of __launch_bounds__ would check nothing
    std::cout << "FAIL no kernel of these files asks for every resident thread, or NVRTC lists no architecture\n";
    ++failures;
  }
  std::cout << compiled << " compilations, " << failures << " failures\n";
  return failures ? 1 : 0;
}
