// The in-process memo of the JIT API: a program compiled once in a process is handed out again,
// without parsing, when the same text is compiled with the same options and the headers it
// imports are unchanged. Bounded (least recently used out) and safe to use from several threads.
#pragma once

#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "api/module_state.h"

namespace scangen::detail {

// sha256 of everything that decides the compiled program: the name (diagnostics and imports are
// relative to it), the text, the options and the environment the C++ JIT reads ($CXX,
// $SCANGEN_CXXFLAGS).
std::string memo_key(const std::string& name, std::string_view text, const JitOptions& options,
                     std::string_view backend);

// The sha256 of each file in `files` except the program's own (`name`).
Fingerprint fingerprint(const std::vector<std::filesystem::path>& files, const std::string& name);

class ModuleMemo {
 public:
  static constexpr std::size_t kCapacity = 64;

  // The module compiled under `key`, when its imported files are unchanged; else null.
  std::shared_ptr<ModuleState> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<ModuleState> state);

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<ModuleState> state;
  };
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
};

ModuleMemo& module_memo();

}  // namespace scangen::detail
