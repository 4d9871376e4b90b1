#include "scangen/runtime/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "file_util.h"
#include "scangen/runtime/errors.h"

extern char** environ;

namespace scangen {
namespace {

using detail::FileDescriptor;

class SpawnFileActions {
 public:
  SpawnFileActions() {
    if (int err = posix_spawn_file_actions_init(&actions_)) throw_error(err);
  }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  posix_spawn_file_actions_t* get() { return &actions_; }
  static void check(int err) {
    if (err) throw_error(err);
  }

 private:
  [[noreturn]] static void throw_error(int err) {
    throw RuntimeError(std::string("cannot prepare to start a process: ") + std::strerror(err));
  }
  posix_spawn_file_actions_t actions_;
};

std::string cannot_run(const std::string& program, int err) {
  return "cannot run '" + program + "': " + std::strerror(err);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, int working_directory) {
  if (argv.empty() || argv[0].empty()) throw RuntimeError("cannot run a process: no program given");
  std::string program = argv[0];
  if (working_directory >= 0 && program.find('/') != std::string::npos && program[0] != '/') {
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(program, error);
    if (error) throw RuntimeError(cannot_run(argv[0], error.value()));
    program = absolute.string();
  }

  // O_CLOEXEC keeps the pipe out of processes that other threads may spawn meanwhile; the child's
  // dup2 copies onto 1 and 2 do not inherit the flag.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw RuntimeError(cannot_run(argv[0], errno));
  FileDescriptor read_end(pipe_fds[0]);
  FileDescriptor write_end(pipe_fds[1]);

  SpawnFileActions actions;
  SpawnFileActions::check(
      posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0));
  SpawnFileActions::check(
      posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDOUT_FILENO));
  SpawnFileActions::check(
      posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDERR_FILENO));
  if (working_directory >= 0)
    SpawnFileActions::check(posix_spawn_file_actions_addfchdir_np(actions.get(), working_directory));

  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  c_argv.push_back(program.data());
  for (std::size_t i = 1; i < argv.size(); ++i) c_argv.push_back(const_cast<char*>(argv[i].c_str()));
  c_argv.push_back(nullptr);

  pid_t child = 0;
  // glibc reports a failed exec through the return value (it spawns with CLONE_VFORK).
  if (int err = posix_spawnp(&child, c_argv[0], actions.get(), nullptr, c_argv.data(), environ))
    throw RuntimeError(cannot_run(argv[0], err));
  // Only the child may hold the write end now, so that reading ends when the child exits.
  write_end.reset();

  ProcessResult result;
  char chunk[1 << 16];
  int read_errno = 0;
  for (;;) {
    ssize_t got = ::read(read_end.get(), chunk, sizeof chunk);
    if (got > 0) {
      result.output.append(chunk, static_cast<std::size_t>(got));
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      read_errno = errno;
      break;
    }
  }
  // Closing the read end first makes a child that is still writing get SIGPIPE instead of
  // blocking forever if reading failed.
  read_end.reset();

  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      throw RuntimeError("cannot wait for '" + argv[0] + "': " + std::strerror(errno));
  }
  if (read_errno != 0)
    throw RuntimeError("cannot read the output of '" + argv[0] + "': " + std::strerror(read_errno));
  // Without WUNTRACED, waitpid reports only children that exited or were killed by a signal.
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace scangen
