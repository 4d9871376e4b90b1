// What a scangen::Module shares between its copies: the analyzed program, the driver that renders
// its errors, and the runner that calls the backend's code.
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

// Calls a function of one compiled program on one backend.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) = 0;
  // Module::call_into: `fn` with its results written into `outs` (count, dtypes and ranks checked by
  // the caller). By default the results are computed as call() does and copied there.
  virtual void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs);
  // Whether calls may run at the same time from several threads.
  virtual bool concurrent() const = 0;
};

// Files a program was compiled from, other than its own text, with the sha256 of their contents.
using Fingerprint = std::vector<std::pair<std::filesystem::path, std::string>>;

struct ModuleState {
  Backend backend = Backend::Cpu;
  Driver driver;  // owns the sources, for rendering run-time errors
  ir::Program program;
  std::vector<FunctionInfo> functions;
  std::string warnings;
  std::map<std::string, int> stats;
  std::vector<std::string> notes;
  Fingerprint imported;  // checked before the in-process memo hands the module out again
  std::unique_ptr<Runner> runner;
  std::mutex call_mutex;  // serializes calls of a runner that is not concurrent
};

}  // namespace scangen::detail
