// The flags the subcommands share, and how they become the pipeline's options.
#include <iostream>

#include "cli.h"

namespace scangen::cli {

std::string BackendChoice::resolve(const std::string& fallback) const {
  if (!backend.empty() && !target.empty()) throw UsageError("--target is the old spelling of --backend: give one of them");
  if (!target.empty()) {
    std::cerr << "scangen: note: --target is now spelled --backend (the old spelling still works)\n";
    return target;
  }
  return backend.empty() ? fallback : backend;
}

// --fp strict|fast: the floating-point mode of generated CPU code (scangen/fp_mode.h).
void add_fp_option(CLI::App* cmd, std::string& fp, const char* what) {
  std::vector<std::string> names;
  for (const FpModeName& m : kFpModeNames) names.emplace_back(m.name);
  cmd->add_option("--fp", fp, what)->check(CLI::IsMember(names));
}

// -I DIR, for the headers that `import` statements name (after the .scan file's directory).
void add_include_option(CLI::App* cmd, std::vector<std::string>& dirs) {
  cmd->add_option("-I", dirs, "Look for imported C++ headers in this directory too (repeatable)")
      ->allow_extra_args(false);
}

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

void add_backend_option(CLI::App* cmd, BackendChoice& choice, const std::string& what, bool old_spelling,
                        bool (*accept)(const BackendInfo&), bool list) {
  std::vector<std::string> names;
  for (const BackendInfo& b : kBackends)
    if (accept(b)) names.emplace_back(b.name);
  std::string shown = names.front();
  for (size_t i = 1; i < names.size(); ++i) shown += " | " + names[i];
  if (list) shown += " | " + names.front() + "," + names.back();
  // A list (`cpu,cuda`) is checked by parse_backends; CLI11's IsMember would split it.
  auto check = CLI::Validator(
      [names, list, shown](std::string& value) {
        std::string rest = value;
        while (true) {
          const std::string name = rest.substr(0, rest.find(','));
          if (std::find(names.begin(), names.end(), name) == names.end())
            return "'" + value + "' is not one of: " + shown;
          if (rest.find(',') == std::string::npos || !list) break;
          rest = rest.substr(rest.find(',') + 1);
        }
        return std::string();
      },
      "{" + shown + "}");
  cmd->add_option("--backend", choice.backend, what)->check(check);
  if (old_spelling) cmd->add_option("--target", choice.target, "The old spelling of --backend")->check(check)->group("");
}

std::vector<Backend> parse_backends(const std::string& text) {
  std::vector<Backend> out;
  std::string rest = text;
  while (true) {
    const std::string name = rest.substr(0, rest.find(','));
    std::optional<Backend> b = backend_from_name(name);
    if (!b) throw UsageError("'" + name + "' is not a backend");
    if (std::find(out.begin(), out.end(), *b) == out.end()) out.push_back(*b);
    if (rest.find(',') == std::string::npos) return out;
    rest = rest.substr(rest.find(',') + 1);
  }
}

driver::Options pipeline_options(const PassOptions& o, std::vector<Backend> backends) {
  driver::Options options;
  options.backends = std::move(backends);
  options.opt_level = o.opt_level;
  options.only_passes = o.only;
  options.disabled_passes = o.disabled;
  options.verify_each = o.verify_each;
  options.include_dirs.assign(o.include_dirs.begin(), o.include_dirs.end());
  return options;
}

driver::Compilation compilation_of(const std::string& file, driver::Options options) {
  try {
    return driver::Compilation::of_file(file, std::move(options), driver::kCliSpelling);
  } catch (const driver::OptionError& e) {
    throw UsageError(e.what());
  }
}

void print_pass_stats(const driver::Compilation& c) {
  std::cerr << "rewrites that fired:\n";
  for (const auto& [pass, n] : c.pass_stats()) std::cerr << "  " << pass << ": " << n << "\n";
  if (c.pass_notes().empty()) return;
  std::cerr << "rewrites that did not fire:\n";
  for (const std::string& n : c.pass_notes()) std::cerr << "  " << n << "\n";
}

}  // namespace scangen::cli
