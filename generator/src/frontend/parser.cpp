#include "frontend/parser.h"

#include <cctype>

#include "frontend/lexer.h"
#include "frontend/spelling.h"
#include "support/limits.h"

namespace scangen {
namespace {

using namespace ast;

// Thrown inside a statement to unwind to the statement loop, which skips to the next statement.
struct SyntaxError {};

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int file_id, DiagnosticEngine& diags)
      : toks_(tokens), file_id_(file_id), diags_(diags) {}

  Module run() {
    Module m;
    m.file_id = file_id_;
    skip_newlines();
    while (at(Tok::KwImport)) {
      try {
        m.imports.push_back(parse_import());
      } catch (SyntaxError&) {
        skip_statement();
      }
      skip_newlines();
    }
    while (!at(Tok::Eof)) {
      if (at(Tok::KwImport)) {
        diags_.report(DiagId::err_import_after_fn, peek().loc);
        skip_to_next_fn();
        continue;
      }
      if (!at(Tok::KwFn)) {
        if (!peek().quiet) {
          Diagnostic& d = diags_.report(DiagId::err_expected_toplevel, peek().loc, describe_token(peek()));
          note_keyword_meant(d, peek(), {Tok::KwFn, Tok::KwImport});
        }
        skip_to_next_fn();
        continue;
      }
      try {
        m.functions.push_back(parse_fn());
      } catch (SyntaxError&) {
        skip_to_next_fn();
      }
      skip_newlines();
    }
    return m;
  }

 private:
  // ---- token access
  const Token& peek(int ahead = 0) const {
    size_t i = std::min(pos_ + static_cast<size_t>(ahead), toks_.size() - 1);
    return toks_[i];
  }
  bool at(Tok k) const { return peek().kind == k; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    last_ = &t;
    return t;
  }
  bool accept(Tok k) {
    if (!at(k)) return false;
    next();
    return true;
  }
  const Token& expect(Tok k, const char* what = nullptr) {
    if (!at(k)) {
      // `let inf = ...`: a literal spelled as a word (inf, nan) where a name is declared.
      bool word_literal = at(Tok::FloatLiteral) && std::isalpha(static_cast<unsigned char>(peek().text[0]));
      if (k == Tok::Identifier && word_literal && !abandoned_) {
        diags_.report(DiagId::err_literal_as_name, peek().loc, peek().text);
        throw SyntaxError{};
      }
      fail(what ? what : token_spelling(k));
    }
    return next();
  }
  // Reports what was expected, unless the lexer already reported an error here.
  [[noreturn]] void fail(const std::string& expected) {
    if (abandoned_) throw SyntaxError{};
    if (!peek().quiet) {
      Diagnostic& d = diags_.report(DiagId::err_expected, peek().loc, expected, describe_token(peek()));
      if (last_ && last_->ends_line) diags_.note(d, DiagId::note_line_continues, last_->loc, last_->text);
    }
    throw SyntaxError{};
  }
  void skip_newlines() {
    while (at(Tok::Newline) || at(Tok::Semicolon)) next();
  }
  // Skips line ends when the first token after them is `kind`.
  void skip_newlines_before(Tok kind) {
    int ahead = 0;
    while (peek(ahead).kind == Tok::Newline) ++ahead;
    if (ahead > 0 && peek(ahead).kind == kind)
      while (at(Tok::Newline)) next();
  }
  Loc span_from(const Loc& begin) const { return last_ ? Loc::span(begin, last_->loc) : begin; }

  // Skips to the end of the current statement: a newline or ';' at this nesting level, or the
  // '}' that closes the enclosing block, or a 'fn' (both left in place). The error may have been
  // found inside brackets of the statement: their closers are skipped at depth 0.
  void skip_statement() {
    int depth = 0;
    while (!at(Tok::Eof) && !at(Tok::KwFn)) {
      Tok k = peek().kind;
      if (depth == 0 && (k == Tok::Newline || k == Tok::Semicolon)) {
        next();
        return;
      }
      if (depth == 0 && k == Tok::RBrace) return;
      if (k == Tok::LParen || k == Tok::LBracket || k == Tok::LBrace) ++depth;
      if ((k == Tok::RParen || k == Tok::RBracket || k == Tok::RBrace) && depth > 0) --depth;
      next();
    }
  }
  void skip_to_next_fn() {
    while (!at(Tok::Eof)) {
      if (at(Tok::KwFn) && (pos_ == 0 || toks_[pos_ - 1].kind == Tok::Newline)) return;
      next();
    }
  }

  // `retrun x`, `fnn f(...)`: a name close to a keyword where one of `keywords` was expected.
  void note_keyword_meant(Diagnostic& d, const Token& t, std::initializer_list<Tok> keywords) {
    if (t.kind != Tok::Identifier) return;
    Spelling spelling(t.text);
    for (Tok k : keywords) spelling.consider(keyword_text(k));
    if (spelling.best()) diags_.note(d, DiagId::note_did_you_mean, t.loc, *spelling.best());
  }

  // ---- declarations
  // import "path": a C++ header whose namespace scangen_export functions become callable.
  ImportDecl parse_import() {
    ImportDecl d;
    d.loc = expect(Tok::KwImport).loc;
    const Token& path = expect(Tok::StringLiteral, "a header path in quotes, e.g. \"helpers.h\"");
    d.path = path.text;
    d.path_loc = path.loc;
    d.loc = span_from(d.loc);
    if (d.path.empty() && !path.quiet) diags_.report(DiagId::err_import_empty_path, path.loc);
    if (!at(Tok::Newline) && !at(Tok::Semicolon) && !at(Tok::Eof)) fail("the end of the import");
    return d;
  }

  std::unique_ptr<FnDecl> parse_fn() {
    auto fn = std::make_unique<FnDecl>();
    fn->loc = expect(Tok::KwFn).loc;
    const Token& name = expect(Tok::Identifier, "a function name");
    fn->name = name.text;
    fn->name_loc = name.loc;
    expect(Tok::LParen);
    while (!at(Tok::RParen)) {
      ParamDecl p;
      const Token& pn = expect(Tok::Identifier, "a parameter name");
      p.name = pn.text;
      p.loc = pn.loc;
      expect(Tok::Colon);
      p.type = parse_type();
      fn->params.push_back(std::move(p));
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RParen);
    // The header may go on over lines: `-> (...)` and the body's `{` may start a line of their own.
    skip_newlines_before(Tok::Arrow);
    expect(Tok::Arrow, "'->' and the result type");
    if (at(Tok::LParen)) {
      next();
      bool trailing_comma = false;
      while (!at(Tok::RParen)) {
        ResultDecl r;
        r.loc = peek().loc;
        if (at(Tok::Identifier) && peek(1).kind == Tok::Colon) {
          r.name = next().text;
          next();
        }
        r.type = parse_type();
        fn->results.push_back(std::move(r));
        trailing_comma = false;
        if (!accept(Tok::Comma)) break;
        trailing_comma = true;
      }
      expect(Tok::RParen);
      fn->tuple_result = fn->results.size() > 1 || trailing_comma;
      if (fn->results.empty()) fail("a result type");
    } else {
      ResultDecl r;
      r.loc = peek().loc;
      r.type = parse_type();
      fn->results.push_back(std::move(r));
    }
    skip_newlines_before(Tok::LBrace);
    fn->body = parse_block(/*in_scan=*/false, &fn->close_loc);
    return fn;
  }

  static bool starts_expression(Tok k) {
    switch (k) {
      case Tok::Identifier: case Tok::IntLiteral: case Tok::FloatLiteral: case Tok::KwTrue:
      case Tok::KwFalse: case Tok::KwF32: case Tok::KwF64: case Tok::KwI32: case Tok::KwI64:
      case Tok::KwBool: case Tok::LParen: case Tok::Minus: case Tok::Plus: case Tok::Bang:
      case Tok::KwScan: return true;
      default: return false;
    }
  }

  std::optional<DType> dtype_of_token(Tok k) const {
    switch (k) {
      case Tok::KwF32: return DType::F32;
      case Tok::KwF64: return DType::F64;
      case Tok::KwI32: return DType::I32;
      case Tok::KwI64: return DType::I64;
      case Tok::KwBool: return DType::Bool;
      default: return std::nullopt;
    }
  }

  TypeDecl parse_type() {
    TypeDecl t;
    t.loc = peek().loc;
    auto dt = dtype_of_token(peek().kind);
    if (!dt) fail("a type (f32, f64, i32, i64 or bool)");
    next();
    t.dtype = *dt;
    if (accept(Tok::LBracket)) {
      while (!at(Tok::RBracket)) {
        DimDecl d;
        d.loc = peek().loc;
        if (at(Tok::IntLiteral)) {
          d.kind = DimDecl::Constant;
          d.value = next().int_value;
        } else if (at(Tok::Identifier)) {
          d.kind = DimDecl::Symbol;
          d.symbol = next().text;
        } else if (accept(Tok::Question)) {
          d.kind = DimDecl::Unknown;
        } else {
          fail("a dimension (an integer, a name or '?')");
        }
        t.dims.push_back(std::move(d));
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RBracket);
      if (t.dims.size() > static_cast<size_t>(kMaxRank))
        diags_.report(DiagId::err_too_many_dims, t.loc, kMaxRank);
    }
    t.loc = span_from(t.loc);
    return t;
  }

  // ---- statements
  std::vector<StmtPtr> parse_block(bool in_scan, Loc* close_loc) {
    NestingGuard guard(*this);
    expect(Tok::LBrace);
    std::vector<StmtPtr> body;
    skip_newlines();
    while (!at(Tok::RBrace) && !at(Tok::Eof) && !at(Tok::KwFn)) {
      try {
        body.push_back(parse_statement(in_scan));
        if (!at(Tok::RBrace)) {
          if (!at(Tok::Newline) && !at(Tok::Semicolon)) fail("end of line or ';'");
          skip_newlines();
        }
      } catch (SyntaxError&) {
        skip_statement();
        skip_newlines();
      }
    }
    if (close_loc) *close_loc = peek().loc;
    expect(Tok::RBrace);
    return body;
  }

  StmtPtr parse_statement(bool in_scan) {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::KwLet: return parse_let();
      case Tok::KwReturn: {
        auto r = std::make_unique<Return>(next().loc);
        if (in_scan) diags_.report(DiagId::err_return_in_scan, r->loc);
        ExprPtr e = parse_expr();
        if (e->kind == ExprKind::Tuple) {
          r->tuple = true;
          for (auto& el : static_cast<Tuple&>(*e).elements) r->values.push_back(std::move(el));
        } else {
          r->values.push_back(std::move(e));
        }
        return r;
      }
      case Tok::KwInit: {
        auto s = std::make_unique<Init>(next().loc);
        if (!in_scan) diags_.report(DiagId::err_scan_statement_outside_scan, s->loc, "init");
        const Token& n = expect(Tok::Identifier, "the name of a state");
        s->name = {n.text, n.loc};
        expect(Tok::Assign);
        s->value = parse_expr();
        return s;
      }
      case Tok::KwUntil: {
        auto s = std::make_unique<Until>(next().loc);
        if (!in_scan) diags_.report(DiagId::err_scan_statement_outside_scan, s->loc, "until");
        s->cond = parse_expr();
        return s;
      }
      default: break;
    }
    // A name followed by the start of an expression on the same line cannot start a statement:
    // `intit s = 0`, `retrun x`, `untill c` are misspelled keywords.
    Tok second = peek(1).kind;
    bool operand_follows = starts_expression(second) && second != Tok::LParen && second != Tok::Minus && second != Tok::Plus;
    if (!t.quiet && t.kind == Tok::Identifier && operand_follows) {
      Diagnostic& d = diags_.report(DiagId::err_expected_statement, t.loc, describe_token(t));
      note_keyword_meant(d, t, {Tok::KwLet, Tok::KwReturn, Tok::KwInit, Tok::KwUntil});
      throw SyntaxError{};
    }
    if (t.kind == Tok::Identifier && peek(1).kind == Tok::LBracket) {
      Loc start = t.loc;
      ExprPtr e = parse_expr();
      if (at(Tok::Assign)) {
        next();
        auto* idx = e->kind == ExprKind::Index ? static_cast<Index*>(e.get()) : nullptr;
        if (!idx || idx->base->kind != ExprKind::Name || idx->items.size() != 1 ||
            idx->items[0].is_slice) {
          diags_.report(DiagId::err_step_target, e->loc, "t");
          throw SyntaxError{};
        }
        auto s = std::make_unique<StepDef>(start);
        s->target = {static_cast<Name&>(*idx->base).name, idx->base->loc};
        s->step = std::move(idx->items[0].index);
        s->value = parse_expr();
        if (!in_scan) diags_.report(DiagId::err_scan_statement_outside_scan, start, "X[t] = ...");
        return s;
      }
      if (!peek().quiet) diags_.report(DiagId::err_expression_statement, e->loc);
      throw SyntaxError{};
    }
    if (t.kind == Tok::RBrace || t.kind == Tok::Eof) fail("a statement");
    if (!t.quiet && starts_expression(t.kind)) {
      // `x + 1` on its own line; `y = x` (a forgotten 'let') is reported as a bad statement.
      ExprPtr e = parse_expr();
      if (at(Tok::Assign) || peek().quiet) {
        if (!peek().quiet) diags_.report(DiagId::err_expected_statement, t.loc, describe_token(t));
        throw SyntaxError{};
      }
      Diagnostic& d = diags_.report(DiagId::err_expression_statement, e->loc);
      note_keyword_meant(d, t, {Tok::KwLet, Tok::KwReturn, Tok::KwInit, Tok::KwUntil});  // `retrun (a, b)`
      throw SyntaxError{};
    }
    if (!t.quiet) diags_.report(DiagId::err_expected_statement, t.loc, describe_token(t));
    throw SyntaxError{};
  }

  StmtPtr parse_let() {
    auto s = std::make_unique<Let>(next().loc);
    if (accept(Tok::LParen)) {
      s->tuple = true;
      while (!at(Tok::RParen)) {
        const Token& n = expect(Tok::Identifier, "a name");
        s->names.push_back({n.text, n.loc});
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RParen);
      if (s->names.empty()) fail("a name");
    } else {
      const Token& n = expect(Tok::Identifier, "a name");
      s->names.push_back({n.text, n.loc});
    }
    expect(Tok::Assign);
    s->value = parse_expr();
    return s;
  }

  // ---- expressions, lowest precedence first
  // Nesting (parentheses, brackets, blocks, prefix operators) and operator chains are bounded, so
  // that no program can exhaust the stack of the recursive passes that follow.
  static constexpr int kMaxNesting = 500;
  static constexpr int kMaxChain = 20000;

  // Counts one level of nesting for the lifetime of the guard; too deep a nesting is an error.
  class NestingGuard {
   public:
    explicit NestingGuard(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxNesting) {
        p_.diags_.report(DiagId::err_nesting_too_deep, p_.peek().loc, kMaxNesting);
        --p_.nesting_;
        p_.abandon_file();
      }
    }
    ~NestingGuard() { --p_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Parser& p_;
  };

  // Gives up on the rest of the file after an error that recovery cannot get past.
  [[noreturn]] void abandon_file() {
    pos_ = toks_.size() - 1;
    abandoned_ = true;
    throw SyntaxError{};
  }

  ExprPtr parse_expr() {
    NestingGuard guard(*this);
    return parse_ternary();
  }

  ExprPtr parse_ternary() {
    ExprPtr cond = parse_or();
    if (!at(Tok::Question)) return cond;
    next();
    ExprPtr a = parse_ternary();
    expect(Tok::Colon, "':' of '?:'");
    ExprPtr b = parse_ternary();
    Loc l = span_from(cond->loc);
    return std::make_unique<Ternary>(l, std::move(cond), std::move(a), std::move(b));
  }

  struct BinaryLevel {
    std::initializer_list<std::pair<Tok, BinaryOp>> ops;
  };

  template <class Next> ExprPtr parse_left_assoc(Next next_level, std::initializer_list<std::pair<Tok, BinaryOp>> ops) {
    ExprPtr lhs = next_level();
    for (int chain = 0;; ++chain) {
      if (chain > kMaxChain) {
        diags_.report(DiagId::err_chain_too_long, peek().loc, kMaxChain);
        abandon_file();
      }
      const std::pair<Tok, BinaryOp>* match = nullptr;
      for (const auto& p : ops)
        if (at(p.first)) match = &p;
      if (!match) return lhs;
      Loc op_loc = next().loc;
      ExprPtr rhs = next_level();
      Loc l = span_from(lhs->loc);
      lhs = std::make_unique<Binary>(l, match->second, op_loc, std::move(lhs), std::move(rhs));
    }
  }

  ExprPtr parse_or() {
    return parse_left_assoc([&] { return parse_and(); }, {{Tok::PipePipe, BinaryOp::Or}});
  }
  ExprPtr parse_and() {
    return parse_left_assoc([&] { return parse_equality(); }, {{Tok::AmpAmp, BinaryOp::And}});
  }
  ExprPtr parse_equality() {
    return parse_left_assoc([&] { return parse_relational(); },
                            {{Tok::EqEq, BinaryOp::Eq}, {Tok::NotEq, BinaryOp::Ne}});
  }
  ExprPtr parse_relational() {
    return parse_left_assoc([&] { return parse_additive(); },
                            {{Tok::Less, BinaryOp::Lt},
                             {Tok::LessEq, BinaryOp::Le},
                             {Tok::Greater, BinaryOp::Gt},
                             {Tok::GreaterEq, BinaryOp::Ge}});
  }
  ExprPtr parse_additive() {
    return parse_left_assoc([&] { return parse_multiplicative(); },
                            {{Tok::Plus, BinaryOp::Add}, {Tok::Minus, BinaryOp::Sub}});
  }
  ExprPtr parse_multiplicative() {
    return parse_left_assoc([&] { return parse_unary(); }, {{Tok::Star, BinaryOp::Mul},
                                                             {Tok::Slash, BinaryOp::Div},
                                                             {Tok::Percent, BinaryOp::Mod},
                                                             {Tok::At, BinaryOp::MatMul}});
  }

  ExprPtr parse_unary() {
    if (at(Tok::Minus) || at(Tok::Plus) || at(Tok::Bang)) {
      NestingGuard guard(*this);
      const Token& op = next();
      // The one integer literal that exists only negated: -9223372036854775808.
      if (op.kind == Tok::Minus && at(Tok::IntLiteral) && peek().int_overflow &&
          peek(1).kind != Tok::StarStar) {
        const Token& lit = next();
        return std::make_unique<IntLit>(span_from(op.loc), INT64_MIN, "-" + lit.text);
      }
      ExprPtr operand = parse_unary();
      UnaryOp u = op.kind == Tok::Minus ? UnaryOp::Neg : op.kind == Tok::Plus ? UnaryOp::Plus : UnaryOp::Not;
      return std::make_unique<Unary>(span_from(op.loc), u, std::move(operand));
    }
    return parse_power();
  }

  ExprPtr parse_power() {
    ExprPtr base = parse_postfix();
    if (!at(Tok::StarStar)) return base;
    Loc op_loc = next().loc;
    ExprPtr exponent = parse_unary();  // right-associative; 2 ** -1 is allowed
    Loc l = span_from(base->loc);
    return std::make_unique<Binary>(l, BinaryOp::Pow, op_loc, std::move(base), std::move(exponent));
  }

  ExprPtr parse_postfix() {
    ExprPtr e = parse_primary();
    while (at(Tok::LBracket)) {
      next();
      auto idx = std::make_unique<Index>(e->loc, std::move(e));
      if (at(Tok::RBracket)) {
        diags_.report(DiagId::err_empty_index, peek().loc);
        throw SyntaxError{};
      }
      while (!at(Tok::RBracket)) {
        idx->items.push_back(parse_index_item());
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RBracket);
      idx->loc = span_from(idx->base->loc);
      e = std::move(idx);
    }
    if (at(Tok::LParen) && e->kind != ExprKind::Name) fail("an operator");
    return e;
  }

  IndexItem parse_index_item() {
    IndexItem item;
    item.loc = peek().loc;
    if (!at(Tok::Colon)) item.index = parse_expr();
    if (accept(Tok::Colon)) {
      item.is_slice = true;
      item.lo = std::move(item.index);
      if (!at(Tok::RBracket) && !at(Tok::Comma) && !at(Tok::Colon)) item.hi = parse_expr();
      if (at(Tok::Colon)) {
        Diagnostic& d = diags_.report(DiagId::err_slice_step, peek().loc);
        // NumPy's reversal x[::-1].
        bool reversal = !item.lo && !item.hi && peek(1).kind == Tok::Minus && peek(2).kind == Tok::IntLiteral &&
                        peek(2).int_value == 1 && peek(3).kind == Tok::RBracket;
        if (reversal) diags_.note(d, DiagId::note_numpy_reverse, item.loc);
        throw SyntaxError{};
      }
    }
    item.loc = span_from(item.loc);
    return item;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::IntLiteral: {
        next();
        if (t.int_overflow) {
          diags_.report(DiagId::err_int_literal_too_large, t.loc, t.text);
          return std::make_unique<IntLit>(t.loc, 0, t.text);
        }
        return std::make_unique<IntLit>(t.loc, t.int_value, t.text);
      }
      case Tok::FloatLiteral: next(); return std::make_unique<FloatLit>(t.loc, t.float_value, t.text);
      case Tok::KwTrue: next(); return std::make_unique<BoolLit>(t.loc, true);
      case Tok::KwFalse: next(); return std::make_unique<BoolLit>(t.loc, false);
      case Tok::Identifier: {
        next();
        if (at(Tok::LParen)) return parse_call(t, std::nullopt);
        return std::make_unique<Name>(t.loc, t.text);
      }
      case Tok::KwF32:
      case Tok::KwF64:
      case Tok::KwI32:
      case Tok::KwI64:
      case Tok::KwBool: {
        next();
        DType dt = *dtype_of_token(t.kind);
        if (at(Tok::LParen)) return parse_call(t, dt);
        return std::make_unique<DTypeName>(t.loc, dt);
      }
      case Tok::LParen: {
        Loc start = next().loc;
        ExprPtr first = parse_expr();
        if (!at(Tok::Comma)) {
          expect(Tok::RParen);
          return first;
        }
        auto tuple = std::make_unique<Tuple>(start);
        tuple->elements.push_back(std::move(first));
        while (accept(Tok::Comma)) {
          if (at(Tok::RParen)) break;
          tuple->elements.push_back(parse_expr());
        }
        expect(Tok::RParen);
        tuple->loc = span_from(start);
        return tuple;
      }
      case Tok::KwScan: return parse_scan();
      default: fail("an expression");
    }
  }

  ExprPtr parse_call(const Token& callee, std::optional<DType> cast) {
    auto call = std::make_unique<Call>(callee.loc, callee.text, callee.loc);
    call->cast_to = cast;
    expect(Tok::LParen);
    while (!at(Tok::RParen)) {
      if (at(Tok::Identifier) && peek(1).kind == Tok::Assign) {
        KeywordArg kw;
        kw.name = peek().text;
        kw.loc = next().loc;
        next();
        kw.value = parse_expr();
        call->kwargs.push_back(std::move(kw));
      } else {
        call->args.push_back(parse_expr());
      }
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RParen, "')' or ','");
    call->loc = span_from(callee.loc);
    return call;
  }

  ExprPtr parse_scan() {
    auto scan = std::make_unique<Scan>(next().loc);
    if (accept(Tok::LParen)) {
      while (!at(Tok::RParen)) {
        ScanOption opt;
        const Token& n = expect(Tok::Identifier, "a scan option");
        opt.name = n.text;
        opt.loc = n.loc;
        if (accept(Tok::Assign)) opt.value = parse_expr();
        scan->options.push_back(std::move(opt));
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::RParen, "')' or ','");
    }
    scan->body = parse_block(/*in_scan=*/true, &scan->close_loc);
    return scan;
  }

  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  const Token* last_ = nullptr;
  int nesting_ = 0;
  bool abandoned_ = false;  // the rest of the file is skipped: no follow-up errors
  int file_id_;
  DiagnosticEngine& diags_;
};

}  // namespace

ast::Module parse(const std::vector<Token>& tokens, int file_id, DiagnosticEngine& diags) {
  return Parser(tokens, file_id, diags).run();
}

ast::Module parse_file(const SourceManager& sources, int file_id, DiagnosticEngine& diags) {
  std::vector<Token> tokens = lex(sources.file(file_id), file_id, diags);
  return parse(tokens, file_id, diags);
}

}  // namespace scangen
