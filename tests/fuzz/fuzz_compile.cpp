// libFuzzer target: the whole compile of a source text: analysis, every rewrite at -O2 with the IR
// verifier after each, then the C++ and CUDA backends' text (no C++ compiler runs). Only the
// compiler is checked here; running programs is the random-program tests' job.
#include <cstdint>
#include <string>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scangen::fuzz::expect_user_errors_only([&] {
    namespace driver = scangen::driver;
    driver::Options options = driver::at_level(2);
    options.verify_each = true;
    options.backends = {scangen::Backend::Cpu, scangen::Backend::Cuda};
    auto c = driver::Compilation::of_text("fuzz.scan", std::string(scangen::fuzz::as_text(data, size)), options);
    if (!c.reach(driver::Stage::Sources)) {
      if (!c.diagnostics().has_errors())
        scangen::fuzz::crash("rejected without a diagnostic", "the program was refused silently");
      return;
    }
    options.layout = driver::Layout::Jit;
    driver::emit(c.program(), scangen::Backend::CudaEmulation, options);
  });
  return 0;
}
