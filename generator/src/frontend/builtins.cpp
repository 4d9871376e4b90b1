// The table of builtins (builtins.def) and what is checked from it for every call: the number of
// arguments and the keywords.
#include "frontend/builtins.h"

#include "frontend/spelling.h"

namespace scangen::sema {

const std::vector<Builtin>& builtins() {
#define NO_KEYWORDS BuiltinKeywords::None
#define AXIS_KEYWORD BuiltinKeywords::Axis
#define FIRST_VALUE BuiltinFirstArg::Value
#define FIRST_PLACE BuiltinFirstArg::Place
#define NO_OP BuiltinOp{}
#define UNARY(op) BuiltinOp{ir::UnaryOp::op, std::nullopt, std::nullopt}
#define BINARY(op) BuiltinOp{std::nullopt, ir::BinaryOp::op, std::nullopt}
#define REDUCE(op) BuiltinOp{std::nullopt, std::nullopt, ir::ReduceOp::op}
#define MIN_MAX(op) BuiltinOp{std::nullopt, ir::BinaryOp::op, ir::ReduceOp::op}
#define BUILTIN(name, min_args, max_args, keywords, first_arg, handler, op, signature, summary) \
  Builtin{name, min_args, max_args, keywords, first_arg, &Analyzer::handler, op, signature, summary},
  static const std::vector<Builtin> table = {
#include "frontend/builtins.def"
  };
#undef BUILTIN
#undef MIN_MAX
#undef REDUCE
#undef BINARY
#undef UNARY
#undef NO_OP
#undef FIRST_PLACE
#undef FIRST_VALUE
#undef AXIS_KEYWORD
#undef NO_KEYWORDS
  return table;
}

const Builtin* find_builtin(const std::string& name) {
  for (const Builtin& b : builtins())
    if (name == b.name) return &b;
  return nullptr;
}

namespace {

// "1", "1 or 2", "1 to 3", "at least 2".
std::string count_words(const Builtin& b) {
  if (b.max_args == kAnyCount) return "at least " + std::to_string(b.min_args);
  if (b.max_args == b.min_args) return std::to_string(b.min_args);
  return std::to_string(b.min_args) + (b.max_args == b.min_args + 1 ? " or " : " to ") + std::to_string(b.max_args);
}

}  // namespace

SValue Analyzer::builtin_call(const Builtin& b, const ast::Call& c, Scope& scope) {
  if (!builtin_arguments_fit(b, c)) return SValue::invalid();
  return (this->*b.handler)(c, scope, b);
}

bool Analyzer::builtin_arguments_fit(const Builtin& b, const ast::Call& c) {
  size_t n = c.args.size();
  if (n < size_t(b.min_args) || (b.max_args != kAnyCount && n > size_t(b.max_args))) {
    size_t most = size_t(b.max_args == kAnyCount ? b.min_args : b.max_args);
    auto& d = diags_.report(DiagId::err_wrong_arg_count, c.callee_loc, c.callee, count_words(b), plural(most), n);
    // NumPy's sum(x, 0): the axis is a keyword here.
    std::optional<int64_t> axis = n == size_t(b.min_args) + 1 ? int_literal_value(*c.args.back()) : std::nullopt;
    if (b.keywords == BuiltinKeywords::Axis && axis) {
      std::string before;
      for (size_t i = 0; i + 1 < n; ++i) before += ast::to_source(*c.args[i]) + ", ";
      diags_.note(d, DiagId::note_axis_keyword, c.args.back()->loc, c.callee, before, *axis);
    }
    else
      diags_.note(d, DiagId::note_builtin_usage, c.callee_loc, b.signature, b.summary);
    return false;
  }
  for (const ast::KeywordArg& kw : c.kwargs) {
    if (b.keywords == BuiltinKeywords::Axis && kw.name == "axis") continue;
    auto& d = diags_.report(DiagId::err_unknown_keyword, kw.loc, c.callee, kw.name);
    if (b.keywords == BuiltinKeywords::Axis) {
      Spelling spelling(kw.name);
      spelling.consider("axis");
      if (spelling.best()) diags_.note(d, DiagId::note_did_you_mean, kw.loc, *spelling.best());
    }
    return false;
  }
  return true;
}

}  // namespace scangen::sema
