// The scangen command line (docs/cli.md): run, compile, ir, check. Each subcommand fills the
// pipeline's options (driver/options.h) from its flags and asks a driver::Compilation for what
// it prints or writes; none runs a step of the pipeline itself.
//
// Exit status: 0 success; 1 a user error (a bad program, a bad argument, a run-time error of the
// program); 2 bad command-line usage; 70 an internal error (a scangen bug).
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/driver.h"

namespace scangen::cli {

constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 70;

// A bad command line found after parsing (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Several errors reported together (every missing or wrong argument of `run`), one per line.
struct UserErrors : std::runtime_error {
  explicit UserErrors(std::vector<std::string> messages)
      : std::runtime_error(messages.empty() ? std::string() : messages.front()), messages(std::move(messages)) {}
  std::vector<std::string> messages;
  std::string note;  // printed after them, when not empty
};

// The options of the rewrites, shared by run, compile and ir.
struct PassOptions {
  int opt_level = 2;
  std::vector<std::string> only;
  std::vector<std::string> disabled;
  bool verify_each = false;
  bool stats = false;
  bool print_after_all = false;
  std::vector<std::string> include_dirs;  // -I: where imported headers are looked for
};

// --backend, and its old spelling --target (compile and ir), which still works with a note.
struct BackendChoice {
  std::string backend;
  std::string target;  // the old spelling
  // The value given, or `fallback`; a note on stderr when the old spelling was used.
  std::string resolve(const std::string& fallback) const;
};

// ---- options (cli_options.cpp)
void add_pass_options(CLI::App* cmd, PassOptions& o, bool for_ir);
void add_include_option(CLI::App* cmd, std::vector<std::string>& dirs);
void add_fp_option(CLI::App* cmd, std::string& fp, const char* what);
void add_threads_option(CLI::App* cmd, int& threads, const char* what);
// --backend with the backends of the table that `accept` admits, and --target as its old
// spelling when `old_spelling` (compile and ir).
void add_backend_option(CLI::App* cmd, BackendChoice& choice, const std::string& what, bool old_spelling,
                        bool (*accept)(const BackendInfo&), bool list = false);
// The pipeline's options for `o` (rewrites, their observers and -I), with `backends`.
driver::Options pipeline_options(const PassOptions& o, std::vector<Backend> backends);
// "cpu", "cuda", "cpu,cuda" as the backends they name (a UsageError for another name).
std::vector<Backend> parse_backends(const std::string& text);
// The compilation of `file`, its options validated in the CLI's spelling (a UsageError if not).
driver::Compilation compilation_of(const std::string& file, driver::Options options);
// --stats: the rewrites that fired, then why some did not (on stderr).
void print_pass_stats(const driver::Compilation& c);

// ---- subcommands
struct RunOptions {
  std::string file;
  std::string fn;
  BackendChoice backend;
  std::string fp = "strict";
  int threads = 1;
  PassOptions passes;
  std::string output;
  std::vector<std::string> assignments;
};
struct CompileOptions {
  std::string file;
  std::string output_dir;
  std::string depfile;
  std::string cpp_namespace = "scangen_generated";
  BackendChoice backend;
  std::string fp = "strict";
  int threads = 1;
  PassOptions passes;
};
struct CheckOptions {
  std::string file;
  std::vector<std::string> include_dirs;
  bool cuda = false;  // also what keeps the program from the CUDA backend
};
struct IrOptions {
  std::string file;
  std::string fn;                      // print this function only
  PassOptions passes;
  std::string format = "text";
  bool list_passes = false;
  bool lir = false;                    // print the loop IR instead
  BackendChoice backend;               // whose loop-IR passes run: cpu (the default) or cuda
  std::string fp = "strict";           // fast: the fast mode's loop-IR passes run too
  std::vector<std::string> lir_passes; // run only these loop-IR passes
  bool list_lir_passes = false;
  int threads = 1;                     // what the CPU pass `threads` plans for
};

void add_run_command(CLI::App& app, RunOptions& o, CLI::App*& cmd);
void add_compile_command(CLI::App& app, CompileOptions& o, CLI::App*& cmd);
void add_check_command(CLI::App& app, CheckOptions& o, CLI::App*& cmd);
void add_ir_command(CLI::App& app, IrOptions& o, CLI::App*& cmd);

int cmd_run(const RunOptions& o);
int cmd_compile(const CompileOptions& o);
int cmd_check(const CheckOptions& o);
int cmd_ir(const IrOptions& o);

}  // namespace scangen::cli
