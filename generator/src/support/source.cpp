#include "support/source.h"

#include <fstream>
#include <sstream>

#include "scangen/runtime/errors.h"

namespace scangen {

std::string line_col(const Loc& l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

Loc Loc::span(const Loc& begin, const Loc& end) {
  if (!begin.valid()) return end;
  if (!end.valid() || end.file != begin.file || end.line != begin.line) return begin;
  Loc l = begin;
  int32_t last = std::max(begin.col + begin.length, end.col + end.length);
  l.col = std::min(begin.col, end.col);
  l.length = last - l.col;
  return l;
}

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string_view SourceFile::line(int line) const {
  if (line < 1 || line > line_count()) return {};
  size_t begin = line_starts_[static_cast<size_t>(line - 1)];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

int SourceManager::add(std::string name, std::string text) {
  files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
  return count() - 1;
}

int SourceManager::load(const std::filesystem::path& path) { return add(path.string(), read_source_file(path)); }

std::string read_source_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw RuntimeError("cannot read '" + path.string() + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeError("cannot read '" + path.string() + "': no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw RuntimeError("cannot read '" + path.string() + "'");
  return text.str();
}

}  // namespace scangen
