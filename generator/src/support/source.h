// Source files and locations. Every diagnostic and every IR node points back into a SourceFile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scangen {

// A position in a source file: 1-based line and column, and the length of the range that
// starts there (for the `~` under it). file < 0 means "no location".
struct Loc {
  int32_t file = -1;
  int32_t line = 0;
  int32_t col = 0;
  int32_t length = 1;
  bool valid() const { return file >= 0; }
  // The smallest range covering both (on the first one's line when they differ).
  static Loc span(const Loc& begin, const Loc& end);
};

// "line:col", as messages and comments name a place in the .scan file.
std::string line_col(const Loc& l);

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  int line_count() const { return static_cast<int>(line_starts_.size()); }
  // The text of a 1-based line, without its newline.
  std::string_view line(int line) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

// The text of a source file; throws RuntimeError ("cannot read '<path>': ...") when it cannot be
// read.
std::string read_source_file(const std::filesystem::path& path);

class SourceManager {
 public:
  // Adds a file held in memory; returns its id.
  int add(std::string name, std::string text);
  // Reads a file from disk; throws RuntimeError when it cannot be read.
  int load(const std::filesystem::path& path);
  const SourceFile& file(int id) const { return *files_.at(static_cast<size_t>(id)); }
  int count() const { return static_cast<int>(files_.size()); }

 private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

}  // namespace scangen
