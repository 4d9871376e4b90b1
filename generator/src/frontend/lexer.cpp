#include "frontend/lexer.h"

#include <cerrno>
#include <cstdlib>
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

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case Tok::Identifier: return "'" + t.text + "'";
    case Tok::IntLiteral:
    case Tok::FloatLiteral: return "'" + t.text + "'";
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
      {"bool", Tok::KwBool}};
  return k;
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
        if (newlines_significant()) push_newline(l);
        continue;
      }
      if (is_ident_start(c)) {
        lex_identifier();
      } else if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
        lex_number();
      } else {
        lex_punct();
      }
    }
    for (auto it = open_.rbegin(); it != open_.rend(); ++it)
      diags_.report(DiagId::err_unclosed, it->loc, it->text);
    Token eof;
    eof.kind = Tok::Eof;
    eof.loc = here(1);
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
    return open_.empty() || open_.back().kind == Tok::LBrace;
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
        diags_.report(DiagId::err_unexpected_char, t.loc, shown);
        advance();
        return;
      }
    }
    track_brackets(t);
    tokens_.push_back(std::move(t));
  }

  void track_brackets(const Token& t) {
    switch (t.kind) {
      case Tok::LParen:
      case Tok::LBracket:
      case Tok::LBrace: open_.push_back(t); break;
      case Tok::RParen:
      case Tok::RBracket:
      case Tok::RBrace: {
        Tok want = t.kind == Tok::RParen ? Tok::LParen
                   : t.kind == Tok::RBracket ? Tok::LBracket : Tok::LBrace;
        if (open_.empty()) {
          diags_.report(DiagId::err_unbalanced_close, t.loc, t.text);
        } else if (open_.back().kind != want) {
          auto& d = diags_.report(DiagId::err_mismatched_close, t.loc, t.text, open_.back().text);
          diags_.note(d, DiagId::note_opened_here, open_.back().loc, open_.back().text);
          // Recover: pop to the matching opener if there is one, else ignore the closer.
          for (size_t i = open_.size(); i-- > 0;)
            if (open_[i].kind == want) {
              open_.resize(i);
              break;
            }
        } else {
          open_.pop_back();
        }
        break;
      }
      default: break;
    }
  }

  const std::string& text_;
  int file_id_;
  DiagnosticEngine& diags_;
  size_t pos_ = 0;
  int32_t line_ = 1;
  int32_t col_ = 1;
  std::vector<Token> tokens_;
  std::vector<Token> open_;
};

}  // namespace

std::vector<Token> lex(const SourceFile& file, int file_id, DiagnosticEngine& diags) {
  return Lexer(file, file_id, diags).run();
}

}  // namespace scangen
