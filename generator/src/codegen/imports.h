// How emitted C++ includes the headers a program imports, for code the JIT compiles (the CPU
// backend's single translation unit, the CUDA emulation, the interpreter's import shim): by
// absolute path, after the SHA-256 of each file the header depends on, so that the JIT's cache,
// keyed on the source text, misses when a header changes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace scangen::codegen {

// A comment with the SHA-256 of each of the header's dependencies (the header, then what it
// includes), then its #include.
std::string jit_include_lines(const std::filesystem::path& header, const std::vector<std::filesystem::path>& dependencies);

}  // namespace scangen::codegen
