#include "jit_util.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace scangen::detail {

std::string single_quoted(const std::string& text) { return "'" + text + "'"; }

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string first_lines(const std::string& text, std::size_t count) {
  std::size_t end = 0;
  for (std::size_t line = 0; line < count; ++line) {
    end = text.find('\n', end);
    if (end == std::string::npos) return text;
    ++end;
  }
  std::size_t remaining = 0;
  for (std::size_t i = end; i < text.size(); ++i) remaining += text[i] == '\n';
  return text.substr(0, end) + "[... " + std::to_string(remaining + 1) + " more lines]\n";
}

std::string random_hex() {
  std::random_device device;
  uint64_t value = (uint64_t(device()) << 32) ^ device();
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace scangen::detail
