#include "file_util.h"

#include "scangen/runtime/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "scangen/runtime/errors.h"

namespace scangen::detail {

std::string quoted_reason(const std::filesystem::path& path, int error_number) {
  return "'" + path.string() + "': " + std::strerror(error_number);
}

void fail_to_read(std::string_view origin, const std::string& reason) {
  throw RuntimeError("cannot read " + std::string(origin) + ": " + reason);
}

std::string read_file(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) throw RuntimeError("cannot read " + quoted_reason(path, errno));
  std::string bytes;
  char chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.append(chunk, got);
  if (std::ferror(file.get())) throw RuntimeError("cannot read " + quoted_reason(path, errno));
  return bytes;
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void FileDescriptor::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string read_all(const FileDescriptor& file, const std::filesystem::path& shown) {
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.get(), chunk, sizeof chunk);
    if (got > 0) {
      bytes.append(chunk, static_cast<std::size_t>(got));
    } else if (got == 0) {
      return bytes;
    } else if (errno != EINTR) {
      throw RuntimeError("cannot read " + quoted_reason(shown, errno));
    }
  }
}

OutputFile::OutputFile(std::filesystem::path path, Mode mode) : path_(std::move(path)) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::CreateNew ? O_EXCL : O_TRUNC);
  int fd = ::open(path_.c_str(), flags, 0644);
  if (fd < 0) throw RuntimeError("cannot write " + quoted_reason(path_, errno));
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    int err = errno;
    ::close(fd);
    throw RuntimeError("cannot write " + quoted_reason(path_, err));
  }
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::write(const void* data, std::size_t size) {
  if (!file_)
    throw RuntimeError("cannot write '" + path_.string() + "': the file is already closed");
  if (size > 0 && std::fwrite(data, 1, size, file_) != size)
    throw RuntimeError("cannot write " + quoted_reason(path_, errno));
}

void OutputFile::close() {
  if (!file_) return;
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) throw RuntimeError("cannot write " + quoted_reason(path_, errno));
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(OutputFile&)>& write_contents) {
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(::getpid());
  try {
    OutputFile out(temp, OutputFile::Mode::Truncate);
    write_contents(out);
    out.close();
    if (std::rename(temp.c_str(), path.c_str()) != 0)
      throw RuntimeError("cannot write " + quoted_reason(path, errno));
  } catch (...) {
    remove_quietly(temp);
    throw;
  }
}

void remove_quietly(const std::filesystem::path& path) noexcept {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

}  // namespace scangen::detail

namespace scangen {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  detail::write_file_atomically(path, [&](detail::OutputFile& out) { out.write(contents); });
}

}  // namespace scangen
