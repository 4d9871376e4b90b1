// End-to-end runner: runs every run of one samples/**/NAME.runs.json manifest through the real
// CLI, `scangen run NAME.scan --backend B [--fn F] ARGS...`, and checks what it prints.
//
//   run_manifest --scangen PATH --backend B [--floats exact|near] [--fp fast] [--threads N,...] MANIFEST.runs.json
//
// `--threads 2,3` runs every run once per thread count (`scangen run --threads N`, cpu backend):
// each must print exactly what the manifest says, as on one thread.
// A run passes when the exit status is the expected one (0 unless "exit" says otherwise) and
//   - for exit 0: stdout is exactly the expected "stdout" followed by one newline; with
//     `--floats near` (the runs on a real GPU, whose tanh, exp, ... are CUDA's), a number written
//     with a fraction or exponent may differ within tests/common/gpu_float_tolerance.h, while
//     everything else (integers, NaN, Infinity, the JSON's shape) must still be the same;
//     `--fp fast` runs `scangen run --fp fast` (the CPU backend's fast floating-point mode) and
//     compares the same way, within the fast mode's tolerance;
//   - otherwise: stdout is empty and stderr contains the "stderr" substring.
// Exit status 70 (an internal error) or death by a signal always fails, whatever was expected.
// Runs start in the manifest's directory, so `@data/x.npy` arguments are relative to it.
// Exits 0 when every run passed, 1 when one failed, 2 on a bad command line or manifest.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_float_tolerance.h"
#include "scangen/runtime/process.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kInternalErrorStatus = 70;
constexpr int kSignalBase = 128;  // run_process reports death by signal N as 128 + N
constexpr const char* kSuffix = ".runs.json";

struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Run {
  std::optional<std::string> fn;
  std::vector<std::string> args;
  int exit = 0;
  std::string stdout_text;  // expected stdout, for exit 0
  std::string stderr_text;  // expected stderr substring, for a failure
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Reads and validates a manifest strictly: unknown keys and wrong types are errors, so that a
// typo cannot silently turn a check off.
std::vector<Run> parse_manifest(const fs::path& path) {
  json doc;
  try {
    doc = json::parse(read_file(path));
  } catch (const json::parse_error& e) {
    throw ManifestError(path.string() + ": not valid JSON: " + e.what());
  }
  auto fail = [&](const std::string& what) { throw ManifestError(path.string() + ": " + what); };
  if (!doc.is_object()) fail("the manifest must be a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key == "description") {
      if (!value.is_string()) fail("\"description\" must be a string");
    } else if (key != "runs") {
      fail("unknown key \"" + key + "\" (allowed: description, runs)");
    }
  }
  if (!doc.contains("runs") || !doc["runs"].is_array() || doc["runs"].empty())
    fail("\"runs\" must be a non-empty array");

  std::vector<Run> runs;
  for (size_t i = 0; i < doc["runs"].size(); ++i) {
    const json& r = doc["runs"][i];
    std::string where = "run " + std::to_string(i + 1) + ": ";
    if (!r.is_object()) fail(where + "must be an object");
    Run run;
    bool has_stdout = false, has_stderr = false;
    for (const auto& [key, value] : r.items()) {
      if (key == "fn") {
        if (!value.is_string() || value.get<std::string>().empty()) fail(where + "\"fn\" must be a non-empty string");
        run.fn = value.get<std::string>();
      } else if (key == "args") {
        if (!value.is_array()) fail(where + "\"args\" must be an array of strings");
        for (const json& a : value) {
          if (!a.is_string()) fail(where + "\"args\" must be an array of strings");
          run.args.push_back(a.get<std::string>());
        }
      } else if (key == "exit") {
        if (!value.is_number_integer()) fail(where + "\"exit\" must be an integer");
        run.exit = value.get<int>();
      } else if (key == "stdout") {
        if (!value.is_string()) fail(where + "\"stdout\" must be a string");
        run.stdout_text = value.get<std::string>();
        has_stdout = true;
      } else if (key == "stderr") {
        if (!value.is_string() || value.get<std::string>().empty()) fail(where + "\"stderr\" must be a non-empty string");
        run.stderr_text = value.get<std::string>();
        has_stderr = true;
      } else {
        fail(where + "unknown key \"" + key + "\" (allowed: fn, args, exit, stdout, stderr)");
      }
    }
    if (!r.contains("args")) fail(where + "\"args\" is missing");
    if (run.exit == 0 && (!has_stdout || has_stderr))
      fail(where + "a successful run needs \"stdout\" (and no \"stderr\")");
    if (run.exit != 0 && (!has_stderr || has_stdout))
      fail(where + "a failing run needs \"stderr\" (and no \"stdout\")");
    if (run.exit == kInternalErrorStatus || run.exit < 0 || run.exit >= kSignalBase)
      fail(where + "\"exit\" must be 0 or a user-error status, never 70 or a signal");
    if (run.stdout_text.find('\n') != std::string::npos) fail(where + "\"stdout\" is one line, without its newline");
    runs.push_back(std::move(run));
  }
  return runs;
}

// A temporary file for the child's stderr; removed on destruction.
class TempFile {
 public:
  TempFile() {
    std::string pattern = (fs::temp_directory_path() / "scangen-e2e-XXXXXX").string();
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + fs::temp_directory_path().string());
    ::close(fd);
    path_ = pattern;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Quotes an argument for display (the command is never run through a shell with this text).
std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=./@,:+") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string indent(const std::string& text) {
  std::string out = "      | ";
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "      | ";
  }
  if (!text.empty() && text.back() != '\n') out += '\n';
  return text.empty() ? "      | (empty)\n" : out;
}

enum class Floats { Exact, Near, Fast };

// The length of the number (JSON's grammar) at the start of `text`, 0 if none starts there.
size_t number_length(std::string_view text) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    digits();
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    digits();
  }
  return i;
}

// Whether `actual` is `expected` up to floats within `tolerance`: the two are walked token by
// token; text between numbers must be identical, and so must numbers written as integers (integer
// results, and floats that came out whole on both sides).
bool same_within_tolerance(std::string_view expected, std::string_view actual, scangen::testing::FloatTolerance tolerance) {
  while (!expected.empty() && !actual.empty()) {
    const size_t e = number_length(expected), a = number_length(actual);
    if (e == 0 || a == 0) {
      if (expected.front() != actual.front()) return false;
      expected.remove_prefix(1);
      actual.remove_prefix(1);
      continue;
    }
    const std::string x(expected.substr(0, e)), y(actual.substr(0, a));
    const bool whole = x.find_first_of(".eE") == std::string::npos && y.find_first_of(".eE") == std::string::npos;
    if (whole ? x != y
              : !scangen::testing::within_tolerance(std::strtod(x.c_str(), nullptr), std::strtod(y.c_str(), nullptr), tolerance))
      return false;
    expected.remove_prefix(e);
    actual.remove_prefix(a);
  }
  return expected.empty() && actual.empty();
}

// Runs one run; prints a report; returns whether it passed.
bool check_run(size_t number, const Run& run, const std::string& scangen, const std::string& backend, Floats floats,
               const fs::path& scan_file, const std::string& threads) {
  std::vector<std::string> command = {scangen, "run", scan_file.string(), "--backend", backend};
  if (floats == Floats::Fast) command.insert(command.end(), {"--fp", "fast"});
  if (!threads.empty()) command.insert(command.end(), {"--threads", threads});
  if (run.fn) {
    command.push_back("--fn");
    command.push_back(*run.fn);
  }
  command.insert(command.end(), run.args.begin(), run.args.end());
  std::string shown;
  for (const std::string& a : command) shown += (shown.empty() ? "" : " ") + shell_quote(a);

  // run_process captures stdout and stderr through one pipe; a shell that execs scangen with
  // stderr sent to a file separates them (exec keeps scangen's own exit status and signals).
  TempFile stderr_file;
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", stderr_file.path().string()};
  argv.insert(argv.end(), command.begin(), command.end());
  scangen::ProcessResult result = scangen::run_process(argv);
  const std::string& out = result.output;
  std::string err = read_file(stderr_file.path());

  std::vector<std::string> problems;
  std::string note;
  if (result.exit_code == kInternalErrorStatus) {
    problems.push_back("exit status 70: scangen reported an internal error (a bug)");
  } else if (result.exit_code >= kSignalBase) {
    problems.push_back("scangen crashed: killed by signal " + std::to_string(result.exit_code - kSignalBase));
  } else if (result.exit_code != run.exit) {
    problems.push_back("exit status " + std::to_string(result.exit_code) + ", expected " + std::to_string(run.exit));
  }
  if (run.exit == 0) {
    const bool near = floats != Floats::Exact && !out.empty() && out.back() == '\n' &&
                      same_within_tolerance(run.stdout_text, std::string_view(out).substr(0, out.size() - 1),
                                            floats == Floats::Fast ? scangen::testing::kFastTolerance
                                                                   : scangen::testing::kGpuTolerance);
    if (out != run.stdout_text + "\n" && near)
      note = floats == Floats::Fast ? " (floats within the fast mode's tolerance, not bit for bit)"
                                    : " (floats within the GPU tolerance, not bit for bit)";
    else if (out != run.stdout_text + "\n")
      problems.push_back("stdout differs\n    expected: " + run.stdout_text + "\n    actual:   " +
                         (out.empty() ? "(empty)" : out.substr(0, out.find('\n'))) +
                         (out.find('\n') + 1 < out.size() ? " (and more lines)" : ""));
  } else {
    if (err.find(run.stderr_text) == std::string::npos)
      problems.push_back("stderr does not contain: " + run.stderr_text);
    if (!out.empty()) problems.push_back("stdout is not empty for a failing run");
  }

  std::cout << (problems.empty() ? "ok   " : "FAIL ") << "run " << number << note << ": " << shown << "\n";
  if (!problems.empty()) {
    for (const std::string& p : problems) std::cout << "    " << p << "\n";
    std::cout << "    exit status: " << result.exit_code << "\n    stdout:\n"
              << indent(out) << "    stderr:\n"
              << indent(err);
  }
  return problems.empty();
}

int usage(const std::string& message) {
  std::cerr << "run_manifest: " << message
            << "\nusage: run_manifest --scangen PATH --backend B [--floats exact|near] [--fp fast] [--threads N,...] "
               "MANIFEST.runs.json\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scangen, backend, manifest_arg;
  std::vector<std::string> thread_counts{""};  // "": scangen's default
  Floats floats = Floats::Exact;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--scangen" || a == "--backend") && i + 1 < argc) {
      (a == "--scangen" ? scangen : backend) = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      thread_counts.clear();
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = std::min(list.find(',', start), list.size());
        thread_counts.push_back(list.substr(start, comma - start));
        if (thread_counts.back().empty()) return usage("--threads takes thread counts separated by commas");
        start = comma + 1;
      }
    } else if (a == "--floats" && i + 1 < argc) {
      std::string mode = argv[++i];
      if (mode != "exact" && mode != "near") return usage("--floats takes exact or near, not '" + mode + "'");
      floats = mode == "near" ? Floats::Near : Floats::Exact;
    } else if (a == "--fp" && i + 1 < argc) {
      std::string mode = argv[++i];
      if (mode != "fast") return usage("--fp takes fast (strict is the default), not '" + mode + "'");
      floats = Floats::Fast;
    } else if (!a.empty() && a[0] != '-' && manifest_arg.empty()) {
      manifest_arg = a;
    } else {
      return usage("unexpected argument '" + a + "'");
    }
  }
  if (scangen.empty() || backend.empty() || manifest_arg.empty()) return usage("missing arguments");

  try {
    fs::path manifest = fs::absolute(manifest_arg);
    std::string name = manifest.filename().string();
    if (name.size() <= std::string(kSuffix).size() || name.compare(name.size() - std::string(kSuffix).size(),
                                                                   std::string::npos, kSuffix) != 0)
      return usage("the manifest must be named NAME.runs.json");
    fs::path scan_file = manifest.parent_path() / (name.substr(0, name.size() - std::string(kSuffix).size()) + ".scan");
    if (!fs::is_regular_file(scan_file)) throw ManifestError("no program " + scan_file.string() + " beside the manifest");
    std::string scangen_path = fs::absolute(scangen).string();

    std::vector<Run> runs = parse_manifest(manifest);
    fs::current_path(manifest.parent_path());

    size_t failed = 0;
    for (const std::string& threads : thread_counts)
      for (size_t i = 0; i < runs.size(); ++i)
        if (!check_run(i + 1, runs[i], scangen_path, backend, floats, scan_file, threads)) ++failed;
    const size_t total = runs.size() * thread_counts.size();
    std::cout << (failed ? "FAILED: " : "passed: ") << total - failed << " of " << total << " runs of "
              << manifest.string() << " on backend " << backend << "\n";
    return failed ? 1 : 0;
  } catch (const ManifestError& e) {
    std::cerr << "run_manifest: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "run_manifest: " << e.what() << "\n";
    return 1;
  }
}
