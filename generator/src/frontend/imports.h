// The import statements of a .scan file: each header found, analyzed (imports/cxx_header.h) and
// turned into the program's import table. Runs before semantic analysis, with the SourceManager
// writable: headers are loaded into it so that diagnostics can point into them.
#pragma once

#include <filesystem>
#include <vector>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace scangen {

struct ImportSearch {
  std::filesystem::path scan_dir;                   // the .scan file's directory (searched first)
  std::vector<std::filesystem::path> include_dirs;  // -I, in order
  std::filesystem::path cache_dir;                  // of the parsed headers (imports/header_cache.h)
};

// One entry per import statement that names a usable header (each reported problem is an error
// in `diags`). Every file read is appended to `dependencies`.
std::vector<ir::ImportRef> resolve_imports(const ast::Module& module, SourceManager& sources,
                                           DiagnosticEngine& diags, const ImportSearch& search,
                                           std::vector<std::filesystem::path>& dependencies);

}  // namespace scangen
