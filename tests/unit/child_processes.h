// Work run in several processes at once, for tests of what processes share (on-disk caches).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <vector>

namespace scangen::testing {

// Forks `count` children that run `body(i)` at the same time and waits for them. A child reports
// only through its exit status (0 when `body` returns true; an exception is printed and fails
// it) and never returns into the test framework. Returns each child's exit status, or -1 for a
// child that did not exit normally.
inline std::vector<int> run_in_children(int count, const std::function<bool(int)>& body) {
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int status = 1;
      try {
        if (body(i)) status = 0;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", i, e.what());
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  std::vector<int> statuses;
  for (pid_t child : children) {
    int status = 0;
    bool exited = ::waitpid(child, &status, 0) == child && WIFEXITED(status);
    statuses.push_back(exited ? WEXITSTATUS(status) : -1);
  }
  return statuses;
}

}  // namespace scangen::testing
