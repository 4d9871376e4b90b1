// The lexer. Newlines end statements, except inside (...) or [...] (as in Python); inside a
// { ... } block that is itself inside parentheses they count again, so that a scan written inline
// in a call keeps its one-statement-per-line body.
#pragma once

#include <vector>

#include "frontend/token.h"
#include "support/diagnostics.h"

namespace scangen {

// Returns the tokens of a file, ending with Eof. Reports lexical errors and goes on.
std::vector<Token> lex(const SourceFile& file, int file_id, DiagnosticEngine& diags);

// The text of a keyword token ("let" for Tok::KwLet), from the lexer's table of keywords.
const char* keyword_text(Tok kind);

}  // namespace scangen
