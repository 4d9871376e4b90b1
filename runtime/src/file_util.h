// File helpers shared by the runtime's sources (not part of the public API). Every failure is a
// RuntimeError that names the file and says why (strerror), never a silently short file.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace scangen::detail {

// "'path': No such file or directory", for messages that start with "cannot read" and the like.
std::string quoted_reason(const std::filesystem::path& path, int error_number);

// Throws the RuntimeError "cannot read ORIGIN: REASON", where ORIGIN names what was read (a quoted
// path, or an entry of an archive).
[[noreturn]] void fail_to_read(std::string_view origin, const std::string& reason);

// The whole file's bytes.
std::string read_file(const std::filesystem::path& path);

// Owns a file descriptor and closes it when it goes out of scope, so that no error path leaks one.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset() noexcept;
  // Gives the descriptor up without closing it.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Every byte from the descriptor's current offset to the end; `shown` names the file in errors.
std::string read_all(const FileDescriptor& file, const std::filesystem::path& shown);

// A file being written; write() throws on the first failure, close() reports a failed flush.
class OutputFile {
 public:
  enum class Mode { Truncate, CreateNew };  // CreateNew fails if the file exists (O_EXCL)
  OutputFile(std::filesystem::path path, Mode mode);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  void write(const void* data, std::size_t size);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// Writes `path` through a temporary sibling `path.tmp.<pid>` that is renamed into place, so that
// readers never see a partly written file. The temporary is removed if anything fails.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(OutputFile&)>& write_contents);

// Removes a file if it exists and ignores every error (for cleanup on error paths).
void remove_quietly(const std::filesystem::path& path) noexcept;

}  // namespace scangen::detail
