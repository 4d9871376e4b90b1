// Recursive-descent parser: tokens -> ast::Module. Reports syntax errors with their location and
// recovers at the next statement, so that one run shows several errors.
#pragma once

#include "frontend/ast.h"
#include "frontend/token.h"
#include "support/diagnostics.h"

namespace scangen {

ast::Module parse(const std::vector<Token>& tokens, int file_id, DiagnosticEngine& diags);

// Lexes and parses one file of the manager.
ast::Module parse_file(const SourceManager& sources, int file_id, DiagnosticEngine& diags);

}  // namespace scangen
