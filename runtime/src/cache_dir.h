// The on-disk caches of the JITs (cpu_jit.cpp: .so entries; cuda_compile.cpp: .bin entries) hold
// code that scangen loads and runs, so a cache must be something only its user can have written.
// CacheDir is that one rule for both: not part of the public API.
//
// The directory is opened once and checked through its descriptor (owner = our effective uid,
// not writable by group or others), and every entry is reached through that descriptor (openat,
// renameat, unlinkat; the C++ compiler runs inside it; dlopen goes through /proc/self/fd): what
// was checked is what is used, and renaming the directories above it cannot redirect it. The
// directories above are therefore not checked. Entries are opened without following symbolic
// links and checked on their descriptor (a regular file of ours, not writable by group or
// others). Whatever fails a check is refused with a RuntimeError that says what is wrong and what
// to do; it is never used, deleted or worked around.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "file_util.h"

namespace scangen::detail {

class CacheDir {
 public:
  // Opens the directory `path` (absolute), creating each missing component with mode 0700.
  // `what` names the cache in messages: "JIT cache", "CUDA cache". Throws RuntimeError when it
  // cannot be created or opened ("cannot create the <what> directory '<path>': ...") and when it
  // is not ours or is writable by group or others ("refusing the <what> directory ...").
  CacheDir(std::filesystem::path path, std::string what);

  const std::filesystem::path& path() const { return path_; }
  int descriptor() const { return directory_.get(); }
  // <path>/<name>, for messages and for what callers report.
  std::filesystem::path path_of(std::string_view name) const { return path_ / std::string(name); }
  // "/proc/self/fd/<n>/<name>": the entry reached through the checked directory, for dlopen
  // (which takes a path). Throws RuntimeError when /proc is not mounted.
  std::string descriptor_path(std::string_view name) const;

  // The entry opened for reading, or an invalid descriptor when there is none. Throws
  // RuntimeError ("refusing the <what> entry '<path>': ...") when it is a symbolic link, not a
  // regular file, not ours, or writable by group or others; and when it cannot be opened.
  FileDescriptor open_entry(std::string_view name) const;
  // A file this process has just had written into the directory (the compiler's output): opened
  // as open_entry does, then given mode 0700 whatever the umask made of it. Throws RuntimeError.
  FileDescriptor open_own_output(std::string_view name) const;
  // Whether anything (a symbolic link included) has this name.
  bool has(std::string_view name) const;

  // "tmp-<key>-<pid>-<random><suffix>": a name no other writer (thread or process) uses.
  static std::string unique_temp_name(const std::string& key, std::string_view suffix);
  // Creates the new file `name` (it must not exist; links are not followed) with mode 0600 and
  // writes `contents`. Throws RuntimeError ("cannot write to the <what> directory '<path>': ...").
  void create_file(std::string_view name, std::string_view contents) const;
  // Renames `from` to `to` within the directory (atomically replacing `to`). Throws RuntimeError.
  void rename(std::string_view from, std::string_view to) const;
  // create_file under a unique temporary name, then rename to `name`: readers see the old file
  // or the whole new one. The temporary is removed on failure. Throws RuntimeError.
  void write_atomically(std::string_view name, const std::string& key, std::string_view contents) const;
  // Removes the entry if it exists; errors are ignored (for cleanup).
  void remove(std::string_view name) const noexcept;

 private:
  FileDescriptor open_checked(std::string_view name, bool own_output) const;
  [[noreturn]] void cannot_write(const std::string& reason) const;

  std::filesystem::path path_;
  std::string what_;
  FileDescriptor directory_;
};

}  // namespace scangen::detail
