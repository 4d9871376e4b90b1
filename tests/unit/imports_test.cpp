// `import "header.h"` end to end through the driver: -I directories and the files read
// (driver::Compilation::dependencies), the spelling of the #include in files for a build system, and a header
// that changes between two runs (the CPU JIT and the interpreter's shim compile it again).
#define BOOST_TEST_MODULE imports
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "interpreter/interpreter.h"
#include "scangen/runtime/cpu_jit.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace scangen;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string header_adding(int k) {
  return "#pragma once\nnamespace scangen_export {\ninline double bump(double x) { return x + " + std::to_string(k) +
         "; }\n}  // namespace scangen_export\n";
}

const char* kProgram = "import \"bump.h\"\nfn g(x: f64) -> f64 {\n    return bump(x)\n}\n";

std::string cpu_source(const ir::Program& program, bool for_jit) {
  driver::Options options;
  options.stem = "prog";
  options.layout = for_jit ? driver::Layout::Jit : driver::Layout::BuildSystem;
  std::vector<codegen::EmittedFile> files = driver::emit(program, Backend::Cpu, options);
  return files.back().contents;  // the .cpp
}

// The program of a .scan file, analyzed and rewritten; its diagnostics when it has errors.
struct Loaded {
  driver::Compilation c;
  bool ok;
  const ir::Program& operator*() const { return c.program(); }
  explicit operator bool() const { return ok; }
};
Loaded load(const fs::path& file, driver::Options options = {}) {
  driver::Compilation c = driver::Compilation::of_file(file, std::move(options));
  const bool ok = c.reach(driver::Stage::Rewritten);
  return {std::move(c), ok};
}

double run_cpu(CpuJit& jit, const ir::Program& program, double x) {
  auto module = jit.compile_and_load(cpu_source(program, true));
  return *module->call("g", {HostTensor::scalar(x)}).at(0).data<double>();
}

double run_interpreter(const ir::Program& program, double x) {
  return *interp::Interpreter().run(program.functions.at(0), {HostTensor::scalar(x)}).at(0).data<double>();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_changed_header_is_compiled_again) {
  testing::TempDir dir;
  write(dir / "bump.h", header_adding(1));
  write(dir / "prog.scan", kProgram);
  CpuJit jit(dir / "cache");

  Loaded program = load(dir / "prog.scan");
  BOOST_REQUIRE_MESSAGE(program, program.c.rendered_diagnostics());
  BOOST_TEST(run_cpu(jit, *program, 1.0) == 2.0);
  BOOST_TEST(!jit.last_stats().cache_hit);
  BOOST_TEST(run_cpu(jit, *program, 1.0) == 2.0);
  BOOST_TEST(jit.last_stats().cache_hit);
  BOOST_TEST(run_interpreter(*program, 1.0) == 2.0);

  // The same .scan file, another header: the emitted source differs (the header's hash), so the
  // cache misses and the new function runs; the interpreter's shim follows too.
  write(dir / "bump.h", header_adding(5));
  Loaded changed = load(dir / "prog.scan");
  BOOST_REQUIRE_MESSAGE(changed, changed.c.rendered_diagnostics());
  BOOST_TEST(run_cpu(jit, *changed, 1.0) == 6.0);
  BOOST_TEST(!jit.last_stats().cache_hit);
  BOOST_TEST(run_interpreter(*changed, 1.0) == 6.0);
}

BOOST_AUTO_TEST_CASE(include_directories_and_dependencies) {
  testing::TempDir dir;
  write(dir / "inc" / "bump.h", "#pragma once\n#include \"detail/add.h\"\nnamespace scangen_export {\n"
                                "inline double bump(double x) { return add(x, 1.0); }\n}  // namespace scangen_export\n");
  write(dir / "inc" / "detail" / "add.h", "#pragma once\ninline double add(double a, double b) { return a + b; }\n");
  write(dir / "src" / "prog.scan", kProgram);

  Loaded without = load(dir / "src" / "prog.scan");
  BOOST_TEST(!without);
  BOOST_TEST(without.c.rendered_diagnostics().find("cannot find the imported header 'bump.h'") != std::string::npos);
  BOOST_TEST(without.c.rendered_diagnostics().find("looked for it as '" + (dir / "src" / "bump.h").string() + "'") !=
             std::string::npos);

  driver::Options options;
  options.include_dirs = {dir / "inc"};
  Loaded program = load(dir / "src" / "prog.scan", options);
  BOOST_REQUIRE_MESSAGE(program, program.c.rendered_diagnostics());
  std::vector<fs::path> deps;
  for (const fs::path& p : program.c.dependencies()) deps.push_back(fs::weakly_canonical(p));
  std::vector<fs::path> want = {fs::weakly_canonical(dir / "src" / "prog.scan"), fs::weakly_canonical(dir / "inc" / "bump.h"),
                                fs::weakly_canonical(dir / "inc" / "detail" / "add.h")};
  BOOST_TEST(deps == want, boost::test_tools::per_element());
  BOOST_TEST(run_interpreter(*program, 1.0) == 2.0);

  // For a build system: the spelling of the import statement, no path of this machine.
  std::string source = cpu_source(*program, false);
  BOOST_TEST(source.find("#include \"bump.h\"") != std::string::npos);
  BOOST_TEST(source.find((dir / "inc").string()) == std::string::npos);
  // For the JIT: the absolute path, after the hash of each dependency.
  std::string jit_source = cpu_source(*program, true);
  BOOST_TEST(jit_source.find("#include \"" + fs::weakly_canonical(dir / "inc" / "bump.h").string() + "\"") != std::string::npos);
  BOOST_TEST(jit_source.find("// sha256 ") != std::string::npos);
}
