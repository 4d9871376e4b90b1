// The lexer: token kinds, texts and locations; where newlines end statements; comments; numbers;
// and the lexical errors with their locations.
#define BOOST_TEST_MODULE lexer
#include <boost/test/unit_test.hpp>

#include <climits>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/lexer.h"
#include "frontend/parser.h"

using namespace scangen;

namespace {

struct Lexed {
  std::vector<Token> tokens;
  std::vector<std::string> diags;  // "LINE:COL: message"
};

Lexed lex_text(const std::string& text) {
  SourceManager sources;
  int id = sources.add("t.scan", text);
  DiagnosticEngine diags(sources);
  Lexed out;
  out.tokens = lex(sources.file(id), id, diags);
  for (const Diagnostic& d : diags.diagnostics()) {
    out.diags.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
    for (const auto& n : d.notes)
      out.diags.push_back(std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col) + ": note: " + n.message);
  }
  return out;
}

// Short names of token kinds for compact expectations.
std::string kind_name(Tok k) {
  switch (k) {
    case Tok::Eof: return "EOF";
    case Tok::Newline: return "NL";
    case Tok::Identifier: return "ID";
    case Tok::IntLiteral: return "INT";
    case Tok::FloatLiteral: return "FLOAT";
    case Tok::Invalid: return "INVALID";
    default: return token_spelling(k);
  }
}

// "ID:x INT:2 '+' NL EOF": kind, and the text for names and numbers.
std::string kinds(const std::vector<Token>& toks) {
  std::ostringstream os;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (i) os << " ";
    os << kind_name(toks[i].kind);
    if (toks[i].kind == Tok::Identifier || toks[i].kind == Tok::IntLiteral || toks[i].kind == Tok::FloatLiteral)
      os << ":" << toks[i].text;
  }
  return os.str();
}

std::string where(const Token& t) {
  return std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col) + "+" + std::to_string(t.loc.length);
}

}  // namespace

BOOST_AUTO_TEST_CASE(kinds_texts_and_locations) {
  Lexed l = lex_text("fn f(x: f32) -> f32 {\n  return x ** 2\n}\n");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) ==
             "'fn' ID:f '(' ID:x ':' 'f32' ')' '->' 'f32' '{' NL 'return' ID:x '**' INT:2 NL '}' NL EOF");
  const auto& t = l.tokens;
  BOOST_TEST(where(t[0]) == "1:1+2");   // fn
  BOOST_TEST(where(t[1]) == "1:4+1");   // f
  BOOST_TEST(where(t[5]) == "1:9+3");   // f32
  BOOST_TEST(where(t[7]) == "1:14+2");  // ->
  BOOST_TEST(where(t[10]) == "1:22+1"); // the newline after '{'
  BOOST_TEST(where(t[11]) == "2:3+6");  // return
  BOOST_TEST(where(t[13]) == "2:12+2"); // **
  BOOST_TEST(where(t[14]) == "2:15+1"); // 2
  BOOST_TEST(t[14].int_value == 2);
  BOOST_TEST(where(t[16]) == "3:1+1");  // }
  BOOST_TEST(t[11].text == "return");
  BOOST_TEST(t[13].text == "**");
}

BOOST_AUTO_TEST_CASE(every_operator) {
  Lexed l = lex_text("== != < <= > >= + - * ** / % @ && || ! ? : , ; = ->");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) ==
             "'==' '!=' '<' '<=' '>' '>=' '+' '-' '*' '**' '/' '%' '@' '&&' '||' '!' '?' ':' ',' ';' '=' '->' NL EOF");
  // Longest match without spaces: `a<=-b` is a, <=, -, b; `x***y` is x, **, *, y.
  BOOST_TEST(kinds(lex_text("a<=-b").tokens) == "ID:a '<=' '-' ID:b NL EOF");
  BOOST_TEST(kinds(lex_text("x***y").tokens) == "ID:x '**' '*' ID:y NL EOF");
}

BOOST_AUTO_TEST_CASE(keywords_and_names) {
  Lexed l = lex_text("let init until scan true false bool i32 i64 f64 letter _x x1 scanner");
  BOOST_TEST(kinds(l.tokens) ==
             "'let' 'init' 'until' 'scan' 'true' 'false' 'bool' 'i32' 'i64' 'f64' ID:letter ID:_x ID:x1 ID:scanner NL EOF");
}

BOOST_AUTO_TEST_CASE(newlines_end_statements_and_collapse) {
  // Blank lines give one newline token; a final newline is added before the end of the file.
  Lexed l = lex_text("a\n\n\nb");
  BOOST_TEST(kinds(l.tokens) == "ID:a NL ID:b NL EOF");
  BOOST_TEST(where(l.tokens[1]) == "1:2+1");
  BOOST_TEST(where(l.tokens[2]) == "4:1+1");
  // ';' is a token of its own; the parser treats it like a newline.
  BOOST_TEST(kinds(lex_text("a; b;").tokens) == "ID:a ';' ID:b ';' NL EOF");
  // An empty file is just the end.
  BOOST_TEST(kinds(lex_text("").tokens) == "EOF");
}

BOOST_AUTO_TEST_CASE(newlines_inside_parentheses_and_brackets_are_ignored) {
  Lexed l = lex_text("f(a,\n  b)\nx[1,\n 2]\n");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) == "ID:f '(' ID:a ',' ID:b ')' NL ID:x '[' INT:1 ',' INT:2 ']' NL EOF");
  // Nested: the newline inside [..] inside (..) is ignored too.
  BOOST_TEST(kinds(lex_text("g(x[0\n], 1\n)").tokens) == "ID:g '(' ID:x '[' INT:0 ']' ',' INT:1 ')' NL EOF");
}

BOOST_AUTO_TEST_CASE(newlines_count_again_inside_braces_inside_parentheses) {
  // A scan written inline in a call keeps its one-statement-per-line body.
  Lexed l = lex_text("sum(scan {\n  y[t] = 1\n  until y[t] > 0\n})");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) ==
             "ID:sum '(' 'scan' '{' NL ID:y '[' ID:t ']' '=' INT:1 NL 'until' ID:y '[' ID:t ']' '>' INT:0 NL '}' ')' NL EOF");
  // ... and a parenthesis inside that block ignores them again.
  BOOST_TEST(kinds(lex_text("f({\n(a\n+ b)\n})").tokens) == "ID:f '(' '{' NL '(' ID:a '+' ID:b ')' NL '}' ')' NL EOF");
}

BOOST_AUTO_TEST_CASE(a_newline_after_a_binary_operator_does_not_end_the_statement) {
  // Every binary operator, `?` and `:` of the conditional included, continues the line.
  for (const char* op : {"+", "-", "*", "/", "%", "**", "@", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "?", ":"}) {
    Lexed l = lex_text(std::string("a ") + op + "\nb\nc");
    BOOST_TEST(l.diags.empty());
    BOOST_TEST(kinds(l.tokens) == std::string("ID:a '") + op + "' ID:b NL ID:c NL EOF", op);
    BOOST_TEST(l.tokens[1].ends_line, op);
  }
  // Through blank lines and comments; not after '=' or a unary '!', nor before an operator.
  BOOST_TEST(kinds(lex_text("a +\n\n// why\nb").tokens) == "ID:a '+' ID:b NL EOF");
  BOOST_TEST(kinds(lex_text("x =\nb").tokens) == "ID:x '=' NL ID:b NL EOF");
  BOOST_TEST(kinds(lex_text("!\nb").tokens) == "'!' NL ID:b NL EOF");
  BOOST_TEST(kinds(lex_text("a\n+ b").tokens) == "ID:a NL '+' ID:b NL EOF");
  BOOST_TEST(!lex_text("a + b\n").tokens[1].ends_line);
}

BOOST_AUTO_TEST_CASE(the_file_ends_right_after_an_operator) {
  // One error, at the operator; the block it leaves open is not reported too.
  Lexed l = lex_text("fn f() -> f32 {\n  return 1 *\n");
  BOOST_TEST(l.diags == std::vector<std::string>{"2:12: the file ends right after '*': an expression must follow it"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(inf_and_nan_are_float_literals) {
  Lexed l = lex_text("-inf + nan * info");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) == "'-' FLOAT:inf '+' FLOAT:nan '*' ID:info NL EOF");
  BOOST_TEST(std::isinf(l.tokens[1].float_value));
  BOOST_TEST(l.tokens[1].float_value > 0);
  BOOST_TEST(std::isnan(l.tokens[3].float_value));
}

BOOST_AUTO_TEST_CASE(line_comments) {
  Lexed l = lex_text("a // comment ( [ {\nb");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) == "ID:a NL ID:b NL EOF");
  BOOST_TEST(where(l.tokens[1]) == "1:19+1");
  // A comment inside parentheses does not end them, and `//` at the end of the file is fine.
  BOOST_TEST(kinds(lex_text("f(a, // first\n b) // end").tokens) == "ID:f '(' ID:a ',' ID:b ')' NL EOF");
}

BOOST_AUTO_TEST_CASE(block_comments) {
  Lexed l = lex_text("a /* one\ntwo * / ** */ b\nc/**/d");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) == "ID:a ID:b NL ID:c ID:d NL EOF");
  // Lines and columns keep counting inside the comment.
  BOOST_TEST(where(l.tokens[1]) == "2:15+1");
  BOOST_TEST(where(l.tokens[4]) == "3:6+1");
  // `/` alone is division, `/*` starts a comment.
  BOOST_TEST(kinds(lex_text("a / b").tokens) == "ID:a '/' ID:b NL EOF");
}

BOOST_AUTO_TEST_CASE(unterminated_block_comment_is_reported_where_it_starts) {
  Lexed l = lex_text("let a = 1\nlet b = /* never\nclosed");
  BOOST_TEST(l.diags == std::vector<std::string>{"2:9: unterminated /* comment"});
  BOOST_TEST(kinds(l.tokens) == "'let' ID:a '=' INT:1 NL 'let' ID:b '=' NL EOF");
}

BOOST_AUTO_TEST_CASE(integer_and_float_literals) {
  Lexed l = lex_text("0 42 3.5 .25 7. 1e3 2.5e-3 1E+2 9223372036854775807");
  BOOST_TEST(l.diags.empty());
  BOOST_TEST(kinds(l.tokens) ==
             "INT:0 INT:42 FLOAT:3.5 FLOAT:.25 FLOAT:7. FLOAT:1e3 FLOAT:2.5e-3 FLOAT:1E+2 INT:9223372036854775807 NL EOF");
  const auto& t = l.tokens;
  BOOST_TEST(t[1].int_value == 42);
  BOOST_TEST(t[2].float_value == 3.5);
  BOOST_TEST(t[3].float_value == 0.25);
  BOOST_TEST(t[4].float_value == 7.0);
  BOOST_TEST(t[5].float_value == 1000.0);
  BOOST_TEST(t[6].float_value == 0.0025);
  BOOST_TEST(t[7].float_value == 100.0);
  BOOST_TEST(t[8].int_value == INT64_MAX);
  BOOST_TEST(!t[8].int_overflow);
  BOOST_TEST(where(t[6]) == "1:21+6");
  // A minus sign is never part of a literal.
  BOOST_TEST(kinds(lex_text("-1 -2.5").tokens) == "'-' INT:1 '-' FLOAT:2.5 NL EOF");
}

BOOST_AUTO_TEST_CASE(e_without_digits_is_not_an_exponent) {
  // `1e` has no exponent digits: it is no float; glued to the number it is one malformed token.
  Lexed l = lex_text("1e");
  BOOST_TEST(l.diags == std::vector<std::string>{"1:1: malformed number '1e'"});
  BOOST_TEST((l.tokens[0].kind != Tok::FloatLiteral));
  // The sign after a bare `e` is not taken into the number.
  Lexed s = lex_text("2e+x");
  BOOST_TEST(s.diags == std::vector<std::string>{"1:1: malformed number '2e'"});
  BOOST_TEST(kinds(s.tokens) == "INT:2e '+' ID:x NL EOF");
  BOOST_TEST(where(s.tokens[1]) == "1:3+1");
  // Other letters glued to a number.
  BOOST_TEST(lex_text("x = 12abc").diags == std::vector<std::string>{"1:5: malformed number '12abc'"});
}

BOOST_AUTO_TEST_CASE(integer_overflow) {
  // Too large for i64 (and for u64): reported by the lexer at the literal.
  Lexed big = lex_text("a = 99999999999999999999");
  BOOST_TEST(big.diags == std::vector<std::string>{"1:5: integer literal 99999999999999999999 does not fit in i64"});
  // 2^63 exists only negated: the lexer marks it and leaves the decision to the parser.
  Lexed edge = lex_text("9223372036854775808");
  BOOST_TEST(edge.diags.empty());
  BOOST_TEST((edge.tokens[0].kind == Tok::IntLiteral));
  BOOST_TEST(edge.tokens[0].int_overflow);
  // 2^63 + 1 is reported.
  BOOST_TEST(lex_text("9223372036854775809").diags ==
             std::vector<std::string>{"1:1: integer literal 9223372036854775809 does not fit in i64"});
}

BOOST_AUTO_TEST_CASE(most_negative_integer_is_handled_by_the_parser) {
  auto parse_errors = [](const std::string& text, ast::Module* module_out = nullptr) {
    SourceManager sources;
    int id = sources.add("t.scan", text);
    DiagnosticEngine diags(sources);
    ast::Module m = parse_file(sources, id, diags);
    std::vector<std::string> out;
    for (const Diagnostic& d : diags.diagnostics())
      out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
    if (module_out) *module_out = std::move(m);
    return out;
  };
  ast::Module m;
  BOOST_TEST(parse_errors("fn f() -> i64 { return -9223372036854775808 }", &m).empty());
  BOOST_TEST_REQUIRE(m.functions.size() == 1u);
  const auto& ret = ast::as<ast::Return>(*m.functions[0]->body[0]);
  BOOST_TEST_REQUIRE((ret.values[0]->kind == ast::ExprKind::IntLit));
  BOOST_TEST(ast::as<ast::IntLit>(*ret.values[0]).value == INT64_MIN);
  BOOST_TEST(ast::to_source(*ret.values[0]) == "-9223372036854775808");
  // Without the minus it is too large, reported by the parser at the literal.
  BOOST_TEST(parse_errors("fn f() -> i64 { return 9223372036854775808 }") ==
             std::vector<std::string>{"1:24: integer literal 9223372036854775808 does not fit in i64"});
  // -2^63 ** 2 is -(2^63 ** 2): the literal is not negated first, so it is too large.
  BOOST_TEST(parse_errors("fn f() -> i64 { return -9223372036854775808 ** 2 }") ==
             std::vector<std::string>{"1:25: integer literal 9223372036854775808 does not fit in i64"});
}

BOOST_AUTO_TEST_CASE(unexpected_characters_are_reported_with_their_location) {
  Lexed l = lex_text("let y = x $ 2\n  a # b\n\x01");
  BOOST_TEST(l.diags == (std::vector<std::string>{"1:11: unexpected character '$'", "2:5: unexpected character '#'",
                                                  "2:5: note: comments start with '//' ('#' is Python's)",
                                                  "3:1: unexpected character '\\x01'"}));
  // Kept as an invalid token (quiet: the parser adds no second message) so that the parser skips
  // the statement.
  BOOST_TEST((l.tokens[4].kind == Tok::Invalid));
  BOOST_TEST(l.tokens[4].quiet);
  // Python's '#' comment is skipped to the end of its line, as a comment would be: the line holds
  // only `a`.
  BOOST_TEST((l.tokens[7].kind == Tok::Identifier && l.tokens[7].text == "a"));
  BOOST_TEST((l.tokens[8].kind == Tok::Newline));
  BOOST_TEST(where(l.tokens[4]) == "1:11+1");
  // A single & or | is no operator.
  BOOST_TEST(lex_text("a & b | c").diags ==
             (std::vector<std::string>{"1:3: unexpected character '&'", "1:7: unexpected character '|'"}));
}

BOOST_AUTO_TEST_CASE(unbalanced_brackets) {
  BOOST_TEST(lex_text("f(a, b\n").diags == std::vector<std::string>{"1:2: '(' is never closed"});
  BOOST_TEST(lex_text("a)\n").diags == std::vector<std::string>{"1:2: ')' does not close anything"});
  BOOST_TEST(lex_text("x[1)\n").diags ==
             (std::vector<std::string>{"1:4: ')' does not match the '[' it closes", "1:2: note: '[' opened here"}));
  // A closer of an outer bracket closes the ones opened since, which are reported.
  BOOST_TEST(lex_text("{ f(a }").diags == std::vector<std::string>{"1:4: '(' is never closed"});
}

BOOST_AUTO_TEST_CASE(fn_closes_brackets_left_open) {
  // 'fn' starts only a top-level declaration: brackets still open there are reported and closed,
  // and the 'fn' starts a new line so that the parser resumes at it.
  Lexed l = lex_text("fn f(x: f32) -> f32 {\n  let a = (x +\nfn g(y: f32) -> f32 { return y }\n");
  BOOST_TEST(l.diags == (std::vector<std::string>{"2:11: '(' is never closed", "1:21: '{' is never closed"}));
  BOOST_TEST(kinds(l.tokens) ==
             "'fn' ID:f '(' ID:x ':' 'f32' ')' '->' 'f32' '{' NL 'let' ID:a '=' '(' ID:x '+' ')' '}' NL "
             "'fn' ID:g '(' ID:y ':' 'f32' ')' '->' 'f32' '{' 'return' ID:y '}' NL EOF");
  // The parser adds nothing to the lexer's errors, and still sees g.
  SourceManager sources;
  int id = sources.add("t.scan", "fn f(x: f32) -> f32 {\n  let a = (x +\nfn g(y: f32) -> f32 { return y }\n");
  DiagnosticEngine diags(sources);
  ast::Module m = parse_file(sources, id, diags);
  BOOST_TEST(diags.error_count() == 2);
  BOOST_TEST_REQUIRE(m.functions.size() >= 1u);
  BOOST_TEST(m.functions.back()->name == "g");
}
