// The on-disk cache of imported headers' analyses (header_cache.h): an entry is the analysis as
// JSON, with what it was computed from.
#include "imports/header_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cache_dir.h"  // runtime/src: the JIT caches' rule of trust
#include "file_util.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/sha256.h"

namespace scangen::imports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormat = 1;

// An entry that does not hold what this code writes.
struct DamagedEntry : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The library this code is in, by path, size and modification time: the analysis (its checks,
// its messages, the CUDA parse's prelude) is scangen's code, so a rebuilt scangen computes anew.
const std::string& code_identity() {
  static const std::string identity = [] {
    static const char anchor = 0;
    std::string text = SCANGEN_VERSION_TEXT;
    Dl_info info{};
    struct stat status {};
    if (::dladdr(&anchor, &info) != 0 && info.dli_fname != nullptr && ::stat(info.dli_fname, &status) == 0)
      text += std::string("\n") + info.dli_fname + "\n" + std::to_string(status.st_size) + " " +
              std::to_string(status.st_mtim.tv_sec) + "." + std::to_string(status.st_mtim.tv_nsec);
    return text;
  }();
  return identity;
}

json location_json(const CxxLocation& loc) { return {loc.file, loc.line, loc.column}; }

CxxLocation location_from(const json& j) {
  return {j.at(0).get<std::string>(), j.at(1).get<int>(), j.at(2).get<int>()};
}

json problems_json(const std::vector<HeaderProblem>& problems) {
  json out = json::array();
  for (const HeaderProblem& p : problems) out.push_back({{"loc", location_json(p.loc)}, {"message", p.message}});
  return out;
}

std::vector<HeaderProblem> problems_from(const json& j) {
  std::vector<HeaderProblem> out;
  for (const json& p : j) out.push_back({location_from(p.at("loc")), p.at("message").get<std::string>()});
  return out;
}

DType dtype_from(const json& j) {
  const std::optional<DType> dtype = dtype_from_name(j.get<std::string>());
  if (!dtype) throw DamagedEntry("not a dtype: " + j.dump());
  return *dtype;
}

json analysis_json(const HeaderAnalysis& analysis) {
  json functions = json::array();
  for (const ImportedFunction& f : analysis.functions) {
    json params = json::array();
    for (DType dtype : f.params) params.push_back(std::string(dtype_name(dtype)));
    functions.push_back({{"name", f.name},
                         {"params", params},
                         {"param_names", f.param_names},
                         {"result", std::string(dtype_name(f.result))},
                         {"host_device", f.host_device},
                         {"partials", f.partials},
                         {"loc", location_json(f.loc)}});
  }
  json unusable = json::array();
  for (const UnusableFunction& f : analysis.unusable)
    unusable.push_back({{"name", f.name}, {"reasons", problems_json(f.reasons)}});
  std::vector<std::string> dependencies;
  for (const fs::path& file : analysis.dependencies) dependencies.push_back(file.string());
  return {{"functions", functions},
          {"unusable", unusable},
          {"errors", problems_json(analysis.errors)},
          {"cuda_parse_problem", analysis.cuda_parse_problem},
          {"dependencies", dependencies}};
}

HeaderAnalysis analysis_from(const json& j, const fs::path& header) {
  HeaderAnalysis analysis;
  analysis.header = header;
  for (const json& f : j.at("functions")) {
    ImportedFunction function;
    function.name = f.at("name").get<std::string>();
    for (const json& dtype : f.at("params")) function.params.push_back(dtype_from(dtype));
    function.param_names = f.at("param_names").get<std::vector<std::string>>();
    function.result = dtype_from(f.at("result"));
    function.host_device = f.at("host_device").get<bool>();
    function.partials = f.at("partials").get<std::vector<int>>();
    function.loc = location_from(f.at("loc"));
    if (function.param_names.size() != function.params.size() || function.partials.size() != function.params.size())
      throw DamagedEntry("inconsistent function " + function.name);
    for (int partial : function.partials)
      if (partial < -1 || partial >= static_cast<int>(j.at("functions").size()))
        throw DamagedEntry("bad partial of " + function.name);
    analysis.functions.push_back(std::move(function));
  }
  for (const json& f : j.at("unusable"))
    analysis.unusable.push_back({f.at("name").get<std::string>(), problems_from(f.at("reasons"))});
  analysis.errors = problems_from(j.at("errors"));
  analysis.cuda_parse_problem = j.at("cuda_parse_problem").get<std::string>();
  for (const json& file : j.at("dependencies")) analysis.dependencies.push_back(file.get<std::string>());
  return analysis;
}

// The entry's analysis when every file it was computed from is as it was then; nullopt otherwise.
std::optional<HeaderAnalysis> still_valid(const json& entry, const fs::path& header) {
  if (entry.at("format").get<int>() != kFormat || entry.at("header").get<std::string>() != header.string())
    return std::nullopt;
  for (const json& input : entry.at("inputs"))
    if (sha256_file_hex(input.at(0).get<std::string>()) != input.at(1).get<std::string>()) return std::nullopt;
  for (const json& place : entry.at("absent")) {
    std::error_code error;
    if (fs::exists(place.get<std::string>(), error)) return std::nullopt;
  }
  return analysis_from(entry.at("analysis"), header);
}

json entry_json(const HeaderAnalysis& analysis) {
  json inputs = json::array();
  for (const fs::path& file : analysis.inputs) inputs.push_back({file.string(), sha256_file_hex(file)});
  std::vector<std::string> absent;
  for (const fs::path& place : analysis.absent) absent.push_back(place.string());
  return {{"format", kFormat},
          {"header", analysis.header.string()},
          {"inputs", inputs},
          {"absent", absent},
          {"analysis", analysis_json(analysis)}};
}

// Whether the analysis is what a parse of the header found: not a header that could not be read
// nor one whose analysis failed (their problems have no location).
bool worth_keeping(const HeaderAnalysis& analysis) {
  if (analysis.inputs.empty()) return false;
  for (const HeaderProblem& error : analysis.errors)
    if (error.loc.file.empty()) return false;
  return true;
}

}  // namespace

HeaderAnalysis analyze_header_cached(const fs::path& header, const HeaderOptions& options, const fs::path& cache_dir) {
  const fs::path absolute = fs::absolute(header).lexically_normal();
  std::optional<detail::CacheDir> dir;
  std::string key;
  bool replace = false;  // no entry, or one that is stale or damaged; not one the cache refused
  try {
    key = sha256_hex(std::to_string(kFormat) + '\0' + code_identity() + '\0' + analysis_identity(absolute, options) +
                     '\0' + sha256_file_hex(absolute));
    dir.emplace(cache_dir / "imports", "header cache");
    const detail::FileDescriptor file = dir->open_entry(key + ".json");
    replace = true;
    if (file.valid())
      if (std::optional<HeaderAnalysis> cached =
              still_valid(json::parse(detail::read_all(file, dir->path_of(key + ".json"))), absolute))
        return std::move(*cached);
  } catch (const RuntimeError&) {  // no cache (refused, unreadable), or an input gone: parse
  } catch (const json::exception&) {  // a damaged entry: parsed again, then replaced
  } catch (const DamagedEntry&) {
  }
  HeaderAnalysis analysis = analyze_header(header, options);
  if (replace && worth_keeping(analysis)) {
    try {
      dir->write_atomically(key + ".json", key, entry_json(analysis).dump());
    } catch (const RuntimeError&) {  // the cache is an optimization: the analysis stands
    }
  }
  return analysis;
}

}  // namespace scangen::imports
