// The scangen command line: run, compile, ir, check.
//
// Exit status: 0 success; 1 a user error (a bad program, a bad argument, a run-time error of the
// program); 2 bad command-line usage; 70 an internal error (a scangen bug).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <iomanip>
#include <map>

#include "codegen/backend.h"
#include "codegen/lir_passes.h"
#include "codegen/lower.h"
#include "support/large_stack.h"
#include "driver/driver.h"
#include "ir/interpreter.h"
#include "ir/dot.h"
#include "ir/printer.h"
#include "passes/pass.h"
#include "scangen/scangen.h"
#include "scangen/runtime/cpu_jit.h"
#include "scangen/runtime/cuda_program.h"
#include "scangen/runtime/files.h"
#include "scangen/runtime/errors.h"
#include "scangen/runtime/json_io.h"
#include "scangen/runtime/npy.h"

#ifndef SCANGEN_VERSION
#define SCANGEN_VERSION "0.0.0"
#endif

namespace {

using namespace scangen;

constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 70;

// Thrown for a bad command line found after parsing (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Options of the rewrites, shared by run, compile and ir.
struct PassOptions {
  int opt_level = 2;
  std::vector<std::string> only;
  std::vector<std::string> disabled;
  bool verify_each = false;
  bool stats = false;
  bool print_after_all = false;
  std::vector<std::string> include_dirs;  // -I: where imported headers are looked for
};

struct RunOptions {
  std::string file;
  std::string fn;
  std::string backend = "cpu";
  std::string fp = "strict";
  int threads = 1;
  PassOptions passes;
  std::string output;
  std::vector<std::string> assignments;
};

struct FileOptions {
  std::string file;
  std::vector<std::string> include_dirs;
  bool cuda = false;  // also what keeps the program from the CUDA backend
};

// --fp strict|fast: the floating-point mode of generated CPU code (scangen/fp_mode.h).
void add_fp_option(CLI::App* cmd, std::string& fp, const char* what) {
  std::vector<std::string> names;
  for (const FpModeName& m : kFpModeNames) names.emplace_back(m.name);
  cmd->add_option("--fp", fp, what)->check(CLI::IsMember(names));
}

// Fast mode is generated CPU code's: the interpreter defines the strict results, and the CUDA
// backend has no fast mode.
void check_fp_backend(const std::string& fp, const std::string& backend) {
  if (fp != "strict" && backend != "cpu")
    throw UsageError("--fp " + fp + " is for the cpu backend only (" + backend + " computes strict results)");
}

// -I DIR, for the headers that `import` statements name (after the .scan file's directory).
void add_include_option(CLI::App* cmd, std::vector<std::string>& dirs) {
  cmd->add_option("-I", dirs, "Look for imported C++ headers in this directory too (repeatable)")
      ->allow_extra_args(false);
}

// No rewrites: what `check` analyzes and what `ir` prints by default.
PassOptions without_rewrites() {
  PassOptions o;
  o.opt_level = 0;
  return o;
}

struct IrOptions {
  std::string file;
  PassOptions passes = without_rewrites();
  std::string format = "text";
  bool list_passes = false;
  bool lir = false;                    // print the loop IR instead
  std::string target = "cpu";          // whose loop-IR passes run: cpu (those of every backend) or cuda
  std::string fp = "strict";           // fast: the fast mode's loop-IR passes run too
  std::vector<std::string> lir_passes; // run only these loop-IR passes
  bool list_lir_passes = false;
  int threads = 1;                     // what the CPU pass `threads` plans for
};

// --threads N: the threads the CPU code runs on (docs/cli.md). CLI11 runs the check on the text
// before converting it, so a bad value never reaches the option.
void add_threads_option(CLI::App* cmd, int& threads, const char* what) {
  cmd->add_option("--threads", threads, what)->check([](const std::string& text) {
    const std::string why = "the thread count must be a whole number from 0 (every hardware thread) to " +
                            std::to_string(kMaxThreads) + ", got '" + text + "'";
    if (text.empty() || text.size() > 4) return why;
    for (char c : text)
      if (c < '0' || c > '9') return why;
    return std::stoi(text) <= kMaxThreads ? std::string() : why;
  });
}

void add_pass_options(CLI::App* cmd, PassOptions& o, bool for_ir) {
  cmd->add_option("-O", o.opt_level, for_ir ? "Rewrites: -O0 (none, the default here) or -O2 (all)"
                                            : "Rewrites: -O0 (none) or -O2 (all, the default)")
      ->check(CLI::IsMember({0, 2}));
  // One name per occurrence (or a comma-separated list): `--disable-pass X u=[1]` must leave the
  // argument to the positionals.
  cmd->add_option("--disable-pass", o.disabled, "Skip rewrites (repeatable, or comma-separated; see scangen ir --list-passes)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("--verify-each", o.verify_each, "Run the IR verifier after every rewrite");
  add_include_option(cmd, o.include_dirs);
  cmd->add_flag("--stats", o.stats, "Print how many times each rewrite fired (on stderr)");
  if (for_ir) {
    cmd->add_option("--passes", o.only, "Run exactly these rewrites, in this order (comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->add_flag("--print-after-all", o.print_after_all, "Print the IR after every rewrite");
  }
}

bool has_param(const FunctionInfo& fn, const std::string& name) {
  for (const TensorSpec& param : fn.params)
    if (param.name == name) return true;
  return false;
}

// "'a' and 'b'" and "--fn a or --fn b".
std::string quoted_list(const std::vector<std::string>& names, const char* prefix, const char* last_sep) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_sep : ", ";
    text += prefix[0] ? prefix + names[i] : "'" + names[i] + "'";
  }
  return text;
}

std::string ran_by_default(const FunctionInfo& ran) {
  return "; --fn was not given, so scangen ran '" + ran.name + "', the file's first function";
}

// The end of an argument mismatch when `run` took the file's first function because --fn was not
// given: it says so, and names the other functions that take exactly the arguments given, else
// those that take every one of them, else those with the parameter `unknown` that the first
// function lacks ("" for a missing argument).
std::string default_function_hint(const std::vector<FunctionInfo>& fns, const FunctionInfo& ran,
                                  const std::map<std::string, std::string>& given, const std::string& unknown) {
  std::string hint = ran_by_default(ran);
  std::vector<std::string> exact, all, some;
  for (const FunctionInfo& fn : fns) {
    if (fn.name == ran.name) continue;
    bool takes_all = !given.empty();
    for (const auto& entry : given) takes_all = takes_all && has_param(fn, entry.first);
    if (takes_all && fn.params.size() == given.size()) exact.push_back(fn.name);
    if (takes_all) all.push_back(fn.name);
    if (!unknown.empty() && has_param(fn, unknown)) some.push_back(fn.name);
  }
  auto suggest = [&](const std::vector<std::string>& names, const std::string& verb_one, const std::string& verb_many) {
    return hint + "; " + quoted_list(names, "", " and ") + (names.size() == 1 ? verb_one : verb_many) + ": add " +
           quoted_list(names, "--fn ", " or ");
  };
  if (!exact.empty()) return suggest(exact, " takes exactly the arguments given", " take exactly the arguments given");
  if (!all.empty()) return suggest(all, " takes every argument given", " take every argument given");
  if (!some.empty()) return suggest(some, " has a parameter '" + unknown + "'", " have a parameter '" + unknown + "'");
  if (!unknown.empty()) return hint + "; no other function of the file has a parameter '" + unknown + "'";
  return hint;
}

// NAME=VALUE pairs, matched to the function's parameters. `by_default`: the function is the first
// of `fns`, taken because --fn was not given.
std::vector<HostTensor> parse_arguments(const std::vector<FunctionInfo>& fns, const FunctionInfo& fn, bool by_default,
                                        const std::vector<std::string>& assignments) {
  std::map<std::string, std::string> given;
  for (const std::string& a : assignments) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("expected NAME=VALUE, got '" + a + "'");
    std::string name = a.substr(0, eq);
    if (!given.emplace(name, a.substr(eq + 1)).second)
      throw RuntimeError("argument '" + name + "' is given more than once");
  }
  auto hint = [&](const std::string& wanted) {
    return by_default && fns.size() > 1 ? default_function_hint(fns, fn, given, wanted) : std::string();
  };
  std::string params;
  for (const TensorSpec& param : fn.params) params += (params.empty() ? "" : ", ") + param.name;
  for (const auto& [name, value] : given)
    if (!has_param(fn, name))
      throw RuntimeError("'" + fn.name + "' has no parameter '" + name + "' (its parameters: " +
                         (params.empty() ? "none" : params) + ")" + hint(name));
  std::vector<HostTensor> values;
  for (const TensorSpec& param : fn.params) {
    auto it = given.find(param.name);
    if (it == given.end())
      throw RuntimeError("missing argument '" + param.name + "' for '" + fn.name + fn.signature + "'" + hint(""));
    try {
      values.push_back(parse_argument(it->second, param.dtype, param.rank, param.name));
    } catch (const RuntimeError& e) {
      // A value that does not fit may be meant for another function's parameter of that name.
      if (!by_default || fns.size() < 2) throw;
      throw RuntimeError(e.what() + ran_by_default(fn));
    }
  }
  return values;
}

// A pass name that the table does not have is a mistake on the command line.
void check_pass_names(const PassOptions& o) {
  for (const std::vector<std::string>* names : {&o.only, &o.disabled})
    for (const std::string& name : *names)
      if (!passes::find_pass(name)) {
        std::string known;
        for (const passes::PassInfo& p : passes::pass_table()) known += (known.empty() ? "" : ", ") + std::string(p.name);
        throw UsageError("unknown pass '" + name + "' (the passes: " + known + ")");
      }
}

// --stats: a title, then `  NAME: COUNT` per pass (on stderr, after the program's output).
template <class Counts> void print_stats(const char* title, const Counts& counts) {
  std::cerr << title << "\n";
  for (const auto& [pass, n] : counts) std::cerr << "  " << pass << ": " << n << "\n";
}

// The rewrites' counts, then why some did not fire (parallel-scan's reasons).
void print_pass_stats(const std::map<std::string, int>& counts, const std::vector<std::string>& notes) {
  print_stats("rewrites that fired:", counts);
  if (notes.empty()) return;
  std::cerr << "rewrites that did not fire:\n";
  for (const std::string& n : notes) std::cerr << "  " << n << "\n";
}

// Parses, analyzes and rewrites a file, printing its diagnostics (and what the options ask for).
std::optional<ir::Program> load_program(Driver& driver, const std::string& file, const PassOptions& o,
                                        FpMode fp = FpMode::Strict) {
  check_pass_names(o);
  PipelineOptions options;
  options.fp_mode = fp;
  options.opt_level = o.opt_level;
  options.only_passes = o.only;
  options.disabled_passes.insert(o.disabled.begin(), o.disabled.end());
  options.verify_each = o.verify_each;
  options.include_dirs.assign(o.include_dirs.begin(), o.include_dirs.end());
  if (o.print_after_all)
    options.after_each_pass = [&](const std::string& pass, const ir::Program& p) {
      std::cout << "// IR after " << pass << "\n" << ir::print_program(p) << "\n";
    };
  auto program = driver.load_file(file, options);
  std::cerr << driver.rendered_diagnostics();
  if (program && o.stats) print_pass_stats(driver.pass_stats(), driver.pass_notes());
  return program;
}

// Built on the JIT API (include/scangen/scangen.h), like any host program.
int cmd_run(const RunOptions& o) {
  check_pass_names(o.passes);
  check_fp_backend(o.fp, o.backend);
  JitOptions options;
  options.backend = *backend_from_name(o.backend);
  options.fp_mode = *fp_mode_from_name(o.fp);
  if (o.threads != 1 && options.backend != Backend::Cpu)
    throw UsageError("--threads applies to the cpu backend, not to --backend " + o.backend);
  options.threads = o.threads;
  options.opt_level = o.passes.opt_level;
  options.disabled_passes = o.passes.disabled;
  options.verify_each = o.passes.verify_each;
  options.include_dirs.assign(o.passes.include_dirs.begin(), o.passes.include_dirs.end());
  std::optional<Module> module;
  try {
    module = compile_file(o.file, options);
  } catch (const CompileError& e) {
    std::cerr << e.what();
    return kExitUserError;
  }
  std::cerr << module->warnings();
  if (o.passes.stats) print_pass_stats(module->pass_stats(), module->pass_notes());
  if (module->functions().empty()) throw RuntimeError("'" + o.file + "' has no functions");
  const FunctionInfo* fn = &module->functions().front();
  if (!o.fn.empty()) {
    try {
      fn = &module->function(o.fn);
    } catch (const RuntimeError& e) {
      std::cerr << e.what();
      return kExitUserError;
    }
  }
  std::vector<HostTensor> args = parse_arguments(module->functions(), *fn, o.fn.empty(), o.assignments);
  std::vector<HostTensor> results;
  try {
    results = module->call(fn->name, args);
  } catch (const ProgramError& e) {
    std::cerr << e.what();
    return kExitUserError;
  }
  if (!o.output.empty()) {
    NamedTensors named;
    for (size_t i = 0; i < results.size(); ++i) named.push_back({fn->results[i].name, results[i]});
    write_npz(o.output, named);
  } else {
    std::cout << format_results(results) << "\n";
  }
  return 0;
}

struct CompileOptions {
  std::string file;
  std::string output_dir;
  std::string depfile;
  std::string cpp_namespace = "scangen_generated";
  std::string target = "cpu";
  std::string fp = "strict";
  int threads = 1;
  PassOptions passes;
};

// A Makefile rule "outputs: inputs" (absolute paths, spaces escaped) for build systems: the
// generated files depend on the .scan file and every header it imports.
std::string make_depfile(const std::vector<std::filesystem::path>& outputs,
                         const std::vector<std::filesystem::path>& inputs) {
  auto escaped = [](const std::filesystem::path& p) {
    std::string text;
    for (char c : std::filesystem::absolute(p).lexically_normal().string()) {
      if (c == ' ' || c == '#') text += '\\';
      if (c == '$') text += '$';
      text += c;
    }
    return text;
  };
  std::string rule;
  for (const auto& out : outputs) rule += (rule.empty() ? "" : " ") + escaped(out);
  rule += ":";
  for (const auto& in : inputs) rule += " " + escaped(in);
  return rule + "\n";
}

int cmd_compile(const CompileOptions& o) {
  check_fp_backend(o.fp, o.target);
  if (o.threads != 1 && o.target == "cuda") throw UsageError("--threads applies to the CPU code: add --target cpu,cuda");
  Driver driver;
  auto program = load_program(driver, o.file, o.passes, *fp_mode_from_name(o.fp));
  if (!program) return kExitUserError;
  if (o.target.find("cuda") != std::string::npos && !driver.check_cuda_imports(*program)) {
    std::cerr << driver.rendered_diagnostics();
    return kExitUserError;
  }
  codegen::EmitOptions emit;
  emit.stem = std::filesystem::path(o.file).stem().string();
  emit.cpp_namespace = o.cpp_namespace;
  emit.fp_mode = *fp_mode_from_name(o.fp);
  emit.threads = o.threads;
  std::error_code ec;
  std::filesystem::create_directories(o.output_dir, ec);
  if (ec) throw RuntimeError("cannot create the output directory '" + o.output_dir + "': " + ec.message());
  std::vector<std::filesystem::path> written;
  for (const std::string& target : {std::string("cpu"), std::string("cuda")}) {
    if (o.target.find(target) == std::string::npos) continue;
    for (const codegen::EmittedFile& f : codegen::generate(*program, target, emit)) {
      std::filesystem::path path = std::filesystem::path(o.output_dir) / f.filename;
      write_file_atomically(path, f.contents);
      written.push_back(path);
    }
  }
  if (!o.depfile.empty()) write_file_atomically(o.depfile, make_depfile(written, driver.dependencies()));
  return 0;
}

int cmd_check(const FileOptions& o) {
  Driver driver;
  PassOptions passes = without_rewrites();
  passes.include_dirs = o.include_dirs;
  auto program = load_program(driver, o.file, passes);
  if (!program) return kExitUserError;
  if (o.cuda && !driver.check_cuda_imports(*program)) {
    std::cerr << driver.rendered_diagnostics();
    return kExitUserError;
  }
  return 0;
}

void list_passes() {
  std::cout << "The rewrites, in pipeline order (all run at -O2):\n";
  for (const passes::PassInfo& p : passes::pass_table())
    std::cout << "  " << std::left << std::setw(30) << p.name << p.summary << "\n";
}

const char* stage_name(codegen::LirStage stage) {
  switch (stage) {
    case codegen::LirStage::Lowering: return "all";
    case codegen::LirStage::Fast: return "fast";
    case codegen::LirStage::Cpu: return "cpu";
    case codegen::LirStage::Cuda: return "cuda";
  }
  return "?";
}

void list_lir_passes() {
  std::cout << "The loop-IR passes, in pipeline order (the fast ones with --fp fast only, the cpu ones for the CPU\n"
               "backend only, the cuda ones for the CUDA backend only):\n";
  for (const codegen::LirPassInfo& p : codegen::lir_pass_table())
    std::cout << "  " << std::left << std::setw(24) << p.name << std::setw(6) << stage_name(p.stage) << p.summary << "\n";
}

void check_lir_pass_names(const IrOptions& o) {
  for (const std::string& name : o.lir_passes) {
    const codegen::LirPassInfo* pass = codegen::find_lir_pass(name);
    if (!pass) {
      std::string known;
      for (const codegen::LirPassInfo& p : codegen::lir_pass_table()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      throw UsageError("unknown loop-IR pass '" + name + "' (the passes: " + known + ")");
    }
    if (pass->stage == codegen::LirStage::Cuda && o.target != "cuda")
      throw UsageError("the loop-IR pass '" + name + "' runs for the CUDA backend: add --target cuda");
    if (pass->stage == codegen::LirStage::Fast && o.fp != "fast")
      throw UsageError("the loop-IR pass '" + name + "' runs in the fast floating-point mode: add --fp fast");
    if (pass->stage == codegen::LirStage::Cpu && o.target != "cpu")
      throw UsageError("the loop-IR pass '" + name + "' runs for the CPU backend: leave out --target cuda");
  }
}

// `scangen ir FILE --lir`: the program rewritten as the other options say, lowered, and the
// loop-IR passes of the target run (all, or those of --lir-passes); printed after each pass with
// --print-after-all, how many changes each made with --stats.
int print_loop_ir(const ir::Program& program, const IrOptions& o) {
  codegen::LirPipelineOptions options;
  options.only = o.lir_passes;
  options.fp_mode = *fp_mode_from_name(o.fp);
  if (o.passes.print_after_all)
    options.after_each = [&](const codegen::LirPassInfo& pass, const lir::Module& m) {
      std::cout << "// loop IR after " << pass.name << "\n" << lir::print_module(m) << "\n";
    };
  std::vector<std::pair<std::string, int>> counts;
  options.count = [&](const codegen::LirPassInfo& pass, int n) { counts.emplace_back(pass.name, n); };
  const lir::Module m = scangen::with_large_stack([&] {
    lir::Module lowered = codegen::lower_program(program, options);
    if (o.target == "cuda") codegen::run_lir_passes(lowered, codegen::LirStage::Cuda, options);
    if (o.target == "cpu") {
      for (lir::Function& f : lowered.functions) f.threads = o.threads;
      codegen::run_lir_passes(lowered, codegen::LirStage::Cpu, options);
    }
    return lowered;
  });
  if (!o.passes.print_after_all) std::cout << "// loop IR of " << o.file << " (" << o.target << ")\n" << lir::print_module(m);
  if (o.passes.stats) print_stats("loop-IR passes:", counts);
  return 0;
}

int cmd_ir(const IrOptions& o) {
  if (o.list_passes) {
    list_passes();
    return 0;
  }
  if (o.list_lir_passes) {
    list_lir_passes();
    return 0;
  }
  if (!o.lir && (!o.lir_passes.empty() || o.target != "cpu" || o.threads != 1))
    throw UsageError("--lir-passes, --target and --threads apply to the loop IR: add --lir");
  check_fp_backend(o.fp, o.target);
  if (o.threads != 1 && o.target != "cpu") throw UsageError("--threads applies to the CPU backend: leave out --target cuda");
  if (o.lir && o.format != "text") throw UsageError("the loop IR prints as text only");
  check_lir_pass_names(o);
  if (o.file.empty()) throw UsageError("scangen ir needs a .scan file (or --list-passes)");
  Driver driver;
  PassOptions rewrites = o.passes;
  rewrites.print_after_all = o.passes.print_after_all && !o.lir;  // with --lir: after each loop-IR pass
  auto program = load_program(driver, o.file, rewrites, *fp_mode_from_name(o.fp));
  if (!program) return kExitUserError;
  if (o.lir) return print_loop_ir(*program, o);
  if (o.format == "dot") {
    std::cout << ir::print_dot(*program);
  } else {
    std::cout << "// IR of " << o.file << "\n" << ir::print_program(*program);
  }
  return 0;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"scangen: a compiler for loops (.scan files to fused C++ and CUDA)", "scangen"};
  app.set_version_flag("--version", std::string("scangen ") + SCANGEN_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run one function of a .scan file and print its results as JSON");
  run_cmd->add_option("file", run.file, "The .scan file")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--fn", run.fn, "The function to run (default: the first)");
  std::vector<std::string> backends;
  for (Backend b : kAllBackends) backends.emplace_back(backend_name(b));
  run_cmd->add_option("--backend", run.backend, "interp, cpu (the default), cuda, or cuda-emulation (CUDA kernels on the CPU)")
      ->check(CLI::IsMember(backends));
  add_fp_option(run_cmd, run.fp, "Floating-point mode of the cpu backend: strict (the default, the interpreter's bits) or fast");
  add_pass_options(run_cmd, run.passes, false);
  add_threads_option(run_cmd, run.threads,
                     "With the cpu backend: run on N threads (default 1; 0: every hardware thread; "
                     "SCANGEN_NUM_THREADS overrides N at run time)");
  run_cmd->add_option("-o,--output", run.output, "Write the results to this .npz file instead of printing them");
  run_cmd->add_option("arguments", run.assignments, "NAME=VALUE: a JSON number, true/false, a JSON array, or @file.npy");

  CompileOptions compile;
  auto* compile_cmd = app.add_subcommand("compile", "Write the C++ of a .scan file: <stem>.h and <stem>.cpp");
  compile_cmd->add_option("file", compile.file, "The .scan file")->required()->check(CLI::ExistingFile);
  compile_cmd->add_option("-o,--output", compile.output_dir, "The output directory")->required();
  compile_cmd->add_option("--namespace", compile.cpp_namespace, "The C++ namespace of the generated API")
      ->check([](const std::string& ns) {
        bool ok = !ns.empty() && !(ns[0] >= '0' && ns[0] <= '9');
        for (char c : ns) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':');
        return ok ? std::string() : std::string("not a C++ namespace name: ") + ns;
      });
  compile_cmd->add_option("--target", compile.target, "cpu (the default), cuda, or both: cpu,cuda")
      ->check(CLI::Validator(
          [](std::string& t) {
            bool ok = t == "cpu" || t == "cuda" || t == "cpu,cuda" || t == "cuda,cpu";
            return ok ? std::string() : "'" + t + "' is not a target: cpu, cuda, or both: cpu,cuda";
          },
          "{cpu | cuda | cpu,cuda}"));
  add_fp_option(compile_cmd, compile.fp, "Floating-point mode of the C++: strict (the default, the interpreter's bits) or fast (FMA, reassociation, libmvec)");
  add_pass_options(compile_cmd, compile.passes, false);
  add_threads_option(compile_cmd, compile.threads,
                     "The C++ runs on N threads (default 1; 0: every hardware thread; SCANGEN_NUM_THREADS "
                     "overrides N at run time)");
  compile_cmd->add_option("--depfile", compile.depfile,
                          "Also write a Makefile-style depfile: the outputs depend on the .scan file and the headers it imports");

  FileOptions check;
  auto* check_cmd = app.add_subcommand("check", "Report the errors of a .scan file (exit 0 when there are none)");
  check_cmd->add_option("file", check.file, "The .scan file")->required()->check(CLI::ExistingFile);
  add_include_option(check_cmd, check.include_dirs);
  check_cmd->add_flag("--cuda", check.cuda, "Also report what keeps the program from the CUDA backend (imported functions that are not __host__ __device__)");

  IrOptions ir_opts;
  auto* ir_cmd = app.add_subcommand("ir", "Print the IR of a .scan file (as written, or after rewrites)");
  ir_cmd->add_option("file", ir_opts.file, "The .scan file")->check(CLI::ExistingFile);
  add_pass_options(ir_cmd, ir_opts.passes, true);
  ir_cmd->add_option("--format", ir_opts.format, "text (default) or dot (Graphviz)")->check(CLI::IsMember({"text", "dot"}));
  ir_cmd->add_flag("--list-passes", ir_opts.list_passes, "List the rewrites, in pipeline order, and exit");
  ir_cmd->add_flag("--lir", ir_opts.lir, "Print the loop IR (the lowered program) instead of the IR");
  ir_cmd->add_option("--target", ir_opts.target, "With --lir: cpu (the passes of every backend, the default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  add_fp_option(ir_cmd, ir_opts.fp, "strict (the default) or fast: the rewrites may reassociate float recurrences (parallel-scan) and, with --lir, the fast mode's loop-IR passes run too");
  ir_cmd->add_option("--lir-passes", ir_opts.lir_passes, "With --lir: run exactly these loop-IR passes (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  add_threads_option(ir_cmd, ir_opts.threads, "With --lir: plan the CPU code for N threads (the pass threads)");
  ir_cmd->add_flag("--list-lir-passes", ir_opts.list_lir_passes, "List the loop-IR passes, in pipeline order, and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (run_cmd->parsed()) return cmd_run(run);
  if (compile_cmd->parsed()) return cmd_compile(compile);
  if (check_cmd->parsed()) return cmd_check(check);
  if (ir_cmd->parsed()) return cmd_ir(ir_opts);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "scangen: usage error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const RuntimeError& e) {
    std::cerr << "scangen: error: " << e.what() << "\n";
    return kExitUserError;
  } catch (const InternalError& e) {
    std::cerr << "scangen: internal error: " << e.what() << "\nPlease report this as a bug.\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    std::cerr << "scangen: error: out of memory\n";
    return kExitUserError;
  } catch (const std::length_error& e) {
    std::cerr << "scangen: error: a value is too large: " << e.what() << "\n";
    return kExitUserError;
  } catch (const std::exception& e) {
    std::cerr << "scangen: internal error: " << e.what() << "\nPlease report this as a bug.\n";
    return kExitInternal;
  }
}
