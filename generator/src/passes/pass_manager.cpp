#include <sstream>

#include "ir/verifier.h"
#include "passes/pass.h"
#include "scangen/runtime/errors.h"

namespace scangen::passes {

void PassContext::fired(int times) { stats_[current_] += times; }

void PassContext::note(const std::string& text) {
  const std::string line = current_ + ": " + text;
  // The cleanup runs some passes twice; a reason is worth saying once.
  for (const std::string& n : notes_)
    if (n == line) return;
  notes_.push_back(line);
}

const std::vector<PassInfo>& pass_table() {
  static const std::vector<PassInfo> table = {
#define SCANGEN_PASS(name, function, summary, description) {name, summary, description, function},
#include "passes/passes.def"
#undef SCANGEN_PASS
  };
  return table;
}

const PassInfo* find_pass(const std::string& name) {
  for (const PassInfo& p : pass_table())
    if (name == p.name) return &p;
  return nullptr;
}

namespace {

std::string known_passes() {
  std::string s;
  for (const PassInfo& p : pass_table()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

const PassInfo& pass_named(const std::string& name) {
  const PassInfo* p = find_pass(name);
  if (!p) throw RuntimeError("unknown pass '" + name + "' (the passes: " + known_passes() + ")");
  return *p;
}

}  // namespace

ir::Program run_passes(const ir::Program& program, const PipelineConfig& config, PassContext& context) {
  for (const std::string& d : config.disabled) pass_named(d);  // reject typos
  std::vector<const PassInfo*> pipeline;
  if (!config.only.empty()) {
    for (const std::string& n : config.only) pipeline.push_back(&pass_named(n));
  } else if (config.opt_level >= 1) {
    // The later rewrites leave constants to fold, duplicates to merge and inputs no step reads:
    // the cleanup runs once more at the end, before in-place, which decides who owns a buffer
    // (merging two values afterwards could give an in-place init a second reader).
    for (const PassInfo& p : pass_table()) {
      if (std::string(p.name) == "in-place") {
        pipeline.push_back(&pass_named("general"));
        pipeline.push_back(&pass_named("remove-constants-and-unused"));
      }
      pipeline.push_back(&p);
    }
  }
  ir::Program current = program;
  context.fp_mode_ = config.fp_mode;
  for (const PassInfo* p : pipeline) {
    if (config.disabled.count(p->name)) continue;
    context.current_ = p->name;
    context.stats_.emplace(p->name, 0);
    current = p->run(current, context);
    if (config.verify_each) {
      try {
        ir::verify(current);
      } catch (const InternalError& e) {
        throw InternalError("after pass '" + std::string(p->name) + "': " + e.what());
      }
    }
    if (config.after_each) config.after_each(*p, current);
  }
  context.current_.clear();
  return current;
}

}  // namespace scangen::passes
