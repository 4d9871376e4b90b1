// Semantic analysis: checks a parsed module (names, types, shapes, scan classification) and builds
// its IR. Every user error of a program is reported here, with its location.
#pragma once

#include <optional>
#include <string>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace scangen {

// Returns the program, or nullopt when errors were reported (all of them are in `diags`).
// `imports`: the module's imported headers (frontend/imports.h), whose functions become callable.
std::optional<ir::Program> analyze(const ast::Module& module, const SourceManager& sources,
                                   DiagnosticEngine& diags, const std::vector<ir::ImportRef>& imports = {});

}  // namespace scangen
