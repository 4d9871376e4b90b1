// The runner of the IR before/after tests (tests/passes/README.md describes the format).
//
//   pass_test_runner --scangen PATH FILE.scan
//       Runs `scangen ir FILE <RUN args> --verify-each`, checks its output (stdout, then stderr)
//       against the file's CHECK / CHECK-NEXT / CHECK-SAME / CHECK-NOT lines, then runs every
//       RESULTS line with `scangen run` on the interpreter and the CPU backend, at -O0, at -O2 and
//       with only the passes RUN names, and requires the six runs to agree (and to print what
//       `expect=` says, if given). A test in <dir>/ must name the pass <dir> in RUN's --passes.
//       A loop-IR test (tests/lir/<dir>/: RUN has --lir and names <dir> in --lir-passes) checks
//       the printed loop IR, and its RESULTS run on the CUDA emulation too (and, for the CPU pass
//       `threads` and the cost model `scan-strategy`, on the CPU backend compiled for 2 and 3
//       threads).
//       A file marked `// XFAIL: reason` must fail (an unexpected pass is an error).
//
//   pass_test_runner --check-docs PASSES_DEF REWRITES_MD
//       Fails unless every entry of passes.def has a section `## <name>` in REWRITES_MD whose next
//       non-empty line is exactly the entry's summary, the sections come in the table's order,
//       none is repeated, and no such section names a pass that the table does not have.
//
//   pass_test_runner --check-tests PASSES_DEF TESTS_DIR
//       Fails unless every entry of passes.def has a directory TESTS_DIR/<name>/ holding at least
//       one .scan test (and no directory there names a pass that the table does not have).
//
// Exits 0 on success, 1 when a check fails, 2 on a bad command line or a malformed test file.
// No dependency on the generator: it only runs the scangen executable (fork/exec, no shell).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr int kInternalErrorStatus = 70;
constexpr int kSignalBase = 128;

// A malformed test file or command line (exit 2), as opposed to a failed check (exit 1).
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// ---------------------------------------------------------------------------------------------
// Running scangen

struct RunResult {
  int status = 0;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

std::string temp_file(const char* what) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/scangen-pass-test-" + what + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) throw std::runtime_error("mkstemp: " + std::string(std::strerror(errno)));
  close(fd);
  return std::string(buf.data());
}

// Runs argv with stdout and stderr captured separately (through temporary files), no shell.
RunResult run(const std::vector<std::string>& argv) {
  std::string out_path = temp_file("out"), err_path = temp_file("err");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_TRUNC);
    int err = open(err_path.c_str(), O_WRONLY | O_TRUNC);
    if (in < 0 || out < 0 || err < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid: " + std::string(std::strerror(errno)));
  }
  RunResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : kSignalBase + WTERMSIG(wstatus);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return r;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    bool quote = a.empty() || a.find_first_of(" \t\"'[]{}()$*?;&|<>") != std::string::npos;
    s += (s.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return s;
}

std::string describe_status(int status) {
  if (status >= kSignalBase) return "killed by signal " + std::to_string(status - kSignalBase);
  if (status == kInternalErrorStatus) return "exit status 70 (an internal error)";
  return "exit status " + std::to_string(status);
}

// Splits at blanks outside quotes and brackets: `A=[1, 2] k=3` is two words. Quotes group (and
// are removed) only outside brackets, so that the JSON strings of an array argument keep theirs:
// `'x=[1, "NaN"]'` is the one word `x=[1, "NaN"]`.
std::vector<std::string> split_words(const std::string& text, const std::string& where) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
      continue;
    }
    if (depth == 0 && (c == '"' || c == '\'')) {
      quote = c;
      in_word = true;
      continue;
    }
    if ((c == ' ' || c == '\t') && depth == 0) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    if (c == '[' || c == '{' || c == '(') ++depth;
    if ((c == ']' || c == '}' || c == ')') && depth > 0) --depth;
    word += c;
    in_word = true;
  }
  if (quote) throw FormatError(where + ": unterminated quote");
  if (in_word) words.push_back(word);
  return words;
}

// ---------------------------------------------------------------------------------------------
// The test file

enum class CheckKind { Check, Next, Same, Not };

const char* kind_name(CheckKind k) {
  switch (k) {
    case CheckKind::Check: return "CHECK";
    case CheckKind::Next: return "CHECK-NEXT";
    case CheckKind::Same: return "CHECK-SAME";
    case CheckKind::Not: return "CHECK-NOT";
  }
  return "CHECK";
}

struct Check {
  CheckKind kind;
  std::string pattern;
  int line;  // in the test file
  std::optional<std::regex> re;  // when the pattern holds {{regex}} parts
};

struct Results {
  std::optional<std::string> fn;
  std::vector<std::string> args;
  int exit = 0;  // 0, or 1 when all the runs must fail with the same error
  // exit 0: the exact stdout (trimmed); exit 1: text the error line holds (it names the file as
  // the runner was given it, so a whole line would depend on the directory).
  std::optional<std::string> expect;
  int line;
};

struct TestFile {
  std::vector<std::string> run_args;
  std::vector<std::string> passes;      // the names RUN gives --passes (empty: no --passes)
  std::vector<std::string> lir_passes;  // the names RUN gives --lir-passes: a loop-IR test (tests/lir)
  std::vector<Check> checks;
  std::vector<Results> results;
  std::optional<std::string> xfail;
};

std::string regex_escape(const std::string& s) {
  static const std::string special = R"(\^$.|?*+()[]{}/)";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// A pattern is literal text, except `{{re}}` parts, which are ECMAScript regular expressions.
std::optional<std::regex> compile_pattern(const std::string& pattern, const std::string& where) {
  if (pattern.find("{{") == std::string::npos) return std::nullopt;
  std::string re;
  size_t pos = 0;
  while (pos < pattern.size()) {
    size_t open = pattern.find("{{", pos);
    if (open == std::string::npos) {
      re += regex_escape(pattern.substr(pos));
      break;
    }
    size_t close = pattern.find("}}", open + 2);
    if (close == std::string::npos) throw FormatError(where + ": '{{' without '}}'");
    re += regex_escape(pattern.substr(pos, open - pos));
    re += "(?:" + pattern.substr(open + 2, close - open - 2) + ")";
    pos = close + 2;
  }
  try {
    return std::regex(re, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw FormatError(where + ": bad regular expression: " + e.what());
  }
}

TestFile parse_test(const fs::path& path) {
  TestFile t;
  bool have_run = false;
  std::vector<std::string> lines = split_lines(read_file(path));
  static const std::regex directive(R"(^\s*//\s*([A-Z][A-Z-]*)\s*:(.*)$)");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, directive)) continue;
    std::string name = m[1];
    std::string rest = m[2];
    // Patterns keep inner blanks; one blank after the colon is the separator.
    std::string value = trim(rest);
    std::string where = path.string() + ":" + std::to_string(i + 1);
    if (name == "RUN") {
      if (have_run) throw FormatError(where + ": more than one RUN line");
      have_run = true;
      t.run_args = split_words(value, where);
    } else if (name == "CHECK" || name == "CHECK-NEXT" || name == "CHECK-SAME" || name == "CHECK-NOT") {
      CheckKind kind = name == "CHECK" ? CheckKind::Check
                       : name == "CHECK-NEXT" ? CheckKind::Next
                       : name == "CHECK-SAME" ? CheckKind::Same
                                              : CheckKind::Not;
      if (value.empty()) throw FormatError(where + ": empty " + name + " pattern");
      // FileCheck's [[VAR:regex]] captures would silently be literal text here.
      std::string outside = std::regex_replace(value, std::regex(R"(\{\{.*?\}\})"), "");
      if (outside.find("[[") != std::string::npos && outside.find("]]") != std::string::npos)
        throw FormatError(where + ": [[...]] variables are not supported; use {{regex}} (see README.md)");
      if (kind == CheckKind::Next || kind == CheckKind::Same) {
        if (t.checks.empty() || t.checks.back().kind == CheckKind::Not)
          throw FormatError(where + ": " + name + " must follow a CHECK, CHECK-NEXT or CHECK-SAME");
      }
      t.checks.push_back({kind, value, int(i + 1), compile_pattern(value, where)});
    } else if (name == "RESULTS") {
      Results r;
      r.line = int(i + 1);
      for (const std::string& word : split_words(value, where)) {
        size_t eq = word.find('=');
        std::string key = word.substr(0, eq);
        if (eq == std::string::npos) throw FormatError(where + ": expected KEY=VALUE in RESULTS, got '" + word + "'");
        std::string val = word.substr(eq + 1);
        if (key == "fn") {
          r.fn = val;
        } else if (key == "args") {
          r.args = split_words(val, where);
        } else if (key == "exit") {
          if (val != "0" && val != "1") throw FormatError(where + ": RESULTS exit must be 0 or 1");
          r.exit = std::stoi(val);
        } else if (key == "expect") {
          if (trim(val).empty()) throw FormatError(where + ": empty RESULTS expect");
          r.expect = trim(val);
        } else {
          throw FormatError(where + ": unknown RESULTS key '" + key + "' (allowed: fn, args, exit, expect)");
        }
      }
      t.results.push_back(r);
    } else if (name == "XFAIL") {
      if (value.empty()) throw FormatError(where + ": XFAIL needs a one-line reason");
      t.xfail = value;
    } else if (name.rfind("CHECK", 0) == 0 || name.rfind("RUN", 0) == 0 || name.rfind("RESULT", 0) == 0 ||
               name.rfind("XFAIL", 0) == 0) {
      // A misspelt directive (CHECK-NXT, RESULT, ...) would otherwise be silently ignored as prose.
      throw FormatError(where + ": unknown directive " + name +
                        " (allowed: RUN, CHECK, CHECK-NEXT, CHECK-SAME, CHECK-NOT, RESULTS, XFAIL)");
    }
    // Other `// WORD:` comments (NOTE:, ...) are prose.
  }
  if (!have_run) throw FormatError(path.string() + ": no '// RUN:' line");
  bool any_positive = false;
  for (const Check& c : t.checks) any_positive = any_positive || c.kind != CheckKind::Not;
  if (!any_positive) throw FormatError(path.string() + ": no CHECK line (at least one positive CHECK is required)");
  for (size_t i = 0; i < t.run_args.size(); ++i) {
    const std::string& a = t.run_args[i];
    if (a == "ir" || (a.size() > 5 && a.substr(a.size() - 5) == ".scan"))
      throw FormatError(path.string() + ": RUN holds only the options after `scangen ir FILE`");
    for (auto [option, names] : {std::pair<std::string, std::vector<std::string>*>{"--passes", &t.passes},
                                 {"--lir-passes", &t.lir_passes}}) {
      std::string list;
      if (a.rfind(option + "=", 0) == 0) list = a.substr(option.size() + 1);
      else if (a == option && i + 1 < t.run_args.size()) list = t.run_args[i + 1];
      else continue;
      std::string name;
      std::istringstream in(list);
      while (std::getline(in, name, ','))
        if (!trim(name).empty()) names->push_back(trim(name));
    }
  }
  // A test of tests/passes/<pass>/ runs that pass: RUN must name it in --passes; a test of
  // tests/lir/<pass>/ names its loop-IR pass in --lir-passes.
  const fs::path dir_path = fs::absolute(path).parent_path();
  const std::string dir = dir_path.filename().string();
  const bool lir_test = dir_path.parent_path().filename() == "lir";
  const std::vector<std::string>& named = lir_test ? t.lir_passes : t.passes;
  if (std::find(named.begin(), named.end(), dir) == named.end())
    throw FormatError(path.string() + ": a test in " + dir + "/ must run that pass: add `" +
                      (lir_test ? "--lir-passes=" : "--passes=") + dir + "` to its RUN line");
  return t;
}

// ---------------------------------------------------------------------------------------------
// Matching

struct Match {
  size_t begin = std::string::npos;
  size_t end = std::string::npos;
};

// The first match of c within text[from, to). A match never spans lines (like FileCheck): a
// regular expression is tried on one line at a time, so `\s` or `[^x]` cannot run into the next
// line, and `^` / `$` anchor at the start and end of a line.
Match find(const Check& c, const std::string& text, size_t from, size_t to) {
  if (from > to) return {};
  if (c.re) {
    for (size_t line = from; line <= to;) {
      size_t eol = std::min(text.find('\n', line), to);
      std::smatch m;
      auto first = text.begin() + std::ptrdiff_t(line), last = text.begin() + std::ptrdiff_t(eol);
      auto flags = std::regex_constants::match_default;
      if (line > 0 && text[line - 1] != '\n') flags |= std::regex_constants::match_not_bol;
      if (eol < text.size() && text[eol] != '\n') flags |= std::regex_constants::match_not_eol;
      if (std::regex_search(first, last, m, *c.re, flags)) {
        size_t b = line + size_t(m.position(0));
        return {b, b + size_t(m.length(0))};
      }
      if (eol >= to) break;
      line = eol + 1;
    }
    return {};
  }
  size_t at = text.find(c.pattern, from);
  if (at == std::string::npos || at + c.pattern.size() > to) return {};
  return {at, at + c.pattern.size()};
}

size_t line_of(const std::string& text, size_t offset) {
  return size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(std::min(offset, text.size())), '\n')) + 1;
}

size_t count_newlines(const std::string& text, size_t from, size_t to) {
  return size_t(std::count(text.begin() + std::ptrdiff_t(from), text.begin() + std::ptrdiff_t(to), '\n'));
}

// The output with line numbers, `>` marking `mark` (0: none).
std::string numbered(const std::string& text, size_t mark) {
  std::ostringstream os;
  std::vector<std::string> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%4zu", i + 1);
    os << (i + 1 == mark ? "> " : "  ") << buf << " | " << lines[i] << "\n";
  }
  return os.str();
}

// Checks the directives in order; returns an explanation of the first failure, or nothing.
std::optional<std::string> match_checks(const fs::path& file, const std::vector<Check>& checks, const std::string& text) {
  size_t pos = 0;  // the end of the previous positive match
  std::vector<const Check*> pending_nots;
  auto where = [&](const Check& c) { return file.string() + ":" + std::to_string(c.line) + ": " + kind_name(c.kind) + ": " + c.pattern; };
  auto check_nots = [&](size_t to) -> std::optional<std::string> {
    for (const Check* n : pending_nots) {
      Match m = find(*n, text, pos, to);
      if (m.begin != std::string::npos) {
        size_t line = line_of(text, m.begin);
        return where(*n) + "\n  found on output line " + std::to_string(line) + " (marked >), where it must not be\n" +
               numbered(text, line);
      }
    }
    pending_nots.clear();
    return std::nullopt;
  };
  for (const Check& c : checks) {
    if (c.kind == CheckKind::Not) {
      pending_nots.push_back(&c);
      continue;
    }
    Match m = find(c, text, pos, text.size());
    std::string failure;
    if (m.begin == std::string::npos) {
      failure = "not found";
    } else if (c.kind == CheckKind::Next && count_newlines(text, pos, m.begin) != 1) {
      failure = count_newlines(text, pos, m.begin) == 0 ? "found on the same line as the previous match, not the next one"
                                                        : "found on line " + std::to_string(line_of(text, m.begin)) +
                                                              ", not on the line right after the previous match";
    } else if (c.kind == CheckKind::Same && count_newlines(text, pos, m.begin) != 0) {
      failure = "not found on the line of the previous match";
    }
    if (!failure.empty()) {
      size_t start_line = line_of(text, pos);
      return where(c) + "\n  " + failure + " (searching from output line " + std::to_string(start_line) +
             ", marked >)\n" + numbered(text, start_line);
    }
    if (auto f = check_nots(m.begin)) return f;
    pos = m.end;
  }
  if (auto f = check_nots(text.size())) return f;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// One test

// The first line of stderr that holds "error:" (what a run-time error says), or all of stderr.
std::string error_line(const std::string& err) {
  for (const std::string& l : split_lines(err))
    if (l.find("error:") != std::string::npos) return l;
  return err;
}

// `scangen run` has no --passes: the tested passes run alone at -O2 when every other pass of the
// table is disabled. That runs the -O2 pipeline (which `scangen ir -O2 --print-after-all` shows:
// the table, with the cleanup passes general and remove-constants-and-unused once more) reduced to
// the names of RUN: the same rewrites as RUN when they appear in it in RUN's order (a cleanup
// pass may run once more). Otherwise there is no such variant, and `note` says why.
std::optional<std::vector<std::string>> isolating_options(const std::string& scangen, const fs::path& file,
                                                         const std::vector<std::string>& passes, std::string& note) {
  RunResult list = run({scangen, "ir", "--list-passes"});
  std::vector<std::string> table;
  for (const std::string& line : split_lines(list.out))
    if (line.rfind("  ", 0) == 0 && !trim(line).empty()) table.push_back(trim(line).substr(0, trim(line).find(' ')));
  if (list.status != 0 || table.empty())
    throw std::runtime_error("`scangen ir --list-passes` failed:\n" + list.out + list.err);
  for (const std::string& p : passes)
    if (std::find(table.begin(), table.end(), p) == table.end())
      throw FormatError("RUN names an unknown pass '" + p + "'");
  RunResult all = run({scangen, "ir", file.string(), "-O2", "--print-after-all"});
  if (all.status != 0) {
    note = "`scangen ir -O2 --print-after-all` failed (" + describe_status(all.status) +
           "): results are checked at -O0 and -O2 only";
    return std::nullopt;
  }
  std::vector<std::string> pipeline;
  const std::string after = "// IR after ";
  for (const std::string& line : split_lines(all.out))
    if (line.rfind(after, 0) == 0) pipeline.push_back(trim(line.substr(after.size())));
  auto at = pipeline.begin();
  for (const std::string& p : passes) {
    at = std::find(at, pipeline.end(), p);
    if (at == pipeline.end()) {
      note = "the passes of RUN do not run in that order at -O2: results are checked at -O0 and -O2 only";
      return std::nullopt;
    }
    ++at;
  }
  std::vector<std::string> options;
  for (const std::string& p : table)
    if (std::find(passes.begin(), passes.end(), p) == passes.end()) options.push_back("--disable-pass=" + p);
  return options;
}

// Returns the failures (empty: the test passed).
std::vector<std::string> run_test(const std::string& scangen, const fs::path& file, const TestFile& t) {
  std::vector<std::string> failures;

  // The IR check.
  std::vector<std::string> argv{scangen, "ir", file.string()};
  argv.insert(argv.end(), t.run_args.begin(), t.run_args.end());
  argv.push_back("--verify-each");
  RunResult ir = run(argv);
  std::cout << "$ " << command_line(argv) << "\n";
  // stdout, then stderr (where --stats prints), on lines of their own.
  std::string text = ir.out + (!ir.out.empty() && ir.out.back() != '\n' && !ir.err.empty() ? "\n" : "") + ir.err;
  if (ir.status != 0) {
    failures.push_back("`scangen ir` failed (" + describe_status(ir.status) + "); its output:\n" + numbered(text, 0));
  } else if (auto f = match_checks(file, t.checks, text)) {
    failures.push_back(*f);
  }

  // The results: -O0, -O2 and (with --passes in RUN) the tested passes alone, on the interpreter
  // and the CPU backend (and the CUDA emulation, for a loop-IR test), must agree.
  std::optional<std::vector<std::string>> alone;
  std::string alone_note;
  if (!t.results.empty() && !t.passes.empty()) alone = isolating_options(scangen, file, t.passes, alone_note);
  if (!alone_note.empty()) std::cout << "note: " << alone_note << "\n";
  for (const Results& r : t.results) {
    struct Variant {
      std::string name;
      RunResult result;
    };
    std::vector<Variant> variants;
    // A loop-IR test's passes may be the CUDA backend's: its kernels run too (on the emulation).
    std::vector<const char*> backends{"interp", "cpu"};
    if (!t.lir_passes.empty()) backends.push_back("cuda-emulation");
    // The CPU pass `threads`: the CPU code compiled for 2 and 3 threads must agree too.
    const bool threads_test = std::find(t.lir_passes.begin(), t.lir_passes.end(), "threads") != t.lir_passes.end() ||
                              std::find(t.lir_passes.begin(), t.lir_passes.end(), "scan-strategy") != t.lir_passes.end();
    if (threads_test) backends.insert(backends.end(), {"cpu --threads=2", "cpu --threads=3"});
    for (const char* backend_and_options : backends) {
      const std::string backend_text(backend_and_options);
      const std::string backend = backend_text.substr(0, backend_text.find(' '));
      const std::string thread_option = backend_text.find(' ') == std::string::npos ? "" : backend_text.substr(backend_text.find(' ') + 1);
      std::vector<std::pair<std::string, std::vector<std::string>>> levels{
          {"-O0", {"-O0"}}, {"-O2", {"-O2", "--verify-each"}}};
      if (alone) {
        std::vector<std::string> opts = *alone;
        opts.insert(opts.end(), {"-O2", "--verify-each"});
        std::string names;
        for (const std::string& p : t.passes) names += (names.empty() ? "" : ",") + p;
        levels.push_back({"--passes=" + names, opts});
      }
      for (const auto& [level, options] : levels) {
        // The rewrite options first (`--disable-pass=NAME`, one name each), then the backend, the
        // function and the NAME=VALUE arguments.
        std::vector<std::string> a{scangen, "run", file.string()};
        a.insert(a.end(), options.begin(), options.end());
        a.insert(a.end(), {"--backend", backend});
        if (!thread_option.empty()) a.push_back(thread_option);
        if (r.fn) a.insert(a.end(), {"--fn", *r.fn});
        a.insert(a.end(), r.args.begin(), r.args.end());
        std::cout << "$ " << command_line(a) << "\n";
        variants.push_back({backend_text + " " + level, run(a)});
      }
    }
    auto shown = [&](const Variant& v) { return r.exit == 0 ? trim(v.result.out) : error_line(v.result.err); };
    std::string where = file.string() + ":" + std::to_string(r.line) + ": RESULTS";
    std::ostringstream report;
    for (const Variant& v : variants)
      report << "  " << v.name << ": " << describe_status(v.result.status) << "\n    stdout: " << trim(v.result.out)
             << "\n" << (v.result.err.empty() ? "" : "    stderr: " + trim(v.result.err) + "\n");
    std::string why;
    for (const Variant& v : variants)
      if (why.empty() && v.result.status != r.exit)
        why = v.name + " gave " + describe_status(v.result.status) + ", expected exit status " + std::to_string(r.exit);
    for (const Variant& v : variants)
      if (why.empty() && shown(v) != shown(variants[0]))
        why = std::string(r.exit == 0 ? "stdout" : "the error message") + " of " + v.name + " differs from " +
              variants[0].name;
    if (why.empty() && shown(variants[0]).empty())
      why = r.exit == 0 ? "nothing printed on stdout" : "no error message on stderr";
    if (why.empty() && r.expect &&
        (r.exit == 0 ? shown(variants[0]) != *r.expect : shown(variants[0]).find(*r.expect) == std::string::npos))
      why = "every run gave\n    " + shown(variants[0]) + "\n  but the test expects" +
            std::string(r.exit == 0 ? "" : " an error line holding") + "\n    " + *r.expect;
    if (!why.empty()) failures.push_back(where + ": " + why + "\n" + report.str());
    else std::cout << "  -> " << shown(variants[0]) << "\n";
  }
  if (failures.empty()) std::cout << ir.out;
  return failures;
}

int test_main(const std::string& scangen, const fs::path& file) {
  TestFile t = parse_test(file);
  std::vector<std::string> failures = run_test(scangen, file, t);
  if (t.xfail) {
    if (failures.empty()) {
      std::cout << "\nUNEXPECTED PASS: " << file.string() << " is marked XFAIL (" << *t.xfail
                << ") but every check passed; remove the XFAIL line if the bug is fixed\n";
      return 1;
    }
    std::cout << "\nXFAIL (expected failure: " << *t.xfail << "):\n";
    for (const std::string& f : failures) std::cout << f << "\n";
    return 0;
  }
  if (failures.empty()) {
    std::cout << "\nPASS: " << file.string() << "\n";
    return 0;
  }
  std::cout << "\nFAIL: " << file.string() << "\n";
  for (const std::string& f : failures) std::cout << f << "\n";
  return 1;
}

// ---------------------------------------------------------------------------------------------
// passes.def

struct TableEntry {
  std::string name, summary;
};

// The C string literal starting at text[pos] == '"'; pos moves past it.
std::string string_literal(const std::string& text, size_t& pos) {
  std::string s;
  ++pos;
  while (pos < text.size() && text[pos] != '"') {
    if (text[pos] == '\\' && pos + 1 < text.size()) {
      char e = text[pos + 1];
      s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      pos += 2;
    } else {
      s += text[pos++];
    }
  }
  if (pos >= text.size()) throw FormatError("passes.def: unterminated string literal");
  ++pos;
  return s;
}

// The entries SCANGEN_PASS(name, function, summary, description) (SCANGEN_LIR_PASS,
// SCANGEN_FAST_LIR_PASS, SCANGEN_CPU_LIR_PASS and SCANGEN_CUDA_LIR_PASS in the loop IR's table): the arguments are read as
// C tokens (adjacent string literals concatenate; comments are skipped).
std::vector<TableEntry> read_table(const fs::path& path) {
  std::string text = read_file(path);
  std::vector<TableEntry> entries;
  size_t pos = 0;
  // The rewrites' table (passes.def) and the loop IR's (codegen/lir_passes.def).
  const std::vector<std::string> macros = {"SCANGEN_PASS(", "SCANGEN_LIR_PASS(", "SCANGEN_FAST_LIR_PASS(",
                                           "SCANGEN_CPU_LIR_PASS(", "SCANGEN_CUDA_LIR_PASS("};
  std::string macro;
  auto skip_blank = [&](size_t& p) {
    for (;;) {
      while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
      if (text.compare(p, 2, "//") == 0) {
        p = text.find('\n', p);
        if (p == std::string::npos) p = text.size();
      } else if (text.compare(p, 2, "/*") == 0) {
        p = text.find("*/", p);
        p = p == std::string::npos ? text.size() : p + 2;
      } else {
        return;
      }
    }
  };
  for (;;) {
    // The next use of the macro outside a comment.
    size_t p = pos;
    size_t found = std::string::npos;
    while (p < text.size()) {
      skip_blank(p);
      if (p >= text.size()) break;
      for (const std::string& m : macros)
        if (text.compare(p, m.size(), m) == 0) {
          found = p;
          macro = m;
        }
      if (found != std::string::npos) break;
      if (text[p] == '"') string_literal(text, p);
      else ++p;
    }
    if (found == std::string::npos) break;
    p = found + macro.size();
    std::vector<std::string> args(1);
    int depth = 0;
    while (p < text.size()) {
      skip_blank(p);
      char c = text[p];
      if (c == '"') {
        args.back() += string_literal(text, p);
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && depth-- == 0) break;
      if (c == ',' && depth == 0) args.emplace_back();
      else args.back() += c;
      ++p;
    }
    if (args.size() != 4) throw FormatError(path.string() + ": an entry without 4 arguments near offset " + std::to_string(found));
    entries.push_back({args[0], args[2]});
    pos = p + 1;
  }
  if (entries.empty()) throw FormatError(path.string() + ": no SCANGEN_PASS or SCANGEN_LIR_PASS entry");
  return entries;
}

bool looks_like_pass_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

int check_docs(const fs::path& table_path, const fs::path& doc_path) {
  std::vector<TableEntry> table = read_table(table_path);
  std::vector<std::string> lines = split_lines(read_file(doc_path));
  std::map<std::string, std::string> sections;  // name -> first non-empty line after it
  std::map<std::string, size_t> section_line;
  std::vector<std::string> order;  // the section names, as they come
  std::vector<std::string> problems;
  bool in_code = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    // A `## ` line inside a fenced code block is no heading.
    if (trim(lines[i]).rfind("```", 0) == 0) in_code = !in_code;
    if (in_code) continue;
    if (lines[i].rfind("## ", 0) != 0) continue;
    std::string name = trim(lines[i].substr(3));
    if (name.size() >= 2 && name.front() == '`' && name.back() == '`') name = name.substr(1, name.size() - 2);
    std::string next;
    for (size_t j = i + 1; j < lines.size(); ++j)
      if (!trim(lines[j]).empty()) {
        next = trim(lines[j]);
        break;
      }
    if (sections.count(name))
      problems.push_back(doc_path.filename().string() + ":" + std::to_string(i + 1) + ": a second section '## " + name +
                         "' (the first is on line " + std::to_string(section_line[name]) + ")\n");
    else
      order.push_back(name);
    sections.emplace(name, next);  // the first section of a name is the one checked
    section_line.emplace(name, i + 1);
  }
  std::set<std::string> names;
  for (const TableEntry& e : table) {
    names.insert(e.name);
    auto it = sections.find(e.name);
    if (it == sections.end()) {
      problems.push_back("pass '" + e.name + "' (passes.def) has no section in " + doc_path.filename().string() +
                         ". Add one, in pipeline order:\n\n    ## " + e.name + "\n\n    " + e.summary +
                         "\n\n    <what it matches, what it produces, when it must not fire, and a before/after"
                         " excerpt of `scangen ir FILE --passes=" + e.name + "`>\n");
    } else if (it->second != e.summary) {
      problems.push_back(doc_path.filename().string() + ":" + std::to_string(section_line[e.name]) + ": section '## " +
                         e.name + "': its first line must be the summary of passes.def exactly.\n    expected: " +
                         e.summary + "\n    found:    " + it->second + "\n");
    }
  }
  // The sections of the passes come in pipeline order.
  std::vector<std::string> documented, expected;
  for (const std::string& name : order)
    if (names.count(name)) documented.push_back(name);
  for (const TableEntry& e : table)
    if (sections.count(e.name)) expected.push_back(e.name);
  if (documented != expected) {
    std::string want;
    for (const std::string& n : expected) want += (want.empty() ? "" : ", ") + n;
    problems.push_back(doc_path.filename().string() + ": the sections of the passes are not in the order of the table (" +
                       want + ")\n");
  }
  for (const auto& [name, next] : sections)
    if (looks_like_pass_name(name) && !names.count(name))
      problems.push_back(doc_path.filename().string() + ":" + std::to_string(section_line[name]) + ": section '## " +
                         name + "' names no pass of passes.def (renamed or removed? update or delete the section)\n");
  if (problems.empty()) {
    std::cout << "docs OK: every pass of " << table_path.string() << " (";
    for (size_t i = 0; i < table.size(); ++i) std::cout << (i ? ", " : "") << table[i].name;
    std::cout << ") has its section in " << doc_path.string() << "\n";
    return 0;
  }
  std::cout << doc_path.string() << " does not match the table " << table_path.string() << ":\n\n";
  for (const std::string& p : problems) std::cout << "- " << p << "\n";
  return 1;
}

int check_tests(const fs::path& table_path, const fs::path& dir) {
  std::vector<TableEntry> table = read_table(table_path);
  std::set<std::string> names;
  std::vector<std::string> problems;
  for (const TableEntry& e : table) {
    names.insert(e.name);
    int count = 0;
    fs::path d = dir / e.name;
    if (fs::is_directory(d))
      for (const auto& f : fs::directory_iterator(d))
        if (f.path().extension() == ".scan") ++count;
    if (count == 0)
      problems.push_back("pass '" + e.name + "' (passes.def) has no test: add " + (dir / e.name).string() +
                         "/<case>.scan files (see " + (dir / "README.md").string() + ")");
  }
  for (const auto& f : fs::directory_iterator(dir))
    if (f.is_directory() && !names.count(f.path().filename().string()))
      problems.push_back("directory " + f.path().string() + " names no pass of passes.def (renamed or removed?)");
  if (problems.empty()) {
    std::cout << "tests OK: every pass of " << table_path.string() << " has tests under " << dir.string() << "\n";
    return 0;
  }
  for (const std::string& p : problems) std::cout << "- " << p << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 3 && args[0] == "--scangen") return test_main(args[1], args[2]);
    if (args.size() == 3 && args[0] == "--check-docs") return check_docs(args[1], args[2]);
    if (args.size() == 3 && args[0] == "--check-tests") return check_tests(args[1], args[2]);
    std::cerr << "usage: pass_test_runner --scangen PATH FILE.scan\n"
                 "       pass_test_runner --check-docs PASSES_DEF REWRITES_MD\n"
                 "       pass_test_runner --check-tests PASSES_DEF TESTS_DIR\n";
    return 2;
  } catch (const FormatError& e) {
    std::cout << "malformed test: " << e.what() << "\n";
    std::cerr << "malformed test: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "pass_test_runner: " << e.what() << "\n";
    return 2;
  }
}
