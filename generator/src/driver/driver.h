// The driver: one .scan file through the pipeline (parse, analyze, rewrite, emit), shared by the
// CLI, the tests and the benchmarks.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "scangen/runtime/tensor.h"
#include "scangen/fp_mode.h"
#include "support/diagnostics.h"

namespace scangen {

struct PipelineOptions {
  explicit PipelineOptions(int level = 2) : opt_level(level) {}
  int opt_level;  // 0: no rewrites; 2: every pass of the table
  std::vector<std::string> only_passes;   // when not empty: exactly these, in this order
  std::set<std::string> disabled_passes;
  bool verify_each = false;
  // Fast: the rewrites may reassociate float arithmetic (parallel-scan); the CPU backend's mode.
  FpMode fp_mode = FpMode::Strict;
  // -I: where imported headers are looked for after the .scan file's directory.
  std::vector<std::filesystem::path> include_dirs;
  // The JIT cache's directory, where imported headers' analyses are cached too (imports/ in it;
  // imports/header_cache.h); empty: default_cache_dir().
  std::filesystem::path cache_dir;
  // Called after each pass that ran, with its name and the program (for --print-after-all).
  std::function<void(const std::string&, const ir::Program&)> after_each_pass;
};

class Driver {
 public:
  Driver();

  // Parses and analyzes a file (and a text given in memory, for tests). nullopt when the program
  // has errors; they are in diagnostics().
  std::optional<ir::Program> load_file(const std::string& path, const PipelineOptions& options = PipelineOptions());
  std::optional<ir::Program> load_text(const std::string& name, const std::string& text,
                                       const PipelineOptions& options = PipelineOptions());

  const DiagnosticEngine& diagnostics() const { return diags_; }
  // The files the last load read: the .scan file and every imported header with what it includes
  // (for depfiles).
  const std::vector<std::filesystem::path>& dependencies() const { return dependencies_; }
  // How many times each pass fired while loading (--stats).
  const std::map<std::string, int>& pass_stats() const { return pass_stats_; }
  // Why rewrites did not fire where they might have (parallel-scan's reasons), for --stats.
  const std::vector<std::string>& pass_notes() const { return pass_notes_; }
  std::string rendered_diagnostics() const;
  // A run-time error of the program in the file last loaded, rendered like a compile error (with
  // the source line and a caret when it has a location).
  std::string render_runtime_error(const std::string& message, int line, int column) const;

  // Reports, as errors, what keeps the program's imported functions from CUDA code: a call of a
  // function that is not __host__ __device__, a header that the CUDA-mode parse rejected. False
  // when there was any (the CUDA backend and the CUDA emulation call this first).
  bool check_cuda_imports(const ir::Program& p);

  // The function to run: `name`, or the only/first one. Reports an error and returns null when absent.
  const ir::Function* select_function(const ir::Program& p, const std::string& name);
  // The error select_function reports for a missing function, rendered (without reporting it).
  std::string describe_missing_function(const ir::Program& p, const std::string& name) const;

 private:
  std::optional<ir::Program> finish(int file_id, const std::filesystem::path& scan_dir,
                                    const PipelineOptions& options);
  std::optional<ir::Program> analyze_file(int file_id, const std::filesystem::path& scan_dir,
                                          const PipelineOptions& options);

  SourceManager sources_;
  DiagnosticEngine diags_;
  int last_file_ = -1;
  std::map<std::string, int> pass_stats_;
  std::vector<std::string> pass_notes_;
  std::vector<std::filesystem::path> dependencies_;
};

}  // namespace scangen
