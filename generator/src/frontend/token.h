// Tokens of the .scan language.
#pragma once

#include <cstdint>
#include <string>

#include "support/source.h"

namespace scangen {

// TOKEN(kind, spelling for messages)
#define SCANGEN_TOKENS(TOKEN)          \
  TOKEN(Eof, "end of file")            \
  TOKEN(Newline, "end of line")        \
  TOKEN(Identifier, "a name")          \
  TOKEN(IntLiteral, "an integer")      \
  TOKEN(FloatLiteral, "a number")      \
  TOKEN(StringLiteral, "a string")     \
  TOKEN(KwImport, "'import'")          \
  TOKEN(KwFn, "'fn'")                  \
  TOKEN(KwLet, "'let'")                \
  TOKEN(KwReturn, "'return'")          \
  TOKEN(KwScan, "'scan'")              \
  TOKEN(KwInit, "'init'")              \
  TOKEN(KwUntil, "'until'")            \
  TOKEN(KwTrue, "'true'")              \
  TOKEN(KwFalse, "'false'")            \
  TOKEN(KwF32, "'f32'")                \
  TOKEN(KwF64, "'f64'")                \
  TOKEN(KwI32, "'i32'")                \
  TOKEN(KwI64, "'i64'")                \
  TOKEN(KwBool, "'bool'")              \
  TOKEN(LParen, "'('")                 \
  TOKEN(RParen, "')'")                 \
  TOKEN(LBracket, "'['")               \
  TOKEN(RBracket, "']'")               \
  TOKEN(LBrace, "'{'")                 \
  TOKEN(RBrace, "'}'")                 \
  TOKEN(Comma, "','")                  \
  TOKEN(Colon, "':'")                  \
  TOKEN(Semicolon, "';'")              \
  TOKEN(Arrow, "'->'")                 \
  TOKEN(Assign, "'='")                 \
  TOKEN(EqEq, "'=='")                  \
  TOKEN(NotEq, "'!='")                 \
  TOKEN(Less, "'<'")                   \
  TOKEN(LessEq, "'<='")                \
  TOKEN(Greater, "'>'")                \
  TOKEN(GreaterEq, "'>='")             \
  TOKEN(Plus, "'+'")                   \
  TOKEN(Minus, "'-'")                  \
  TOKEN(Star, "'*'")                   \
  TOKEN(StarStar, "'**'")              \
  TOKEN(Slash, "'/'")                  \
  TOKEN(Percent, "'%'")                \
  TOKEN(At, "'@'")                     \
  TOKEN(AmpAmp, "'&&'")                \
  TOKEN(PipePipe, "'||'")              \
  TOKEN(Bang, "'!'")                   \
  TOKEN(Question, "'?'")               \
  TOKEN(Invalid, "an invalid character")

enum class Tok {
#define TOKEN(kind, spelling) kind,
  SCANGEN_TOKENS(TOKEN)
#undef TOKEN
};

const char* token_spelling(Tok kind);

// A binary operator of expressions (the `?` and `:` of `c ? a : b` included): a newline right
// after one does not end the statement. `=` and `->` are not among them.
bool continues_line(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  std::string text;  // the characters of the token as written
  Loc loc;
  int64_t int_value = 0;    // IntLiteral
  double float_value = 0;   // FloatLiteral
  bool int_overflow = false;
  // A binary operator at the end of a line (its newline was skipped): an expression must follow on
  // a later line.
  bool ends_line = false;
  // The lexer already reported an error that makes the parser's view of this token unreliable (an
  // unclosed or mismatched bracket, an invalid character): the parser reports nothing here.
  bool quiet = false;
};

// How a token is described in "expected X, found Y" messages.
std::string describe_token(const Token& t);

}  // namespace scangen
