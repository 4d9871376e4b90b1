#include "cache_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "jit_util.h"
#include "scangen/runtime/errors.h"

namespace scangen::detail {
namespace fs = std::filesystem;

namespace {

constexpr mode_t kPrivateDirectoryMode = 0700;
constexpr mode_t kPrivateFileMode = 0600;
constexpr mode_t kPrivateProgramMode = 0700;  // compiled code: its owner may read and map it
constexpr mode_t kWritableByOthers = S_IWGRP | S_IWOTH;

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// "group", "others" or "group and others", for a mode with some of kWritableByOthers.
std::string writers(mode_t mode) {
  if ((mode & kWritableByOthers) == kWritableByOthers) return "group and others";
  return (mode & S_IWGRP) ? "group" : "others";
}

std::string not_ours(const struct stat& status) {
  return "it belongs to uid " + std::to_string(status.st_uid) + ", not to you (uid " +
         std::to_string(::geteuid()) + ")";
}

// Opens `path` one component at a time from "/", creating each missing one with mode 0700.
// Existing components may be symbolic links (a cache on another disk); the result is checked on
// its descriptor afterwards, whatever the path led to.
FileDescriptor open_or_create_directory(const fs::path& path, const std::string& what) {
  auto cannot = [&](const std::string& reason) {
    return RuntimeError("cannot create the " + what + " directory " + single_quoted(path.string()) + ": " +
                        reason);
  };
  FileDescriptor current(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!current.valid()) throw cannot(quoted_reason("/", errno));
  fs::path reached = "/";
  for (const fs::path& component : path.relative_path()) {
    if (component.empty()) continue;  // a trailing '/'
    reached /= component;
    int next = ::openat(current.get(), component.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      // EEXIST: another process made it meanwhile; it is checked like any other directory.
      if (::mkdirat(current.get(), component.c_str(), kPrivateDirectoryMode) != 0 && errno != EEXIST)
        throw cannot(quoted_reason(reached, errno));
      next = ::openat(current.get(), component.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (next < 0) throw cannot(quoted_reason(reached, errno));
    current = FileDescriptor(next);
  }
  return current;
}

}  // namespace

CacheDir::CacheDir(fs::path path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  directory_ = open_or_create_directory(path_, what_);
  struct stat status {};
  if (::fstat(directory_.get(), &status) != 0)
    throw RuntimeError("cannot open the " + what_ + " directory " + quoted_reason(path_, errno));
  const std::string refusing = "refusing the " + what_ + " directory " + single_quoted(path_.string()) + ": ";
  const std::string risk = ", so someone else could put code in it that scangen would run as you; ";
  const std::string elsewhere = "set XDG_CACHE_HOME to a directory of your own";
  if (status.st_uid != ::geteuid())
    throw RuntimeError(refusing + not_ours(status) + risk + elsewhere + ", or have this one removed");
  if (status.st_mode & kWritableByOthers)
    throw RuntimeError(refusing + "it is writable by " + writers(status.st_mode) + " (mode " +
                       octal_mode(status.st_mode) + ")" + risk + "make it private (chmod go-w " +
                       single_quoted(path_.string()) + "), or " + elsewhere);
}

std::string CacheDir::descriptor_path(std::string_view name) const {
  static const bool proc_mounted = ::access("/proc/self/fd", X_OK) == 0;
  if (!proc_mounted)
    throw RuntimeError("cannot load from the " + what_ + " directory " + single_quoted(path_.string()) +
                       ": /proc is not mounted (scangen loads cached code through /proc/self/fd)");
  return "/proc/self/fd/" + std::to_string(directory_.get()) + "/" + std::string(name);
}

FileDescriptor CacheDir::open_entry(std::string_view name) const { return open_checked(name, false); }

FileDescriptor CacheDir::open_own_output(std::string_view name) const { return open_checked(name, true); }

FileDescriptor CacheDir::open_checked(std::string_view name, bool own_output) const {
  const std::string file(name);
  const std::string refusing = "refusing the " + what_ + " entry " + single_quoted(path_of(name).string()) + ": ";
  const std::string remedy = "; scangen loads only regular files of yours that no one else can write (remove it)";
  // O_NONBLOCK: a FIFO planted under an entry's name must not hang the open.
  FileDescriptor entry(::openat(directory_.get(), file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!entry.valid()) {
    if (errno == ENOENT && !own_output) return entry;
    if (errno == ELOOP) throw RuntimeError(refusing + "it is a symbolic link" + remedy);
    throw RuntimeError("cannot read " + quoted_reason(path_of(name), errno));
  }
  struct stat status {};
  if (::fstat(entry.get(), &status) != 0) throw RuntimeError("cannot read " + quoted_reason(path_of(name), errno));
  if (!S_ISREG(status.st_mode)) throw RuntimeError(refusing + "it is not a regular file" + remedy);
  if (status.st_uid != ::geteuid()) throw RuntimeError(refusing + not_ours(status) + remedy);
  if (own_output) {
    // The linker gives its output the mode the umask allows (0775 under umask 002).
    if (::fchmod(entry.get(), kPrivateProgramMode) != 0) cannot_write(quoted_reason(path_of(name), errno));
  } else if (status.st_mode & kWritableByOthers) {
    throw RuntimeError(refusing + "it is writable by " + writers(status.st_mode) + " (mode " +
                       octal_mode(status.st_mode) + ")" + remedy);
  }
  return entry;
}

bool CacheDir::has(std::string_view name) const {
  struct stat status {};
  return ::fstatat(directory_.get(), std::string(name).c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0;
}

std::string CacheDir::unique_temp_name(const std::string& key, std::string_view suffix) {
  return "tmp-" + key + "-" + std::to_string(::getpid()) + "-" + random_hex() + std::string(suffix);
}

void CacheDir::cannot_write(const std::string& reason) const {
  throw RuntimeError("cannot write to the " + what_ + " directory " + single_quoted(path_.string()) + ": " + reason);
}

void CacheDir::create_file(std::string_view name, std::string_view contents) const {
  const std::string file(name);
  // O_EXCL | O_NOFOLLOW: never write through something that was already there.
  FileDescriptor out(::openat(directory_.get(), file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              kPrivateFileMode));
  if (!out.valid()) cannot_write(quoted_reason(path_of(name), errno));
  while (!contents.empty()) {
    ssize_t written = ::write(out.get(), contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int error = written < 0 ? errno : EIO;
      remove(name);
      cannot_write(quoted_reason(path_of(name), error));
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  if (::close(out.get()) != 0) {
    const int error = errno;
    (void)out.release();
    remove(name);
    cannot_write(quoted_reason(path_of(name), error));
  }
  (void)out.release();
}

void CacheDir::rename(std::string_view from, std::string_view to) const {
  if (::renameat(directory_.get(), std::string(from).c_str(), directory_.get(), std::string(to).c_str()) != 0)
    cannot_write(quoted_reason(path_of(to), errno));
}

void CacheDir::write_atomically(std::string_view name, const std::string& key, std::string_view contents) const {
  const std::string temp = unique_temp_name(key, fs::path(std::string(name)).extension().string());
  create_file(temp, contents);
  try {
    rename(temp, name);
  } catch (...) {
    remove(temp);
    throw;
  }
}

void CacheDir::remove(std::string_view name) const noexcept {
  ::unlinkat(directory_.get(), std::string(name).c_str(), 0);
}

}  // namespace scangen::detail
