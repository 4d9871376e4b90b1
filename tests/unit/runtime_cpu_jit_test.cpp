#define BOOST_TEST_MODULE runtime_cpu_jit
#include <stdlib.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "cache_trust.h"
#include "child_processes.h"
#include "scoped_env.h"
#include "temp_dir.h"
#include <cstdio>
#include <exception>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/process.h"
#include "scangen/runtime/sha256.h"

using namespace scangen;
namespace fs = std::filesystem;

namespace {

using scangen::testing::ScopedEnv;

// A fresh directory per test, removed afterwards.
struct TempDir : scangen::testing::TempDir {
  TempDir() : scangen::testing::TempDir("scangen-jit-test") {}
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The test module as emitted code would look: the ABI header's text in front of the functions.
std::string module_source() {
  fs::path root = SCANGEN_SOURCE_DIR;
  return read_text(root / "templates/common/scangen_abi.h") +
         read_text(root / "tests/unit/data/runtime_jit_module.cpp");
}

std::vector<fs::path> temp_files_in(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().rfind("tmp-", 0) == 0) found.push_back(entry.path());
  return found;
}

// Checks that scale() of the module works: the simplest sign of a sound module.
void check_scale(const CpuModule& module) {
  std::vector<HostTensor> results = module.call(
      "scale", {HostTensor::from_vector<float>({1, 2, 3}, {3}), HostTensor::scalar<float>(2.5f)});
  BOOST_TEST_REQUIRE(results.size() == 1u);
  BOOST_TEST(identical(results[0], HostTensor::from_vector<float>({2.5f, 5, 7.5f}, {3})));
}

template <class Error, class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  BOOST_ERROR("the expected exception was not thrown");
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool starts_with_text(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Compiles `source` straight into `shared_object` with the JIT's compiler and flags.
void compile_directly(const fs::path& dir, const std::string& source, const fs::path& shared_object,
                      const std::vector<std::string>& extra_flags = {}) {
  CxxCompiler compiler = CxxCompiler::from_environment();
  write_text(dir / "direct.cpp", source);
  std::vector<std::string> command{compiler.executable};
  command.insert(command.end(), compiler.flags.begin(), compiler.flags.end());
  command.insert(command.end(), extra_flags.begin(), extra_flags.end());
  command.insert(command.end(), {"-o", shared_object.string(), (dir / "direct.cpp").string()});
  ProcessResult result = run_process(command);
  BOOST_TEST_REQUIRE(result.exit_code == 0, result.output);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compiler)

BOOST_AUTO_TEST_CASE(from_environment) {
  ScopedEnv cxx("CXX", std::nullopt);
  ScopedEnv flags("SCANGEN_CXXFLAGS", std::nullopt);
  CxxCompiler defaults = CxxCompiler::from_environment();
  BOOST_TEST(!defaults.executable.empty());
  std::vector<std::string> expected_flags = {"-std=c++17",         "-O3",         "-march=native",
                                             "-fno-math-errno",    "-fPIC",       "-shared",
                                             "-fvisibility=hidden", "-DSCANGEN_EMIT_MODULE_ABI",
                                             "-ffp-contract=off",  "-fwrapv",     "-DSCANGEN_FWRAPV"};
  // A sanitized build compiles emitted code under its sanitizers too.
  std::istringstream sanitize_flags(SCANGEN_TEST_SANITIZE_FLAGS);
  for (std::string flag; sanitize_flags >> flag;) expected_flags.push_back(flag);
  BOOST_TEST(defaults.flags == expected_flags, boost::test_tools::per_element());
  {
    ScopedEnv empty("CXX", "");
    BOOST_TEST(CxxCompiler::from_environment().executable == defaults.executable);
  }
  ScopedEnv other("CXX", "/opt/some/g++");
  ScopedEnv extra("SCANGEN_CXXFLAGS", "  -g   -DEXTRA=1 ");
  CxxCompiler custom = CxxCompiler::from_environment();
  BOOST_TEST(custom.executable == "/opt/some/g++");
  BOOST_TEST_REQUIRE(custom.flags.size() == expected_flags.size() + 2);
  BOOST_TEST(custom.flags[expected_flags.size()] == "-g");
  BOOST_TEST(custom.flags.back() == "-DEXTRA=1");
}

BOOST_AUTO_TEST_CASE(identity_names_compiler_version_and_flags) {
  ScopedEnv cxx("CXX", std::nullopt);
  CxxCompiler compiler = CxxCompiler::from_environment();
  std::string identity = compiler.identity();
  std::string version = run_process({compiler.executable, "--version"}).output;
  version = version.substr(0, version.find('\n'));
  BOOST_TEST(identity.rfind(compiler.executable + "\n" + version + "\n", 0) == 0u);
  BOOST_TEST(contains(identity, "-ffp-contract=off"));
  BOOST_TEST(compiler.identity() == identity);  // memoized and stable

  CxxCompiler with_g = compiler;
  with_g.flags.push_back("-g");
  TempDir dir;
  BOOST_TEST(CpuJit(dir.path, compiler).cache_key("x") != CpuJit(dir.path, with_g).cache_key("x"));
  BOOST_TEST(CpuJit(dir.path, compiler).cache_key("x") !=
             CpuJit(dir.path, compiler).cache_key("y"));
  BOOST_TEST(CpuJit(dir.path, compiler).cache_key("x") ==
             sha256_hex(std::string("x") + '\0' + compiler.identity()));
}

BOOST_AUTO_TEST_CASE(missing_compiler_is_a_runtime_error_mentioning_cxx) {
  TempDir dir;
  ScopedEnv cxx("CXX", "/nonexistent");
  CxxCompiler compiler = CxxCompiler::from_environment();
  BOOST_TEST(compiler.executable == "/nonexistent");
  std::string message = error_message<RuntimeError>(
      [&] { CpuJit(dir.path, compiler).compile_and_load(module_source()); });
  BOOST_TEST(message == "C++ compiler '/nonexistent' not found; set CXX to a C++17 compiler");
  BOOST_TEST(temp_files_in(dir.path).empty());
  // A program that runs but is no compiler.
  CxxCompiler not_a_compiler{"false", CxxCompiler::default_flags(), {}};
  BOOST_TEST(contains(error_message<RuntimeError>([&] { not_a_compiler.identity(); }), "set CXX"));
}

BOOST_AUTO_TEST_CASE(default_cache_dir_follows_xdg_and_home) {
  ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
  ScopedEnv home("HOME", "/home/someone");
  BOOST_TEST(default_cache_dir() == fs::path("/x/cache/scangen"));
  {
    ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");
    BOOST_TEST(default_cache_dir() == fs::path("/home/someone/.cache/scangen"));
  }
  {
    ScopedEnv unset_xdg("XDG_CACHE_HOME", std::nullopt);
    BOOST_TEST(default_cache_dir() == fs::path("/home/someone/.cache/scangen"));
    ScopedEnv unset_home("HOME", std::nullopt);
    BOOST_TEST(default_cache_dir() == fs::path("/tmp/scangen-cache-" + std::to_string(::getuid())));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(jit)

BOOST_AUTO_TEST_CASE(compiles_loads_and_calls) {
  TempDir dir;
  CpuJit jit(dir.path);
  const std::string source = module_source();
  std::shared_ptr<CpuModule> module = jit.compile_and_load(source);
  const CpuJit::Stats& stats = jit.last_stats();
  BOOST_TEST(!stats.cache_hit);
  BOOST_TEST(stats.compile_seconds > 0);

  // The cache entry: the .so, its hash and the source; no temporary files.
  const std::string key = jit.cache_key(source);
  BOOST_TEST(stats.shared_object == dir / (key + ".so"));
  BOOST_TEST(read_text(dir / (key + ".so.sha256")) == sha256_file_hex(dir / (key + ".so")) + "\n");
  BOOST_TEST(read_text(dir / (key + ".cpp")) == source);
  BOOST_TEST(temp_files_in(dir.path).empty());

  BOOST_TEST(module->info().abi_version == SCANGEN_ABI_VERSION);
  BOOST_TEST(std::string(module->info().source_file) == "runtime_jit_module.scan");
  BOOST_TEST(module->find("stats") != nullptr);
  BOOST_TEST(module->find("nope") == nullptr);
  check_scale(*module);

  std::vector<HostTensor> sum_and_count =
      module->call("stats", {HostTensor::from_vector<double>({0.5, 1.25, 2}, {3})});
  BOOST_TEST_REQUIRE(sum_and_count.size() == 2u);
  BOOST_TEST(identical(sum_and_count[0], HostTensor::scalar<double>(3.75)));
  BOOST_TEST(identical(sum_and_count[1], HostTensor::scalar<int64_t>(3)));
  BOOST_TEST(identical(module->call("checked_half", {HostTensor::scalar<int32_t>(8)})[0],
                       HostTensor::scalar<int32_t>(4)));
  // Zero-length arguments work too.
  BOOST_TEST(module->call("scale", {HostTensor(DType::F32, {0}), HostTensor::scalar<float>(1)})[0]
                 .shape() == Shape{0});

  // Results outlive the module.
  std::vector<HostTensor> kept = module->call("stats", {HostTensor::from_vector<double>({1}, {1})});
  module.reset();
  BOOST_TEST(kept[0].get_as_double(0) == 1.0);
}

BOOST_AUTO_TEST_CASE(call_errors) {
  TempDir dir;
  CpuJit jit(dir.path);
  std::shared_ptr<CpuModule> module = jit.compile_and_load(module_source());
  const HostTensor vector = HostTensor::from_vector<float>({1, 2}, {2});
  const HostTensor factor = HostTensor::scalar<float>(2);

  // A user error keeps its message and location.
  try {
    module->call("checked_half", {HostTensor::scalar<int32_t>(3)});
    BOOST_ERROR("no user error");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()) == "k must be even");
    BOOST_TEST(e.line() == 3);
    BOOST_TEST(e.column() == 7);
  }
  BOOST_TEST(contains(error_message<InternalError>([&] { module->call("broken", {}); }),
                      "loop bound invariant failed"));
  BOOST_TEST(contains(error_message<InternalError>([&] { module->call("odd_status", {}); }),
                      "unknown status 42"));
  BOOST_TEST(contains(error_message<InternalError>([&] { module->call("wrong_result", {}); }),
                      "result 1 of 'wrong_result'"));

  BOOST_TEST(contains(error_message<RuntimeError>([&] { module->call("nope", {}); }),
                      "no function 'nope'"));
  std::string count = error_message<RuntimeError>([&] { module->call("scale", {vector}); });
  BOOST_TEST(contains(count, "function 'scale' takes 2 arguments, got 1"));
  BOOST_TEST(contains(count, "scale(x: f32[n], a: f32) -> f32[n]"));
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        module->call("scale", {vector, factor, factor});
                      }),
                      "takes 2 arguments, got 3"));
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        module->call("scale", {HostTensor::from_vector<double>({1}, {1}), factor});
                      }),
                      "argument 1 of 'scale' must be f32, got f64"));
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        module->call("scale", {vector, vector});
                      }),
                      "argument 2 of 'scale' must have rank 0, got rank 1"));
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        module->call("scale", {vector.reshaped({1, 2}), factor});
                      }),
                      "argument 1 of 'scale' must have rank 1, got rank 2"));
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        module->call("scale", {HostTensor(), factor});
                      }),
                      "argument 1 of 'scale' is an empty tensor"));
}

BOOST_AUTO_TEST_CASE(second_compile_is_a_cache_hit) {
  TempDir dir;
  const std::string source = module_source();
  CpuJit first(dir.path);
  check_scale(*first.compile_and_load(source));
  BOOST_TEST(!first.last_stats().cache_hit);
  check_scale(*first.compile_and_load(source));
  BOOST_TEST(first.last_stats().cache_hit);
  BOOST_TEST(first.last_stats().compile_seconds == 0);

  // Another CpuJit (as in another process) finds the entry too, and restores a deleted source copy.
  fs::path cpp = dir / (first.cache_key(source) + ".cpp");
  fs::remove(cpp);
  CpuJit second(dir.path);
  check_scale(*second.compile_and_load(source));
  BOOST_TEST(second.last_stats().cache_hit);
  BOOST_TEST(read_text(cpp) == source);

  // A different source is a different entry.
  CpuJit third(dir.path);
  third.compile_and_load(source + "\n// changed\n");
  BOOST_TEST(!third.last_stats().cache_hit);
}

BOOST_AUTO_TEST_CASE(damaged_entries_are_rebuilt) {
  TempDir dir;
  const std::string source = module_source();
  CpuJit jit(dir.path);
  const std::string key = jit.cache_key(source);
  const fs::path so = dir / (key + ".so");
  const fs::path hash = dir / (key + ".so.sha256");
  jit.compile_and_load(source);  // the module is unloaded again right away
  const std::string good_so = read_text(so);

  // Each damage is written as a new file (remove, then write), never over a mapped one.
  auto replace = [](const fs::path& path, const std::string& contents) {
    fs::remove(path);
    write_text(path, contents);
  };
  struct Damage {
    const char* what;
    std::function<void()> apply;
  };
  const Damage damages[] = {
      {"truncated .so", [&] { replace(so, good_so.substr(0, good_so.size() / 2)); }},
      {"flipped byte in the .so",
       [&] {
         std::string bytes = good_so;
         bytes[bytes.size() / 2] ^= 0x5a;
         replace(so, bytes);
       }},
      {"wrong hash", [&] { replace(hash, std::string(64, '0') + "\n"); }},
      {"empty hash file", [&] { replace(hash, ""); }},
      {"missing hash", [&] { fs::remove(hash); }},
      {"missing .so", [&] { fs::remove(so); }},
      {"garbage .so with a matching hash",
       [&] {
         replace(so, "not an ELF file");
         replace(hash, sha256_hex("not an ELF file") + "\n");
       }},
  };
  for (const Damage& damage : damages) {
    BOOST_TEST_CONTEXT(damage.what) {
      damage.apply();
      std::shared_ptr<CpuModule> module = jit.compile_and_load(source);
      BOOST_TEST(!jit.last_stats().cache_hit);
      check_scale(*module);
      BOOST_TEST(read_text(hash) == sha256_file_hex(so) + "\n");
      BOOST_TEST(temp_files_in(dir.path).empty());
      module.reset();
      jit.compile_and_load(source);
      BOOST_TEST(jit.last_stats().cache_hit);
    }
  }
}

BOOST_AUTO_TEST_CASE(concurrent_processes_both_succeed) {
  TempDir dir;
  const std::string source = module_source();
  constexpr int kProcesses = 3;
  for (int status : scangen::testing::run_in_children(kProcesses, [&](int) {
         std::shared_ptr<CpuModule> module = CpuJit(dir.path).compile_and_load(source);
         std::vector<HostTensor> results = module->call(
             "scale", {HostTensor::from_vector<float>({1, 2}, {2}), HostTensor::scalar<float>(3)});
         return identical(results.at(0), HostTensor::from_vector<float>({3, 6}, {2}));
       }))
    BOOST_TEST(status == 0);
  BOOST_TEST(temp_files_in(dir.path).empty());
  // Whatever interleaving happened, the directory yields a working module now.
  CpuJit jit(dir.path);
  check_scale(*jit.compile_and_load(source));
}

BOOST_AUTO_TEST_CASE(compiler_errors_are_internal_errors) {
  // With extra flags set, a failure is blamed on them instead (tested above).
  ScopedEnv flags("SCANGEN_CXXFLAGS", std::nullopt);
  TempDir dir;
  CpuJit jit(dir.path);
  const std::string source = module_source() + "\nint broken_syntax( {\n";
  std::string message = error_message<InternalError>([&] { jit.compile_and_load(source); });
  const fs::path kept = dir / (jit.cache_key(source) + ".cpp");
  BOOST_TEST(contains(message, "the C++ compiler rejected the code scangen emitted"));
  BOOST_TEST(contains(message, "error"));
  BOOST_TEST(contains(message, "broken_syntax"));  // the compiler's own message
  BOOST_TEST(contains(message, kept.string()));
  BOOST_TEST(read_text(kept) == source);
  BOOST_TEST(!fs::exists(dir / (jit.cache_key(source) + ".so")));
  BOOST_TEST(temp_files_in(dir.path).empty());
}

BOOST_AUTO_TEST_CASE(long_compiler_output_is_cut) {
  ScopedEnv flags("SCANGEN_CXXFLAGS", std::nullopt);
  TempDir dir;
  CpuJit jit(dir.path);
  std::string source;
  // Warnings, which no compiler stops counting (clang stops after 20 errors), then one error.
  for (int i = 0; i < 300; ++i) source += "#warning f" + std::to_string(i) + "\n";
  source += "int f() { return undeclared; }\n";
  std::string message = error_message<InternalError>([&] { jit.compile_and_load(source); });
  BOOST_TEST(contains(message, "more lines]"));
  BOOST_TEST(!contains(message, "f299"));
}

BOOST_AUTO_TEST_CASE(cache_dir_problems_are_runtime_errors) {
  TempDir dir;
  write_text(dir / "file", "x");
  CpuJit under_a_file(dir / "file" / "cache");
  std::string message =
      error_message<RuntimeError>([&] { under_a_file.compile_and_load(module_source()); });
  BOOST_TEST(contains(
      message, "cannot create the JIT cache directory '" + (dir / "file" / "cache").string()));
  // A relative directory works (it is made absolute so that dlopen never searches for the file).
  TempDir work;
  fs::path old_cwd = fs::current_path();
  fs::current_path(work.path);
  CpuJit relative("relative-cache");
  try {
    check_scale(*relative.compile_and_load(module_source()));
  } catch (...) {
    fs::current_path(old_cwd);
    throw;
  }
  fs::current_path(old_cwd);
  BOOST_TEST(relative.cache_dir() == work.path / "relative-cache");
}

BOOST_AUTO_TEST_CASE(module_load_errors) {
  TempDir dir;
  BOOST_TEST(contains(error_message<RuntimeError>([&] { CpuModule::load(dir / "missing.so"); }),
                      "cannot load module"));

  compile_directly(dir.path, "extern \"C\" int plain_function() { return 1; }\n", dir / "plain.so");
  BOOST_TEST(contains(error_message<RuntimeError>([&] { CpuModule::load(dir / "plain.so"); }),
                      "not a scangen module (no symbol scangen_module_v1)"));

  compile_directly(dir.path, module_source(), dir / "future.so", {"-DSCANGEN_TEST_ABI_VERSION=99"});
  BOOST_TEST(contains(error_message<RuntimeError>([&] { CpuModule::load(dir / "future.so"); }),
                      "built for scangen ABI version 99, this runtime implements versions 1 to 2"));
  // A module of ABI version 1 (no entries that write into the caller's tensors) still loads.
  compile_directly(dir.path, module_source(), dir / "old.so", {"-DSCANGEN_TEST_ABI_VERSION=1"});
  std::shared_ptr<CpuModule> old = CpuModule::load(dir / "old.so");
  check_scale(*old);
  std::vector<HostTensor> outs{HostTensor::from_vector<float>({0, 0, 0}, {3})};
  BOOST_TEST(contains(error_message<RuntimeError>([&] {
                        old->call_into("scale", {HostTensor::from_vector<float>({1, 2, 3}, {3}),
                                                 HostTensor::scalar<float>(2.5f)}, outs);
                      }),
                      "function 'scale' cannot write its results into the caller's tensors: its module was built "
                      "for ABI version 1"));

  // Through the JIT, a fresh module that does not load is a scangen bug.
  CpuJit jit(dir / "cache");
  std::string message = error_message<InternalError>(
      [&] { jit.compile_and_load("#define SCANGEN_TEST_ABI_VERSION 3\n" + module_source()); });
  BOOST_TEST(contains(message, "freshly compiled module cannot be loaded"));
  BOOST_TEST(temp_files_in(dir / "cache").empty());

  compile_directly(dir.path, module_source(), dir / "good.so");
  check_scale(*CpuModule::load(dir / "good.so"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Whom the cache trusts: it loads code, so only a directory and entries of this user that no one
// else can write (runtime/src/cache_dir.h; the cases are shared with the CUDA cache's tests).

namespace {

using scangen::testing::directory_refusal;
using scangen::testing::entry_refusal;
using scangen::testing::for_each_case;
using scangen::testing::ScopedUmask;
using scangen::testing::Tampering;

// The test module with a constructor that creates `marker` when the module is loaded: what an
// attacker would plant under the key of a program the victim runs.
std::string planted_source(const fs::path& marker) {
  return module_source() + "\n#include <cstdio>\n__attribute__((constructor)) static void planted() {\n"
                           "  if (std::FILE* f = std::fopen(\"" + marker.string() + "\", \"w\")) std::fclose(f);\n}\n";
}

// Plants, in `cache`, a module and its checksum under the key of module_source().
void plant_module(const fs::path& work, const fs::path& cache, const fs::path& marker) {
  fs::create_directories(cache);
  const std::string key = CpuJit(cache).cache_key(module_source());
  compile_directly(work, planted_source(marker), cache / (key + ".so"));
  write_text(cache / (key + ".so.sha256"), sha256_file_hex(cache / (key + ".so")) + "\n");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cache_trust)

BOOST_AUTO_TEST_CASE(cache_directories_and_entries_are_created_private) {
  TempDir dir;
  const fs::path cache = dir / "a" / "b" / "cache";
  {
    // Under a umask that lets the group write, what the cache creates is still private.
    ScopedUmask group_writable(002);
    CpuJit jit(cache);
    check_scale(*jit.compile_and_load(module_source()));
  }
  for (const fs::path& created : {dir / "a", dir / "a" / "b", cache})
    BOOST_TEST_CONTEXT(created) { BOOST_TEST(scangen::testing::permissions_of(created) == 0700u); }
  const std::string key = CpuJit(cache).cache_key(module_source());
  BOOST_TEST(scangen::testing::permissions_of(cache / (key + ".so")) == 0700u);  // the linker made it 0775
  BOOST_TEST(scangen::testing::permissions_of(cache / (key + ".so.sha256")) == 0600u);
  BOOST_TEST(scangen::testing::permissions_of(cache / (key + ".cpp")) == 0600u);
  CpuJit again(cache);
  check_scale(*again.compile_and_load(module_source()));
  BOOST_TEST(again.last_stats().cache_hit);
}

BOOST_AUTO_TEST_CASE(untrusted_directories_are_refused) {
  for_each_case(scangen::testing::untrusted_directories(), [](const Tampering& tampering) {
    TempDir dir;
    const fs::path cache = dir / "cache";
    CpuJit(cache).compile_and_load(module_source());  // a sound entry: a hit, were it trusted
    tampering.apply(cache);
    const std::string message = error_message<RuntimeError>([&] { CpuJit(cache).compile_and_load(module_source()); });
    BOOST_TEST(starts_with_text(message, directory_refusal("JIT cache", cache, tampering)));
    BOOST_TEST(contains(message, "set XDG_CACHE_HOME to a directory of your own"));
    BOOST_TEST(temp_files_in(cache).empty());
  });
}

BOOST_AUTO_TEST_CASE(a_planted_module_is_loaded_only_from_a_trusted_directory) {
  for_each_case(scangen::testing::untrusted_directories(), [](const Tampering& tampering) {
    TempDir dir;
    const fs::path cache = dir / "cache";
    const fs::path marker = dir / "planted-code-ran";
    plant_module(dir.path, cache, marker);
    tampering.apply(cache);
    BOOST_TEST(starts_with_text(
        error_message<RuntimeError>([&] { CpuJit(cache).compile_and_load(module_source()); }),
        directory_refusal("JIT cache", cache, tampering)));
    BOOST_TEST(!fs::exists(marker));
    BOOST_TEST(fs::exists(cache / (CpuJit(cache).cache_key(module_source()) + ".so")));  // left for the user
  });
  // The same plant in a directory of ours that no one else can write is loaded: the refusals
  // above are what stops it.
  TempDir dir;
  const fs::path marker = dir / "planted-code-ran";
  plant_module(dir.path, dir / "cache", marker);
  fs::permissions(dir / "cache", fs::perms::owner_all);
  CpuJit jit(dir / "cache");
  jit.compile_and_load(module_source());
  BOOST_TEST(jit.last_stats().cache_hit);
  BOOST_TEST(fs::exists(marker));
}

BOOST_AUTO_TEST_CASE(untrusted_entries_are_refused) {
  for (const char* suffix : {".so", ".so.sha256"})
    for_each_case(scangen::testing::untrusted_entries(), [suffix](const Tampering& tampering) {
      BOOST_TEST_CONTEXT(suffix) {
        TempDir dir;
        CpuJit jit(dir.path);
        jit.compile_and_load(module_source());
        const fs::path entry = dir / (jit.cache_key(module_source()) + suffix);
        tampering.apply(entry);
        BOOST_TEST(error_message<RuntimeError>([&] { jit.compile_and_load(module_source()); }) ==
                   entry_refusal("JIT cache", entry, tampering));
        BOOST_TEST(fs::exists(fs::symlink_status(entry)));  // never deleted behind the user's back
        // Removed, the entry is rebuilt.
        fs::remove(entry);
        check_scale(*jit.compile_and_load(module_source()));
        BOOST_TEST(!jit.last_stats().cache_hit);
      }
    });
}

BOOST_AUTO_TEST_CASE(a_cache_directory_reached_through_a_link_is_checked_where_it_leads) {
  TempDir dir;
  fs::create_directory(dir / "private");
  fs::permissions(dir / "private", fs::perms::owner_all);
  fs::create_directory_symlink(dir / "private", dir / "link");
  check_scale(*CpuJit(dir / "link").compile_and_load(module_source()));
  CpuJit hit(dir / "link");
  hit.compile_and_load(module_source());
  BOOST_TEST(hit.last_stats().cache_hit);

  fs::permissions(dir / "private", fs::perms::all);
  BOOST_TEST(contains(error_message<RuntimeError>([&] { CpuJit(dir / "link").compile_and_load(module_source()); }),
                      "refusing the JIT cache directory '" + (dir / "link").string() +
                          "': it is writable by group and others (mode 0777)"));
}

BOOST_AUTO_TEST_SUITE_END()
