#include "frontend/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace scangen {

const char* token_spelling(Tok kind) {
  switch (kind) {
#define TOKEN(kind, spelling) \
  case Tok::kind: return spelling;
    SCANGEN_TOKENS(TOKEN)
#undef TOKEN
  }
  return "?";
}

bool continues_line(Tok kind) {
  switch (kind) {
    case Tok::Plus: case Tok::Minus: case Tok::Star: case Tok::StarStar: case Tok::Slash:
    case Tok::Percent: case Tok::At: case Tok::EqEq: case Tok::NotEq: case Tok::Less:
    case Tok::LessEq: case Tok::Greater: case Tok::GreaterEq: case Tok::AmpAmp:
    case Tok::PipePipe: case Tok::Question: case Tok::Colon: return true;
    case Tok::Eof: case Tok::Newline: case Tok::Identifier: case Tok::IntLiteral:
    case Tok::FloatLiteral: case Tok::StringLiteral: case Tok::KwImport: case Tok::KwFn:
    case Tok::KwLet: case Tok::KwReturn: case Tok::KwScan: case Tok::KwInit: case Tok::KwUntil:
    case Tok::KwTrue: case Tok::KwFalse: case Tok::KwF32: case Tok::KwF64: case Tok::KwI32:
    case Tok::KwI64: case Tok::KwBool: case Tok::LParen: case Tok::RParen: case Tok::LBracket:
    case Tok::RBracket: case Tok::LBrace: case Tok::RBrace: case Tok::Comma: case Tok::Semicolon:
    case Tok::Arrow: case Tok::Assign: case Tok::Bang: case Tok::Invalid: return false;
  }
  return false;
}

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case Tok::Identifier: return "'" + t.text + "'";
    case Tok::IntLiteral:
    case Tok::FloatLiteral: return "'" + t.text + "'";
    case Tok::StringLiteral: return "\"" + t.text + "\"";
    default: return token_spelling(t.kind);
  }
}

namespace {

const std::unordered_map<std::string, Tok>& keywords() {
  static const std::unordered_map<std::string, Tok> k = {
      {"fn", Tok::KwFn},     {"let", Tok::KwLet},     {"return", Tok::KwReturn},
      {"scan", Tok::KwScan}, {"init", Tok::KwInit},   {"until", Tok::KwUntil},
      {"true", Tok::KwTrue}, {"false", Tok::KwFalse}, {"f32", Tok::KwF32},
      {"f64", Tok::KwF64},   {"i32", Tok::KwI32},     {"i64", Tok::KwI64},
      {"bool", Tok::KwBool}, {"import", Tok::KwImport}};
  return k;
}

}  // namespace

const char* keyword_text(Tok kind) {
  for (const auto& [text, k] : keywords())
    if (k == kind) return text.c_str();
  return "?";
}

namespace {

// Float literals written as words: weak floats, like 0.5.
const std::unordered_map<std::string, double>& float_words() {
  static const std::unordered_map<std::string, double> w = {
      {"inf", std::numeric_limits<double>::infinity()}, {"nan", std::numeric_limits<double>::quiet_NaN()}};
  return w;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(const SourceFile& file, int file_id, DiagnosticEngine& diags)
      : text_(file.text()), file_id_(file_id), diags_(diags) {}

  std::vector<Token> run() {
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (c == '\n') {
        Loc l = here(1);
        advance();
        if (newlines_significant()) {
          if (!tokens_.empty() && continues_line(tokens_.back().kind))
            tokens_.back().ends_line = true;
          else
            push_newline(l);
        }
        continue;
      }
      if (is_ident_start(c)) {
        lex_identifier();
        if (tokens_.back().kind == Tok::KwFn && !open_.empty()) recover_at_fn();
      } else if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
        lex_number();
      } else if (c == '"') {
        lex_string();
      } else {
        lex_punct();
      }
    }
    Token eof;
    eof.kind = Tok::Eof;
    eof.loc = here(1);
    // The file ends inside an expression: that is the error, not the blocks it leaves open.
    bool after_operator = !tokens_.empty() && continues_line(tokens_.back().kind);
    if (after_operator) {
      tokens_.back().quiet = true;
      diags_.report(DiagId::err_eof_after_operator, tokens_.back().loc, tokens_.back().text);
    }
    close_unclosed(0, eof.loc, /*report=*/!after_operator);
    if (!tokens_.empty() && tokens_.back().kind != Tok::Newline) {
      Token nl = eof;
      nl.kind = Tok::Newline;
      tokens_.push_back(nl);
    }
    tokens_.push_back(eof);
    return std::move(tokens_);
  }

 private:
  Loc here(int length) const { return Loc{file_id_, line_, col_, length}; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  bool newlines_significant() const {
    return open_.empty() || open_.back().token.kind == Tok::LBrace;
  }

  // Reports the brackets open_[first...] as never closed and drops them, closing each with a token
  // of its own at `at` so that the parser nests as the lexer does. The parser stays quiet from the
  // first of them that is a '(' or '[' (its newlines were no statement ends, so what follows it
  // cannot be parsed sensibly), or else from the added closers on.
  void close_unclosed(size_t first, Loc at, bool report = true) {
    if (first >= open_.size()) return;
    size_t quiet_from = tokens_.size();
    for (size_t i = first; i < open_.size(); ++i)
      if (open_[i].token.kind != Tok::LBrace) {
        quiet_from = open_[i].index;
        break;
      }
    for (size_t i = open_.size(); i-- > first;) {
      const Token& opener = open_[i].token;
      if (report) diags_.report(DiagId::err_unclosed, opener.loc, opener.text);
      Token closer;
      closer.kind = opener.kind == Tok::LParen     ? Tok::RParen
                    : opener.kind == Tok::LBracket ? Tok::RBracket
                                                   : Tok::RBrace;
      closer.text = opener.kind == Tok::LParen ? ")" : opener.kind == Tok::LBracket ? "]" : "}";
      closer.loc = at;
      tokens_.push_back(std::move(closer));
    }
    for (size_t i = quiet_from; i < tokens_.size(); ++i) tokens_[i].quiet = true;
    open_.resize(first);
  }

  // 'fn' only starts a top-level declaration: a bracket still open there is never closed. The
  // 'fn' starts a new line, so that the parser can resume at it.
  void recover_at_fn() {
    Token fn = std::move(tokens_.back());
    tokens_.pop_back();
    close_unclosed(0, fn.loc);
    push_newline(fn.loc);
    fn.quiet = true;
    tokens_.push_back(std::move(fn));
  }

  // "..." on one line, without escapes (import paths): the token's text is what lies between the
  // quotes. An unterminated string is reported and kept quiet, so the parser adds nothing.
  void lex_string() {
    Token t;
    t.kind = Tok::StringLiteral;
    t.loc = here(1);
    advance();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') advance();
    t.text = text_.substr(start, pos_ - start);
    if (pos_ < text_.size() && text_[pos_] == '"') {
      advance();
    } else {
      diags_.report(DiagId::err_unterminated_string, t.loc);
      t.quiet = true;
    }
    t.loc.length = static_cast<int32_t>(pos_ - start + 1);
    tokens_.push_back(std::move(t));
  }

  void push_newline(Loc l) {
    if (!tokens_.empty() && tokens_.back().kind == Tok::Newline) return;
    Token t;
    t.kind = Tok::Newline;
    t.loc = l;
    tokens_.push_back(t);
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        Loc start = here(2);
        advance();
        advance();
        bool closed = false;
        while (pos_ < text_.size()) {
          if (text_[pos_] == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
            advance();
            advance();
            closed = true;
            break;
          }
          advance();
        }
        if (!closed) diags_.report(DiagId::err_unterminated_comment, start);
      } else {
        break;
      }
    }
  }

  void lex_identifier() {
    Token t;
    size_t start = pos_;
    t.loc = here(0);
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) advance();
    t.text = text_.substr(start, pos_ - start);
    t.loc.length = static_cast<int32_t>(t.text.size());
    auto kw = keywords().find(t.text);
    t.kind = kw == keywords().end() ? Tok::Identifier : kw->second;
    auto word = float_words().find(t.text);
    if (word != float_words().end()) {
      t.kind = Tok::FloatLiteral;
      t.float_value = word->second;
    }
    tokens_.push_back(std::move(t));
  }

  void lex_number() {
    Token t;
    size_t start = pos_;
    t.loc = here(0);
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
    if (pos_ < text_.size() && text_[pos_] == '.' &&
        !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '.')) {
      is_float = true;
      advance();
      while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t save_pos = pos_;
      int save_col = col_;
      advance();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) advance();
      if (pos_ < text_.size() && is_digit(text_[pos_])) {
        is_float = true;
        while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
      } else {
        pos_ = save_pos;  // not an exponent: leave 'e' for the next token
        col_ = save_col;
      }
    }
    // A number glued to letters (12abc) is one malformed token.
    bool malformed = false;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) {
      malformed = true;
      advance();
    }
    t.text = text_.substr(start, pos_ - start);
    t.loc.length = static_cast<int32_t>(t.text.size());
    if (malformed) {
      diags_.report(DiagId::err_bad_number, t.loc, t.text);
      t.kind = Tok::IntLiteral;
    } else if (is_float) {
      t.kind = Tok::FloatLiteral;
      t.float_value = std::strtod(t.text.c_str(), nullptr);
    } else {
      t.kind = Tok::IntLiteral;
      errno = 0;
      unsigned long long v = std::strtoull(t.text.c_str(), nullptr, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
        // 9223372036854775808 is allowed only right after a unary minus; the parser decides.
        t.int_overflow = true;
        t.int_value = INT64_MIN;
        if (!(errno != ERANGE && v == static_cast<unsigned long long>(INT64_MAX) + 1)) {
          diags_.report(DiagId::err_int_literal_too_large, t.loc, t.text);
          t.int_overflow = false;
          t.int_value = 0;
        }
      } else {
        t.int_value = static_cast<int64_t>(v);
      }
    }
    tokens_.push_back(std::move(t));
  }

  void lex_punct() {
    Token t;
    t.loc = here(1);
    char c = text_[pos_];
    char n = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    auto two = [&](Tok kind) {
      t.kind = kind;
      t.text = text_.substr(pos_, 2);
      t.loc.length = 2;
      advance();
      advance();
    };
    auto one = [&](Tok kind) {
      t.kind = kind;
      t.text = std::string(1, c);
      advance();
    };
    switch (c) {
      case '(': one(Tok::LParen); break;
      case ')': one(Tok::RParen); break;
      case '[': one(Tok::LBracket); break;
      case ']': one(Tok::RBracket); break;
      case '{': one(Tok::LBrace); break;
      case '}': one(Tok::RBrace); break;
      case ',': one(Tok::Comma); break;
      case ':': one(Tok::Colon); break;
      case ';': one(Tok::Semicolon); break;
      case '?': one(Tok::Question); break;
      case '@': one(Tok::At); break;
      case '+': one(Tok::Plus); break;
      case '/': one(Tok::Slash); break;
      case '%': one(Tok::Percent); break;
      case '-': n == '>' ? two(Tok::Arrow) : one(Tok::Minus); break;
      case '*': n == '*' ? two(Tok::StarStar) : one(Tok::Star); break;
      case '=': n == '=' ? two(Tok::EqEq) : one(Tok::Assign); break;
      case '!': n == '=' ? two(Tok::NotEq) : one(Tok::Bang); break;
      case '<': n == '=' ? two(Tok::LessEq) : one(Tok::Less); break;
      case '>': n == '=' ? two(Tok::GreaterEq) : one(Tok::Greater); break;
      case '&':
        if (n == '&') {
          two(Tok::AmpAmp);
          break;
        }
        [[fallthrough]];
      case '|':
        if (c == '|' && n == '|') {
          two(Tok::PipePipe);
          break;
        }
        [[fallthrough]];
      default: {
        std::string shown(1, c);
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
          shown = fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        Diagnostic& d = diags_.report(DiagId::err_unexpected_char, t.loc, shown);
        if (c == '#') {
          // Python's comment: the rest of the line is skipped as one, so nothing else is reported.
          diags_.note(d, DiagId::note_hash_comment, t.loc);
          while (pos_ < text_.size() && text_[pos_] != '\n') advance();
          return;
        }
        if (c == '.') note_numpy_attribute(d);
        advance();
        // Kept as a token so that the parser skips its statement without a second message.
        t.kind = Tok::Invalid;
        t.text = shown;
        t.quiet = true;
        tokens_.push_back(std::move(t));
        return;
      }
    }
    if (track_brackets(t)) tokens_.push_back(std::move(t));
  }

  // `x.T`, `x.shape`: NumPy's attributes, which are functions here (the '.' is at pos_).
  void note_numpy_attribute(Diagnostic& d) {
    struct Habit {
      const char* attribute;
      DiagId note;
    };
    static const Habit kHabits[] = {{"T", DiagId::note_numpy_transpose}, {"shape", DiagId::note_numpy_shape}};
    size_t start = pos_ + 1, end = start;
    while (end < text_.size() && is_ident_char(text_[end])) ++end;
    std::string attribute = text_.substr(start, end - start);
    Loc at{file_id_, line_, col_ + 1, static_cast<int32_t>(end - start)};
    for (const Habit& h : kHabits)
      if (attribute == h.attribute) diags_.note(d, h.note, at);
  }

  // Tracks nesting; returns false for a closer that closes nothing (reported and dropped).
  bool track_brackets(Token& t) {
    switch (t.kind) {
      case Tok::LParen:
      case Tok::LBracket:
      case Tok::LBrace: open_.push_back({t, tokens_.size()}); return true;
      case Tok::RParen:
      case Tok::RBracket:
      case Tok::RBrace: {
        Tok want = t.kind == Tok::RParen ? Tok::LParen
                   : t.kind == Tok::RBracket ? Tok::LBracket : Tok::LBrace;
        if (!open_.empty() && open_.back().token.kind == want) {
          open_.pop_back();
          return true;
        }
        // It closes an outer bracket: the ones opened since were never closed.
        for (size_t i = open_.size(); i-- > 0;)
          if (open_[i].token.kind == want) {
            close_unclosed(i + 1, t.loc);
            t.quiet = true;
            open_.pop_back();
            return true;
          }
        // ')' for a '[' or ']' for a '(': the wrong kind of closer; read it as the right one.
        if (!open_.empty() && open_.back().token.kind != Tok::LBrace && t.kind != Tok::RBrace) {
          const Token& opener = open_.back().token;
          auto& d = diags_.report(DiagId::err_mismatched_close, t.loc, t.text, opener.text);
          diags_.note(d, DiagId::note_opened_here, opener.loc, opener.text);
          t.kind = opener.kind == Tok::LParen ? Tok::RParen : Tok::RBracket;
          open_.pop_back();
          return true;
        }
        diags_.report(DiagId::err_unbalanced_close, t.loc, t.text);
        return false;
      }
      default: return true;
    }
  }

  const std::string& text_;
  int file_id_;
  DiagnosticEngine& diags_;
  size_t pos_ = 0;
  int32_t line_ = 1;
  int32_t col_ = 1;
  std::vector<Token> tokens_;
  struct Open {
    Token token;
    size_t index;  // in tokens_
  };
  std::vector<Open> open_;
};

}  // namespace

std::vector<Token> lex(const SourceFile& file, int file_id, DiagnosticEngine& diags) {
  return Lexer(file, file_id, diags).run();
}

}  // namespace scangen
