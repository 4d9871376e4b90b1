// Text and naming helpers shared by the JITs (cpu_jit.cpp, cuda_*.cpp); not part of the public
// API.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace scangen::detail {

// 'text'
std::string single_quoted(const std::string& text);
// The words joined with single spaces.
std::string joined(const std::vector<std::string>& words);
// The first `count` lines of `text`, then "[... N more lines]" if there are more.
std::string first_lines(const std::string& text, std::size_t count);
// 16 random hexadecimal digits, for unique temporary file names (with the process id).
std::string random_hex();
// The environment variable's value, or nullptr when it is unset or empty.
const char* environment(const char* name);

}  // namespace scangen::detail
