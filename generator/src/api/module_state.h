// What a scangen::Module shares between its copies: the compilation (the analyzed program, the
// sources that render its errors, the runner that calls the backend's code).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "driver/driver.h"
#include "ir/ir.h"
#include "scangen/scangen.h"

namespace scangen::detail {

// Files a program was compiled from, other than its own text, with the sha256 of their contents.
using Fingerprint = std::vector<std::pair<std::filesystem::path, std::string>>;

struct ModuleState {
  explicit ModuleState(driver::Compilation c) : compilation(std::move(c)) {}
  Backend backend = Backend::Cpu;
  driver::Compilation compilation;  // the program, its runner, and its sources for rendering errors
  std::vector<FunctionInfo> functions;
  std::string warnings;
  std::map<std::string, int> stats;
  std::vector<std::string> notes;
  Fingerprint imported;  // checked before the in-process memo hands the module out again
  std::mutex call_mutex;  // serializes calls of a runner that is not concurrent
};

}  // namespace scangen::detail
