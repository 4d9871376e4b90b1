// Gradients against finite differences (docs/gradients.md, "Testing"): every function of every sample and random
// programs of the equivalence generator, each made f64 with a scalar cost of its float results.
// The gradients the interpreter computes at -O0 are compared with central differences of the cost
// wherever the cost is smooth; the interpreter at -O2 and the CPU backend at -O0 and -O2 (and, for
// the samples, the CUDA kernels on the CPU emulation) must give the same gradients bit for bit.
#define BOOST_TEST_MODULE gradcheck
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "common/test_scope.h"
#include "gradient_check.h"
#include "interpreter/interpreter.h"
#include "passes/pass.h"
#include "random_programs.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/errors.h"

namespace fs = std::filesystem;
using namespace scangen;

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

// The -O levels checked: SCANGEN_GRADCHECK_LEVELS. By default 2 in CI, whose programs pass
// through every rewrite (-O0 against -O2 of every sample, gradients included, is
// equivalence_samples' job), and 0 and 2 in the long run (docs/testing.md).
std::vector<int> levels() {
  const char* v = std::getenv("SCANGEN_GRADCHECK_LEVELS");
  std::string text = v && *v ? v : testing::long_tests() ? "0,2" : "2";
  std::vector<int> out;
  for (char ch : text) {
    if (ch == ',' || ch == ' ') continue;
    BOOST_REQUIRE_MESSAGE(ch == '0' || ch == '2', "SCANGEN_GRADCHECK_LEVELS takes 0 and 2, not \"" << text << "\"");
    out.push_back(ch - '0');
  }
  return out;
}

struct Case {
  std::string label;  // sample file and function, or seed
  gradcheck::GradientFunctions g;
  std::vector<HostTensor> args;
  std::vector<HostTensor> reference;  // the interpreter's results at -O0
};

// Sizes 1 to 3 per dimension symbol, scalar integers 1 to 4 (they are often step counts), floats in
// [-1, 1] (where tanh, exp and powers stay tame), bools at random.
std::vector<HostTensor> sample_arguments(const ir::Function& fn, std::mt19937& rng) {
  std::map<std::string, int64_t> sizes;
  auto size_of = [&](const ir::Dim& d) -> int64_t {
    if (d.is_const()) return d.offset();
    if (d.kind() == ir::Dim::Kind::Sym) {
      auto it = sizes.find(d.symbol_name());
      if (it == sizes.end()) it = sizes.emplace(d.symbol_name(), std::uniform_int_distribution<int64_t>(1, 3)(rng)).first;
      return it->second + d.offset();
    }
    return std::uniform_int_distribution<int64_t>(1, 3)(rng);
  };
  std::vector<HostTensor> args;
  for (const ir::ArgDecl& a : fn.args) {
    Shape shape;
    for (const ir::Dim& d : a.type.shape) shape.push_back(size_of(d));
    HostTensor t(a.type.dtype, shape);
    if (a.type.is_scalar() && is_int(a.type.dtype)) {
      auto it = sizes.find(a.name);
      int64_t v = it != sizes.end() ? it->second : std::uniform_int_distribution<int64_t>(1, 4)(rng);
      sizes.emplace(a.name, v);
      dispatch_dtype(a.type.dtype, [&](auto tag) { *t.data<decltype(tag)>() = static_cast<decltype(tag)>(v); });
      args.push_back(t);
      continue;
    }
    dispatch_dtype(a.type.dtype, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_same_v<T, bool>) t.data<T>()[i] = rng() % 2 == 0;
        else if constexpr (std::is_integral_v<T>) t.data<T>()[i] = static_cast<T>(std::uniform_int_distribution<int>(0, 3)(rng));
        else t.data<T>()[i] = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
      }
    });
    args.push_back(t);
  }
  return args;
}

// The reference run: nullopt when the function fails on these arguments or its cost is not finite
// (nothing to compare).
std::optional<std::vector<HostTensor>> reference_run(const gradcheck::GradientFunctions& g,
                                                     const std::vector<HostTensor>& args) {
  try {
    std::vector<HostTensor> r = interp::Interpreter().run(g.gradient, args);
    if (!std::isfinite(r.at(0).get_as_double(0))) return std::nullopt;
    return r;
  } catch (const RuntimeError&) {
    return std::nullopt;
  }
}

ir::Program program_at(const std::vector<Case>& cases, int level) {
  ir::Program p;
  p.source_path = "gradcheck.scan";
  for (const Case& c : cases) p.functions.push_back(c.g.gradient);
  if (level == 0) return p;
  driver::Options options = driver::at_level(level);
  options.verify_each = true;
  return driver::rewrite(p, options);
}

// The JIT's source of `backend`'s code for `program`.
std::vector<codegen::EmittedFile> jit_sources(const ir::Program& program, Backend backend) {
  driver::Options options;
  options.stem = "gradcheck";
  options.layout = driver::Layout::Jit;
  return driver::emit(program, backend, options);
}

// The program of a .scan file or text, without rewrites.
driver::Compilation analyzed(const std::string& name, const std::string& text = "") {
  driver::Compilation c = text.empty() ? driver::Compilation::of_file(name, driver::at_level(0))
                                       : driver::Compilation::of_text(name, text, driver::at_level(0));
  c.reach(driver::Stage::Rewritten);
  return c;
}

void compare_bits(const Case& c, const std::string& where, const std::vector<HostTensor>& got,
                  const std::vector<HostTensor>& want) {
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i) same = gradcheck::same_bits(got[i], want[i]);
  BOOST_CHECK_MESSAGE(same, c.label << ": " << where << " gives other gradients than the interpreter");
}

// Prints how long each part of a check took (the suite's time is watched: docs/performance.md).
class PhaseTimer {
 public:
  void done(const std::string& phase) {
    auto now = std::chrono::steady_clock::now();
    std::cout << "  " << phase << ": " << std::chrono::duration<double>(now - start_).count() << " s\n";
    start_ = now;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Every check of the cases: finite differences on the reference, then each backend and level.
void check_cases(std::vector<Case>& cases, bool with_cuda_emulation) {
  gradcheck::ElementCounts counts;
  PhaseTimer timer;
  for (const Case& c : cases) {
    std::string diff = gradcheck::compare_with_finite_differences(c.g, c.args, c.reference, counts);
    BOOST_CHECK_MESSAGE(diff.empty(), c.label << ": gradients differ from finite differences:\n" << diff);
  }
  timer.done("finite differences");
  CxxCompiler cxx = CxxCompiler::from_environment();
  if (!std::getenv("SCANGEN_CXXFLAGS")) cxx.flags.push_back("-Og");
  CpuJit jit(default_cache_dir(), cxx);
  for (int level : levels()) {
    ir::Program program = program_at(cases, level);
    const std::string at = " at -O" + std::to_string(level);
    std::vector<std::vector<HostTensor>> interp(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      interp[i] = interp::Interpreter().run(program.functions[i], cases[i].args);
      if (level > 0) compare_bits(cases[i], "the interpreter" + at, interp[i], cases[i].reference);
    }
    timer.done("the interpreter" + at);
    auto cpu = jit.compile_and_load(jit_sources(program, Backend::Cpu).at(0).contents);
    for (size_t i = 0; i < cases.size(); ++i)
      compare_bits(cases[i], "the cpu backend" + at, cpu->call(program.functions[i].name, cases[i].args), interp[i]);
    timer.done("the cpu backend" + at);
    if (!with_cuda_emulation) continue;
    auto files = jit_sources(program, Backend::CudaEmulation);
    CudaEmulation cuda(files.at(0).contents, files.at(1).contents, jit);
    for (size_t i = 0; i < cases.size(); ++i)
      compare_bits(cases[i], "cuda-emulation" + at, cuda.call(program.functions[i].name, cases[i].args), interp[i]);
    timer.done("cuda-emulation" + at);
  }
  std::cout << cases.size() << " functions, " << counts.checked << " gradient elements equal to finite differences, "
            << counts.not_smooth << " skipped where the cost is not smooth\n";
}

}  // namespace

BOOST_AUTO_TEST_CASE(samples) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SCANGEN_SOURCE_DIR) / "samples"))
    if (e.is_regular_file() && e.path().extension() == ".scan") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::mt19937 rng(7);
  std::vector<Case> cases;
  int without_gradient = 0, failing = 0;
  for (const fs::path& file : files) {
    driver::Compilation c = analyzed(file.string());
    BOOST_REQUIRE_MESSAGE(!c.diagnostics().has_errors(), c.rendered_diagnostics());
    const ir::Program* program = &c.program();
    for (const ir::Function& fn : program->functions) {
      std::string label = fs::relative(file, SCANGEN_SOURCE_DIR).string() + ":" + fn.name;
      auto g = gradcheck::gradient_functions(fn, "g" + std::to_string(cases.size()) + "_" + fn.name);
      if (!g) {
        ++without_gradient;
        continue;
      }
      std::optional<std::vector<HostTensor>> reference;
      std::vector<HostTensor> args;
      for (int attempt = 0; attempt < 4 && !reference; ++attempt) {
        args = gradcheck::promote_arguments(sample_arguments(fn, rng));
        reference = reference_run(*g, args);
      }
      if (!reference) {
        ++failing;
        continue;
      }
      cases.push_back({label, std::move(*g), args, std::move(*reference)});
    }
  }
  std::cout << without_gradient << " sample functions without a float argument or result, " << failing
            << " failing on every argument tried\n";
  BOOST_CHECK_GE(cases.size(), 20u);
  check_cases(cases, /*with_cuda_emulation=*/true);
}

BOOST_AUTO_TEST_CASE(random_programs) {
  const int64_t count = env_int("SCANGEN_GRADCHECK_PROGRAMS", testing::ci_or_long(100, 400));
  const uint64_t first = uint64_t(env_int("SCANGEN_GRADCHECK_SEED", 1));
  const size_t batch = 100;
  std::vector<Case> cases;
  int64_t without_gradient = 0, failing = 0;
  auto flush = [&] {
    check_cases(cases, /*with_cuda_emulation=*/false);
    cases.clear();
  };
  for (int64_t i = 0; i < count; ++i) {
    uint64_t seed = first + uint64_t(i);
    equivalence::RandomProgram rp = equivalence::generate_program(seed);
    driver::Compilation c = analyzed(rp.fn + ".scan", rp.text);
    BOOST_REQUIRE_MESSAGE(!c.diagnostics().has_errors(), "seed " << seed << ":\n" << c.rendered_diagnostics());
    const ir::Program* program = &c.program();
    auto g = gradcheck::gradient_functions(*program->find(rp.fn), "g" + rp.fn);
    if (!g) {
      ++without_gradient;
      continue;
    }
    // The generator's floats are often whole numbers or halves: moved off that lattice, they rarely
    // sit exactly on a kink (a tie of max, a clip bound, a jump of a cast to an integer).
    std::vector<HostTensor> args = gradcheck::promote_arguments(rp.args);
    std::mt19937_64 rng(seed);
    for (HostTensor& a : args)
      if (a.dtype() == DType::F64)
        for (int64_t e = 0; e < a.numel(); ++e) a.data<double>()[e] += std::uniform_real_distribution<double>(-0.05, 0.05)(rng);
    auto reference = reference_run(*g, args);
    if (!reference) {
      ++failing;
      continue;
    }
    cases.push_back({"seed " + std::to_string(seed) + "\n" + rp.text, std::move(*g), args, std::move(*reference)});
    if (cases.size() == batch) flush();
  }
  if (!cases.empty()) flush();
  std::cout << count << " random programs: " << without_gradient << " without a float argument or result, "
            << failing << " failing at run time or with a cost that is not finite\n";
}
