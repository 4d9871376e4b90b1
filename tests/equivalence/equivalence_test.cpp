// Equivalence tests (README.md in this directory): the rewrites must preserve results and errors
// exactly, and the backends must agree.
//
// random_programs (ctest: equivalence_test): random programs
// (random_programs.h) compiled at -O0 (no rewrites) and -O2 (all rewrites), each run on the
// reference interpreter and on the CPU backend. The interpreter at -O2 must agree with the
// interpreter at -O0, and the CPU backend at each level with the interpreter at that level: the same
// results bit for bit, or the same run-time error message (its line:col may differ when one failing
// expression is met at two places: docs/language.md, decision 19); an internal error anywhere is a
// failure. A -O0/-O2 difference comes with a triage line naming the rewrites involved.
//
// The CPU backend is batched: compiling a thousand programs one by one with the C++ compiler would
// take far too long, so many generated functions share one .scan text (each function's name is
// unique: "prog<seed>"), which is compiled once per optimization level and loaded once; then every
// function is called. The C++ compiler runs on two threads, after the interpreter runs.
//
// random_programs_fast (ctest: equivalence_fast): the first programs again, compiled at -O2 in
// the CPU backend's fast floating-point mode (`--fp fast`), against the interpreter: floats within
// the fast tolerance of tests/common/gpu_float_tolerance.h; integers, booleans, shapes and errors
// exactly. A program whose own results move beyond that tolerance when its float arguments move
// by a few ulps is ill-conditioned there: its fast results are not checked, only counted.
//
// samples (ctest: equivalence_samples): every run of every
// samples/**/*.runs.json manifest through `scangen run` at -O0 and -O2 on both backends.
//
// Environment:
//   SCANGEN_EQUIVALENCE_PROGRAMS  number of programs (default 400; 2000 with SCANGEN_LONG_TESTS)
//   SCANGEN_EQUIVALENCE_FAST_PROGRAMS  number of programs in fast mode (default 200; 600 with SCANGEN_LONG_TESTS)
//   SCANGEN_EQUIVALENCE_SEED      the first seed (default 1); programs use seeds SEED, SEED+1, ...
//   SCANGEN_EQUIVALENCE_BATCH     functions per compiled batch (default 100)
//   SCANGEN_EQUIVALENCE_CPU       0: the interpreter only (-O0 against -O2; fast, for long runs)
//   SCANGEN_EQUIVALENCE_O3_EVERY  every N-th CPU batch compiled at -O3 (default 10; 0: none)
//   SCANGEN_EQUIVALENCE_SKIP      more seeds to skip (comma-separated); "none": not even the known bugs
//   SCANGEN_EQUIVALENCE_VERBOSE   1: print every program's seed before each stage (to find a crash),
//                                 and a histogram of the run-time errors; 2: also every program
//   SCANGEN_EQUIVALENCE_DUMP      a directory: write each program there as prog<seed>.scan, with
//                                 its arguments for `scangen run` in prog<seed>.args
//   SCANGEN_EQUIVALENCE_SAMPLES   the samples directory (default: the source tree's samples/)
#define BOOST_TEST_MODULE equivalence
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "codegen/backend.h"
#include "driver/driver.h"
#include "interpreter/interpreter.h"
#include "passes/pass.h"
#include "common/gpu_float_tolerance.h"
#include "common/test_scope.h"
#include "random_programs.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/npy.h"
#include "scangen/runtime/process.h"

using namespace scangen;
using namespace scangen::equivalence;

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoll(v, nullptr, 10);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The pipeline at `level`, with the IR verifier after every rewrite, for the JIT's source of
// `backend`'s code.
driver::Options verified(int level, Backend backend = Backend::Cpu) {
  driver::Options options = driver::at_level(level);
  options.verify_each = true;
  options.backends = {backend};
  options.layout = driver::Layout::Jit;
  return options;
}

// `text` through `stage`; an InternalError with its diagnostics when it does not compile (a
// generated program must).
driver::Compilation compiled(const std::string& name, const std::string& text, const driver::Options& options,
                             driver::Stage stage = driver::Stage::Rewritten) {
  driver::Compilation c = driver::Compilation::of_text(name, text, options);
  if (!c.reach(stage)) throw InternalError("does not compile:\n" + c.rendered_diagnostics());
  return c;
}

// The JIT's source of the compilation's one target.
const std::string& jit_source(const driver::Compilation& c) { return c.targets().at(0).sources.at(0).contents; }

struct Outcome {
  enum Kind { Ok, UserError, Internal } kind = Ok;
  std::vector<HostTensor> results;
  std::string error;  // "line:col: message" for a user error; the message of an internal error
};

template <class F> Outcome capture(F&& run) {
  Outcome o;
  try {
    o.results = run();
  } catch (const RuntimeError& e) {
    o.kind = Outcome::UserError;
    o.error = std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
  } catch (const InternalError& e) {
    o.kind = Outcome::Internal;
    o.error = std::string("internal error: ") + e.what();
  } catch (const std::exception& e) {
    o.kind = Outcome::Internal;
    o.error = std::string("unexpected exception: ") + e.what();
  }
  return o;
}

// An error located in a batch, moved back to the program's own lines.
Outcome relocate(Outcome o, int line_offset) {
  if (o.kind != Outcome::UserError) return o;
  int line = std::atoi(o.error.c_str());
  if (line > 0) o.error = std::to_string(line - line_offset) + o.error.substr(o.error.find(':'));
  return o;
}

std::string describe(const Outcome& o) {
  if (o.kind != Outcome::Ok) return (o.kind == Outcome::UserError ? "error " : "") + o.error;
  std::string s = "[";
  for (size_t i = 0; i < o.results.size(); ++i) {
    const HostTensor& t = o.results[i];
    s += (i ? ", " : "") + std::string(dtype_name(t.dtype())) + shape_to_string(t.shape()) + " " + format_tensor(t);
  }
  return s + "]";
}

// A user error's message without its "line:col: ": when one failing expression is met at two
// places (a step's shape and its value, or two copies that common subexpressions merged), which
// place reports it is not part of the language (docs/language.md, decision 19).
std::string message_of(const Outcome& o) {
  if (o.kind != Outcome::UserError) return o.error;
  size_t colon = o.error.find(':');
  size_t second = colon == std::string::npos ? colon : o.error.find(": ", colon + 1);
  return second == std::string::npos ? o.error : o.error.substr(second + 2);
}

// Two user errors with different messages reported at different places: the program has several
// errors, and which one a backend reports first is not part of the language (docs/language.md,
// decision 19): the interpreter and a compiled backend may compute independent values of a step
// in different orders. Not accepted between -O0 and -O2 on the interpreter: rewrites never
// reorder an error before another (docs/rewrites.md).
bool several_errors(const Outcome& a, const Outcome& b) {
  if (a.kind != Outcome::UserError || b.kind != Outcome::UserError || message_of(a) == message_of(b)) return false;
  auto place = [](const Outcome& o) { return o.error.substr(0, o.error.size() - message_of(o).size()); };
  return place(a) != place(b);
}

// How far floats may be apart: none (bit for bit), CUDA's libm against the host's, or the fast
// floating-point mode's rounding against the interpreter's.
enum class Floats { Exact, WithinUlps, Fast };

// "" when both outcomes are the same (bit for bit, or floats within the GPU tolerance of
// tests/common/gpu_float_tolerance.h for Floats::WithinUlps; a user error's message, wherever reported), else what differs.
std::string difference(const Outcome& a, const Outcome& b, Floats floats = Floats::Exact) {
  if (a.kind != b.kind || message_of(a) != message_of(b)) return "outcomes differ";
  if (a.results.size() != b.results.size()) return "numbers of results differ";
  for (size_t r = 0; r < a.results.size(); ++r) {
    const HostTensor& x = a.results[r];
    const HostTensor& y = b.results[r];
    if (x.dtype() != y.dtype()) return "result " + std::to_string(r) + ": dtypes differ";
    if (x.shape() != y.shape()) return "result " + std::to_string(r) + ": shapes differ";
    const size_t size = dtype_size(x.dtype());
    const bool close_enough = floats != Floats::Exact && (x.dtype() == DType::F32 || x.dtype() == DType::F64);
    const scangen::testing::FloatTolerance tolerance =
        floats == Floats::Fast ? scangen::testing::kFastTolerance : scangen::testing::kGpuTolerance;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double u = x.get_as_double(i), v = y.get_as_double(i);
      const bool same = close_enough ? scangen::testing::within_tolerance(u, v, tolerance)
                                     : std::memcmp(static_cast<const char*>(x.raw_data()) + i * int64_t(size),
                                                   static_cast<const char*>(y.raw_data()) + i * int64_t(size), size) == 0;
      if (!same) {
        std::ostringstream os;
        os.precision(17);
        os << "result " << r << " element " << i << ": " << u << " vs " << v;
        return os.str();
      }
    }
  }
  return "";
}

// For a program whose outcome on the interpreter differs between -O0 and -O2: which rewrites are
// to blame. "-O2 without P" runs every rewrite but P; "P alone" runs only P. Costs a few
// compilations, only when a program fails.
std::string triage(const std::string& fn, const std::string& text, const std::vector<HostTensor>& args,
                   const Outcome& at_o0) {
  auto outcome = [&](const driver::Options& options) {
    return capture([&] {
      driver::Compilation c = compiled(fn + ".scan", text, options);
      const ir::Function* f = c.program().find(fn);
      if (!f) throw InternalError("no function " + fn);
      return interp::Interpreter().run(*f, args);
    });
  };
  std::string without, alone;
  for (const passes::PassInfo& pass : passes::pass_table()) {
    driver::Options all_but = driver::at_level(2);
    all_but.disabled_passes = {pass.name};
    if (difference(at_o0, outcome(all_but)).empty()) without += std::string(without.empty() ? "" : ", ") + pass.name;
    driver::Options only = driver::at_level(2);
    only.only_passes = {pass.name};
    if (!difference(at_o0, outcome(only)).empty()) alone += std::string(alone.empty() ? "" : ", ") + pass.name;
  }
  return "  triage: -O2 agrees with -O0 without " + (without.empty() ? "(no single rewrite)" : without) +
         "; alone, these rewrites change the outcome: " + (alone.empty() ? "(none)" : alone) + "\n";
}

struct Case {
  uint64_t seed = 0;
  RandomProgram program;
  Outcome interp[2];  // the interpreter at -O0 and at -O2
  int batch = -1;
  int line_offset = 0;  // lines before the program in its batch's text
};

std::string report(const Case& c, const std::string& what, const std::string& name_a, const Outcome& a,
                   const std::string& name_b, const Outcome& b, const std::string& diff,
                   const std::string& extra = "") {
  std::ostringstream os;
  os << "seed " << c.seed << ": " << what << ": " << diff << "\n"
     << "  " << name_a << ": " << describe(a) << "\n"
     << "  " << name_b << ": " << describe(b) << "\n"
     << extra
     << "  arguments: " << format_arguments(c.program.arg_names, c.program.args) << "\n"
     << "  rerun: SCANGEN_EQUIVALENCE_SEED=" << c.seed
     << " SCANGEN_EQUIVALENCE_PROGRAMS=1 SCANGEN_EQUIVALENCE_SKIP=none bin/equivalence_test -t random_programs\n"
     << "----- program -----\n"
     << c.program.text << "-------------------";
  return os.str();
}

// KNOWN BUGS (temporary): seeds that show a bug not fixed yet, skipped so that the test guards
// everything else. Remove a seed when its bug is fixed; SCANGEN_EQUIVALENCE_SKIP=none runs them
// (see README.md). None of the default seeds 1..1000 is listed.
const std::set<uint64_t> kKnownBugSeeds = {
};

std::set<uint64_t> skipped_seeds() {
  const char* env = std::getenv("SCANGEN_EQUIVALENCE_SKIP");
  std::istringstream list(env ? env : "");
  std::set<uint64_t> seeds;
  bool known = true;
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "none") known = false;
    else if (!item.empty()) seeds.insert(std::stoull(item));
  }
  if (known) seeds.insert(kKnownBugSeeds.begin(), kKnownBugSeeds.end());
  return seeds;
}

struct Batch {
  std::string text;
  std::vector<size_t> cases;
  std::string source[2];  // emitted C++ at -O0 and -O2 (empty when emission failed)
  std::shared_ptr<CpuModule> module[2];
  std::string failure[2];
};

}  // namespace

// The random programs `count` seeds from `first_seed` on (less the skipped ones), each loaded at
// -O2 and run on the interpreter (interp[1]); `also(fn, case)` then sees each one kept. A program
// that does not compile is reported through `fail` and left out.
std::vector<Case> interpreted_cases(int64_t count, uint64_t first_seed,
                                    const std::function<void(const std::string&)>& fail,
                                    const std::function<void(const ir::Function&, const Case&)>& also = {}) {
  std::vector<Case> cases;
  const std::set<uint64_t> skip = skipped_seeds();
  for (int64_t i = 0; i < count; ++i) {
    Case c;
    c.seed = first_seed + uint64_t(i);
    if (skip.count(c.seed)) continue;
    c.program = generate_program(c.seed);
    std::optional<driver::Compilation> compilation;
    Outcome load = capture([&] {
      compilation.emplace(compiled(c.program.fn + ".scan", c.program.text, verified(2)));
      return std::vector<HostTensor>{};
    });
    if (load.kind != Outcome::Ok) {
      fail("seed " + std::to_string(c.seed) + ": the generated program does not compile:\n" + load.error);
      continue;
    }
    const ir::Program* program = &compilation->program();
    const ir::Function& fn = *program->find(c.program.fn);
    c.interp[1] = capture([&] { return interp::Interpreter().run(fn, c.program.args); });
    if (also) also(fn, c);
    cases.push_back(std::move(c));
  }
  return cases;
}

BOOST_AUTO_TEST_CASE(random_programs) {
  const int64_t count = std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_PROGRAMS", testing::ci_or_long(400, 2000)));
  const uint64_t first_seed = uint64_t(env_int("SCANGEN_EQUIVALENCE_SEED", 1));
  const size_t batch_size = size_t(std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_BATCH", 100)));
  const int verbose = int(env_int("SCANGEN_EQUIVALENCE_VERBOSE", 0));
  const bool use_cpu = env_int("SCANGEN_EQUIVALENCE_CPU", 1) != 0;
  const char* dump = std::getenv("SCANGEN_EQUIVALENCE_DUMP");
  if (dump && *dump) std::filesystem::create_directories(dump);
  // The generated code is compiled at -Og instead of the JIT's -O3 (later flags win): a batch of
  // 100 functions is about 800 kB of C++, which g++ compiles in about 5 s at -Og (6 s at -O0,
  // 10 s at -O1, 15 s at -O3) on this project's 2-core machine, and the compiler dominates the
  // test's run time (20 sources for 1000 programs). -Og still optimizes; the rest of the suite
  // (differential, e2e, equivalence_samples) covers -O3. With SCANGEN_CXXFLAGS set, its flags are
  // used instead of -Og. Every SCANGEN_EQUIVALENCE_O3_EVERY-th batch (default 10: batch 0, 10, ...,
  // so that the default 1000 programs include one) keeps the JIT's usual -O3: g++ once
  // miscompiled generated code at -O3 only, where -Og hid it.
  const CxxCompiler cxx_o3 = CxxCompiler::from_environment();
  CxxCompiler cxx = cxx_o3;
  if (!std::getenv("SCANGEN_CXXFLAGS")) cxx.flags.push_back("-Og");
  const int64_t o3_every = env_int("SCANGEN_EQUIVALENCE_O3_EVERY", 10);
  auto flags_of = [&](size_t batch) -> const CxxCompiler& {
    return o3_every > 0 && int64_t(batch) % o3_every == 0 ? cxx_o3 : cxx;
  };
  const auto start = std::chrono::steady_clock::now();

  // 1. Generate, compile at both levels and interpret.
  std::vector<Case> cases;
  int failures = 0;
  auto fail = [&](const std::string& message) {
    ++failures;
    BOOST_ERROR(message);
  };
  std::map<std::string, int> error_kinds;
  int ran_ok = 0;
  const std::set<uint64_t> skip = skipped_seeds();
  int64_t skipped = 0;
  for (int64_t i = 0; i < count; ++i) {
    Case c;
    c.seed = first_seed + uint64_t(i);
    if (skip.count(c.seed)) {
      ++skipped;
      continue;
    }
    c.program = generate_program(c.seed);
    if (verbose) std::cerr << "seed " << c.seed << " (interpreter)\n" << (verbose > 1 ? c.program.text : "") << std::flush;
    if (dump && *dump) {
      std::ofstream(std::filesystem::path(dump) / (c.program.fn + ".scan")) << c.program.text;
      // The arguments for `scangen run`; those JSON cannot express as .npy files beside them.
      std::string args;
      for (size_t a = 0; a < c.program.args.size(); ++a) {
        const HostTensor& t = c.program.args[a];
        const std::string& name = c.program.arg_names[a];
        if (t.rank() >= 2 && t.numel() == 0) {
          std::filesystem::path npy = std::filesystem::absolute(dump) / (c.program.fn + "." + name + ".npy");
          write_npy(npy, t);
          args += (a ? " " : "") + name + "=@" + npy.string();
        } else {
          args += (a ? " " : "") + format_arguments({name}, {t});
        }
      }
      std::ofstream(std::filesystem::path(dump) / (c.program.fn + ".args")) << args << "\n";
    }
    std::optional<ir::Program> programs[2];
    bool all_compiled = true;
    for (int level : {0, 2}) {
      Outcome load = capture([&] {
        programs[level / 2] = compiled(c.program.fn + ".scan", c.program.text, verified(level)).program();
        return std::vector<HostTensor>{};
      });
      if (load.kind != Outcome::Ok) {
        fail("seed " + std::to_string(c.seed) + ": the generated program does not compile at -O" + std::to_string(level) +
             ":\n" + load.error + "\n----- program -----\n" + c.program.text);
        all_compiled = false;
        break;
      }
    }
    if (!all_compiled) continue;
    const ir::Function* fn0 = programs[0]->find(c.program.fn);
    const ir::Function* fn2 = programs[1]->find(c.program.fn);
    BOOST_REQUIRE(fn0 && fn2);
    if (verbose) {
      // Emit this program alone (the batches emit many at once): a crash in the C++ emission then
      // comes right after this program's seed.
      std::cerr << "seed " << c.seed << " (emit C++)\n" << std::flush;
      for (int slot : {0, 1}) {
        Outcome emitted = capture([&] {
          driver::Options options = verified(slot * 2);
          options.stem = c.program.fn;
          driver::emit(*programs[slot], Backend::Cpu, options);
          return std::vector<HostTensor>{};
        });
        if (emitted.kind != Outcome::Ok)
          fail("seed " + std::to_string(c.seed) + ": emitting C++ at -O" + std::to_string(slot * 2) + " fails: " +
               emitted.error + "\n----- program -----\n" + c.program.text);
      }
    }
    c.interp[0] = capture([&] { return interp::Interpreter().run(*fn0, c.program.args); });
    c.interp[1] = capture([&] { return interp::Interpreter().run(*fn2, c.program.args); });
    std::string diff = difference(c.interp[0], c.interp[1]);
    if (!diff.empty())
      fail(report(c, "interpreter -O0 vs interpreter -O2", "interp -O0", c.interp[0], "interp -O2", c.interp[1], diff,
                  triage(c.program.fn, c.program.text, c.program.args, c.interp[0])));
    else if (c.interp[0].kind == Outcome::Internal)
      fail(report(c, "internal error in the interpreter", "interp -O0", c.interp[0], "interp -O2", c.interp[1],
                  c.interp[0].error));
    if (c.interp[0].kind == Outcome::Ok) ++ran_ok;
    else error_kinds[c.interp[0].error.substr(c.interp[0].error.find(' ') + 1)]++;
    cases.push_back(std::move(c));
  }
  const double interp_seconds = seconds_since(start);

  // 2. Batches: one .scan text per batch, compiled at both levels and emitted as C++.
  std::vector<Batch> batches;
  for (size_t i = 0; use_cpu && i < cases.size(); ++i) {
    if (i % batch_size == 0) batches.emplace_back();
    Batch& b = batches.back();
    Case& c = cases[i];
    c.batch = int(batches.size() - 1);
    c.line_offset = int(std::count(b.text.begin(), b.text.end(), '\n'));
    b.text += c.program.text + "\n";
    b.cases.push_back(i);
  }
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    Batch& b = batches[bi];
    for (int level : {0, 2}) {
      int slot = level / 2;
      Outcome emitted = capture([&] {
        driver::Options options = verified(level);
        options.stem = "equivalence" + std::to_string(bi);
        b.source[slot] = jit_source(compiled("batch" + std::to_string(bi) + ".scan", b.text, options, driver::Stage::Sources));
        return std::vector<HostTensor>{};
      });
      if (emitted.kind != Outcome::Ok) b.failure[slot] = "emitting C++ at -O" + std::to_string(level) + ": " + emitted.error;
    }
  }

  // 3. The C++ compiler, on two threads (a CpuJit per source; they share the on-disk cache). A source
  //    that is the same at both levels is compiled once.
  std::vector<std::pair<size_t, int>> jobs;
  for (size_t bi = 0; bi < batches.size(); ++bi)
    for (int slot : {0, 1})
      if (!batches[bi].source[slot].empty() && (slot == 0 || batches[bi].source[1] != batches[bi].source[0]))
        jobs.emplace_back(bi, slot);
  std::atomic<size_t> next_job{0};
  std::atomic<int> cache_hits{0};
  std::atomic<int> o3_sources{0};
  auto worker = [&] {
    for (size_t j; (j = next_job++) < jobs.size();) {
      Batch& b = batches[jobs[j].first];
      int slot = jobs[j].second;
      CpuJit jit(default_cache_dir(), flags_of(jobs[j].first));
      if (&flags_of(jobs[j].first) == &cxx_o3) ++o3_sources;
      Outcome built = capture([&] {
        b.module[slot] = jit.compile_and_load(b.source[slot]);
        if (jit.last_stats().cache_hit) ++cache_hits;
        return std::vector<HostTensor>{};
      });
      if (built.kind != Outcome::Ok) b.failure[slot] = "compiling the emitted C++: " + built.error;
    }
  };
  const auto compile_start = std::chrono::steady_clock::now();
  {
    auto other = std::async(std::launch::async, worker);
    worker();
    other.get();
  }
  const double compile_seconds = seconds_since(compile_start);
  for (Batch& b : batches)
    if (!b.module[1] && b.failure[1].empty() && b.source[1] == b.source[0]) b.module[1] = b.module[0], b.failure[1] = b.failure[0];

  // 4. Call every function of every batch at both levels and compare with the interpreter.
  int cpu_runs = 0;
  int other_errors = 0;  // runs where the CPU backend reported another of several errors
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    Batch& b = batches[bi];
    int blamed[2] = {0, 0};  // programs that fail alone where the batch failed
    for (size_t ci : b.cases) {
      const Case& c = cases[ci];
      if (verbose) std::cerr << "seed " << c.seed << " (cpu)\n" << std::flush;
      for (int slot : {0, 1}) {
        std::string level = slot == 0 ? "-O0" : "-O2";
        Outcome cpu;
        if (b.module[slot]) {
          cpu = relocate(capture([&] { return b.module[slot]->call(c.program.fn, c.program.args); }), c.line_offset);
        } else {
          // Find the program that breaks the batch: emit and compile it alone.
          cpu = capture([&] {
            driver::Options options = verified(slot * 2);
            options.stem = c.program.fn;
            driver::Compilation alone = compiled(c.program.fn + ".scan", c.program.text, options, driver::Stage::Sources);
            CpuJit jit(default_cache_dir(), flags_of(bi));
            auto module = jit.compile_and_load(jit_source(alone));
            return module->call(c.program.fn, c.program.args);
          });
          if (cpu.kind == Outcome::Internal) {
            ++blamed[slot];
            fail(report(c, "the CPU backend fails at " + level + " (" + b.failure[slot] + ")", "interp " + level,
                        c.interp[slot], "cpu " + level, cpu, cpu.error));
            continue;
          }
        }
        ++cpu_runs;
        // Each level against the interpreter at the same level (-O0 vs -O2 is checked above).
        if (several_errors(c.interp[slot], cpu)) {
          ++other_errors;
          if (verbose) std::cerr << "seed " << c.seed << ": another error on the CPU backend: " << cpu.error << "\n";
          continue;
        }
        std::string diff = difference(c.interp[slot], cpu);
        if (!diff.empty())
          fail(report(c, "interpreter vs CPU backend at " + level, "interp " + level, c.interp[slot], "cpu " + level, cpu, diff));
        else if (cpu.kind == Outcome::Internal)
          fail(report(c, "internal error in the CPU backend", "interp " + level, c.interp[slot], "cpu " + level, cpu, cpu.error));
      }
    }
    for (int slot : {0, 1})
      if (!b.module[slot] && blamed[slot] == 0)
        fail("a batch of seeds " + std::to_string(cases[b.cases.front()].seed) + ".." +
             std::to_string(cases[b.cases.back()].seed) + " fails at -O" + std::to_string(slot * 2) +
             " although each of its programs works alone: " + b.failure[slot]);
  }

  std::ostringstream summary;
  summary << count << " programs (seeds " << first_seed << ".." << first_seed + uint64_t(count) - 1 << "), "
          << skipped << " skipped, " << cases.size() << " compiled; on the interpreter at -O0 " << ran_ok
          << " ran to the end and " << (int64_t(cases.size()) - ran_ok) << " stopped on a run-time error; " << cpu_runs
          << " CPU runs in " << batches.size() << " batches (" << other_errors
          << " reported another of several errors); " << failures << " failures. Time: " << seconds_since(start)
          << " s (generate, compile and interpret " << interp_seconds << " s, C++ compiler " << compile_seconds
          << " s for " << jobs.size() << " sources (" << o3_sources << " at -O3), " << cache_hits
          << " of them found in the JIT cache)";
  std::cout << summary.str() << std::endl;
  if (verbose) {
    std::cerr << "run-time errors:\n";
    for (const auto& [message, n] : error_kinds) std::cerr << "  " << n << " x " << message << "\n";
  }
  BOOST_TEST(failures == 0);
}

// ---------------------------------------------------------------------------------------------
// The fast floating-point mode (random_programs_fast, see the top of the file).

namespace {

// The arguments with every float element moved by `ulps` ulps, up or down at random (a fixed
// seed): how a program's results react to rounding-sized changes of its inputs.
std::vector<HostTensor> nudged(const std::vector<HostTensor>& args, int ulps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> out;
  for (const HostTensor& a : args) {
    HostTensor t = a.clone();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const bool up = rng() & 1;
      auto nudge = [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        for (int u = 0; u < ulps; ++u)
          p[i] = std::nextafter(p[i], up ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity());
      };
      if (t.dtype() == DType::F32 && std::isfinite(t.data<float>()[i]) && t.data<float>()[i] != 0) nudge(t.data<float>());
      if (t.dtype() == DType::F64 && std::isfinite(t.data<double>()[i]) && t.data<double>()[i] != 0) nudge(t.data<double>());
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_programs_fast) {
  const int64_t count = std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_FAST_PROGRAMS", testing::ci_or_long(200, 600)));
  const uint64_t first_seed = uint64_t(env_int("SCANGEN_EQUIVALENCE_SEED", 1));
  const size_t batch_size = size_t(std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_BATCH", 100)));
  // -Og as random_programs (its comment says why), with the fast mode's flags and libmvec.
  CxxCompiler cxx = CxxCompiler::from_environment();
  if (!std::getenv("SCANGEN_CXXFLAGS")) cxx.flags.push_back("-Og");
  cxx.add_fast_fp();
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  auto fail = [&](const std::string& message) {
    ++failures;
    BOOST_ERROR(message);
  };
  std::vector<bool> ill_conditioned;
  std::vector<Case> cases = interpreted_cases(count, first_seed, fail, [&](const ir::Function& fn, const Case& c) {
    const Outcome moved = capture([&] { return interp::Interpreter().run(fn, nudged(c.program.args, 4, c.seed)); });
    ill_conditioned.push_back(!difference(c.interp[1], moved, Floats::Fast).empty());
  });
  struct FastBatch {
    std::vector<size_t> cases;
    std::string text;
    std::shared_ptr<CpuModule> module;
    std::string failure;
  };
  std::vector<FastBatch> batches;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i % batch_size == 0) batches.emplace_back();
    FastBatch& b = batches.back();
    cases[i].line_offset = int(std::count(b.text.begin(), b.text.end(), '\n'));
    b.text += cases[i].program.text + "\n";
    b.cases.push_back(i);
  }
  std::atomic<size_t> next{0};
  auto build = [&] {
    CpuJit jit(default_cache_dir(), cxx);
    for (size_t bi; (bi = next++) < batches.size();) {
      FastBatch& b = batches[bi];
      Outcome built = capture([&] {
        driver::Options options = verified(2);
        options.stem = "fast_equivalence" + std::to_string(bi);
        options.fp_mode = FpMode::Fast;
        b.module = jit.compile_and_load(
            jit_source(compiled("fast" + std::to_string(bi) + ".scan", b.text, options, driver::Stage::Sources)));
        return std::vector<HostTensor>{};
      });
      if (built.kind != Outcome::Ok) b.failure = built.error;
    }
  };
  {
    auto other = std::async(std::launch::async, build);
    build();
    other.get();
  }
  int runs = 0, other_errors = 0, unchecked = 0;
  for (FastBatch& b : batches) {
    if (!b.failure.empty()) {
      fail("a batch of seeds " + std::to_string(cases[b.cases.front()].seed) + ".." +
           std::to_string(cases[b.cases.back()].seed) + " fails in fast mode (SCANGEN_EQUIVALENCE_BATCH=1 finds the " +
           "program): " + b.failure);
      continue;
    }
    for (size_t ci : b.cases) {
      const Case& c = cases[ci];
      Outcome out = relocate(capture([&] { return b.module->call(c.program.fn, c.program.args); }), c.line_offset);
      ++runs;
      if (several_errors(c.interp[1], out)) {
        ++other_errors;
        continue;
      }
      const std::string diff = difference(c.interp[1], out, Floats::Fast);
      if (out.kind == Outcome::Internal)
        fail(report(c, "internal error in fast mode", "interp -O2", c.interp[1], "cpu fast -O2", out, out.error));
      else if (!diff.empty() && ill_conditioned[ci])
        ++unchecked;
      else if (!diff.empty())
        fail(report(c, "interpreter vs CPU backend in fast mode at -O2", "interp -O2", c.interp[1], "cpu fast -O2", out,
                    diff));
    }
  }
  std::cout << count << " programs (seeds " << first_seed << ".." << first_seed + uint64_t(count) - 1 << "), " << runs
            << " runs in fast mode in " << batches.size() << " batches (" << other_errors
            << " reported another of several errors, " << unchecked
            << " differed where the program is ill-conditioned); " << failures << " failures. Time: "
            << seconds_since(start) << " s" << std::endl;
  BOOST_TEST(failures == 0);
}

// ---------------------------------------------------------------------------------------------
// The same random programs through the CUDA kernels (docs/cuda.md), compared with the interpreter
// at -O2 (the -O0/-O2 agreement is checked above):
//   random_programs_cuda_emulation (ctest: equivalence_cuda_emulation): on the CPU emulation of
//     the kernels (2 blocks of 3 threads, real barriers); bit for bit, as the host's libm is used.
//   random_programs_cuda (ctest: equivalence_cuda, label gpu): on GPU 0. Integers and errors must
//     be the same; floats within 1e-5 relative and 1e-6 absolute, as the device's tanh, exp, sin,
//     ... may differ from the host's in the last bits. Without a device: "skipped: no CUDA
//     device ..." (ctest: skipped).
// Programs are batched (SCANGEN_EQUIVALENCE_BATCH functions per module): 100 as above for the
// emulation; 1 on a GPU, where NVRTC compiles each kernel on its first call from the whole
// module's source (-DSCANGEN_KERNEL=i), so a batch of 100 parsed 100 programs per kernel and the
// test took over 4 minutes on an H200. SCANGEN_EQUIVALENCE_CUDA_PROGRAMS: how many (default
// 1000: the programs of random_programs).

namespace {

// NVRTC compiles a kernel on its function's first call, one at a time (about 0.3 s each on an
// H200's host, so 5 minutes for the 1000 programs). Compiling them all first, on every core (NVRTC
// is thread-safe and the cache is written atomically), lets the calls find them in the cache. A
// kernel that fails to compile fails again, with its message, on its call.
template <class Batches>
void compile_kernels_in_parallel(const Batches& batches, const CudaDevice& device) {
  std::vector<std::pair<const std::string*, CudaCompileOptions>> jobs;
  for (const auto& b : batches) {
    if (!b.program) continue;
    for (const CudaFunctionInfo& fn : b.program->functions()) {
      jobs.emplace_back(&b.files.at(0).contents, kernel_compile_options(fn, device.info()));
    }
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    const CudaCompiler compiler;
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        compiler.compile(*jobs[i].first, jobs[i].second);
      } catch (const std::exception&) {
        // reported by the call
      }
    }
  };
  std::vector<std::thread> threads(std::max(1u, std::thread::hardware_concurrency()));
  for (std::thread& t : threads) t = std::thread(work);
  for (std::thread& t : threads) t.join();
}

void check_cuda_column(bool on_gpu) {
  const int64_t count = std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_CUDA_PROGRAMS", testing::ci_or_long(300, 1000)));
  const uint64_t first_seed = uint64_t(env_int("SCANGEN_EQUIVALENCE_SEED", 1));
  const size_t batch_size = size_t(std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_BATCH", on_gpu ? 1 : 100)));
  const std::string column = on_gpu ? "cuda" : "cuda-emulation";
  std::shared_ptr<CudaDevice> device;
  if (on_gpu) {
    try {
      device = cuda_device(0);
    } catch (const RuntimeError& e) {
      std::cout << "skipped: " << e.what() << std::endl;
      return;
    }
  }
  CxxCompiler cxx = CxxCompiler::from_environment();
  if (!std::getenv("SCANGEN_CXXFLAGS")) cxx.flags.push_back("-Og");  // as random_programs
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  auto fail = [&](const std::string& message) {
    ++failures;
    BOOST_ERROR(message);
  };

  std::vector<Case> cases = interpreted_cases(count, first_seed, fail);

  struct CudaBatch {
    std::vector<size_t> cases;
    std::string text;
    std::vector<codegen::EmittedFile> files;
    std::unique_ptr<CudaEmulation> emulation;
    std::unique_ptr<CudaProgram> program;
    std::string failure;
  };
  std::vector<CudaBatch> batches;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i % batch_size == 0) batches.emplace_back();
    CudaBatch& b = batches.back();
    cases[i].line_offset = int(std::count(b.text.begin(), b.text.end(), '\n'));
    b.text += cases[i].program.text + "\n";
    b.cases.push_back(i);
  }
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    CudaBatch& b = batches[bi];
    Outcome emitted = capture([&] {
      driver::Options options = verified(2, on_gpu ? Backend::Cuda : Backend::CudaEmulation);
      options.stem = "cuda_equivalence" + std::to_string(bi);
      b.files = compiled("batch" + std::to_string(bi) + ".scan", b.text, options, driver::Stage::Sources).targets().at(0).sources;
      return std::vector<HostTensor>{};
    });
    if (emitted.kind != Outcome::Ok) b.failure = "emitting CUDA: " + emitted.error;
  }
  // The emulated kernels are C++: compiled on two threads, as above. The GPU's kernels are
  // compiled by NVRTC on each function's first call.
  std::atomic<size_t> next{0};
  auto build = [&] {
    CpuJit jit(default_cache_dir(), cxx);
    for (size_t bi; (bi = next++) < batches.size();) {
      CudaBatch& b = batches[bi];
      if (!b.failure.empty()) continue;
      Outcome built = capture([&] {
        if (on_gpu) b.program = std::make_unique<CudaProgram>(device, b.files.at(0).contents, b.files.at(1).contents);
        else b.emulation = std::make_unique<CudaEmulation>(b.files.at(0).contents, b.files.at(1).contents, jit);
        return std::vector<HostTensor>{};
      });
      if (built.kind != Outcome::Ok) b.failure = "building the kernels: " + built.error;
    }
  };
  if (on_gpu) {
    build();
    compile_kernels_in_parallel(batches, *device);
  } else {
    auto other = std::async(std::launch::async, build);
    build();
    other.get();
  }

  int runs = 0;
  int other_errors = 0;  // runs that reported another of several errors (see several_errors)
  for (CudaBatch& b : batches) {
    if (!b.failure.empty()) {
      fail("a batch of seeds " + std::to_string(cases[b.cases.front()].seed) + ".." +
           std::to_string(cases[b.cases.back()].seed) + " fails on " + column + " (SCANGEN_EQUIVALENCE_BATCH=1 finds the program): " +
           b.failure);
      continue;
    }
    for (size_t ci : b.cases) {
      const Case& c = cases[ci];
      Outcome out = relocate(capture([&] {
                               return on_gpu ? b.program->call(c.program.fn, c.program.args)
                                             : b.emulation->call(c.program.fn, c.program.args);
                             }),
                             c.line_offset);
      ++runs;
      if (several_errors(c.interp[1], out)) {
        ++other_errors;
        continue;
      }
      std::string diff = difference(c.interp[1], out, on_gpu ? Floats::WithinUlps : Floats::Exact);
      if (!diff.empty())
        fail(report(c, "interpreter vs " + column + " at -O2", "interp -O2", c.interp[1], column + " -O2", out, diff));
      else if (out.kind == Outcome::Internal)
        fail(report(c, "internal error on " + column, "interp -O2", c.interp[1], column + " -O2", out, out.error));
    }
    b.program.reset();  // its module and device memory
    b.emulation.reset();
  }
  std::cout << count << " programs (seeds " << first_seed << ".." << first_seed + uint64_t(count) - 1 << "), " << runs
            << " runs on " << column << " in " << batches.size() << " batches (" << other_errors
            << " reported another of several errors); " << failures
            << " failures. Time: " << seconds_since(start) << " s" << std::endl;
  BOOST_TEST(failures == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_programs_cuda_emulation) { check_cuda_column(false); }
BOOST_AUTO_TEST_CASE(random_programs_cuda) { check_cuda_column(true); }

// ---------------------------------------------------------------------------------------------
// random_programs_threads (ctest: equivalence_threads): the random programs on the CPU backend
// compiled for 2 and for 3 threads (--threads; the CPU pass `threads`), against the interpreter at
// -O2, bit for bit, errors included. ctest sets SCANGEN_PARALLEL_GRAIN=1, so that every parallel
// loop of these small programs is split over the threads. SCANGEN_EQUIVALENCE_THREADS_PROGRAMS:
// how many (default 300: the seeds' first 300; the whole 1000 take about 3 times as long).

BOOST_AUTO_TEST_CASE(random_programs_threads) {
  const int64_t count = std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_THREADS_PROGRAMS", testing::ci_or_long(150, 600)));
  const uint64_t first_seed = uint64_t(env_int("SCANGEN_EQUIVALENCE_SEED", 1));
  const size_t batch_size = size_t(std::max<int64_t>(1, env_int("SCANGEN_EQUIVALENCE_BATCH", 100)));
  CxxCompiler cxx = CxxCompiler::from_environment();
  if (!std::getenv("SCANGEN_CXXFLAGS")) cxx.flags.push_back("-Og");  // as random_programs
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  auto fail = [&](const std::string& message) {
    ++failures;
    BOOST_ERROR(message);
  };
  std::vector<Case> cases = interpreted_cases(count, first_seed, fail);

  // One source per batch and thread count, compiled on two threads.
  struct ThreadBatch {
    std::vector<size_t> cases;
    std::string text;
    int threads = 2;
    std::string source;
    std::shared_ptr<CpuModule> module;
    std::string failure;
  };
  std::vector<ThreadBatch> batches;
  for (int threads : {2, 3})
    for (size_t i = 0; i < cases.size(); ++i) {
      if (i % batch_size == 0) batches.emplace_back().threads = threads;
      ThreadBatch& b = batches.back();
      cases[i].line_offset = int(std::count(b.text.begin(), b.text.end(), '\n'));
      b.text += cases[i].program.text + "\n";
      b.cases.push_back(i);
    }
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    ThreadBatch& b = batches[bi];
    Outcome emitted = capture([&] {
      driver::Options options = verified(2);
      options.stem = "threads_equivalence" + std::to_string(bi);
      options.threads = b.threads;
      b.source = jit_source(compiled("threads_batch" + std::to_string(bi) + ".scan", b.text, options, driver::Stage::Sources));
      return std::vector<HostTensor>{};
    });
    if (emitted.kind != Outcome::Ok) b.failure = "emitting C++: " + emitted.error;
  }
  std::atomic<size_t> next{0};
  auto build = [&] {
    CpuJit jit(default_cache_dir(), cxx);
    for (size_t bi; (bi = next++) < batches.size();) {
      ThreadBatch& b = batches[bi];
      if (!b.failure.empty()) continue;
      Outcome built = capture([&] {
        b.module = jit.compile_and_load(b.source);
        return std::vector<HostTensor>{};
      });
      if (built.kind != Outcome::Ok) b.failure = "compiling the emitted C++: " + built.error;
    }
  };
  {
    auto other = std::async(std::launch::async, build);
    build();
    other.get();
  }

  int runs = 0, other_errors = 0, parallel_sources = 0;
  for (ThreadBatch& b : batches) {
    const std::string column = "cpu --threads " + std::to_string(b.threads);
    if (!b.failure.empty()) {
      fail("a batch of seeds " + std::to_string(cases[b.cases.front()].seed) + ".." +
           std::to_string(cases[b.cases.back()].seed) + " fails on " + column + ": " + b.failure);
      continue;
    }
    if (b.source.find("scangen_rt_v1::parallel_") != std::string::npos) ++parallel_sources;
    for (size_t ci : b.cases) {
      const Case& c = cases[ci];
      // The batch's text puts the program at its own line offset (the same in every batch).
      Outcome out = relocate(capture([&] { return b.module->call(c.program.fn, c.program.args); }), c.line_offset);
      ++runs;
      if (several_errors(c.interp[1], out)) {
        ++other_errors;
        continue;
      }
      std::string diff = difference(c.interp[1], out, Floats::Exact);
      if (!diff.empty())
        fail(report(c, "interpreter vs " + column + " at -O2", "interp -O2", c.interp[1], column + " -O2", out, diff));
      else if (out.kind == Outcome::Internal)
        fail(report(c, "internal error on " + column, "interp -O2", c.interp[1], column + " -O2", out, out.error));
    }
  }
  // The test means something only if the programs have parallel loops.
  BOOST_TEST(parallel_sources == int(batches.size()));
  std::cout << cases.size() << " programs, " << runs << " runs on the CPU backend at 2 and 3 threads in "
            << batches.size() << " batches (" << other_errors << " reported another of several errors); "
            << failures << " failures. Time: " << seconds_since(start) << " s" << std::endl;
  BOOST_TEST(failures == 0);
}

// ---------------------------------------------------------------------------------------------
// Every run of every samples/**/NAME.runs.json manifest (the contract's seven examples are
// samples/contract/), through the real CLI: `scangen run NAME.scan --backend B -OL [--fn F] ARGS`
// for B in interp, cpu and L in 0, 2 must give the same exit status, the same stdout and the same
// stderr, and never an internal error (exit 70) or a crash. tests/e2e checks each run's expected
// output at the default level (-O2); this checks that -O0 agrees exactly, on both backends. The
// CPU backend compiles with the JIT's usual flags (-O3), so its cache entries at -O2 are those of
// the e2e tests.

namespace {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = 0;
  std::string out, err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `command` run in `dir`, stdout and stderr captured separately (run_process captures both
// through one pipe; a shell that execs the command with stderr sent to a file separates them).
CliResult run_cli(const fs::path& dir, const std::vector<std::string>& command, const fs::path& err_file) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\" 2>\"$0\"", err_file.string(),
                                   dir.string()};
  argv.insert(argv.end(), command.begin(), command.end());
  ProcessResult r = run_process(argv);
  return CliResult{r.exit_code, r.output, read_text(err_file)};
}

std::string shown(const std::vector<std::string>& command) {
  std::string s;
  for (const std::string& a : command) {
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=./@,:+") ==
                                   std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(samples) {
  const char* dir_env = std::getenv("SCANGEN_EQUIVALENCE_SAMPLES");
  const fs::path samples = dir_env && *dir_env ? fs::path(dir_env) : fs::path(SCANGEN_SOURCE_DIR) / "samples";
  std::vector<fs::path> manifests;
  for (const auto& entry : fs::recursive_directory_iterator(samples)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > 10 && name.compare(name.size() - 10, 10, ".runs.json") == 0)
      manifests.push_back(entry.path());
  }
  std::sort(manifests.begin(), manifests.end());
  BOOST_REQUIRE_MESSAGE(!manifests.empty() && (dir_env || manifests.size() >= 7),
                        "expected the samples (the contract's examples at least) in " + samples.string());

  // One manifest (one .scan file) per job, two at a time: the runs of one file after each other,
  // so that each level of a file is compiled once and then found in the JIT cache.
  std::vector<std::string> failures(manifests.size());
  std::vector<int> runs(manifests.size(), 0);
  std::atomic<size_t> next{0};
  auto worker = [&](int id) {
    const fs::path err_file = fs::temp_directory_path() / ("scangen-equivalence-" + std::to_string(getpid()) + "-" +
                                                           std::to_string(id) + ".stderr");
    for (size_t m; (m = next++) < manifests.size();) {
      const fs::path& manifest = manifests[m];
      std::string stem = manifest.filename().string();
      stem.resize(stem.size() - 10);
      const fs::path dir = manifest.parent_path();
      const std::string scan_file = stem + ".scan";
      std::string& failure = failures[m];
      try {
        nlohmann::json doc = nlohmann::json::parse(read_text(manifest));
        for (const nlohmann::json& run : doc.at("runs")) {
          std::vector<std::string> tail;
          if (run.contains("fn")) tail = {"--fn", run.at("fn").get<std::string>()};
          for (const nlohmann::json& a : run.at("args")) tail.push_back(a.get<std::string>());
          std::optional<CliResult> first;
          std::vector<std::string> first_command;
          for (const char* backend : {"interp", "cpu"})
            for (const char* level : {"-O0", "-O2"}) {
              std::vector<std::string> command = {SCANGEN_EXECUTABLE, "run", scan_file, "--backend", backend, level};
              command.insert(command.end(), tail.begin(), tail.end());
              CliResult r = run_cli(dir, command, err_file);
              ++runs[m];
              std::string where = "in " + dir.string() + ": " + shown(command) + "\n";
              if (r.exit_code == 70 || r.exit_code >= 128)
                failure += where + (r.exit_code == 70 ? "  an internal error (exit 70)" : "  a crash (signal " +
                                    std::to_string(r.exit_code - 128) + ")") + "\n  stderr: " + r.err + "\n";
              if (!first) {
                first = r;
                first_command = command;
              } else if (r.exit_code != first->exit_code || r.out != first->out || r.err != first->err) {
                auto outcome = [](const CliResult& x) {
                  return "    exit " + std::to_string(x.exit_code) + "\n    stdout: " + x.out + (x.out.empty() ? "\n" : "") +
                         "    stderr: " + x.err + (x.err.empty() ? "\n" : "");
                };
                failure += where + outcome(r) + "  differs from " + shown(first_command) + "\n" + outcome(*first);
              }
            }
        }
      } catch (const std::exception& e) {
        failure += manifest.string() + ": " + e.what() + "\n";
      }
    }
    std::error_code ignored;
    fs::remove(err_file, ignored);
  };
  {
    auto other = std::async(std::launch::async, worker, 1);
    worker(0);
    other.get();
  }
  int total = 0;
  for (size_t m = 0; m < manifests.size(); ++m) {
    total += runs[m];
    BOOST_TEST(failures[m].empty(), fs::relative(manifests[m], samples).string() << ":\n" << failures[m]);
  }
  std::cout << manifests.size() << " manifests, " << total << " runs of scangen" << std::endl;
}
