#include "scangen/runtime/cpu_jit.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "cache_dir.h"
#include "file_util.h"
#include "jit_util.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/process.h"
#include "scangen/runtime/sha256.h"

#ifndef SCANGEN_DEFAULT_CXX
#error "SCANGEN_DEFAULT_CXX (the C++ compiler found by CMake) must be defined"
#endif

namespace scangen {
namespace fs = std::filesystem;

using detail::environment;
using detail::first_lines;
using detail::joined;
using detail::single_quoted;

namespace {

// How much of a failing compiler's output goes into the error message.
constexpr std::size_t kCompilerOutputLines = 200;

std::string compiler_not_found(const std::string& executable) {
  return "C++ compiler " + single_quoted(executable) + " not found; set CXX to a C++17 compiler";
}

std::vector<std::string> split_on_space(const char* text) {
  std::vector<std::string> words;
  std::istringstream stream(text ? text : "");
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// The first line of `<executable> --version`, computed once per executable and process.
std::string compiler_version(const std::string& executable) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = versions.find(executable); it != versions.end()) return it->second;
  }
  ProcessResult result;
  try {
    result = run_process({executable, "--version"});
  } catch (const RuntimeError&) {
    throw RuntimeError(compiler_not_found(executable));
  }
  if (result.exit_code != 0)
    throw RuntimeError("C++ compiler " + single_quoted(executable) +
                       " failed to run '--version' (exit status " +
                       std::to_string(result.exit_code) + "); set CXX to a C++17 compiler");
  std::string line = result.output.substr(0, result.output.find('\n'));
  std::lock_guard<std::mutex> lock(mutex);
  versions.emplace(executable, line);
  return line;
}

bool valid_dtype(int32_t code) { return code >= SCANGEN_DTYPE_BOOL && code <= SCANGEN_DTYPE_F64; }
bool valid_rank(int32_t rank) { return rank >= 0 && rank <= SCANGEN_MAX_RANK; }

// Checks the function table before anything relies on it, so that a broken module gives an
// error instead of a crash.
void validate_module_info(const scangen_module_info& info, const std::string& origin) {
  auto broken = [&](const std::string& what) {
    throw RuntimeError("cannot load module " + origin + ": malformed function table: " + what);
  };
  if (info.num_functions < 0) broken("negative function count");
  if (info.num_functions > 0 && !info.functions) broken("no function array");
  for (int32_t i = 0; i < info.num_functions; ++i) {
    const scangen_function_info& fn = info.functions[i];
    std::string which = "function " + std::to_string(i);
    if (!fn.name) broken(which + " has no name");
    which += " ('" + std::string(fn.name) + "')";
    if (!fn.entry) broken(which + " has no entry point");
    if (fn.num_args < 0 || fn.num_results < 0)
      broken(which + " has a negative argument or result count");
    if ((fn.num_args > 0 && (!fn.arg_dtypes || !fn.arg_ranks)) ||
        (fn.num_results > 0 && (!fn.result_dtypes || !fn.result_ranks)))
      broken(which + " lacks its dtype or rank arrays");
    for (int32_t a = 0; a < fn.num_args; ++a)
      if (!valid_dtype(fn.arg_dtypes[a]) || !valid_rank(fn.arg_ranks[a]))
        broken(which + " has an invalid dtype or rank for argument " + std::to_string(a + 1));
    for (int32_t r = 0; r < fn.num_results; ++r)
      if (!valid_dtype(fn.result_dtypes[r]) || !valid_rank(fn.result_ranks[r]))
        broken(which + " has an invalid dtype or rank for result " + std::to_string(r + 1));
  }
}

std::string describe_function(const scangen_function_info& fn) {
  return std::string(fn.name) + (fn.signature ? fn.signature : "");
}

// Frees the results of a call unless ownership has been handed on to HostTensors.
class ResultOwners {
 public:
  explicit ResultOwners(std::vector<scangen_tensor>& results) : results_(results) {}
  ResultOwners(const ResultOwners&) = delete;
  ResultOwners& operator=(const ResultOwners&) = delete;
  ~ResultOwners() {
    for (std::size_t i = released_; i < results_.size(); ++i) std::free(results_[i].owner);
  }
  // Result i now belongs to someone else (all before it must have been released already).
  void release_next() { ++released_; }

 private:
  std::vector<scangen_tensor>& results_;
  std::size_t released_ = 0;
};

void release_with_free(void* owner) { std::free(owner); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// CxxCompiler

std::vector<std::string> CxxCompiler::default_flags() {
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-march=native", "-fno-math-errno", "-fPIC", "-shared",
                                    "-fvisibility=hidden", "-DSCANGEN_EMIT_MODULE_ABI"};
  // What emitted code needs, defined once in cmake/ScangenFunctions.cmake.
  for (std::string& flag : split_on_space(SCANGEN_EMITTED_CXX_FLAGS)) flags.push_back(std::move(flag));
  return flags;
}

void CxxCompiler::add_fast_fp() {
  for (std::string& flag : split_on_space(SCANGEN_FAST_FP_CXX_FLAGS)) flags.push_back(std::move(flag));
  for (std::string& library : split_on_space(SCANGEN_FAST_FP_LIBS)) libraries.push_back(std::move(library));
}

CxxCompiler CxxCompiler::from_environment() {
  CxxCompiler compiler;
  const char* cxx = environment("CXX");
  compiler.executable = cxx ? cxx : SCANGEN_DEFAULT_CXX;
  compiler.flags = default_flags();
  for (std::string& flag : split_on_space(environment("SCANGEN_CXXFLAGS")))
    compiler.flags.push_back(std::move(flag));
  return compiler;
}

namespace {

// The processor the code is built for: -march=native makes a module specific to it, so a cache
// shared between machines (a home directory on a network drive) must not hand one machine's
// module to another. The model name and the feature flags of the first CPU in /proc/cpuinfo.
const std::string& host_cpu_identity() {
  static const std::string identity = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, features;
    while (std::getline(in, line) && (model.empty() || features.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (features.empty() && line.rfind("flags", 0) == 0) features = line;
    }
    return "cpu: " + model + " / " + sha256_hex(features);
  }();
  return identity;
}

}  // namespace

std::string CxxCompiler::identity() const {
  if (executable.empty()) throw RuntimeError(compiler_not_found(executable));
  const std::string linked = libraries.empty() ? "" : joined(libraries) + "\n";
  return executable + "\n" + compiler_version(executable) + "\n" + joined(flags) + "\n" + linked + host_cpu_identity();
}

fs::path default_cache_dir() {
  if (const char* xdg = environment("XDG_CACHE_HOME"); xdg && fs::path(xdg).is_absolute())
    return fs::path(xdg) / "scangen";
  if (const char* home = environment("HOME"); home && fs::path(home).is_absolute())
    return fs::path(home) / ".cache" / "scangen";
  return fs::path("/tmp") / ("scangen-cache-" + std::to_string(::getuid()));
}

// ---------------------------------------------------------------------------------------------
// CpuModule

CpuModule::CpuModule(void* handle, const scangen_module_info* info, fs::path path)
    : handle_(handle), info_(info), path_(std::move(path)) {}

CpuModule::~CpuModule() { ::dlclose(handle_); }

std::shared_ptr<CpuModule> CpuModule::load(const fs::path& shared_object) {
  // An absolute path keeps dlopen from searching the library path for a bare file name.
  fs::path path = fs::absolute(shared_object);
  return load_as(path.string(), path);
}

std::shared_ptr<CpuModule> CpuModule::load_as(const std::string& name, fs::path path) {
  std::string origin = single_quoted(path.string());
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* reason = ::dlerror();
    throw RuntimeError("cannot load module " + origin + ": " + (reason ? reason : "dlopen failed"));
  }
  try {
    ::dlerror();  // clear any stale error
    void* symbol = ::dlsym(handle, SCANGEN_MODULE_SYMBOL);
    if (!symbol)
      throw RuntimeError("cannot load module " + origin +
                         ": it is not a scangen module (no symbol " + SCANGEN_MODULE_SYMBOL + ")");
    auto getter = reinterpret_cast<scangen_module_getter>(symbol);
    const scangen_module_info* info = getter();
    if (!info) throw RuntimeError("cannot load module " + origin + ": its module info is null");
    if (info->abi_version < SCANGEN_ABI_OLDEST_VERSION || info->abi_version > SCANGEN_ABI_VERSION)
      throw RuntimeError("cannot load module " + origin +
                         ": it was built for scangen ABI version " +
                         std::to_string(info->abi_version) + ", this runtime implements versions " +
                         std::to_string(SCANGEN_ABI_OLDEST_VERSION) + " to " +
                         std::to_string(SCANGEN_ABI_VERSION));
    validate_module_info(*info, origin);
    return std::shared_ptr<CpuModule>(new CpuModule(handle, info, std::move(path)));
  } catch (...) {
    ::dlclose(handle);
    throw;
  }
}

void* CpuModule::symbol(const char* name) const { return ::dlsym(handle_, name); }

const scangen_function_info* CpuModule::find(std::string_view name) const {
  for (int32_t i = 0; i < info_->num_functions; ++i)
    if (name == info_->functions[i].name) return &info_->functions[i];
  return nullptr;
}

const scangen_function_info& CpuModule::find_or_throw(std::string_view fn_name) const {
  const scangen_function_info* fn = find(fn_name);
  if (!fn) {
    std::string available;
    for (int32_t i = 0; i < info_->num_functions; ++i)
      available += std::string(available.empty() ? "" : ", ") + info_->functions[i].name;
    throw RuntimeError("no function '" + std::string(fn_name) + "' in the module (it has: " +
                       (available.empty() ? "no functions" : available) + ")");
  }
  return *fn;
}

// The arguments as the ABI takes them, after checks of their count, dtypes and ranks.
std::vector<scangen_tensor> CpuModule::argument_structs(const scangen_function_info& f,
                                                        const std::vector<HostTensor>& args) const {
  const scangen_function_info* fn = &f;
  const std::string name(fn->name);
  if (static_cast<int64_t>(args.size()) != fn->num_args)
    throw RuntimeError("function '" + name + "' takes " + std::to_string(fn->num_args) +
                       " argument" + (fn->num_args == 1 ? "" : "s") + ", got " +
                       std::to_string(args.size()) + ": " + describe_function(*fn));

  std::vector<scangen_tensor> arg_structs(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const HostTensor& arg = args[i];
    std::string which = "argument " + std::to_string(i + 1) + " of '" + name + "'";
    if (!arg.valid()) throw RuntimeError(which + " is an empty tensor");
    DType expected_dtype = static_cast<DType>(fn->arg_dtypes[i]);
    if (arg.dtype() != expected_dtype)
      throw RuntimeError(which + " must be " + std::string(dtype_name(expected_dtype)) + ", got " +
                         std::string(dtype_name(arg.dtype())) + ": " + describe_function(*fn));
    if (arg.rank() != fn->arg_ranks[i])
      throw RuntimeError(which + " must have rank " + std::to_string(fn->arg_ranks[i]) +
                         ", got rank " + std::to_string(arg.rank()) + " (shape " +
                         shape_to_string(arg.shape()) + "): " + describe_function(*fn));
    scangen_tensor& t = arg_structs[i];
    t.data =
        const_cast<void*>(arg.raw_data());  // the ABI promises emitted code does not write args
    t.owner = nullptr;
    for (int d = 0; d < arg.rank(); ++d) t.shape[d] = arg.dim(d);
    t.rank = arg.rank();
    t.dtype = static_cast<int32_t>(arg.dtype());
  }
  return arg_structs;
}

namespace {

void check_status(int32_t status, scangen_error& error, const std::string& name) {
  error.message[SCANGEN_ERROR_CAPACITY - 1] = '\0';  // never trust the module to terminate it
  if (status == SCANGEN_USER_ERROR) throw RuntimeError(error.message, error.line, error.column);
  if (status == SCANGEN_INTERNAL_ERROR)
    throw InternalError("internal error in '" + name + "': " + std::string(error.message));
  if (status != SCANGEN_OK)
    throw InternalError("'" + name + "' returned the unknown status " + std::to_string(status));
}

}  // namespace

void CpuModule::call_into(std::string_view fn_name, const std::vector<HostTensor>& args,
                          std::vector<HostTensor>& outs) const {
  const scangen_function_info& fn = find_or_throw(fn_name);
  const std::string name(fn.name);
  std::vector<scangen_tensor> arg_structs = argument_structs(fn, args);
  const std::ptrdiff_t index = &fn - info_->functions;
  scangen_into_entry entry =
      info_->abi_version >= 2 && info_->into_entries ? info_->into_entries[index] : nullptr;
  if (!entry)
    throw RuntimeError("function '" + name + "' cannot write its results into the caller's tensors: " +
                       (info_->abi_version < 2 ? std::string("its module was built for ABI version 1")
                                               : std::string("its result shapes are known only while it runs")) +
                       ": " + describe_function(fn));
  if (static_cast<int64_t>(outs.size()) != fn.num_results)
    throw RuntimeError("function '" + name + "' has " + std::to_string(fn.num_results) + " result" +
                       (fn.num_results == 1 ? "" : "s") + ", got " + std::to_string(outs.size()) +
                       " tensors for them: " + describe_function(fn));
  std::vector<scangen_tensor> results(outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    HostTensor& out = outs[i];
    std::string which = "result " + std::to_string(i + 1) + " of '" + name + "'";
    if (!out.valid()) throw RuntimeError(which + " is an empty tensor");
    DType expected_dtype = static_cast<DType>(fn.result_dtypes[i]);
    if (out.dtype() != expected_dtype)
      throw RuntimeError(which + " must be " + std::string(dtype_name(expected_dtype)) + ", got " +
                         std::string(dtype_name(out.dtype())) + ": " + describe_function(fn));
    if (out.rank() != fn.result_ranks[i])
      throw RuntimeError(which + " must have rank " + std::to_string(fn.result_ranks[i]) + ", got rank " +
                         std::to_string(out.rank()) + " (shape " + shape_to_string(out.shape()) +
                         "): " + describe_function(fn));
    scangen_tensor& t = results[i];
    t.data = out.raw_data();
    t.owner = nullptr;
    for (int d = 0; d < out.rank(); ++d) t.shape[d] = out.dim(d);
    t.rank = out.rank();
    t.dtype = static_cast<int32_t>(out.dtype());
  }
  scangen_error error{};
  int32_t status = entry(arg_structs.data(), fn.num_args, results.data(), fn.num_results, &error);
  check_status(status, error, name);
}

std::vector<HostTensor> CpuModule::call(std::string_view fn_name,
                                        const std::vector<HostTensor>& args) const {
  const scangen_function_info* fn = &find_or_throw(fn_name);
  const std::string name(fn->name);
  std::vector<scangen_tensor> arg_structs = argument_structs(*fn, args);

  std::vector<scangen_tensor> results(static_cast<std::size_t>(fn->num_results));
  scangen_error error{};
  int32_t status =
      fn->entry(arg_structs.data(), fn->num_args, results.data(), fn->num_results, &error);
  check_status(status, error, name);

  ResultOwners owners(results);
  std::vector<HostTensor> out;
  out.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const scangen_tensor& r = results[i];
    std::string which = "result " + std::to_string(i + 1) + " of '" + name + "'";
    if (r.dtype != fn->result_dtypes[i] || r.rank != fn->result_ranks[i])
      throw InternalError(which + " has dtype code " + std::to_string(r.dtype) + " and rank " +
                          std::to_string(r.rank) + ", the signature says " +
                          std::to_string(fn->result_dtypes[i]) + " and " +
                          std::to_string(fn->result_ranks[i]));
    Shape shape(r.shape, r.shape + r.rank);
    int64_t numel = 0;
    try {
      numel = shape_numel(shape);
    } catch (const std::length_error&) {
      throw InternalError(which + " has the invalid shape " + shape_to_string(shape));
    }
    if (numel > 0 && (!r.data || !r.owner)) throw InternalError(which + " has no data or no owner");
    out.push_back(HostTensor::adopt(static_cast<DType>(r.dtype), std::move(shape), r.data, r.owner,
                                    release_with_free));
    owners.release_next();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// CpuJit

CpuJit::CpuJit(fs::path cache_dir, CxxCompiler compiler)
    : cache_dir_(fs::absolute(std::move(cache_dir))), compiler_(std::move(compiler)) {}

std::string CpuJit::cache_key(const std::string& source) const {
  Sha256 hasher;
  hasher.update(source);
  hasher.update(std::string_view("\0", 1));
  hasher.update(compiler_.identity());
  return hasher.finish_hex();
}

fs::path CpuJit::entry_path(const std::string& key, std::string_view suffix) const {
  return cache_dir_ / (key + std::string(suffix));
}

std::shared_ptr<CpuModule> CpuJit::compile_and_load(const std::string& source) {
  stats_ = Stats{};
  const std::string key = cache_key(source);
  const detail::CacheDir dir(cache_dir_, "JIT cache");
  stats_.shared_object = entry_path(key, ".so");

  if (std::shared_ptr<CpuModule> module = load_cached_entry(dir, key)) {
    stats_.cache_hit = true;
    // The source is kept only for people to read; a read-only cache without it still works.
    if (!dir.has(key + ".cpp")) {
      try {
        dir.write_atomically(key + ".cpp", key, source);
      } catch (const RuntimeError&) {
      }
    }
    return module;
  }
  return build_entry(dir, key, source);
}

// The .so is loaded only if it hashes to the recorded checksum, and what is hashed is what is
// loaded: the bytes are read through the descriptor that passed the checks, and dlopen reaches
// the same entry through the checked directory's descriptor (/proc/self/fd/<dir>/<key>.so), never
// through the path, whose directories others might rename. Between the two, only this user (or
// root) can replace the entry, and this user's processes put only whole, verified entries there.
// (dlopen of the entry's own /proc/self/fd/<n> would pin the inode too, but glibc matches dlopen
// names against modules already loaded, and modules that cannot be unloaded keep their name:
// once <n> is reused, another module's name would return the old module. A name with the key in
// it names equivalent code whenever it matches.)
std::shared_ptr<CpuModule> CpuJit::load_cached_entry(const detail::CacheDir& dir, const std::string& key) const {
  const std::string so = key + ".so";
  const std::string hash = key + ".so.sha256";
  // A refusal (an entry someone else could have written) propagates: it is never treated as damage.
  detail::FileDescriptor so_file = dir.open_entry(so);
  detail::FileDescriptor hash_file = dir.open_entry(hash);
  if (!so_file.valid() && !hash_file.valid()) return nullptr;
  if (so_file.valid() && hash_file.valid()) {
    const std::string loadable = dir.descriptor_path(so);  // a missing /proc is no damage
    try {
      std::string recorded = detail::read_all(hash_file, dir.path_of(hash));
      recorded.erase(recorded.find_last_not_of(" \t\r\n") + 1);
      // Verified before dlopen: loading a damaged shared object could crash the process.
      if (recorded == sha256_hex(detail::read_all(so_file, dir.path_of(so))))
        return CpuModule::load_as(loadable, dir.path_of(so));
    } catch (const RuntimeError&) {
      // Unreadable or unloadable: treated like a damaged entry below.
    }
  }
  dir.remove(so);
  dir.remove(hash);
  return nullptr;
}

std::shared_ptr<CpuModule> CpuJit::build_entry(const detail::CacheDir& dir, const std::string& key,
                                               const std::string& source) {
  // Unique names keep concurrent builds of the same key (other processes) apart; only the final
  // renames, which are atomic, touch the shared entry.
  const std::string unique = detail::CacheDir::unique_temp_name(key, "");
  const std::string temp_source = unique + ".cpp";
  const std::string temp_object = unique + ".so";
  const std::string temp_hash = unique + ".so.sha256";
  struct TempFiles {
    const detail::CacheDir& dir;
    std::vector<std::string> names;
    ~TempFiles() {
      for (const std::string& name : names) dir.remove(name);
    }
  } temp_files{dir, {temp_source, temp_object, temp_hash}};

  dir.create_file(temp_source, source);
  // The compiler runs inside the cache directory (its descriptor) and gets names relative to it,
  // so that it reads and writes the directory that was checked.
  std::vector<std::string> command{compiler_.executable};
  command.insert(command.end(), compiler_.flags.begin(), compiler_.flags.end());
  command.insert(command.end(), {"-o", temp_object, temp_source});
  command.insert(command.end(), compiler_.libraries.begin(), compiler_.libraries.end());

  const auto start = std::chrono::steady_clock::now();
  ProcessResult result;
  try {
    result = run_process(command, dir.descriptor());
  } catch (const RuntimeError&) {
    throw RuntimeError(compiler_not_found(compiler_.executable));
  }
  stats_.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // On failure the source stays in the cache as <key>.cpp for the bug report.
  auto keep_source = [&]() -> std::string {
    try {
      dir.rename(temp_source, key + ".cpp");
      return dir.path_of(key + ".cpp").string();
    } catch (const RuntimeError& e) {
      return std::string("(could not be kept: ") + e.what() + ")";
    }
  };
  if (result.exit_code != 0) {
    std::string details = "source: " + keep_source() + "\ncommand: " + joined(command) + "\nexit status: " +
                          std::to_string(result.exit_code) + "\n" +
                          first_lines(result.output, kCompilerOutputLines);
    // With flags of the user's own, they are the likelier cause: a user error, not a scangen bug.
    const char* user_flags = environment("SCANGEN_CXXFLAGS");
    if (user_flags && *user_flags)
      throw RuntimeError("the C++ compiler failed with the extra flags of SCANGEN_CXXFLAGS (\"" +
                         std::string(user_flags) + "\"); check them, or unset SCANGEN_CXXFLAGS\n" + details);
    throw InternalError("the C++ compiler rejected the code scangen emitted (a scangen bug; please report it)\n" +
                        details);
  }

  const detail::FileDescriptor object = dir.open_own_output(temp_object);
  dir.create_file(temp_hash, sha256_hex(detail::read_all(object, dir.path_of(temp_object))) + "\n");
  // Loaded before the renames, so that a concurrent process that finds the entry half-renamed
  // and deletes it cannot take the module away from this one.
  const std::string loadable = dir.descriptor_path(temp_object);  // a missing /proc is no scangen bug
  std::shared_ptr<CpuModule> module;
  try {
    module = CpuModule::load_as(loadable, dir.path_of(key + ".so"));
  } catch (const RuntimeError& e) {
    throw InternalError(
        "a freshly compiled module cannot be loaded (a scangen bug; please report it): " +
        std::string(e.what()) + "\nsource: " + keep_source());
  }
  dir.rename(temp_object, key + ".so");
  dir.rename(temp_hash, key + ".so.sha256");
  dir.rename(temp_source, key + ".cpp");
  return module;
}

}  // namespace scangen
