// Running a helper program (the C++ compiler) without a shell.
#pragma once

#include <string>
#include <vector>

namespace scangen {

struct ProcessResult {
  int exit_code = 0;   // the exit status, or 128 + the signal number if a signal killed the child
  std::string output;  // stdout and stderr, interleaved as the child wrote them
};

// Starts argv[0] (searched in PATH like execvp) with the arguments argv[1..], no shell involved,
// stdin from /dev/null, stdout and stderr captured through one pipe; waits for it to finish.
// Throws RuntimeError("cannot run '<argv0>': <reason>") if the program cannot be started.
// With `working_directory` (an open directory's descriptor, not -1), the child starts in that
// directory, and a relative argv[0] naming a path (one with a '/') is made absolute first so that
// it names the same program.
ProcessResult run_process(const std::vector<std::string>& argv, int working_directory = -1);

}  // namespace scangen
