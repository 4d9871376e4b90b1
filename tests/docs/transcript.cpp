#include "transcript.h"

#include <cctype>
#include <cstring>

namespace docs {
namespace {

constexpr const char* kPrompt = "$ ";
constexpr const char* kAnyText = "...";
constexpr const char* kCacheKey = "<key>";
constexpr size_t kCacheKeyDigits = 64;

bool starts_with(const std::string& text, size_t at, const char* prefix) {
  return text.compare(at, std::strlen(prefix), prefix) == 0;
}

// The length of the bracketed JSON value at the start of `text` ([...] with nested brackets
// and strings), or 0 when it does not start with one.
size_t json_array_length(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[')
      ++depth;
    else if (c == ']' && --depth == 0)
      return i + 1;
    if (depth == 0) return 0;
  }
  return 0;
}

std::string trim(const std::string& text) {
  size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

bool line_match_from(const std::string& shown, size_t s, const std::string& actual, size_t a) {
  if (s == shown.size()) return a == actual.size();
  if (starts_with(shown, s, kAnyText)) {
    for (size_t skip = a; skip <= actual.size(); ++skip)
      if (line_match_from(shown, s + std::strlen(kAnyText), actual, skip)) return true;
    return false;
  }
  if (starts_with(shown, s, kCacheKey)) {
    if (actual.size() - a < kCacheKeyDigits) return false;
    for (size_t i = a; i < a + kCacheKeyDigits; ++i)
      if (!std::isxdigit(static_cast<unsigned char>(actual[i])) ||
          std::isupper(static_cast<unsigned char>(actual[i])))
        return false;
    return line_match_from(shown, s + std::strlen(kCacheKey), actual, a + kCacheKeyDigits);
  }
  return a < actual.size() && shown[s] == actual[a] && line_match_from(shown, s + 1, actual, a + 1);
}

bool lines_match_from(const std::vector<std::string>& shown, size_t s,
                      const std::vector<std::string>& actual, size_t a) {
  if (s == shown.size()) return a == actual.size();
  if (trim(shown[s]) == kAnyText) {
    for (size_t skip = a; skip <= actual.size(); ++skip)
      if (lines_match_from(shown, s + 1, actual, skip)) return true;
    return false;
  }
  return a < actual.size() && line_matches(shown[s], actual[a]) &&
         lines_match_from(shown, s + 1, actual, a + 1);
}

}  // namespace

std::vector<Command> console_commands(const Block& block) {
  std::vector<Command> commands;
  for (size_t i = 0; i < block.lines.size(); ++i) {
    const std::string& line = block.lines[i];
    int line_number = block.line + 1 + static_cast<int>(i);
    if (starts_with(line, 0, kPrompt)) {
      commands.push_back({line_number, line.substr(std::strlen(kPrompt)), {}});
    } else if (commands.empty()) {
      throw MarkdownError("line " + std::to_string(line_number) +
                          ": a console block starts with a command (`$ ...`), then its output");
    } else {
      commands.back().expected.push_back(line);
    }
  }
  return commands;
}

std::vector<Command> sh_commands(const Block& block) {
  std::vector<Command> commands;
  for (size_t i = 0; i < block.lines.size(); ++i) {
    const std::string& line = block.lines[i];
    size_t comment = line.find(" # ");
    if (!starts_with(line, 0, "scangen run ") || comment == std::string::npos) continue;
    std::string note = trim(line.substr(comment + 3));
    size_t length = json_array_length(note);
    if (length == 0) continue;
    commands.push_back({block.line + 1 + static_cast<int>(i),
                        trim(line.substr(0, comment)),
                        {note.substr(0, length)}});
  }
  return commands;
}

bool line_matches(const std::string& shown, const std::string& actual) {
  return line_match_from(shown, 0, actual, 0);
}

bool output_matches(const std::vector<std::string>& shown, const std::vector<std::string>& actual) {
  return lines_match_from(shown, 0, actual, 0);
}

}  // namespace docs
