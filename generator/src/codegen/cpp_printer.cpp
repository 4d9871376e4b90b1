#include "codegen/cpp_printer.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "codegen/cpp_names.h"
#include "ir/runtime_errors.h"
#include "support/check.h"

namespace scangen::codegen {

using lir::ExprKind;
using lir::ExprRef;
using lir::StmtKind;

const char* abi_dtype(DType d) {
  switch (d) {
    case DType::Bool: return "SCANGEN_DTYPE_BOOL";
    case DType::I32: return "SCANGEN_DTYPE_I32";
    case DType::I64: return "SCANGEN_DTYPE_I64";
    case DType::F32: return "SCANGEN_DTYPE_F32";
    case DType::F64: return "SCANGEN_DTYPE_F64";
  }
  return "?";
}

namespace {

std::string int_text(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v);
}

bool balanced_inner(const std::string& s) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (depth == 0 && i + 1 < s.size()) return false;
  }
  return true;
}

}  // namespace

std::string CppPrinter::special_float(double v, DType d) const {
  const char* t = d == DType::F32 ? "float" : "double";
  // A NaN keeps its sign: the host's inf - inf, folded at compile time, is a negative NaN, and
  // the interpreter holds the program to those bits.
  if (std::isnan(v)) return std::string(std::signbit(v) ? "-" : "") + "std::numeric_limits<" + t + ">::quiet_NaN()";
  return std::string(v < 0 ? "-" : "") + "std::numeric_limits<" + t + ">::infinity()";
}

std::string CppPrinter::expr(const ExprRef& e, bool plain) {
  switch (e->kind) {
    case ExprKind::Imm: {
      const ir::Scalar& s = e->imm;
      switch (s.dtype) {
        case DType::Bool: return s.i ? "true" : "false";
        case DType::I32:
          if (s.i == INT32_MIN) return "INT32_MIN";
          return plain ? std::to_string(s.i) : "int32_t{" + std::to_string(s.i) + "}";
        case DType::I64: return plain ? int_text(s.i) : "int64_t{" + int_text(s.i) + "}";
        case DType::F32:
        case DType::F64: {
          if (std::isnan(s.f) || std::isinf(s.f)) return special_float(s.f, s.dtype);
          char buf[48];
          std::snprintf(buf, sizeof buf, s.dtype == DType::F32 ? "%.9g" : "%.17g", s.f);
          std::string text = buf;
          if (text.find_first_of(".e") == std::string::npos) text += ".0";
          if (s.dtype == DType::F32) text += "f";
          return text;
        }
      }
      return "?";
    }
    case ExprKind::Var: return e->name;
    case ExprKind::Load: return load(e->name, expr(e->a, true));
    case ExprKind::Unary: {
      std::string a = expr(e->a);
      switch (e->uop) {
        case ir::UnaryOp::Not: return "!" + a;
        case ir::UnaryOp::Neg:
          if (!is_float(e->type)) return "sg::neg(" + a + ")";
          // `--x` would be a decrement: a negated negative operand gets parentheses.
          return a[0] == '-' ? "-(" + a + ")" : "-" + a;
        case ir::UnaryOp::Abs:
        case ir::UnaryOp::Sign:
        case ir::UnaryOp::Exp:
        case ir::UnaryOp::Log:
        case ir::UnaryOp::Log1p:
        case ir::UnaryOp::Expm1:
        case ir::UnaryOp::Sqrt:
        case ir::UnaryOp::Sin:
        case ir::UnaryOp::Cos:
        case ir::UnaryOp::Tanh:
        case ir::UnaryOp::Sigmoid:
        case ir::UnaryOp::Floor:
        case ir::UnaryOp::Ceil: return std::string("sg::") + ir::unary_op_name(e->uop) + "(" + a + ")";
      }
      return "?";
    }
    case ExprKind::Binary: return binary(*e);
    case ExprKind::Select: return "(" + expr(e->a, true) + " ? " + expr(e->b, plain) + " : " + expr(e->c, plain) + ")";
    case ExprKind::Cast: return std::string("sg::cast<") + ctype(e->type) + ">(" + expr(e->a) + ")";
    case ExprKind::Call: {
      std::string s = e->name + "(";
      for (size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + expr(e->args[i], true);
      return s + ")";
    }
  }
  return "?";
}

void CppPrinter::body(const std::vector<lir::StmtRef>& stmts, int indent, std::ostringstream& os) {
  for (const auto& c : stmts) stmt(*c, indent, os);
}

void CppPrinter::stmt(const lir::Stmt& s, int indent, std::ostringstream& os) {
  before_statement(s, indent, os);
  std::string pad(size_t(indent), ' ');
  switch (s.kind) {
    case StmtKind::Block: body(s.body, indent, os); return;
    case StmtKind::Let:
      // Pointers are restrict-qualified where the backend allows: the lowering never uses, in one
      // loop, a pointer it writes through together with another that overlaps it (state rows,
      // ring slots and fresh buffers are disjoint; views are only read).
      if (s.vtype.is_pointer()) {
        os << pad << (s.vtype.kind == lir::VarType::Kind::ConstPointer ? "const " : "") << ctype(s.vtype.elem) << "* "
           << restrict_qualifier() << (*restrict_qualifier() ? " " : "") << "const " << s.var << " = " << expr(s.value);
        if (s.index) os << " + " << expr(s.index, true);
        os << ";\n";
      } else {
        os << pad << "const " << ctype(s.vtype.elem) << " " << s.var << " = " << top(s.value) << ";\n";
      }
      return;
    case StmtKind::Decl: os << pad << ctype(s.vtype.elem) << " " << s.var << " = " << top(s.value) << ";\n"; return;
    case StmtKind::Assign: os << pad << s.var << " = " << top(s.value) << ";\n"; return;
    case StmtKind::Store: print_store(s, indent, os); return;
    case StmtKind::For: print_for(s, indent, os); return;
    case StmtKind::If: print_if(s, indent, os); return;
    case StmtKind::Break: os << pad << "break;\n"; return;
    case StmtKind::Check: print_check(s, indent, os); return;
    case StmtKind::Alloc: print_alloc(s, indent, os); return;
    case StmtKind::Grow: print_grow(s, indent, os); return;
    case StmtKind::Call: print_call(s, indent, os); return;
    case StmtKind::Result: print_result(s, indent, os); return;
    case StmtKind::Comment: os << pad << "// " << s.text << "\n"; return;
    case StmtKind::Barrier: print_barrier(s, indent, os); return;
  }
}

void CppPrinter::print_barrier(const lir::Stmt&, int, std::ostringstream&) {
  SCANGEN_UNREACHABLE("a barrier in the loop IR of the CPU backend (only the CUDA backend places them)");
}

void CppPrinter::print_store(const lir::Stmt& s, int indent, std::ostringstream& os) {
  os << std::string(size_t(indent), ' ') << s.var << "[" << expr(s.index, true) << "] = " << top(s.value) << ";\n";
}

void CppPrinter::print_for(const lir::Stmt& s, int indent, std::ostringstream& os) {
  std::string pad(size_t(indent), ' ');
  if (s.loop == lir::LoopKind::Parallel) {
    // The body is a lambda the pool calls once per chunk (templates/cpu/scangen_cpu_threads.h).
    os << pad << "scangen_rt_v1::parallel_for(" << s.threads << ", " << expr(s.begin, true) << ", " << expr(s.end, true)
       << ", " << expr(s.grain, true) << ", " << s.alignment << ", [&](int64_t " << s.var << ", int64_t " << s.chunk_end << ") {\n";
    body(s.body, indent + 2, os);
    os << pad << "});\n";
    return;
  }
  if (s.loop == lir::LoopKind::Vector) os << pad << "SCANGEN_IVDEP\n";
  // Fast mode: the compiler may split the reduction into partial sums (needs -fopenmp-simd).
  if (!s.reduction_var.empty())
    os << pad << "#pragma omp simd reduction(" << (s.reduction_op == ir::BinaryOp::Mul ? "*" : "+") << " : " << s.reduction_var
       << ")\n";
  os << pad << "for (int64_t " << s.var << " = " << expr(s.begin, true) << "; " << s.var << " < " << expr(s.end, true)
     << "; ++" << s.var << ") {\n";
  body(s.body, indent + 2, os);
  os << pad << "}\n";
}

void CppPrinter::print_if(const lir::Stmt& s, int indent, std::ostringstream& os) {
  std::string pad(size_t(indent), ' ');
  os << pad << "if (" << top(s.cond, true) << ") {\n";
  body(s.body, indent + 2, os);
  os << pad << "}\n";
}

std::string CppPrinter::failure_arguments(const lir::Stmt& s) {
  std::string out = std::to_string(s.line) + ", " + std::to_string(s.col);
  std::string text;  // consecutive pieces of text (and constants), printed as one literal
  for (const lir::MessagePart& m : s.message) {
    text += m.text;
    if (!m.value) continue;
    if (std::optional<int64_t> c = lir::const_int(m.value)) {
      text += std::to_string(*c);
      continue;
    }
    if (!text.empty()) out += ", " + quote(text);
    text.clear();
    out += ", int64_t{" + expr(m.value, true) + "}";
  }
  if (!text.empty()) out += ", " + quote(text);
  return out;
}

void CppPrinter::print_check(const lir::Stmt& s, int indent, std::ostringstream& os) {
  os << std::string(size_t(indent), ' ') << "if (!" << paren(s.cond) << ") scangen_rt_v1::fail("
     << failure_arguments(s) << ");\n";
}

// A buffer that cannot be had fails the program at the allocation, in the interpreter's words.
void CppPrinter::print_alloc(const lir::Stmt& s, int indent, std::ostringstream& os) {
  SCANGEN_CHECK(!s.message.empty(), "an allocation without its failure message");
  std::string pad(size_t(indent), ' ');
  os << pad << ctype(s.vtype.elem) << (s.mutable_pointer ? "* __restrict " : "* __restrict const ") << s.var << " = ";
  if (s.cond)
    os << expr(s.cond, true) << " ? " << s.storage << ".lend(" << expr(s.args.at(0), true) << ", "
       << expr(s.args.at(1), true) << ", " << expr(s.value, true) << ") : ";
  os << s.storage << ".ensure(" << expr(s.value, true) << ");\n"
     << pad << "if (!" << s.var << ") scangen_rt_v1::fail(" << failure_arguments(s) << ");\n";
}

void CppPrinter::print_grow(const lir::Stmt& s, int indent, std::ostringstream& os) {
  SCANGEN_CHECK(!s.message.empty(), "a growth without its failure message");
  std::string pad(size_t(indent), ' ');
  os << pad << s.var << " = " << s.storage << ".grow(" << expr(s.value, true) << ", " << expr(s.index, true) << ");\n"
     << pad << "if (!" << s.var << ") scangen_rt_v1::fail(" << failure_arguments(s) << ");\n";
}

void CppPrinter::print_call(const lir::Stmt& s, int indent, std::ostringstream& os) {
  os << std::string(size_t(indent), ' ') << "scangen_rt_v1::" << s.callee << "(";
  for (size_t i = 0; i < s.args.size(); ++i) os << (i ? ", " : "") << expr(s.args[i], true);
  os << ");\n";
}

void CppPrinter::print_result(const lir::Stmt& s, int indent, std::ostringstream& os) {
  std::string pad(size_t(indent), ' ');
  std::string r = "result" + std::to_string(s.result_index);
  if (s.storage.empty()) {
    os << pad << r << " = " << top(s.value) << ";\n";
    return;
  }
  os << pad << r << " = scangen::Tensor<" << ctype(s.value->type) << ">::adopt(" << s.storage << ".release(), "
     << expr(s.value) << ", {";
  for (size_t i = 0; i < s.args.size(); ++i) os << (i ? ", " : "") << expr(s.args[i], true);
  os << "});\n";
}

std::string CppPrinter::top(const ExprRef& e, bool plain) {
  std::string s = expr(e, plain);
  if (s.size() > 2 && s.front() == '(' && s.back() == ')' && balanced_inner(s)) return s.substr(1, s.size() - 2);
  return s;
}

std::string CppPrinter::paren(const ExprRef& e) {
  std::string s = expr(e, true);
  if (s.front() == '(' && s.back() == ')' && balanced_inner(s)) return s;
  return "(" + s + ")";
}

std::string CppPrinter::binary(const lir::Expr& e) {
  bool plain = e.index_math;
  std::string a = expr(e.a, plain), b = expr(e.b, plain);
  auto op = [&](const char* o) { return "(" + a + " " + o + " " + b + ")"; };
  auto call = [&](const char* f) { return std::string("sg::") + f + "(" + a + ", " + b + ")"; };
  DType t = e.a->type;
  switch (e.bop) {
    case ir::BinaryOp::Add: return plain || is_float(t) ? op("+") : call("add");
    case ir::BinaryOp::Sub: return plain || is_float(t) ? op("-") : call("sub");
    case ir::BinaryOp::Mul: return plain || is_float(t) ? op("*") : call("mul");
    case ir::BinaryOp::Div: return plain || is_float(t) ? op("/") : call("div");
    case ir::BinaryOp::Mod: return plain ? call("mod<int64_t>") : call("mod");
    case ir::BinaryOp::Pow: return call("pow");
    case ir::BinaryOp::Min: return plain ? call("min<int64_t>") : call("min");
    case ir::BinaryOp::Max: return plain ? call("max<int64_t>") : call("max");
    case ir::BinaryOp::Eq: return op("==");
    case ir::BinaryOp::Ne: return op("!=");
    case ir::BinaryOp::Lt: return op("<");
    case ir::BinaryOp::Le: return op("<=");
    case ir::BinaryOp::Gt: return op(">");
    case ir::BinaryOp::Ge: return op(">=");
    case ir::BinaryOp::And: return op("&&");
    case ir::BinaryOp::Or: return op("||");
  }
  return "?";
}


std::string generated_banner(const lir::Module& module) {
  return "// Generated by scangen " SCANGEN_VERSION_TEXT " from " + module.source_path + ". Do not edit.\n";
}

std::string include_guard(const std::string& stem, const std::string& extension) {
  std::string g = "SCANGEN_GENERATED_";
  for (char c : stem) g += (std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_');
  g += "_";
  for (char c : extension) g += char(std::toupper(static_cast<unsigned char>(c)));
  return g;
}

std::vector<std::string> impl_parameters(const lir::Function& f) {
  std::set<std::string> read;
  reads_of(*f.body, read);
  auto named = [&](const std::string& n) { return read.count(n) ? n : "/*" + n + "*/"; };
  std::vector<std::string> out;
  for (const lir::Param& p : f.params) {
    if (p.rank == 0) {
      out.push_back(std::string(ctype(p.dtype)) + " " + named(p.name));
      continue;
    }
    std::string decl = std::string("const ") + ctype(p.dtype) + "* " + named(p.name);
    for (const std::string& d : p.dims) decl += ", int64_t " + named(d);
    out.push_back(decl);
  }
  return out;
}

std::vector<std::string> impl_out_parameters(const lir::Function& f) {
  if (f.into.empty()) return {};
  std::set<std::string> read;
  reads_of(*f.body, read);
  auto named = [&](const std::string& n) { return read.count(n) ? n : "/*" + n + "*/"; };
  std::vector<std::string> out{"bool " + named(f.into)};
  for (const lir::Param& p : f.outs) {
    if (p.name.empty()) continue;
    std::string decl = std::string(ctype(p.dtype)) + "* " + named(p.name);
    for (const std::string& d : p.dims) decl += ", int64_t " + named(d);
    out.push_back(decl);
  }
  return out;
}

std::string impl_out_arguments(const lir::Function& f, const std::vector<std::string>& outs) {
  if (f.into.empty()) return "";
  std::string s = outs.empty() ? "false" : "true";
  for (size_t i = 0; i < f.outs.size(); ++i) {
    const lir::Param& p = f.outs[i];
    if (p.name.empty()) continue;
    s += outs.empty() ? ", nullptr" : ", " + outs[i] + ".data()";
    for (int d = 0; d < p.rank; ++d) s += outs.empty() ? ", 0" : ", " + outs[i] + ".dim(" + std::to_string(d) + ")";
  }
  return s;
}

namespace {

// The catalogue's argument_rank for a caller's tensor `tensor` declared `d`: a check that fails
// through `fail(line, column, parts...)`, the parts formatted with the tensor's rank as a C++
// expression.
std::string rank_check(const std::string& fail, const std::string& what, const std::string& tensor,
                       const lir::Declared& d) {
  struct Sink {
    std::string args, text_;
    void text(const std::string& t) { text_ += t; }
    void value(const std::string& e) {
      if (!text_.empty()) args += ", " + quote(text_);
      text_.clear();
      args += ", int64_t(" + e + ")";
    }
  } sink;
  ir::format_runtime_error<std::string>(
      ir::RuntimeErrorId::argument_rank,
      {ir::ErrorArg<std::string>::text_of(what), ir::ErrorArg<std::string>::text_of(std::to_string(d.rank)),
       ir::ErrorArg<std::string>::text_of(d.type_text), ir::ErrorArg<std::string>::number(tensor + ".rank()")},
      sink);
  if (!sink.text_.empty()) sink.args += ", " + quote(sink.text_);
  return "  if (" + tensor + ".rank() != " + std::to_string(d.rank) + ") " + fail + "(" + std::to_string(d.loc.line) +
         ", " + std::to_string(d.loc.col) + sink.args + ");\n";
}

}  // namespace

std::string rank_checks(const lir::Function& lf, const Api& api, const std::string& fail) {
  const lir::Signature& fn = lf.signature;
  std::string out;
  for (size_t i = 0; i < fn.args.size(); ++i) {
    const lir::Declared& arg = fn.args[i];
    if (arg.rank == 0) continue;
    out += rank_check(fail, "argument '" + arg.name + "' of '" + lf.name + "'", api.arg_names[i], arg);
  }
  return out;
}

std::string out_checks(const lir::Function& lf, const Api& api, const std::string& fail, const std::string& disjoint) {
  const lir::Signature& fn = lf.signature;
  std::string out;
  auto at = [](const Loc& loc) { return std::to_string(loc.line) + ", " + std::to_string(loc.col); };
  for (size_t i = 0; i < fn.results.size(); ++i)
    out += rank_check(fail, lir::result_what(lf, i), api.out_names[i], fn.results[i]);
  for (size_t i = 0; i < fn.results.size(); ++i) {
    const Loc& loc = fn.results[i].loc;
    for (size_t a = 0; a < fn.args.size(); ++a)
      if (fn.args[a].rank != 0)
        out += "  " + disjoint + "(" + quote(lir::result_what(lf, i)) + ", " + api.out_names[i] + ", " +
               quote("argument '" + fn.args[a].name + "'") + ", " + api.arg_names[a] + ", " + at(loc) + ");\n";
    for (size_t j = 0; j < i; ++j)
      out += "  " + disjoint + "(" + quote(lir::result_what(lf, i)) + ", " + api.out_names[i] + ", " +
             quote(lir::result_what(lf, j)) + ", " + api.out_names[j] + ", " + at(loc) + ");\n";
  }
  return out;
}

void reads_of(const lir::Stmt& s, std::set<std::string>& out) {
  std::vector<std::string> r;
  for (const ExprRef* e : {&s.value, &s.index, &s.begin, &s.end, &s.cond}) lir::collect_reads(*e, r);
  for (const ExprRef& a : s.args) lir::collect_reads(a, r);
  for (const lir::MessagePart& m : s.message) lir::collect_reads(m.value, r);
  if (s.kind == StmtKind::Store) r.push_back(s.var);
  out.insert(r.begin(), r.end());
  for (const auto& c : s.body) reads_of(*c, out);
  for (const auto& c : s.else_body) reads_of(*c, out);
}

namespace {

// A name of the typed API for a .scan name: sanitized, with '_' appended while it is reserved or
// already taken (a fn `class`, a parameter `result`, a fn g_impl beside g's implementation).
std::string api_identifier(const std::string& name, std::set<std::string>& taken) {
  std::string out = cpp_identifier_chars(name);
  while (is_reserved_cpp_name(out) || taken.count(out)) out += "_";
  taken.insert(out);
  return out;
}

}  // namespace

// The typed API of every function. Names are chosen for the whole module: the functions and
// result structs share the namespace with the implementations, and a parameter must not hide
// a type, the implementation or the result variable that the API body names.
std::vector<Api> apis_of(const lir::Module& module, const ApiTypes& types) {
  std::set<std::string> module_names;
  for (const lir::Function& lf : module.functions) module_names.insert(lf.symbol);
  std::vector<Api> apis(module.functions.size());
  // Functions first: a fn named f_results keeps its name, fn f's result struct gives way.
  for (size_t f = 0; f < module.functions.size(); ++f)
    apis[f].name = api_identifier(module.functions[f].name, module_names);
  for (size_t f = 0; f < module.functions.size(); ++f)
    if (module.functions[f].signature.results.size() > 1)
      apis[f].result_type = api_identifier(apis[f].name + "_results", module_names);
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const lir::Signature& fn = module.functions[f].signature;
    Api& a = apis[f];
    std::set<std::string> body_names = {module.functions[f].symbol};
    if (!a.result_type.empty()) body_names.insert(a.result_type);
    a.local = fn.results.size() == 1 ? "result" : "results";
    std::set<std::string> arg_names = body_names;
    for (size_t i = 0; i < fn.args.size(); ++i) {
      const lir::Declared& arg = fn.args[i];
      if (i) a.params += ", ";
      a.params += arg.rank == 0 ? std::string(ctype(arg.dtype)) : types.tensor_ref(arg.dtype, true);
      a.arg_names.push_back(api_identifier(arg.name, arg_names));
      a.params += " " + a.arg_names.back();
    }
    while (arg_names.count(a.local)) a.local += "_";
    if (!module.functions[f].into.empty()) {
      std::set<std::string> out_names = arg_names;
      out_names.insert(a.local);
      for (size_t i = 0; i < fn.results.size(); ++i) {
        const lir::Declared& r = fn.results[i];
        const std::string hint = fn.results.size() == 1 && r.name.empty() ? "out"
                                 : r.name.empty()                          ? fn.result_name(i)
                                                                           : r.name + "_out";
        a.out_names.push_back(api_identifier(hint, out_names));
        a.out_params += (a.out_params.empty() ? "" : ", ") + types.tensor_ref(r.dtype, false) + " " +
                        a.out_names.back();
      }
    }
    auto one = [&](const lir::Declared& r) {
      return r.rank == 0 ? std::string(ctype(r.dtype))
                                : types.tensor(r.dtype);
    };
    if (fn.results.size() == 1) {
      a.result_type = one(fn.results[0]);
    } else {
      a.result_struct = "struct " + a.result_type + " {\n";
      std::set<std::string> used = {a.result_type};
      for (size_t i = 0; i < fn.results.size(); ++i) {
        a.result_fields.push_back(api_identifier(fn.result_name(i), used));
        a.result_struct += "  " + one(fn.results[i]) + " " + a.result_fields.back() + ";\n";
      }
      a.result_struct += "};\n";
    }
  }
  return apis;
}

}  // namespace scangen::codegen
