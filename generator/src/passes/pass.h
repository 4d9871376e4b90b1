// The rewrites of scan programs ("passes"): one table (passes.def) of name, one-line summary,
// description and function, in pipeline order. The table drives the pipeline, the CLI
// (--passes, --disable-pass, --list-passes, --print-after-all, -O0/-O2), the statistics and
// docs/rewrites.md (tests/passes/ checks that the document has a section per entry).
//
// A pass is a free function `ir::Program run_<name>(const ir::Program&, PassContext&)` in its own
// file, with a comment at the top saying what it matches, what it produces and when it must not
// fire. Every pass preserves the program's results (bit for bit) and errors (a program
// fails at -O2 exactly when it fails at -O0; with one possible error, with that error).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "scangen/fp_mode.h"

namespace scangen::passes {

class PassContext {
 public:
  // Counts rewrites a pass made (shown by --stats).
  void fired(int times = 1);
  const std::map<std::string, int>& stats() const { return stats_; }
  // Records why the current pass left something as it was, where a user may have expected it to
  // fire (`scangen ir --stats` prints these after the counts).
  void note(const std::string& text);
  const std::vector<std::string>& notes() const { return notes_; }
  // The floating-point mode the program is compiled for (PipelineConfig::fp_mode).
  FpMode fp_mode() const { return fp_mode_; }

 private:
  friend ir::Program run_passes(const ir::Program&, const struct PipelineConfig&, PassContext&);
  std::string current_;
  std::map<std::string, int> stats_;
  std::vector<std::string> notes_;
  FpMode fp_mode_ = FpMode::Strict;
};

using PassFunction = ir::Program (*)(const ir::Program&, PassContext&);

struct PassInfo {
  const char* name;
  const char* summary;      // one line
  const char* description;  // a paragraph for --list-passes and the docs
  PassFunction run;
};

// The table, in pipeline order.
const std::vector<PassInfo>& pass_table();
const PassInfo* find_pass(const std::string& name);

struct PipelineConfig {
  int opt_level = 2;  // 0: no rewrites; 2: every pass of the table, then general and
                      // remove-constants-and-unused again (to clean up after the others)
  std::vector<std::string> only;       // when not empty: exactly these passes, in this order
  std::set<std::string> disabled;      // passes to skip
  bool verify_each = false;            // run the IR verifier after every pass
  // Fast: float arithmetic may be reassociated (parallel-scan reassociates float recurrences
  // without `scan(parallel)`); the CPU backend's --fp fast.
  FpMode fp_mode = FpMode::Strict;
  // Called after each pass that ran (for --print-after-all).
  std::function<void(const PassInfo&, const ir::Program&)> after_each;
};

// Runs the configured passes; throws RuntimeError for an unknown pass name.
ir::Program run_passes(const ir::Program& program, const PipelineConfig& config, PassContext& context);

// Declarations of the passes (one per entry of passes.def).
#define SCANGEN_PASS(name, function, summary, description) \
  ir::Program function(const ir::Program&, PassContext&);
#include "passes/passes.def"
#undef SCANGEN_PASS

}  // namespace scangen::passes
