#include "links.h"

#include <cctype>
#include <regex>
#include <sstream>

#include "markdown_blocks.h"

namespace docs {
namespace {

// The lines of the page outside fenced blocks (empty strings in their place, so that the line
// numbers stay).
std::vector<std::string> prose_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const Block& block : parse_blocks(text))
    for (size_t i = 0; i <= block.lines.size() + 1; ++i)
      if (static_cast<size_t>(block.line) - 1 + i < lines.size()) lines[block.line - 1 + i].clear();
  return lines;
}

}  // namespace

std::vector<Link> relative_links(const std::string& text) {
  static const std::regex link("\\]\\(([^)\\s#]*)(#([^)\\s]*))?\\)");
  static const std::regex scheme("^[a-zA-Z][a-zA-Z0-9+.-]*:");
  std::vector<Link> links;
  static const std::regex code_span("(`+)[^`]*?\\1");
  std::vector<std::string> lines = prose_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    lines[i] = std::regex_replace(lines[i], code_span, "");
    for (std::sregex_iterator it(lines[i].begin(), lines[i].end(), link), end; it != end; ++it) {
      std::string path = (*it)[1].str();
      if (std::regex_search(path, scheme)) continue;
      links.push_back({static_cast<int>(i) + 1, path, (*it)[3].str()});
    }
  }
  return links;
}

std::set<std::string> heading_anchors(const std::string& text) {
  std::set<std::string> anchors;
  for (const std::string& line : prose_lines(text)) {
    size_t hashes = line.find_first_not_of('#');
    if (hashes == 0 || hashes == std::string::npos || line[hashes] != ' ') continue;
    std::string anchor;
    std::string heading = line.substr(hashes + 1);
    heading.erase(heading.find_last_not_of(' ') + 1);
    for (char c : heading) {
      // Bytes of UTF-8 characters are kept, as GitHub keeps letters (no heading here has other).
      unsigned char u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80)
        anchor += static_cast<char>(std::tolower(u));
      else if (c == ' ')
        anchor += '-';
    }
    anchors.insert(anchor);
  }
  return anchors;
}

}  // namespace docs
