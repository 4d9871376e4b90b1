// The CPU JIT: compiles emitted C++ into a shared object with the system's C++ compiler, caches
// it on disk, loads it and calls its functions through the C ABI (templates/common/scangen_abi.h).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scangen/runtime/tensor.h"
#include "scangen_abi.h"

namespace scangen {

struct CxxCompiler {
  std::string executable;
  std::vector<std::string> flags;
  // Given after the source file: the libraries a module links (libmvec in fast mode).
  std::vector<std::string> libraries;

  // `$CXX` if set and non-empty, else the compiler scangen itself was built with; default_flags()
  // followed by `$SCANGEN_CXXFLAGS` split on whitespace.
  static CxxCompiler from_environment();
  // -std=c++17 -O3 -march=native -ffp-contract=off -fno-math-errno -fPIC -shared
  // -fvisibility=hidden -DSCANGEN_EMIT_MODULE_ABI. -ffp-contract=off is essential: results must be
  // bit-identical to the interpreter's, so no a*b+c may be fused into an FMA.
  static std::vector<std::string> default_flags();
  // Adds what emitted C++ of the fast floating-point mode needs (`--fp fast`; the flags and
  // libraries of cmake/ScangenFunctions.cmake: -fopenmp-simd -fno-math-errno, libmvec).
  void add_fast_fp();

  // Executable, the first line of `<executable> --version` (run once per executable and process)
  // and the flags and libraries: what decides the bytes of a compiled module, hence part of the cache key.
  // Throws RuntimeError("C++ compiler '<exe>' not found; set CXX to a C++17 compiler") if the
  // compiler cannot be run.
  std::string identity() const;
};

// $XDG_CACHE_HOME/scangen if XDG_CACHE_HOME is absolute, else $HOME/.cache/scangen if HOME is
// absolute, else /tmp/scangen-cache-<uid>.
std::filesystem::path default_cache_dir();

namespace detail {
class CacheDir;  // runtime/src/cache_dir.h
}

// A loaded module; dlclose'd when the last shared_ptr goes. Results of call() own their memory
// and stay valid after the module is gone.
class CpuModule {
 public:
  // dlopen (RTLD_NOW | RTLD_LOCAL), look up SCANGEN_MODULE_SYMBOL, check the ABI version and the
  // function table. Throws RuntimeError naming the file otherwise.
  static std::shared_ptr<CpuModule> load(const std::filesystem::path& shared_object);

  ~CpuModule();
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  const scangen_module_info& info() const { return *info_; }
  // The file the module was loaded from (for a cached module, its cache entry).
  const std::filesystem::path& path() const { return path_; }
  // nullptr if the module has no function of that name.
  const scangen_function_info* find(std::string_view name) const;
  // dlsym in this module only; nullptr if it has no such symbol.
  void* symbol(const char* name) const;

  // Calls `fn` with `args`, whose count, dtypes and ranks must match its signature (RuntimeError
  // otherwise). A SCANGEN_USER_ERROR becomes RuntimeError(message, line, column); an internal
  // error, an unknown status or results that break the ABI contract become InternalError.
  std::vector<HostTensor> call(std::string_view fn, const std::vector<HostTensor>& args) const;
  // Calls `fn` with its results written into `outs` (one per result, of its dtype and rank; their
  // shapes are checked by the module, which also refuses an out that overlaps an argument or
  // another out). RuntimeError when the function has no such form: its result shapes are known
  // only while it runs, or the module predates ABI version 2.
  void call_into(std::string_view fn, const std::vector<HostTensor>& args, std::vector<HostTensor>& outs) const;

 private:
  const scangen_function_info& find_or_throw(std::string_view fn) const;
  std::vector<scangen_tensor> argument_structs(const scangen_function_info& fn, const std::vector<HostTensor>& args) const;
  friend class CpuJit;
  // dlopen(`name`) of a module shown to people as `path`.
  static std::shared_ptr<CpuModule> load_as(const std::string& name, std::filesystem::path path);
  CpuModule(void* handle, const scangen_module_info* info, std::filesystem::path path);

  void* handle_;
  const scangen_module_info* info_;
  std::filesystem::path path_;
};

// Not thread-safe (last_stats); use one CpuJit per thread. Any number of processes of one user
// may share a cache directory. The cache holds code that is loaded and run, so it trusts only a
// directory and entries of the current user that no one else can write (detail::CacheDir):
// anything else is refused with a RuntimeError (docs/cli.md, "Whom the cache trusts").
class CpuJit {
 public:
  struct Stats {
    bool cache_hit = false;
    double compile_seconds = 0;           // time spent in the compiler; 0 on a cache hit
    std::filesystem::path shared_object;  // the cache entry's .so
  };

  explicit CpuJit(std::filesystem::path cache_dir = default_cache_dir(),
                  CxxCompiler compiler = CxxCompiler::from_environment());

  // Returns the module built from `source` (a complete translation unit exporting the module
  // symbol when compiled with -DSCANGEN_EMIT_MODULE_ABI), from the cache if a sound entry exists.
  // The cache entry is <key>.so, <key>.so.sha256 (the hash of the .so) and <key>.cpp (the source,
  // for people to read), key = sha256(source + '\0' + compiler.identity()). A damaged entry is
  // rebuilt, not trusted. Throws RuntimeError if the cache directory cannot be created or written,
  // if it or an entry is not the user's own (see above), or if the compiler cannot be run (it runs
  // inside the cache directory); InternalError if the compiler rejects the source.
  std::shared_ptr<CpuModule> compile_and_load(const std::string& source);

  const Stats& last_stats() const { return stats_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  const CxxCompiler& compiler() const { return compiler_; }
  std::string cache_key(const std::string& source) const;

 private:
  std::shared_ptr<CpuModule> load_cached_entry(const detail::CacheDir& dir, const std::string& key) const;
  std::shared_ptr<CpuModule> build_entry(const detail::CacheDir& dir, const std::string& key,
                                         const std::string& source);
  std::filesystem::path entry_path(const std::string& key, std::string_view suffix) const;

  std::filesystem::path cache_dir_;
  CxxCompiler compiler_;
  Stats stats_;
};

}  // namespace scangen
