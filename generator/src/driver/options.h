// The one options record of the pipeline (driver.h), which every caller fills from its own
// spelling (the CLI's flags, the JIT API's JitOptions, scangen_add_library's keywords) and which is
// validated once, here, with messages in the caller's spelling.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "scangen/backend.h"
#include "scangen/fp_mode.h"
#include "scangen/runtime/errors.h"

namespace scangen::ir {
struct Program;
}
namespace scangen::lir {
struct Module;
}

namespace scangen::driver {

// How the emitted sources are laid out: a header and a source per target for a build system
// (`scangen compile`), or one translation unit per target for the JIT.
enum class Layout { BuildSystem, Jit };

struct Options {
  // Where the program runs (Stage::Loaded: exactly one), or the code it becomes (Stage::Sources,
  // Stage::LoopIr: backends whose code is C++ or CUDA; `scangen compile --backend cpu,cuda`).
  std::vector<Backend> backends{Backend::Cpu};
  int opt_level = 2;                          // 0: no rewrites; 2: every rewrite of the table
  std::vector<std::string> only_passes;       // when not empty: exactly these rewrites, in order
  std::vector<std::string> disabled_passes;   // rewrites to skip
  bool verify_each = false;                   // the IR verifier after every rewrite
  // Fast: float arithmetic may be reassociated and contracted (the cpu backend only).
  FpMode fp_mode = FpMode::Strict;
  // The threads C++ code runs on (the cpu backend only): 1 to kMaxThreads, 0 for every hardware one.
  int threads = 1;
  // Where imported headers are looked for after the .scan file's directory (-I).
  std::vector<std::filesystem::path> include_dirs;
  // Also report what keeps the program from CUDA code (`scangen check --cuda`); implied by a
  // backend whose code is CUDA.
  bool check_cuda_imports = false;

  // Sources (Stage::Sources).
  Layout layout = Layout::BuildSystem;  // Stage::Loaded always lays them out for the JIT
  std::string stem;                     // file names; default: the .scan file's stem
  std::string cpp_namespace = "scangen_generated";

  // Loop IR: run only these loop-IR passes (in table order); empty: all of each stage.
  std::vector<std::string> only_lir_passes;

  // The on-disk caches (empty: the defaults): compiled C++ modules, and what Clang found in
  // imported headers (imports/ in it; imports/header_cache.h), then CUDA binaries; and the GPU.
  std::filesystem::path cache_dir;
  std::filesystem::path cuda_cache_dir;
  int cuda_device = 0;

  // Observers, for `scangen ir --print-after-all` and `--stats`.
  std::function<void(const std::string& pass, const ir::Program&)> after_each_pass;
  std::function<void(const std::string& pass, const lir::Module&)> after_each_lir_pass;
  std::function<void(const std::string& pass, int changes)> count_lir_pass;
};

// The default options with the rewrites of -O<opt_level> (tests and benchmarks).
inline Options at_level(int opt_level) {
  Options o;
  o.opt_level = opt_level;
  return o;
}

// How a caller spells each option, for the messages of validate().
struct OptionSpelling {
  const char* backend;
  const char* fp_mode;
  const char* threads;
  const char* opt_level;
  const char* passes;
  const char* disabled_passes;
  const char* lir_passes;
};
inline constexpr OptionSpelling kCliSpelling{"--backend", "--fp", "--threads", "-O", "--passes", "--disable-pass",
                                             "--lir-passes"};
inline constexpr OptionSpelling kApiSpelling{"JitOptions::backend", "JitOptions::fp_mode", "JitOptions::threads",
                                             "JitOptions::opt_level", "only_passes", "JitOptions::disabled_passes",
                                             "only_lir_passes"};

// A combination of options that does not go together, or a name that is not one (exit 2 in the
// CLI, a RuntimeError from the JIT API).
class OptionError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// Checks the options against each other and the tables (passes, loop-IR passes); throws
// OptionError saying what is wrong in `spelling`.
void validate(const Options& options, const OptionSpelling& spelling);

}  // namespace scangen::driver
