#include "codegen/imports.h"

#include <sstream>

#include "scangen/runtime/sha256.h"
#include "support/cxx_text.h"

namespace scangen::codegen {

std::string jit_include_lines(const std::filesystem::path& header, const std::vector<std::filesystem::path>& dependencies) {
  std::ostringstream os;
  for (const auto& dep : dependencies) {
    std::string hash;
    try {
      hash = sha256_file_hex(dep);
    } catch (const std::exception&) {
      hash = "unreadable";  // the compiler will say why
    }
    os << "// sha256 " << hash << " " << dep.string() << "\n";
  }
  os << "#include " << quote(header.string()) << "\n";
  return os.str();
}

}  // namespace scangen::codegen
