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
    scangen::Driver driver;
    scangen::PipelineOptions options(2);
    options.verify_each = true;
    auto program = driver.load_text("fuzz.scan", std::string(scangen::fuzz::as_text(data, size)), options);
    if (!program) {
      if (!driver.diagnostics().has_errors())
        scangen::fuzz::crash("rejected without a diagnostic", "the program was refused silently");
      return;
    }
    scangen::codegen::EmitOptions emit;
    emit.stem = "fuzz";
    for (const char* backend : {"cpu", "cuda"}) scangen::codegen::generate(*program, backend, emit);
    emit.single_translation_unit = true;
    emit.cuda_emulation = true;
    scangen::codegen::generate(*program, "cuda", emit);
  });
  return 0;
}
