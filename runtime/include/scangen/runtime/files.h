// File output for tools built on the runtime.
#pragma once

#include <filesystem>
#include <string_view>

namespace scangen {

// Writes the whole file through a temporary sibling renamed into place, so that readers (and a
// concurrent build) never see a partly written file. Throws RuntimeError naming the file.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace scangen
