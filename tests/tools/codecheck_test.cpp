// Runs scangen-codecheck on the inputs under data/ and checks its exit status and output.
//
// Expected findings are written into the data files as `// EXPECT: <text>` on the line the
// finding is reported for; a file must produce exactly those findings and no others, so each
// bad file fails for the intended reason only.
#define BOOST_TEST_MODULE codecheck
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct RunResult {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

RunResult run_codecheck(const std::vector<std::string>& arguments) {
  std::string command = shell_quoted(SCANGEN_CODECHECK);
  for (const std::string& argument : arguments) command += " " + shell_quoted(argument);
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  BOOST_TEST_REQUIRE(pipe != nullptr);
  RunResult result;
  char buffer[4096];
  size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.output.append(buffer, count);
  const int status = ::pclose(pipe);
  BOOST_TEST_REQUIRE(WIFEXITED(status));
  result.exit_status = WEXITSTATUS(status);
  return result;
}

std::string data_file(const std::string& name) {
  return std::string(SCANGEN_CODECHECK_DATA) + "/" + name;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

struct Expectation {
  unsigned line = 0;
  std::string text;
};

std::vector<Expectation> expectations_in(const std::string& path) {
  std::ifstream file(path);
  BOOST_TEST_REQUIRE(file.good(), "cannot read " << path);
  std::vector<Expectation> expectations;
  const std::string marker = "// EXPECT: ";
  unsigned number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    const size_t at = line.find(marker);
    if (at != std::string::npos) expectations.push_back({number, line.substr(at + marker.size())});
  }
  return expectations;
}

// A finding line: a compiler diagnostic of level warning or higher, or a loop-hygiene violation.
bool is_finding_line(const std::string& line) {
  for (const char* kind : {": warning: ", ": error: ", ": fatal error: ", ": loop-hygiene: "})
    if (line.find(kind) != std::string::npos) return true;
  return false;
}

// Runs the tool on one data file and checks it reports exactly the file's EXPECT lines.
void check_expected_findings(const std::string& name) {
  const std::vector<Expectation> expected = expectations_in(data_file(name));
  BOOST_TEST_REQUIRE(!expected.empty(), name << " has no EXPECT markers");
  const RunResult result = run_codecheck({data_file(name)});
  BOOST_TEST_CONTEXT("scangen-codecheck " << name << " printed:\n" << result.output) {
    BOOST_TEST(result.exit_status == 1);
    const std::vector<std::string> lines = lines_of(result.output);
    for (const Expectation& expectation : expected) {
      const std::string place = "/" + name + ":" + std::to_string(expectation.line) + ":";
      bool found = false;
      for (const std::string& line : lines)
        found = found || (line.find(place) != std::string::npos &&
                          line.find(expectation.text) != std::string::npos);
      BOOST_TEST(found, "missing at line " << expectation.line << ": " << expectation.text);
    }
    size_t findings = 0;
    for (const std::string& line : lines) findings += is_finding_line(line) ? 1 : 0;
    BOOST_TEST(findings == expected.size());
    BOOST_TEST(result.output.find(std::to_string(expected.size()) + " findings") !=
               std::string::npos);
  }
}

void check_clean(const std::vector<std::string>& arguments, const std::string& summary) {
  const RunResult result = run_codecheck(arguments);
  BOOST_TEST_CONTEXT("scangen-codecheck printed:\n" << result.output) {
    BOOST_TEST(result.exit_status == 0);
    BOOST_TEST(result.output == summary + "\n");
  }
}

const std::vector<std::string> kWarningFiles = {"warn_unused_variable.cpp", "warn_float_to_int.cpp",
                                                "syntax_error.cpp"};
const std::vector<std::string> kLoopFiles = {"loop_new_delete.cpp", "loop_malloc_free.cpp",
                                             "loop_containers.cpp", "loop_virtual_call.cpp",
                                             "loop_function_pointer.cpp"};

}  // namespace

BOOST_AUTO_TEST_SUITE(codecheck)

BOOST_AUTO_TEST_CASE(clean_emitted_code_passes) {
  // step, step_outer, step_inner (nested) and step2 (declared before its loop).
  check_clean({data_file("clean_emitted.cpp")}, "ok: 1 files, 4 scan loops checked");
  check_clean({"--no-loops", data_file("clean_emitted.cpp")},
              "ok: 1 files, 0 scan loops checked (--no-loops)");
}

BOOST_AUTO_TEST_CASE(compiler_warnings_and_errors_fail) {
  for (const std::string& name : kWarningFiles) check_expected_findings(name);
}

BOOST_AUTO_TEST_CASE(new_and_delete_in_time_loop_fail) {
  check_expected_findings("loop_new_delete.cpp");
}
BOOST_AUTO_TEST_CASE(allocation_functions_in_time_loop_fail) {
  check_expected_findings("loop_malloc_free.cpp");
}
BOOST_AUTO_TEST_CASE(growing_containers_in_time_loop_fail) {
  check_expected_findings("loop_containers.cpp");
}
BOOST_AUTO_TEST_CASE(virtual_calls_in_time_loop_fail) {
  check_expected_findings("loop_virtual_call.cpp");
}
BOOST_AUTO_TEST_CASE(function_pointer_calls_in_time_loop_fail) {
  check_expected_findings("loop_function_pointer.cpp");
}

BOOST_AUTO_TEST_CASE(bad_loop_files_are_otherwise_warning_free) {
  // So the loop files fail for their loops only, and the warning files for their warnings only.
  for (const std::string& name : kLoopFiles)
    check_clean({"--no-loops", data_file(name)}, "ok: 1 files, 0 scan loops checked (--no-loops)");
  for (const char* name : {"warn_unused_variable.cpp", "warn_float_to_int.cpp"})
    check_clean({"--no-warnings", data_file(name)}, "ok: 1 files, 1 scan loops checked");
}

BOOST_AUTO_TEST_CASE(no_warnings_still_fails_on_errors) {
  const RunResult result = run_codecheck({"--no-warnings", data_file("syntax_error.cpp")});
  BOOST_TEST_CONTEXT(result.output) {
    BOOST_TEST(result.exit_status == 1);
    BOOST_TEST(result.output.find("error: use of undeclared identifier 'undeclared_carry'") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(extra_clang_arguments_follow_the_builtin_ones) {
  check_clean({data_file("warn_unused_variable.cpp"), "--", "-Wno-unused-variable"},
              "ok: 1 files, 1 scan loops checked");
}

BOOST_AUTO_TEST_CASE(loop_prefix_selects_the_time_loops) {
  // With another prefix, `step` loops are ordinary loops...
  check_clean({"--loop-prefix=tick", data_file("loop_new_delete.cpp")},
              "ok: 1 files, 0 scan loops checked");
  // ...and loops over `i` become time loops: clean_emitted.cpp grows a vector in one.
  const RunResult result = run_codecheck({"--loop-prefix", "i", data_file("clean_emitted.cpp")});
  BOOST_TEST_CONTEXT(result.output) {
    BOOST_TEST(result.exit_status == 1);
    BOOST_TEST(result.output.find("loop-hygiene: call to std::vector::push_back (may allocate)") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(several_files_are_checked_together) {
  const RunResult result =
      run_codecheck({data_file("clean_emitted.cpp"), data_file("loop_new_delete.cpp")});
  BOOST_TEST_CONTEXT(result.output) {
    BOOST_TEST(result.exit_status == 1);
    BOOST_TEST(result.output.find("2 findings: 0 compiler diagnostics, 2 loop-hygiene violations "
                                  "(2 files, 5 scan loops checked)") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_2) {
  const std::vector<std::vector<std::string>> bad_command_lines = {
      {},
      {"--bogus", data_file("clean_emitted.cpp")},
      {data_file("does_not_exist.cpp")},
      {"--loop-prefix=", data_file("clean_emitted.cpp")},
      {"--loop-prefix"},
  };
  for (const std::vector<std::string>& arguments : bad_command_lines) {
    const RunResult result = run_codecheck(arguments);
    BOOST_TEST_CONTEXT(result.output) {
      BOOST_TEST(result.exit_status == 2);
      BOOST_TEST(result.output.find("usage: scangen-codecheck") != std::string::npos);
    }
  }
  const RunResult help = run_codecheck({"--help"});
  BOOST_TEST(help.exit_status == 0);
  BOOST_TEST(help.output.find("usage: scangen-codecheck") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
