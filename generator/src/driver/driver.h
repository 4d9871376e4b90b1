// The pipeline's one owner. Every step from a .scan text to what a caller asks for runs here, in
// this order and nowhere else (as Halide's Lower.cpp and MLIR's pass manager own theirs):
//
//   parse -> analyze (grad expanded by autodiff) -> verify -> rewrites (passes.def)
//     -> lowering -> loop-IR passes: every backend's, the fast mode's, the target's (lir_passes.def)
//     -> printing (C++, CUDA) -> compiling and loading (the runtime's JITs)
//
// The CLI's subcommands, the JIT API (api/jit.cpp), `scangen compile` under scangen_add_library,
// the tests and the benchmarks ask a Compilation for a stage and read its result; none of them
// runs a pass. The options are one record (driver/options.h), validated once.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/backend.h"
#include "codegen/loop_ir.h"
#include "driver/options.h"
#include "driver/runner.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace scangen::passes {
class PassContext;
}

namespace scangen::driver {

// How far a compilation goes; each stage includes those before it.
enum class Stage {
  Analyzed,   // parsed and analyzed: the program IR as written, and its errors
  Rewritten,  // the rewrites the options ask for applied (none at -O0)
  LoopIr,     // lowered, with the loop-IR passes of every backend, the fast mode and the target
  Sources,    // printed: the files of each backend's code
  Loaded,     // compiled and loaded: a runner for the one backend of the options
};

// The loop IR and the sources of one backend's code.
struct Target {
  Backend backend;
  lir::Module loop_ir;
  std::vector<codegen::EmittedFile> sources;
};

class Compilation {
 public:
  // A .scan file (read when the pipeline starts), or a text held in memory that `name` stands for
  // (in diagnostics, and relative imports are resolved against its directory). Throws OptionError
  // for options that do not go together (validate(), in `spelling`).
  static Compilation of_file(const std::filesystem::path& path, Options options,
                             const OptionSpelling& spelling = kApiSpelling);
  static Compilation of_text(std::string name, std::string text, Options options,
                             const OptionSpelling& spelling = kApiSpelling);
  Compilation(Compilation&&) = default;
  ~Compilation();

  // Runs the stages up to `stage` that have not run yet. False when the program has errors (they
  // are in diagnostics()); RuntimeError for what the user can change (a file that cannot be read,
  // no C++ compiler, no GPU), InternalError for a scangen bug.
  bool reach(Stage stage);

  // Stage::Analyzed or later: the program (rewritten from Stage::Rewritten on).
  const ir::Program& program() const;
  // Stage::LoopIr or later: one target per backend of the options that has code, in their order.
  const std::vector<Target>& targets() const { return targets_; }
  // Stage::Loaded: the runner of the options' backend.
  Runner& runner() const;
  std::shared_ptr<Runner> shared_runner() const { return runner_; }

  const Options& options() const { return options_; }
  const DiagnosticEngine& diagnostics() const { return *diags_; }
  std::string rendered_diagnostics() const;
  // A run-time error of the program, rendered like a compile error (with the source line and a
  // caret when it has a location).
  std::string render_runtime_error(const std::string& message, int line, int column) const;
  // The error for a function the program does not have, naming those it has (not reported):
  // rendered as the CLI prints it, or as one sentence (the JIT API's exceptions).
  std::string describe_missing_function(const std::string& name) const;
  std::string missing_function_sentence(const std::string& name) const;
  // The files the program was read from: the .scan file and every imported header with what it
  // includes (for depfiles and the JIT's memo).
  const std::vector<std::filesystem::path>& dependencies() const { return dependencies_; }
  // How many times each rewrite fired, and why some did not where they might have (--stats).
  const std::map<std::string, int>& pass_stats() const { return pass_stats_; }
  const std::vector<std::string>& pass_notes() const { return pass_notes_; }

 private:
  Compilation(std::string name, std::optional<std::string> text, Options options);
  bool analyze();
  bool check_cuda_imports();
  void rewrite();
  void lower();
  void print();
  void load();
  std::string source_name_for(Layout layout) const;
  std::vector<codegen::EmittedFile> sources_of(const Target& t, Layout layout) const;

  Options options_;
  std::string name_;
  std::optional<std::string> text_;  // absent: read the file `name_`
  // Behind pointers: diagnostics refer to the sources, and a Compilation may move.
  std::unique_ptr<SourceManager> sources_;
  std::unique_ptr<DiagnosticEngine> diags_;
  int file_id_ = -1;
  std::optional<Stage> reached_;
  bool failed_ = false;
  std::unique_ptr<ir::Program> program_;
  std::vector<Target> targets_;
  std::shared_ptr<Runner> runner_;
  std::vector<std::filesystem::path> dependencies_;
  std::map<std::string, int> pass_stats_;
  std::vector<std::string> pass_notes_;
};

// ---- The later steps, from a program IR that a test or benchmark already holds (the same code
// the Compilation runs).

// The rewrites the options ask for; `stats` (optional) receives what fired.
ir::Program rewrite(const ir::Program& program, const Options& options, passes::PassContext* stats = nullptr);
// The loop IR of `backend`'s code: lowered, then the loop-IR passes of every backend, of the fast
// mode (options.fp_mode) and of the backend (options.threads for the CPU's).
lir::Module lower(const ir::Program& program, Backend backend, const Options& options);
// The sources of `backend`'s code, in the options' layout, stem and namespace.
std::vector<codegen::EmittedFile> emit(const ir::Program& program, Backend backend, const Options& options);

}  // namespace scangen::driver
