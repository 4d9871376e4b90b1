// What an imported header sees on the CUDA side, held to NVRTC: the CUDA check (Clang, with the
// declarations of templates/cuda/scangen_nvrtc_math.h), NVRTC compiling scangen's kernels, and the
// CUDA emulation (host C++) must take the same side of `#ifdef __CUDACC__` and know the same math
// functions with the same result types. The NVRTC cases skip where no NVRTC loads.
#define BOOST_TEST_MODULE imports_cuda
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "imports/cxx_header.h"
#include "nvrtc_found.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/scangen.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace scangen;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kHostDeviceFallback = "#pragma once\n#ifndef __CUDACC__\n#define __host__\n#define __device__\n#endif\n";

// A static_assert per declaration of scangen_nvrtc_math.h: the call with arguments of the
// declared types, `(T)0`, has the declared result type. Unevaluated: nothing is called. The
// emulation's C++ library answers the classification functions with bool where CUDA says int.
std::string math_assertions() {
  std::string text =
      "template <class A, class B> struct sg_same { static constexpr bool value = false; };\n"
      "template <class A> struct sg_same<A, A> { static constexpr bool value = true; };\n"
      "#ifdef __CUDA_ARCH__\n#define SG_AGREES(G, W) sg_same<G, W>::value\n#else\n"
      "#define SG_AGREES(G, W) (sg_same<G, W>::value || (sg_same<W, int>::value && sg_same<G, bool>::value))\n"
      "#endif\n";
  std::istringstream lines(read(fs::path(SCANGEN_SOURCE_DIR) / "templates/cuda/scangen_nvrtc_math.h"));
  const std::regex declaration(R"(^\s*(.+?)\s+(\w+)\((.*)\)\s*$)");
  const std::regex comma(R"(\s*,\s*)");
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("//", 0) == 0) continue;
    std::istringstream parts(line);
    std::string part;
    while (std::getline(parts, part, ';')) {
      std::smatch m;
      if (part.find_first_not_of(' ') == std::string::npos) continue;
      BOOST_REQUIRE_MESSAGE(std::regex_match(part, m, declaration), "not a declaration: " + part);
      std::string args;
      const std::string params = m[3];
      for (std::sregex_token_iterator p(params.begin(), params.end(), comma, -1), end; p != end; ++p)
        args += (args.empty() ? "(" : ", (") + p->str() + ")0";
      text += "static_assert(SG_AGREES(decltype(" + m[2].str() + "(" + args + ")), " + m[1].str() + "), \"" +
              std::regex_replace(part, std::regex("^\\s+"), "") + "\");\n";
      ++count;
    }
  }
  BOOST_TEST(count > 150);  // the whole list was read
  return text;
}

// The CUDA source of `program` as the JIT gives NVRTC, compiled kernel by kernel (as CudaProgram
// does) for sm_80; the errors, if any.
std::string nvrtc_errors(const ir::Program& program) {
  driver::Options pipeline;
  pipeline.stem = "kernels";
  pipeline.layout = driver::Layout::Jit;
  const std::vector<codegen::EmittedFile> files = driver::emit(program, Backend::Cuda, pipeline);
  std::string errors;
  for (const CudaFunctionInfo& fn : parse_cuda_manifest(files.at(1).contents)) {
    CudaCompileOptions options = kernel_compile_options(fn, 80);
    options.kind = CudaBinaryKind::Ptx;
    try {
      nvrtc_compile(files.at(0).contents, options);
    } catch (const std::exception& e) {
      errors += e.what();
    }
  }
  return errors;
}

// math.h, whose CUDA side asserts math_assertions(), and math.scan, which calls its twice.
void write_math_program(const testing::TempDir& dir) {
  write(dir / "math.h", std::string(kHostDeviceFallback) + "#ifdef __CUDACC__\n" + math_assertions() +
                            "#endif\nnamespace scangen_export {\n"
                            "__host__ __device__ inline double twice(double x) { return 2 * x; }\n"
                            "}  // namespace scangen_export\n");
  write(dir / "math.scan", "import \"math.h\"\nfn f(x: f64) -> f64 {\n    return twice(x)\n}\n");
}

double call(const fs::path& scan, Backend backend, double x) {
  JitOptions options;
  options.backend = backend;
  Module module = compile_file(scan, options);
  return *module.call("f", {HostTensor::scalar(x)}).at(0).data<double>();
}

}  // namespace

// The header's two sides differ: the CPU backends take the host's, NVRTC and the emulation the
// GPU's (with __CUDACC_RTC__ too), where sqrt(4.0f) is CUDA's float overload.
BOOST_AUTO_TEST_CASE(the_emulation_takes_the_side_nvrtc_takes) {
  testing::TempDir dir;
  write(dir / "side.h", std::string(kHostDeviceFallback) +
                            "namespace scangen_export {\n"
                            "#if defined(__CUDACC__) && defined(__CUDACC_RTC__)\n"
                            "__host__ __device__ inline double side(double x) { return x + sqrt(4.0f) + abs(-1.0f); }\n"
                            "#else\n"
                            "inline double side(double x) { return x + 1; }\n"
                            "#endif\n"
                            "}  // namespace scangen_export\n");
  write(dir / "side.scan", "import \"side.h\"\nfn f(x: f64) -> f64 {\n    return side(x)\n}\n");
  BOOST_TEST(call(dir / "side.scan", Backend::Cpu, 1.0) == 2.0);
  BOOST_TEST(call(dir / "side.scan", Backend::Interpreter, 1.0) == 2.0);
  BOOST_TEST(call(dir / "side.scan", Backend::CudaEmulation, 1.0) == 4.0);
}

// Every function the check declares: the check accepts the calls (its own declarations), and so
// must NVRTC, in the kernels scangen gives it, and the emulation, each with the same result types.
BOOST_AUTO_TEST_CASE(the_check_the_emulation_and_nvrtc_know_the_same_math) {
  testing::TempDir dir;
  write_math_program(dir);
  const imports::HeaderAnalysis analysis = imports::analyze_header(dir / "math.h", {});
  BOOST_TEST(analysis.errors.empty());
  BOOST_TEST(analysis.cuda_parse_problem == "");
  BOOST_REQUIRE_EQUAL(analysis.functions.size(), 1u);
  BOOST_TEST(analysis.functions[0].host_device);

  BOOST_TEST(call(dir / "math.scan", Backend::CudaEmulation, 1.5) == 3.0);
}

BOOST_AUTO_TEST_CASE(nvrtc_knows_the_math_the_check_declares, *boost::unit_test::precondition(testing::nvrtc_found)) {
  testing::TempDir dir;
  write_math_program(dir);
  auto c = driver::Compilation::of_file(dir / "math.scan", driver::Options());
  BOOST_REQUIRE_MESSAGE(c.reach(driver::Stage::Rewritten), c.rendered_diagnostics());
  BOOST_TEST(nvrtc_errors(c.program()) == "");
}

// The headers of tests/diagnostics that the check accepts for CUDA compile with NVRTC; the one it
// refuses for including <cmath> does not.
BOOST_AUTO_TEST_CASE(nvrtc_agrees_with_the_check_on_the_diagnostics_headers,
                     *boost::unit_test::precondition(testing::nvrtc_found)) {
  const fs::path diagnostics = fs::path(SCANGEN_SOURCE_DIR) / "tests/diagnostics";
  for (const char* file : {"import_cuda_math.scan", "import_cuda_std_header.scan"}) {
    driver::Options options;
    options.check_cuda_imports = true;
    auto c = driver::Compilation::of_file(diagnostics / file, options);
    const bool check_accepts = c.reach(driver::Stage::Rewritten);
    // Refused for CUDA or not, the program was analyzed (the check runs after the analysis).
    const std::string errors = nvrtc_errors(c.program());
    BOOST_TEST_INFO(file << ": " << errors);
    BOOST_TEST(check_accepts == errors.empty());
  }
}
