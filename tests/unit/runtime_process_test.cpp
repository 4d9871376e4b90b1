#define BOOST_TEST_MODULE runtime_process
#include <fcntl.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir.h"

#include "scangen/runtime/errors.h"
#include "scangen/runtime/process.h"

using namespace scangen;

BOOST_AUTO_TEST_CASE(captures_stdout_and_stderr_together) {
  ProcessResult result = run_process({"/bin/sh", "-c", "echo out; echo err 1>&2; echo again"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.output == "out\nerr\nagain\n");
}

BOOST_AUTO_TEST_CASE(passes_arguments_without_a_shell) {
  ProcessResult result = run_process({"printf", "%s|", "two words", "$HOME", "*"});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.output == "two words|$HOME|*|");
}

BOOST_AUTO_TEST_CASE(reports_exit_codes_and_signals) {
  BOOST_TEST(run_process({"/bin/sh", "-c", "exit 3"}).exit_code == 3);
  BOOST_TEST(run_process({"false"}).exit_code == 1);
  BOOST_TEST(run_process({"/bin/sh", "-c", "kill -KILL $$"}).exit_code == 128 + 9);
}

BOOST_AUTO_TEST_CASE(reads_large_output_without_deadlock) {
  // 4 MiB on stdout and 1 MiB on stderr: far more than a pipe buffer holds.
  ProcessResult result = run_process(
      {"/bin/sh", "-c", "head -c 4194304 /dev/zero; head -c 1048576 /dev/zero 1>&2; exit 5"});
  BOOST_TEST(result.exit_code == 5);
  BOOST_TEST(result.output.size() == 5u * 1024 * 1024);
}

BOOST_AUTO_TEST_CASE(stdin_is_empty) {
  ProcessResult result = run_process({"/bin/sh", "-c", "wc -c"});
  BOOST_TEST(result.output == "0\n");
}

BOOST_AUTO_TEST_CASE(missing_program_is_a_runtime_error) {
  try {
    run_process({"/nonexistent/program", "x"});
    BOOST_ERROR("no error for a missing program");
  } catch (const RuntimeError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "cannot run '/nonexistent/program': No such file or directory");
  }
  BOOST_CHECK_THROW(run_process({"scangen-no-such-program-in-path"}), RuntimeError);
  BOOST_CHECK_THROW(run_process({}), RuntimeError);
}

BOOST_AUTO_TEST_CASE(runs_in_a_working_directory_given_by_its_descriptor) {
  namespace fs = std::filesystem;
  scangen::testing::TempDir here("scangen-process-test"), there("scangen-process-test");
  // A program named by a relative path is the one the current directory leads to, not one in the
  // working directory.
  std::ofstream(here / "where.sh") << "#!/bin/sh\necho here; pwd\n";
  std::ofstream(there / "where.sh") << "#!/bin/sh\necho there; pwd\n";
  fs::permissions(here / "where.sh", fs::perms::owner_all);
  fs::permissions(there / "where.sh", fs::perms::owner_all);
  const int directory = ::open(there.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  BOOST_TEST_REQUIRE(directory >= 0);
  const fs::path old_cwd = fs::current_path();
  fs::current_path(here.path);
  ProcessResult result;
  try {
    result = run_process({"./where.sh"}, directory);
  } catch (...) {
    fs::current_path(old_cwd);
    ::close(directory);
    throw;
  }
  fs::current_path(old_cwd);
  BOOST_TEST(result.output == "here\n" + fs::canonical(there.path).string() + "\n");
  BOOST_TEST(run_process({"/bin/sh", "-c", "cat where.sh"}, directory).output == "#!/bin/sh\necho there; pwd\n");
  ::close(directory);
}
