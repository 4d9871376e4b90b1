// The parser: precedence and associativity, postfix forms, scans and statements, declarations,
// and syntax errors with their exact location and text, including recovery.
#define BOOST_TEST_MODULE parser
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "frontend/parser.h"

using namespace scangen;
using namespace scangen::ast;

namespace {

// A fully parenthesized form of a tree: (op a b), (idx base items...), call(args), so that the
// shape of the tree, not just its text, is compared.
void sexpr(std::ostream& os, const Expr& e);

void sexpr_items(std::ostream& os, const std::vector<IndexItem>& items) {
  for (const IndexItem& it : items) {
    os << " ";
    if (!it.is_slice) {
      sexpr(os, *it.index);
      continue;
    }
    os << "[";
    if (it.lo) sexpr(os, *it.lo);
    os << ":";
    if (it.hi) sexpr(os, *it.hi);
    os << "]";
  }
}

void sexpr(std::ostream& os, const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: os << as<IntLit>(e).text; return;
    case ExprKind::FloatLit: os << as<FloatLit>(e).text; return;
    case ExprKind::BoolLit: os << (as<BoolLit>(e).value ? "true" : "false"); return;
    case ExprKind::Name: os << as<Name>(e).name; return;
    case ExprKind::DTypeName: os << "type:" << dtype_name(as<DTypeName>(e).dtype); return;
    case ExprKind::Unary: {
      const auto& u = as<Unary>(e);
      os << "(" << unary_op_spelling(u.op) << " ";
      sexpr(os, *u.operand);
      os << ")";
      return;
    }
    case ExprKind::Binary: {
      const auto& b = as<Binary>(e);
      os << "(" << binary_op_spelling(b.op) << " ";
      sexpr(os, *b.lhs);
      os << " ";
      sexpr(os, *b.rhs);
      os << ")";
      return;
    }
    case ExprKind::Ternary: {
      const auto& t = as<Ternary>(e);
      os << "(? ";
      sexpr(os, *t.cond);
      os << " ";
      sexpr(os, *t.then_expr);
      os << " ";
      sexpr(os, *t.else_expr);
      os << ")";
      return;
    }
    case ExprKind::Call: {
      const auto& c = as<Call>(e);
      os << (c.cast_to ? "cast:" : "") << c.callee << "(";
      bool first = true;
      for (const auto& a : c.args) {
        os << (first ? "" : " ");
        first = false;
        sexpr(os, *a);
      }
      for (const auto& kw : c.kwargs) {
        os << (first ? "" : " ") << kw.name << "=";
        first = false;
        sexpr(os, *kw.value);
      }
      os << ")";
      return;
    }
    case ExprKind::Index: {
      const auto& i = as<Index>(e);
      os << "(idx ";
      sexpr(os, *i.base);
      sexpr_items(os, i.items);
      os << ")";
      return;
    }
    case ExprKind::Scan: os << "scan"; return;
    case ExprKind::Tuple: {
      os << "(tuple";
      for (const auto& x : as<Tuple>(e).elements) {
        os << " ";
        sexpr(os, *x);
      }
      os << ")";
      return;
    }
  }
}

std::string sexpr(const Expr& e) {
  std::ostringstream os;
  sexpr(os, e);
  return os.str();
}

struct Parsed {
  Module module;
  std::vector<std::string> diags;  // "LINE:COL: severity: message"
  std::string rendered;
};

Parsed parse_text(const std::string& text) {
  SourceManager sources;
  int id = sources.add("p.scan", text);
  DiagnosticEngine diags(sources);
  Parsed out;
  out.module = parse_file(sources, id, diags);
  for (const Diagnostic& d : diags.diagnostics()) {
    out.diags.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                        (d.severity == Severity::Note ? "note" : "error") + ": " + d.message);
    for (const auto& n : d.notes)
      out.diags.push_back(std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col) + ": note: " + n.message);
  }
  std::ostringstream os;
  diags.print_all(os);
  out.rendered = os.str();
  return out;
}

// The tree of the expression in `let e = <text>` inside a function body.
std::string expr_tree(const std::string& text) {
  Parsed p = parse_text("fn f(x: f32) -> f32 {\n  let e = " + text + "\n  return e\n}\n");
  BOOST_TEST_INFO("expression: " << text);
  BOOST_TEST_REQUIRE(p.diags.empty(), "errors: " << p.rendered);
  BOOST_TEST_REQUIRE(p.module.functions.size() == 1u);
  const FnDecl& fn = *p.module.functions[0];
  BOOST_TEST_REQUIRE(fn.body.size() == 2u);
  return sexpr(*as<Let>(*fn.body[0]).value);
}

// The errors of a text as "LINE:COL: error: message".
std::vector<std::string> parse_errors(const std::string& text) { return parse_text(text).diags; }

}  // namespace

BOOST_AUTO_TEST_SUITE(expressions)

BOOST_AUTO_TEST_CASE(unary_minus_binds_looser_than_power) {
  BOOST_TEST(expr_tree("-x**2") == "(- (** x 2))");
  BOOST_TEST(expr_tree("(-x)**2") == "(** (- x) 2)");
  BOOST_TEST(expr_tree("!a && b") == "(&& (! a) b)");
  BOOST_TEST(expr_tree("- -x") == "(- (- x))");
  BOOST_TEST(expr_tree("-x * y") == "(* (- x) y)");
}

BOOST_AUTO_TEST_CASE(power_is_right_associative_and_takes_a_signed_exponent) {
  BOOST_TEST(expr_tree("2 ** 3 ** 2") == "(** 2 (** 3 2))");
  BOOST_TEST(expr_tree("2 ** -1") == "(** 2 (- 1))");
  BOOST_TEST(expr_tree("a ** b * c") == "(* (** a b) c)");
  BOOST_TEST(expr_tree("a ** b[0]") == "(** a (idx b 0))");
}

BOOST_AUTO_TEST_CASE(binary_levels) {
  BOOST_TEST(expr_tree("a - b - c") == "(- (- a b) c)");
  BOOST_TEST(expr_tree("a / b * c % d") == "(% (* (/ a b) c) d)");
  BOOST_TEST(expr_tree("a + b * c") == "(+ a (* b c))");
  BOOST_TEST(expr_tree("a < b + 1") == "(< a (+ b 1))");
  BOOST_TEST(expr_tree("a == b < c") == "(== a (< b c))");
  BOOST_TEST(expr_tree("a || b && c == d") == "(|| a (&& b (== c d)))");
  BOOST_TEST(expr_tree("a && b || c && d") == "(|| (&& a b) (&& c d))");
}

BOOST_AUTO_TEST_CASE(matmul_shares_the_level_of_multiplication) {
  BOOST_TEST(expr_tree("a @ b * c") == "(* (@ a b) c)");
  BOOST_TEST(expr_tree("a * b @ c") == "(@ (* a b) c)");
  BOOST_TEST(expr_tree("a + b @ c") == "(+ a (@ b c))");
  BOOST_TEST(expr_tree("x[t-1] @ W + u[t] @ V") == "(+ (@ (idx x (- t 1)) W) (@ (idx u t) V))");
}

BOOST_AUTO_TEST_CASE(ternary_is_lowest_and_right_associative) {
  BOOST_TEST(expr_tree("a ? b : c ? d : e") == "(? a b (? c d e))");
  BOOST_TEST(expr_tree("a ? b ? c : d : e") == "(? a (? b c d) e)");
  BOOST_TEST(expr_tree("x > 0 || y ? a + 1 : -b") == "(? (|| (> x 0) y) (+ a 1) (- b))");
}

BOOST_AUTO_TEST_CASE(literals_names_and_casts) {
  BOOST_TEST(expr_tree("true") == "true");
  BOOST_TEST(expr_tree("1.5e3") == "1.5e3");
  BOOST_TEST(expr_tree("f32(x) + i64(2)") == "(+ cast:f32(x) cast:i64(2))");
  BOOST_TEST(expr_tree("zeros(f32, n, 3)") == "zeros(type:f32 n 3)");
  BOOST_TEST(expr_tree("sum(x, axis = -1)") == "sum(x axis=(- 1))");
  BOOST_TEST(expr_tree("((x))") == "x");
}

BOOST_AUTO_TEST_CASE(chained_indexing_and_slices) {
  BOOST_TEST(expr_tree("x[i][j]") == "(idx (idx x i) j)");
  BOOST_TEST(expr_tree("x[i, j]") == "(idx x i j)");
  BOOST_TEST(expr_tree("f(x)[0][1:]") == "(idx (idx f(x) 0) [1:])");
  BOOST_TEST(expr_tree("x[:]") == "(idx x [:])");
  BOOST_TEST(expr_tree("x[:-1]") == "(idx x [:(- 1)])");
  BOOST_TEST(expr_tree("x[a:b, 0, :n]") == "(idx x [a:b] 0 [:n])");
  BOOST_TEST(expr_tree("(a + b)[0]") == "(idx (+ a b) 0)");
  BOOST_TEST(expr_tree("-x[0]") == "(- (idx x 0))");
}

BOOST_AUTO_TEST_CASE(to_source_writes_what_was_parsed) {
  BOOST_TEST(expr_tree("arange(n)") == "arange(n)");
  Parsed p = parse_text("fn f(x: f32) -> f32 {\n  let e = x[a:b, :-1] + f(y, axis = 0) * (p - q)\n  return e\n}\n");
  BOOST_TEST_REQUIRE(p.diags.empty());
  BOOST_TEST(to_source(*as<Let>(*p.module.functions[0]->body[0]).value) == "x[a:b, :-1] + (f(y, axis = 0) * (p - q))");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(statements_and_declarations)

BOOST_AUTO_TEST_CASE(scan_options_and_body) {
  Parsed p = parse_text(
      "fn f(u: f32[n], k: i64) -> f32[?] {\n"
      "  let (y, z) = scan(steps = k, reverse, index = s, truncate_gradient = 3) {\n"
      "    init y = 0.0; let h = y[s-1] * 2\n"
      "    y[s] = h + u[s]\n"
      "    z[s] = y[s]\n"
      "    until z[s] > 10\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.diags.empty(), p.rendered);
  const FnDecl& fn = *p.module.functions[0];
  const Let& let = as<Let>(*fn.body[0]);
  BOOST_TEST(let.tuple);
  BOOST_TEST_REQUIRE(let.names.size() == 2u);
  BOOST_TEST(let.names[0].name == "y");
  BOOST_TEST(let.names[1].name == "z");
  BOOST_TEST(let.names[1].loc.col == 11);
  BOOST_TEST_REQUIRE((let.value->kind == ExprKind::Scan));
  const Scan& s = as<Scan>(*let.value);
  BOOST_TEST_REQUIRE(s.options.size() == 4u);
  BOOST_TEST(s.options[0].name == "steps");
  BOOST_TEST(sexpr(*s.options[0].value) == "k");
  BOOST_TEST(s.options[1].name == "reverse");
  BOOST_TEST(!s.options[1].value);
  BOOST_TEST(s.options[2].name == "index");
  BOOST_TEST(sexpr(*s.options[2].value) == "s");
  BOOST_TEST(s.options[3].name == "truncate_gradient");
  BOOST_TEST(sexpr(*s.options[3].value) == "3");
  BOOST_TEST((s.options[3].loc.line == 2 && s.options[3].loc.col == 52));
  BOOST_TEST_REQUIRE(s.body.size() == 5u);
  BOOST_TEST((s.body[0]->kind == StmtKind::Init));
  BOOST_TEST(as<Init>(*s.body[0]).name.name == "y");
  BOOST_TEST(sexpr(*as<Init>(*s.body[0]).value) == "0.0");
  BOOST_TEST((s.body[1]->kind == StmtKind::Let));
  BOOST_TEST(sexpr(*as<Let>(*s.body[1]).value) == "(* (idx y (- s 1)) 2)");
  const StepDef& def = as<StepDef>(*s.body[2]);
  BOOST_TEST(def.target.name == "y");
  BOOST_TEST((def.target.loc.line == 4 && def.target.loc.col == 5));
  BOOST_TEST(sexpr(*def.step) == "s");
  BOOST_TEST(sexpr(*def.value) == "(+ h (idx u s))");
  BOOST_TEST((s.body[3]->kind == StmtKind::StepDef));
  BOOST_TEST((s.body[4]->kind == StmtKind::Until));
  BOOST_TEST(sexpr(*as<Until>(*s.body[4]).cond) == "(> (idx z s) 10)");
  BOOST_TEST((fn.body[1]->kind == StmtKind::Return));
}

BOOST_AUTO_TEST_CASE(scan_without_options_and_inline_in_a_call) {
  Parsed p = parse_text(
      "fn f(u: f32[n]) -> f32 {\n"
      "  return sum(scan {\n"
      "    y[t] = u[t] * 2\n"
      "  }) + 1\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.diags.empty(), p.rendered);
  const Return& r = as<Return>(*p.module.functions[0]->body[0]);
  BOOST_TEST(!r.tuple);
  BOOST_TEST(sexpr(*r.values[0]) == "(+ sum(scan) 1)");
  const Scan& s = as<Scan>(*as<Call>(*as<Binary>(*r.values[0]).lhs).args[0]);
  BOOST_TEST(s.options.empty());
  BOOST_TEST(s.body.size() == 1u);
  BOOST_TEST((s.close_loc.line == 4 && s.close_loc.col == 3));
}

BOOST_AUTO_TEST_CASE(tuple_let_and_return) {
  Parsed p = parse_text(
      "fn f(x: f32) -> (a: f32, b: f32) {\n"
      "  let (p, q) = g(x)\n"
      "  let r = (x)\n"
      "  return (p + 1, q)\n"
      "}\n");
  BOOST_TEST_REQUIRE(p.diags.empty(), p.rendered);
  const FnDecl& fn = *p.module.functions[0];
  BOOST_TEST(as<Let>(*fn.body[0]).tuple);
  BOOST_TEST(as<Let>(*fn.body[0]).names.size() == 2u);
  BOOST_TEST(!as<Let>(*fn.body[1]).tuple);
  BOOST_TEST(sexpr(*as<Let>(*fn.body[1]).value) == "x");
  const Return& r = as<Return>(*fn.body[2]);
  BOOST_TEST(r.tuple);
  BOOST_TEST_REQUIRE(r.values.size() == 2u);
  BOOST_TEST(sexpr(*r.values[0]) == "(+ p 1)");
  BOOST_TEST(sexpr(*r.values[1]) == "q");
}

BOOST_AUTO_TEST_CASE(signatures_with_named_results_and_unknown_dims) {
  Parsed p = parse_text(
      "fn g(A: f32[n, 3], k: i32, m: bool[?]) -> (x: f32[?, n], y: i64) { return (A, k) }\n"
      "fn h(a: f64) -> f64[2, ?] { return a }\n"
      "fn one(a: f64) -> (f64,) { return (a,) }\n");
  BOOST_TEST_REQUIRE(p.diags.empty(), p.rendered);
  BOOST_TEST_REQUIRE(p.module.functions.size() == 3u);
  const FnDecl& g = *p.module.functions[0];
  BOOST_TEST(g.name == "g");
  BOOST_TEST_REQUIRE(g.params.size() == 3u);
  BOOST_TEST(g.params[0].name == "A");
  BOOST_TEST((g.params[0].type.dtype == DType::F32));
  BOOST_TEST_REQUIRE(g.params[0].type.dims.size() == 2u);
  BOOST_TEST((g.params[0].type.dims[0].kind == DimDecl::Symbol));
  BOOST_TEST(g.params[0].type.dims[0].symbol == "n");
  BOOST_TEST((g.params[0].type.dims[1].kind == DimDecl::Constant));
  BOOST_TEST(g.params[0].type.dims[1].value == 3);
  BOOST_TEST((g.params[1].type.dtype == DType::I32));
  BOOST_TEST(g.params[1].type.dims.empty());
  BOOST_TEST((g.params[2].type.dims[0].kind == DimDecl::Unknown));
  BOOST_TEST(g.tuple_result);
  BOOST_TEST_REQUIRE(g.results.size() == 2u);
  BOOST_TEST(g.results[0].name == "x");
  BOOST_TEST((g.results[0].type.dims[0].kind == DimDecl::Unknown));
  BOOST_TEST(g.results[0].type.dims[1].symbol == "n");
  BOOST_TEST(g.results[1].name == "y");
  BOOST_TEST((g.results[1].type.dtype == DType::I64));
  const FnDecl& h = *p.module.functions[1];
  BOOST_TEST(!h.tuple_result);
  BOOST_TEST(h.results[0].name.empty());
  BOOST_TEST(h.results[0].type.dims.size() == 2u);
  // A trailing comma makes a one-element tuple.
  const FnDecl& one = *p.module.functions[2];
  BOOST_TEST(one.tuple_result);
  BOOST_TEST(one.results.size() == 1u);
  BOOST_TEST(as<Return>(*one.body[0]).tuple);
}

BOOST_AUTO_TEST_CASE(statements_separated_by_semicolons) {
  Parsed p = parse_text("fn f(x: f32) -> f32 { let a = x; let b = a * 2; return b }");
  BOOST_TEST_REQUIRE(p.diags.empty(), p.rendered);
  BOOST_TEST(p.module.functions[0]->body.size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(syntax_errors)

BOOST_AUTO_TEST_CASE(rendered_with_file_line_column_and_caret) {
  Parsed p = parse_text("fn f(x: f32) -> f32 {\n    let = 3\n    return x\n}\n");
  BOOST_TEST(p.rendered ==
             "p.scan:2:9: error: expected a name, found '='\n"
             "    let = 3\n"
             "        ^\n");
}

BOOST_AUTO_TEST_CASE(messages_and_locations) {
  BOOST_TEST(parse_errors("fn f(x: f32) f32 { return x }") ==
             std::vector<std::string>{"1:14: error: expected '->' and the result type, found 'f32'"});
  BOOST_TEST(parse_errors("fn f(x: f33) -> f32 { return x }") ==
             std::vector<std::string>{"1:9: error: expected a type (f32, f64, i32, i64 or bool), found 'f33'"});
  BOOST_TEST(parse_errors("fn f(x: f32[n, +]) -> f32 { return x }") ==
             std::vector<std::string>{"1:16: error: expected a dimension (an integer, a name or '?'), found '+'"});
  BOOST_TEST(parse_errors("let x = 1\n") == std::vector<std::string>{"1:1: error: expected 'fn' at the top level, found 'let'"});
  // A newline after a binary operator does not end the statement: the '}' is where it fails.
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return x +\n}\n") ==
             (std::vector<std::string>{"3:1: error: expected an expression, found '}'",
                                       "2:12: note: the line ends with '+', so the expression goes on to the next line"}));
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return x[1:2:3]\n}\n") ==
             std::vector<std::string>{"2:15: error: slices take no step: write 'a:b'"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return x[]\n}\n") ==
             std::vector<std::string>{"2:12: error: empty index list"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return a ? b\n}\n") ==
             std::vector<std::string>{"2:15: error: expected ':' of '?:', found end of line"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return g(x y)\n}\n") ==
             std::vector<std::string>{"2:14: error: expected ')' or ',', found 'y'"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  return x y\n}\n") ==
             std::vector<std::string>{"2:12: error: expected end of line or ';', found 'y'"});
}

BOOST_AUTO_TEST_CASE(statement_errors) {
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  x + 1\n  return x\n}\n") ==
             std::vector<std::string>{"2:3: error: an expression on its own does nothing; bind it with 'let' or, "
                                      "in a scan, define an output with 'X[t] = ...'"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  y = x\n  return x\n}\n") ==
             std::vector<std::string>{"2:3: error: expected a statement ('let', 'return', 'init', 'until' or "
                                      "'X[t] = ...'), found 'y'"});
  BOOST_TEST(parse_errors("fn f(x: f32) -> f32 {\n  init y = x\n  return x\n}\n") ==
             std::vector<std::string>{"2:3: error: 'init' is only allowed in a scan body"});
  BOOST_TEST(parse_errors("fn f(x: f32[n]) -> f32[n] {\n  let y = scan {\n    y[t] = x[t]\n    return y\n  }\n"
                          "  return y\n}\n") ==
             std::vector<std::string>{"4:5: error: 'return' is not allowed in a scan body"});
  BOOST_TEST(parse_errors("fn f(x: f32[n]) -> f32[n] {\n  let y = scan {\n    y[t, 0] = x[t]\n  }\n  return y\n}\n") ==
             std::vector<std::string>{"3:5: error: the left side of a step definition must be 'X[t]' with the loop index"});
}

BOOST_AUTO_TEST_CASE(step_definitions_parse_any_single_index) {
  // The parser takes X[e] = ...; whether e is the loop index is sema's business.
  Parsed p = parse_text("fn f(x: f32[n]) -> f32[n] {\n  let y = scan {\n    y[t - 1] = x[t]\n  }\n  return y\n}\n");
  BOOST_TEST(p.diags.empty());
  const Scan& s = as<Scan>(*as<Let>(*p.module.functions[0]->body[0]).value);
  BOOST_TEST(sexpr(*as<StepDef>(*s.body[0]).step) == "(- t 1)");
}

BOOST_AUTO_TEST_CASE(recovery_reports_every_error) {
  // Two bad statements in one body, then a bad function header and a good function after it.
  Parsed p = parse_text(
      "fn f(x: f32) -> f32 {\n"
      "  let a = (x + \n"
      "    1 *)\n"
      "  let = 2\n"
      "  return a\n"
      "}\n"
      "fn g(x f32) -> f32 { return x }\n"
      "fn h(x: f32) -> f32 { return x }\n");
  BOOST_TEST(p.diags == (std::vector<std::string>{
                            "3:8: error: expected an expression, found ')'",
                            "4:7: error: expected a name, found '='",
                            "7:8: error: expected ':', found 'f32'",
                        }));
  BOOST_TEST_REQUIRE(p.module.functions.size() == 2u);
  BOOST_TEST(p.module.functions[0]->name == "f");
  BOOST_TEST(p.module.functions[1]->name == "h");
}

BOOST_AUTO_TEST_CASE(recovery_inside_a_scan_body) {
  Parsed p = parse_text(
      "fn f(x: f32[n]) -> f32[n] {\n"
      "  let y = scan {\n"
      "    let a = * 2\n"
      "    y[t] = x[t] +\n"
      "  }\n"
      "  return y\n"
      "}\n");
  BOOST_TEST(p.diags == (std::vector<std::string>{
                            "3:13: error: expected an expression, found '*'",
                            "5:3: error: expected an expression, found '}'",
                            "4:17: note: the line ends with '+', so the expression goes on to the next line",
                        }));
}

BOOST_AUTO_TEST_SUITE_END()
