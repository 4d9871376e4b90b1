// `scangen compile`, `scangen check` and `scangen ir`.
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "cli.h"
#include "codegen/lir_passes.h"
#include "ir/dot.h"
#include "ir/printer.h"
#include "passes/pass.h"
#include "scangen/runtime/files.h"

namespace scangen::cli {

namespace {

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

// Reaches `stage`, printing the diagnostics; false when the program has errors.
bool reach(driver::Compilation& c, driver::Stage stage) {
  const bool ok = c.reach(stage);
  std::cerr << c.rendered_diagnostics();
  return ok;
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

bool offline(const BackendInfo& b) { return b.offline; }

// The function --fn names, or null for all of them; a user error naming those the file has.
const ir::Function* chosen_function(const driver::Compilation& c, const std::string& name) {
  if (name.empty()) return nullptr;
  if (const ir::Function* f = c.program().find(name)) return f;
  throw UserErrors({c.describe_missing_function(name)});
}

// `scangen ir FILE --lir`: the loop IR of the backend after its loop-IR passes (all, or those of
// --lir-passes); with --print-after-all after each pass, with --stats how many changes each made.
int print_loop_ir(driver::Compilation& c, const IrOptions& o, const std::vector<std::pair<std::string, int>>& counts) {
  const lir::Module& m = c.targets().front().loop_ir;
  const ir::Function* only = chosen_function(c, o.fn);
  if (!o.passes.print_after_all) {
    std::cout << "// loop IR of " << o.file << " (" << backend_name(c.targets().front().backend) << ")\n";
    if (!only) std::cout << lir::print_module(m);
    for (const lir::Function& f : m.functions)
      if (only && f.name == only->name) std::cout << lir::print_function(f);
  }
  if (o.passes.stats) {
    std::cerr << "loop-IR passes:\n";
    for (const auto& [pass, n] : counts) std::cerr << "  " << pass << ": " << n << "\n";
  }
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, CompileOptions& o, CLI::App*& cmd) {
  cmd = app.add_subcommand("compile", "Write the C++ of a .scan file: <stem>.h and <stem>.cpp");
  cmd->add_option("file", o.file, "The .scan file")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o.output_dir, "The output directory")->required();
  cmd->add_option("--namespace", o.cpp_namespace, "The C++ namespace of the generated API")->check([](const std::string& ns) {
    bool ok = !ns.empty() && !(ns[0] >= '0' && ns[0] <= '9');
    for (char c : ns) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':');
    return ok ? std::string() : std::string("not a C++ namespace name: ") + ns;
  });
  add_backend_option(cmd, o.backend, "cpu (the default), cuda, or both: cpu,cuda", true, offline, true);
  add_fp_option(cmd, o.fp, "Floating-point mode of the C++: strict (the default, the interpreter's bits) or fast (FMA, reassociation, libmvec)");
  add_pass_options(cmd, o.passes, false);
  add_threads_option(cmd, o.threads,
                     "The C++ runs on N threads (default 1; 0: every hardware thread; SCANGEN_NUM_THREADS "
                     "overrides N at run time)");
  cmd->add_option("--depfile", o.depfile,
                  "Also write a Makefile-style depfile: the outputs depend on the .scan file and the headers it imports");
}

int cmd_compile(const CompileOptions& o) {
  driver::Options options = pipeline_options(o.passes, parse_backends(o.backend.resolve("cpu")));
  options.fp_mode = *fp_mode_from_name(o.fp);
  options.threads = o.threads;
  options.cpp_namespace = o.cpp_namespace;
  driver::Compilation c = compilation_of(o.file, std::move(options));
  if (!reach(c, driver::Stage::Sources)) return kExitUserError;
  if (o.passes.stats) print_pass_stats(c);
  std::error_code ec;
  std::filesystem::create_directories(o.output_dir, ec);
  if (ec) throw RuntimeError("cannot create the output directory '" + o.output_dir + "': " + ec.message());
  std::vector<std::filesystem::path> written;
  for (const driver::Target& t : c.targets())
    for (const codegen::EmittedFile& f : t.sources) {
      std::filesystem::path path = std::filesystem::path(o.output_dir) / f.filename;
      write_file_atomically(path, f.contents);
      written.push_back(path);
    }
  if (!o.depfile.empty()) write_file_atomically(o.depfile, make_depfile(written, c.dependencies()));
  return 0;
}

void add_check_command(CLI::App& app, CheckOptions& o, CLI::App*& cmd) {
  cmd = app.add_subcommand("check", "Report the errors of a .scan file (exit 0 when there are none)");
  cmd->add_option("file", o.file, "The .scan file")->required()->check(CLI::ExistingFile);
  add_include_option(cmd, o.include_dirs);
  cmd->add_flag("--cuda", o.cuda, "Also report what keeps the program from the CUDA backend (imported functions that are not __host__ __device__)");
}

int cmd_check(const CheckOptions& o) {
  PassOptions none;
  none.opt_level = 0;
  none.include_dirs = o.include_dirs;
  driver::Options options = pipeline_options(none, {Backend::Interpreter});
  options.check_cuda_imports = o.cuda;
  driver::Compilation c = compilation_of(o.file, std::move(options));
  return reach(c, driver::Stage::Analyzed) ? 0 : kExitUserError;
}

void add_ir_command(CLI::App& app, IrOptions& o, CLI::App*& cmd) {
  cmd = app.add_subcommand("ir", "Print the IR of a .scan file (as written, or after rewrites)");
  o.passes.opt_level = 0;  // the IR as written, unless -O2 or --passes ask for rewrites
  cmd->add_option("file", o.file, "The .scan file")->check(CLI::ExistingFile);
  cmd->add_option("--fn", o.fn, "Print this function only (default: every function)");
  add_pass_options(cmd, o.passes, true);
  cmd->add_option("--format", o.format, "text (default) or dot (Graphviz)")->check(CLI::IsMember({"text", "dot"}));
  cmd->add_flag("--list-passes", o.list_passes, "List the rewrites, in pipeline order, and exit");
  cmd->add_flag("--lir", o.lir, "Print the loop IR (the lowered program) instead of the IR");
  add_backend_option(cmd, o.backend, "With --lir: cpu (the passes of every backend and the CPU's, the default) or cuda", true,
                     offline);
  add_fp_option(cmd, o.fp, "strict (the default) or fast: the rewrites may reassociate float recurrences (parallel-scan) and, with --lir, the fast mode's loop-IR passes run too");
  cmd->add_option("--lir-passes", o.lir_passes, "With --lir: run exactly these loop-IR passes (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  add_threads_option(cmd, o.threads, "With --lir: plan the CPU code for N threads (the pass threads)");
  cmd->add_flag("--list-lir-passes", o.list_lir_passes, "List the loop-IR passes, in pipeline order, and exit");
}

int cmd_ir(const IrOptions& o) {
  if (o.list_passes) return list_passes(), 0;
  if (o.list_lir_passes) return list_lir_passes(), 0;
  const std::string backend = o.backend.resolve("");
  if (!o.lir && (!o.lir_passes.empty() || !backend.empty() || o.threads != 1))
    throw UsageError("--lir-passes, --backend and --threads apply to the loop IR: add --lir");
  if (o.lir && o.format != "text") throw UsageError("the loop IR prints as text only");
  if (o.file.empty()) throw UsageError("scangen ir needs a .scan file (or --list-passes)");
  driver::Options options = pipeline_options(o.passes, parse_backends(backend.empty() ? "cpu" : backend));
  options.fp_mode = *fp_mode_from_name(o.fp);
  options.threads = o.threads;
  options.only_lir_passes = o.lir_passes;
  std::vector<std::pair<std::string, int>> counts;
  if (o.passes.print_after_all && !o.lir)
    options.after_each_pass = [](const std::string& pass, const ir::Program& p) {
      std::cout << "// IR after " << pass << "\n" << ir::print_program(p) << "\n";
    };
  if (o.passes.print_after_all && o.lir)
    options.after_each_lir_pass = [](const std::string& pass, const lir::Module& m) {
      std::cout << "// loop IR after " << pass << "\n" << lir::print_module(m) << "\n";
    };
  options.count_lir_pass = [&counts](const std::string& pass, int n) { counts.emplace_back(pass, n); };
  driver::Compilation c = compilation_of(o.file, std::move(options));
  if (!reach(c, o.lir ? driver::Stage::LoopIr : driver::Stage::Rewritten)) return kExitUserError;
  if (o.passes.stats) print_pass_stats(c);
  if (o.lir) return print_loop_ir(c, o, counts);
  const ir::Function* only = chosen_function(c, o.fn);
  if (o.format == "dot") {
    std::cout << (only ? ir::print_dot(*only) : ir::print_dot(c.program()));
  } else {
    std::cout << "// IR of " << o.file << "\n" << (only ? ir::print_function(*only) : ir::print_program(c.program()));
  }
  return 0;
}

}  // namespace scangen::cli
