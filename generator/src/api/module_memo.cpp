#include "api/module_memo.h"

#include <cstdlib>

#include "scangen/runtime/sha256.h"

namespace scangen::detail {
namespace fs = std::filesystem;

namespace {

// Each field with its length first, so that no two option sets hash the same text.
void field(std::string& key, std::string_view value) {
  key += std::to_string(value.size());
  key += ':';
  key += value;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The file's hash, or empty when it cannot be read (a later compile reports the problem).
std::string file_hash(const fs::path& path) {
  try {
    return sha256_file_hex(path);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::string memo_key(const std::string& name, std::string_view text, const JitOptions& options,
                     std::string_view backend) {
  std::string key;
  field(key, name);
  field(key, text);
  field(key, backend);
  field(key, std::to_string(options.opt_level));
  field(key, fp_mode_name(options.fp_mode));
  field(key, "threads=" + std::to_string(options.threads));
  for (const std::string& pass : options.disabled_passes) field(key, "-" + pass);
  field(key, options.verify_each ? "verify" : "");
  for (const fs::path& dir : options.include_dirs) field(key, "I" + dir.string());
  field(key, options.cache_dir.string());
  field(key, options.cuda_cache_dir.string());
  field(key, std::to_string(options.cuda_device));
  field(key, environment("CXX"));
  field(key, environment("SCANGEN_CXXFLAGS"));
  // Relative names and imports depend on the working directory.
  std::error_code ec;
  field(key, fs::current_path(ec).string());
  return sha256_hex(key);
}

Fingerprint fingerprint(const std::vector<fs::path>& files, const std::string& name) {
  Fingerprint result;
  for (const fs::path& file : files)
    if (file != fs::path(name)) result.emplace_back(file, file_hash(file));
  return result;
}

std::shared_ptr<ModuleState> ModuleMemo::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key) continue;
    for (const auto& [file, hash] : it->state->imported)
      if (file_hash(file) != hash) {
        entries_.erase(it);
        return nullptr;
      }
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().state;
  }
  return nullptr;
}

void ModuleMemo::insert(const std::string& key, std::shared_ptr<ModuleState> state) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key) {
      entries_.erase(it);
      break;
    }
  entries_.push_front({key, std::move(state)});
  if (entries_.size() > kCapacity) entries_.pop_back();
}

ModuleMemo& module_memo() {
  // Never destroyed: modules may hold GPU contexts and loaded code, which must not be torn down
  // in an order the process's exit chooses.
  static ModuleMemo* memo = new ModuleMemo;
  return *memo;
}

}  // namespace scangen::detail
