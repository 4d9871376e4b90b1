#include "markdown_blocks.h"

#include <sstream>

namespace docs {
namespace {

// The fence of a line: its indentation and the number of backticks, or 0 backticks for none.
struct Fence {
  size_t indent = 0;
  size_t ticks = 0;
  std::string info;
};

Fence fence_of(const std::string& line) {
  Fence fence;
  fence.indent = line.find_first_not_of(' ');
  if (fence.indent == std::string::npos) return {};
  size_t end = line.find_first_not_of('`', fence.indent);
  if (end == std::string::npos) end = line.size();
  fence.ticks = end - fence.indent;
  if (fence.ticks < 3) return {};
  fence.info = line.substr(end);
  // CommonMark: the info string of a backtick fence has no backtick (```` ```x ```` is inline
  // code).
  if (fence.info.find('`') != std::string::npos) return {};
  return fence;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

std::vector<Block> parse_blocks(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  std::vector<Block> blocks;
  for (size_t i = 0; i < lines.size(); ++i) {
    Fence open = fence_of(lines[i]);
    if (open.ticks == 0) continue;
    Block block;
    block.line = static_cast<int>(i) + 1;
    std::vector<std::string> info = words(open.info);
    if (!info.empty()) {
      block.lang = info.front();
      block.attributes.assign(info.begin() + 1, info.end());
    }
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      Fence close = fence_of(lines[j]);
      if (close.ticks >= open.ticks && words(close.info).empty()) break;
      const std::string& body = lines[j];
      size_t strip = std::min(open.indent, body.find_first_not_of(' ') == std::string::npos
                                               ? body.size()
                                               : body.find_first_not_of(' '));
      block.lines.push_back(body.substr(strip));
    }
    if (j == lines.size())
      throw MarkdownError("line " + std::to_string(block.line) +
                          ": the code block is never closed");
    blocks.push_back(std::move(block));
    i = j;
  }
  return blocks;
}

std::string body_text(const Block& block) {
  std::string text;
  for (const std::string& line : block.lines) text += line + "\n";
  return text;
}

}  // namespace docs
