// The scangen command line: run, compile, ir, check (cli.h; docs/cli.md).
#include <iostream>

#include "cli.h"
#include "scangen/runtime/errors.h"

#ifndef SCANGEN_VERSION
#define SCANGEN_VERSION "0.0.0"
#endif

namespace {

using namespace scangen::cli;

int run_cli(int argc, char** argv) {
  CLI::App app{"scangen: a compiler for loops (.scan files to fused C++ and CUDA)", "scangen"};
  app.set_version_flag("--version", std::string("scangen ") + SCANGEN_VERSION);
  app.require_subcommand(1);
  RunOptions run;
  CompileOptions compile;
  CheckOptions check;
  IrOptions ir;
  CLI::App *run_cmd = nullptr, *compile_cmd = nullptr, *check_cmd = nullptr, *ir_cmd = nullptr;
  add_run_command(app, run, run_cmd);
  add_compile_command(app, compile, compile_cmd);
  add_check_command(app, check, check_cmd);
  add_ir_command(app, ir, ir_cmd);
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
  if (ir_cmd->parsed()) return cmd_ir(ir);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "scangen: usage error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const UserErrors& e) {
    // Messages rendered with their place in a file end with a newline and name the file already.
    for (const std::string& m : e.messages)
      std::cerr << (!m.empty() && m.back() == '\n' ? m : "scangen: error: " + m + "\n");
    if (!e.note.empty()) std::cerr << "scangen: note: " << e.note << "\n";
    return kExitUserError;
  } catch (const scangen::RuntimeError& e) {
    std::cerr << "scangen: error: " << e.what() << "\n";
    return kExitUserError;
  } catch (const scangen::InternalError& e) {
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
