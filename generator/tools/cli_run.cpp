// `scangen run`: one function of a .scan file on a backend, its results printed as JSON or written
// as .npz. The arguments are read and checked against the function's signature before any code
// is compiled, and every missing or wrong one is reported at once.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli.h"
#include "interpreter/interpreter.h"
#include "scangen/runtime/json_io.h"
#include "scangen/runtime/npy.h"

namespace scangen::cli {

namespace {

using Assignments = std::map<std::string, std::string>;  // NAME=VALUE, by name

bool has_param(const ir::Function& fn, const std::string& name) {
  for (const ir::ArgDecl& a : fn.args)
    if (a.name == name) return true;
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

// Whether `fn` takes every argument given, by name and value.
bool accepts(const ir::Function& fn, const Assignments& given) {
  for (const auto& [name, value] : given) {
    const ir::ArgDecl* param = nullptr;
    for (const ir::ArgDecl& a : fn.args)
      if (a.name == name) param = &a;
    if (!param) return false;
    try {
      parse_argument(value, param->type.dtype, param->type.rank(), name);
    } catch (const RuntimeError&) {
      return false;
    }
  }
  return true;
}

// The note after the argument errors of `run` when it took the file's first function because
// --fn was not given: it says so when that may be the mistake, naming the other functions that
// take exactly the arguments given, else those that take every one of them, else (for a name the
// function does not have) those with a parameter of that name. Empty when the errors have nothing
// to do with the choice of function (values that no other function would take either).
std::string default_function_note(const ir::Program& program, const ir::Function& ran, const Assignments& given,
                                  const std::string& unknown, bool missing) {
  std::vector<std::string> exact, all, some;
  for (const ir::Function& fn : program.functions) {
    if (fn.name == ran.name) continue;
    if (!given.empty() && accepts(fn, given)) (fn.args.size() == given.size() ? exact : all).push_back(fn.name);
    if (!unknown.empty() && has_param(fn, unknown)) some.push_back(fn.name);
  }
  const std::string ran_first = "--fn was not given, so scangen ran '" + ran.name + "', the file's first function";
  auto suggest = [&](const std::vector<std::string>& names, const std::string& one, const std::string& many) {
    return ran_first + "; " + quoted_list(names, "", " and ") + (names.size() == 1 ? one : many) + ": add " +
           quoted_list(names, "--fn ", " or ");
  };
  if (!exact.empty()) return suggest(exact, " takes exactly the arguments given", " take exactly the arguments given");
  if (!all.empty()) return suggest(all, " takes every argument given", " take every argument given");
  if (!some.empty()) return suggest(some, " has a parameter '" + unknown + "'", " have a parameter '" + unknown + "'");
  if (!unknown.empty()) return ran_first + "; no other function of the file has a parameter '" + unknown + "'";
  return missing ? ran_first : "";
}

Assignments split_assignments(const std::vector<std::string>& assignments) {
  Assignments given;
  std::vector<std::string> errors;
  for (const std::string& a : assignments) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("expected NAME=VALUE, got '" + a + "'");
    std::string name = a.substr(0, eq);
    if (!given.emplace(name, a.substr(eq + 1)).second) errors.push_back("argument '" + name + "' is given more than once");
  }
  if (!errors.empty()) throw UserErrors(errors);
  return given;
}

// The arguments of `fn`, in its order, from NAME=VALUE pairs: every unknown name, missing
// argument and value that does not fit the parameter's dtype and rank is reported together.
std::vector<HostTensor> read_arguments(const ir::Program& program, const ir::Function& fn, bool by_default,
                                       const Assignments& given) {
  std::string params;
  for (const ir::ArgDecl& a : fn.args) params += (params.empty() ? "" : ", ") + a.name;
  std::vector<std::string> errors;
  std::string unknown;  // the first name `fn` does not have
  for (const auto& [name, value] : given)
    if (!has_param(fn, name)) {
      errors.push_back("'" + fn.name + "' has no parameter '" + name + "' (its parameters: " +
                       (params.empty() ? "none" : params) + ")");
      if (unknown.empty()) unknown = name;
    }
  bool missing = false;
  std::vector<HostTensor> values;
  for (const ir::ArgDecl& a : fn.args) {
    auto it = given.find(a.name);
    if (it == given.end()) {
      errors.push_back("missing argument '" + a.name + "' for '" + fn.name + fn.signature() + "'");
      missing = true;
      continue;
    }
    try {
      values.push_back(parse_argument(it->second, a.type.dtype, a.type.rank(), a.name));
    } catch (const RuntimeError& e) {
      errors.push_back(e.what());
    }
  }
  if (errors.empty()) return values;
  UserErrors failure(errors);
  if (by_default && program.functions.size() > 1) failure.note = default_function_note(program, fn, given, unknown, missing);
  throw failure;
}

// Says "compiling ..." on stderr when compiling takes longer than a second and stderr is a
// terminal, so that a first run does not look stuck.
class CompilingNotice {
 public:
  CompilingNotice(const std::string& file, Backend backend) {
    if (backend == Backend::Interpreter || !isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this, file, backend] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!done_.wait_for(lock, std::chrono::seconds(1), [this] { return finished_; }))
        std::cerr << "scangen: compiling " << file << " for the " << backend_name(backend)
                  << " backend (a later run of the same program reuses the compiled code) ...\n";
    });
  }
  ~CompilingNotice() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread thread_;
};

void write_results(const RunOptions& o, const ir::Function& fn, const std::vector<HostTensor>& results) {
  if (o.output.empty()) {
    std::cout << format_results(results) << "\n";
    return;
  }
  NamedTensors named;
  for (size_t i = 0; i < results.size(); ++i) named.push_back({fn.result_name(i), results[i]});
  write_npz(o.output, named);
}

}  // namespace

void add_run_command(CLI::App& app, RunOptions& o, CLI::App*& cmd) {
  cmd = app.add_subcommand("run", "Run one function of a .scan file and print its results as JSON");
  cmd->add_option("file", o.file, "The .scan file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--fn", o.fn, "The function to run (default: the first)");
  add_backend_option(cmd, o.backend, "interp, cpu (the default), cuda, or cuda-emulation (CUDA kernels on the CPU)", false,
                     [](const BackendInfo&) { return true; });
  add_fp_option(cmd, o.fp, "Floating-point mode of the cpu backend: strict (the default, the interpreter's bits) or fast");
  add_pass_options(cmd, o.passes, false);
  add_threads_option(cmd, o.threads,
                     "With the cpu backend: run on N threads (default 1; 0: every hardware thread; "
                     "SCANGEN_NUM_THREADS overrides N at run time)");
  cmd->add_option("-o,--output", o.output, "Write the results to this .npz file instead of printing them");
  cmd->add_option("arguments", o.assignments, "NAME=VALUE: a JSON number, true/false, a JSON array, or @file.npy");
}

int cmd_run(const RunOptions& o) {
  const Backend backend = parse_backends(o.backend.resolve("cpu")).front();
  driver::Options options = pipeline_options(o.passes, {backend});
  options.fp_mode = *fp_mode_from_name(o.fp);
  options.threads = o.threads;
  options.layout = driver::Layout::Jit;
  const Assignments given = split_assignments(o.assignments);
  driver::Compilation c = compilation_of(o.file, std::move(options));
  const bool ok = c.reach(driver::Stage::Rewritten);
  std::cerr << c.rendered_diagnostics();
  if (!ok) return kExitUserError;
  if (o.passes.stats) print_pass_stats(c);
  const ir::Program& program = c.program();
  const ir::Function* fn = o.fn.empty() ? (program.functions.empty() ? nullptr : &program.functions.front()) : program.find(o.fn);
  if (!fn) {
    std::cerr << c.describe_missing_function(o.fn);
    return kExitUserError;
  }
  std::vector<HostTensor> args = read_arguments(program, *fn, o.fn.empty(), given);
  // A run-time error of the program, rendered with its place in the .scan file.
  auto program_error = [&](const RuntimeError& e) {
    std::cerr << c.render_runtime_error(e.what(), e.line(), e.column());
    return kExitUserError;
  };
  try {
    // The shapes against the signature's symbols, as every backend checks them on entry.
    interp::check_arguments(*fn, args);
  } catch (const RuntimeError& e) {
    return program_error(e);
  }
  {
    CompilingNotice notice(o.file, backend);
    c.reach(driver::Stage::Loaded);
  }
  std::vector<HostTensor> results;
  try {
    results = c.runner().call(fn->name, args);
  } catch (const RuntimeError& e) {
    return program_error(e);
  }
  write_results(o, *fn, results);
  return 0;
}

}  // namespace scangen::cli
