#include "driver/options.h"

#include "codegen/lir_passes.h"
#include "passes/pass.h"

namespace scangen::driver {

namespace {

bool has_backend(const Options& o, Backend b) {
  for (Backend x : o.backends)
    if (x == b) return true;
  return false;
}

bool emits(const Options& o, BackendCode code) {
  for (Backend b : o.backends)
    if (backend_info(b).code == code) return true;
  return false;
}

// "interp", "cpu,cuda": the backends as the options name them.
std::string backend_list(const Options& o) {
  std::string names;
  for (Backend b : o.backends) names += (names.empty() ? "" : ",") + std::string(backend_name(b));
  return names;
}

template <class Table> std::string table_names(const Table& table) {
  std::string names;
  for (const auto& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

void check_pass_names(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (!passes::find_pass(name))
      throw OptionError("unknown pass '" + name + "' (the passes: " + table_names(passes::pass_table()) + ")");
}

// A loop-IR pass runs in one stage: the CUDA backend's, the CPU backend's or the fast mode's.
void check_lir_pass_names(const Options& o, const OptionSpelling& s) {
  for (const std::string& name : o.only_lir_passes) {
    const codegen::LirPassInfo* pass = codegen::find_lir_pass(name);
    if (!pass)
      throw OptionError("unknown loop-IR pass '" + name + "' (the passes: " + table_names(codegen::lir_pass_table()) + ")");
    const std::string use = std::string(": use ") + s.backend + " ";
    switch (pass->stage) {
      case codegen::LirStage::Lowering: break;
      case codegen::LirStage::Fast:
        if (o.fp_mode != FpMode::Fast)
          throw OptionError("the loop-IR pass '" + name + "' runs in the fast floating-point mode: add " + s.fp_mode + " fast");
        break;
      case codegen::LirStage::Cpu:
        if (!has_backend(o, Backend::Cpu)) throw OptionError("the loop-IR pass '" + name + "' runs for the CPU backend" + use + "cpu");
        break;
      case codegen::LirStage::Cuda:
        if (!emits(o, BackendCode::Cuda)) throw OptionError("the loop-IR pass '" + name + "' runs for the CUDA backend" + use + "cuda");
        break;
    }
  }
}

}  // namespace

void validate(const Options& o, const OptionSpelling& s) {
  if (o.backends.empty()) throw OptionError(std::string("no backend given (") + s.backend + ")");
  if (o.opt_level != 0 && o.opt_level != 2)
    throw OptionError(std::string(s.opt_level) + " must be 0 or 2, got " + std::to_string(o.opt_level));
  // Fast mode is C++ code's: the interpreter defines the strict results, and CUDA code has no fast mode.
  for (Backend b : o.backends)
    if (o.fp_mode != FpMode::Strict && b != Backend::Cpu)
      throw OptionError(std::string(s.fp_mode) + " " + std::string(fp_mode_name(o.fp_mode)) + " is for the cpu backend only (" +
                        std::string(backend_name(b)) + " computes strict results)");
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw OptionError(std::string(s.threads) + " must be from 0 (every hardware thread) to " + std::to_string(kMaxThreads) +
                      ", got " + std::to_string(o.threads));
  if (o.threads != 1 && !has_backend(o, Backend::Cpu))
    throw OptionError(std::string(s.threads) + " applies to the cpu backend, not to " + s.backend + " " + backend_list(o));
  check_pass_names(o.only_passes);
  check_pass_names(o.disabled_passes);
  check_lir_pass_names(o, s);
}

}  // namespace scangen::driver
