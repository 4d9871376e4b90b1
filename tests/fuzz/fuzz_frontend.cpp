// libFuzzer target: source text -> lexer, parser, semantic analysis, IR verifier (no rewrites).
// Every input must end in diagnostics or a verified program; a crash, a sanitizer report, an
// internal error or an error without a diagnostic is a bug.
#include <cstdint>
#include <string>

#include "driver/driver.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scangen::fuzz::expect_user_errors_only([&] {
    auto c = scangen::driver::Compilation::of_text("fuzz.scan", std::string(scangen::fuzz::as_text(data, size)),
                                                   scangen::driver::at_level(0));
    if (!c.reach(scangen::driver::Stage::Analyzed) && !c.diagnostics().has_errors())
      scangen::fuzz::crash("rejected without a diagnostic", "the program was refused silently");
  });
  return 0;
}
