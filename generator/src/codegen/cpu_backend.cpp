// The CPU backend: prints the loop IR as C++17, a header (the typed API) and a source (the loops,
// the helpers of templates/, and the C ABI entry points the JIT loads).
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "codegen/backend.h"
#include "codegen/cpp_names.h"
#include "support/check.h"

namespace scangen::embedded {
std::string_view file(std::string_view path);
}

namespace scangen::codegen {
namespace {

using lir::ExprKind;
using lir::ExprRef;
using lir::StmtKind;

#ifndef SCANGEN_VERSION_TEXT
#define SCANGEN_VERSION_TEXT "0.1.0"
#endif

const char* ctype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
  }
  return "void";
}

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

std::string float_text(double v, DType d) {
  const char* t = d == DType::F32 ? "float" : "double";
  if (std::isnan(v)) return std::string("std::numeric_limits<") + t + ">::quiet_NaN()";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + "std::numeric_limits<" + t + ">::infinity()";
  char buf[48];
  std::snprintf(buf, sizeof buf, d == DType::F32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (d == DType::F32) s += "f";
  return s;
}

std::string int_text(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class Printer {
 public:
  // `plain`: an integer in index arithmetic (printed bare); else typed for scalar_v1 templates.
  std::string expr(const ExprRef& e, bool plain = false) {
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
          case DType::F64: return float_text(s.f, s.dtype);
        }
        return "?";
      }
      case ExprKind::Var: return e->name;
      case ExprKind::Load: return e->name + "[" + expr(e->a, true) + "]";
      case ExprKind::Unary: {
        std::string a = expr(e->a);
        switch (e->uop) {
          case ir::UnaryOp::Not: return "!" + a;
          case ir::UnaryOp::Neg:
            if (!is_float(e->type)) return "sg::neg(" + a + ")";
            // `--x` would be a decrement: a negated negative operand gets parentheses.
            return a[0] == '-' ? "-(" + a + ")" : "-" + a;
          default: return std::string("sg::") + ir::unary_op_name(e->uop) + "(" + a + ")";
        }
      }
      case ExprKind::Binary: return binary(*e);
      case ExprKind::Select: return "(" + expr(e->a, true) + " ? " + expr(e->b, plain) + " : " + expr(e->c, plain) + ")";
      case ExprKind::Cast: return std::string("sg::cast<") + ctype(e->type) + ">(" + expr(e->a) + ")";
    }
    return "?";
  }

  void stmt(const lir::Stmt& s, int indent, std::ostringstream& os) {
    std::string pad(size_t(indent), ' ');
    switch (s.kind) {
      case StmtKind::Block:
        for (const auto& c : s.body) stmt(*c, indent, os);
        return;
      case StmtKind::Let:
        // Pointers are __restrict: the lowering never uses, in one loop, a pointer it writes
        // through together with another that overlaps it (state rows, ring slots and fresh
        // buffers are disjoint; views are only read).
        if (s.vtype.is_pointer()) {
          os << pad << (s.vtype.kind == lir::VarType::Kind::ConstPointer ? "const " : "") << ctype(s.vtype.elem)
             << "* __restrict const " << s.var << " = " << expr(s.value);
          if (s.index) os << " + " << expr(s.index, true);
          os << ";\n";
        } else {
          os << pad << "const " << ctype(s.vtype.elem) << " " << s.var << " = " << top(s.value) << ";\n";
        }
        return;
      case StmtKind::Decl: os << pad << ctype(s.vtype.elem) << " " << s.var << " = " << top(s.value) << ";\n"; return;
      case StmtKind::Assign: os << pad << s.var << " = " << top(s.value) << ";\n"; return;
      case StmtKind::Store: os << pad << s.var << "[" << expr(s.index, true) << "] = " << top(s.value) << ";\n"; return;
      case StmtKind::For:
        if (s.loop == lir::LoopKind::Vector) os << pad << "SCANGEN_IVDEP\n";
        os << pad << "for (int64_t " << s.var << " = " << expr(s.begin, true) << "; " << s.var << " < "
           << expr(s.end, true) << "; ++" << s.var << ") {\n";
        for (const auto& c : s.body) stmt(*c, indent + 2, os);
        os << pad << "}\n";
        return;
      case StmtKind::If:
        os << pad << "if (" << top(s.cond, true) << ") {\n";
        for (const auto& c : s.body) stmt(*c, indent + 2, os);
        os << pad << "}\n";
        return;
      case StmtKind::Break: os << pad << "break;\n"; return;
      case StmtKind::Check: {
        os << pad << "if (!" << paren(s.cond) << ") scangen_rt_v1::fail(" << s.line << ", " << s.col;
        for (const lir::MessagePart& m : s.message) {
          if (!m.text.empty()) os << ", " << quote(m.text);
          if (m.value) os << ", int64_t{" << expr(m.value, true) << "}";
        }
        os << ");\n";
        return;
      }
      case StmtKind::Alloc:
        os << pad << ctype(s.vtype.elem) << (s.mutable_pointer ? "* __restrict " : "* __restrict const ") << s.var
           << " = " << s.storage
           << ".ensure(" << expr(s.value, true) << ");\n";
        return;
      case StmtKind::Grow:
        os << pad << s.var << " = " << s.storage << ".grow(" << expr(s.value, true) << ", " << expr(s.index, true)
           << ");\n";
        return;
      case StmtKind::Call: {
        os << pad << "scangen_rt_v1::" << s.callee << "(";
        for (size_t i = 0; i < s.args.size(); ++i) os << (i ? ", " : "") << expr(s.args[i], true);
        os << ");\n";
        return;
      }
      case StmtKind::Result: {
        std::string r = "result" + std::to_string(s.result_index);
        if (s.storage.empty()) {
          os << pad << r << " = " << top(s.value) << ";\n";
          return;
        }
        os << pad << r << " = scangen::Tensor<" << ctype(s.value->type) << ">::adopt(" << s.storage << ".release(), "
           << expr(s.value) << ", {";
        for (size_t i = 0; i < s.args.size(); ++i) os << (i ? ", " : "") << expr(s.args[i], true);
        os << "});\n";
        return;
      }
      case StmtKind::Comment: os << pad << "// " << s.text << "\n"; return;
    }
  }

 private:
  // An expression printed where no parentheses are needed around it.
  std::string top(const ExprRef& e, bool plain = false) {
    std::string s = expr(e, plain);
    if (s.size() > 2 && s.front() == '(' && s.back() == ')' && balanced_inner(s)) return s.substr(1, s.size() - 2);
    return s;
  }
  std::string paren(const ExprRef& e) {
    std::string s = expr(e, true);
    if (s.front() == '(' && s.back() == ')' && balanced_inner(s)) return s;
    return "(" + s + ")";
  }
  static bool balanced_inner(const std::string& s) {
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '(') ++depth;
      if (s[i] == ')') --depth;
      if (depth == 0 && i + 1 < s.size()) return false;
    }
    return true;
  }

  std::string binary(const lir::Expr& e) {
    bool plain = e.index_math;
    std::string a = expr(e.a, plain), b = expr(e.b, plain);
    auto op = [&](const char* o) { return "(" + a + " " + o + " " + b + ")"; };
    auto call = [&](const char* f) { return std::string("sg::") + f + "(" + a + ", " + b + ")"; };
    DType t = e.a->type;
    switch (e.bop) {
      case ir::BinaryOp::Add: return plain || is_float(t) ? op("+") : call("add");
      case ir::BinaryOp::Sub: return plain || is_float(t) ? op("-") : call("sub");
      case ir::BinaryOp::Mul: return plain || is_float(t) ? op("*") : call("mul");
      case ir::BinaryOp::Div: return is_float(t) ? op("/") : call("div");
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
};

// Names a body reads, to leave unused parameters unnamed (no -Wunused-parameter).
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

// A name of the typed API for a .scan name: sanitized, with '_' appended while it is reserved or
// already taken (a fn `class`, a parameter `result`, a fn g_impl beside g's implementation).
std::string api_identifier(const std::string& name, std::set<std::string>& taken) {
  std::string out = cpp_identifier_chars(name);
  while (is_reserved_cpp_name(out) || taken.count(out)) out += "_";
  taken.insert(out);
  return out;
}

std::string tensor_type(DType d, bool is_const) {
  return std::string("scangen::TensorRef<") + (is_const ? "const " : "") + ctype(d) + ">";
}

class CpuBackend : public Backend {
 public:
  const char* name() const override { return "cpu"; }

  std::vector<EmittedFile> emit(const ir::Program& program, const lir::Module& module,
                                const EmitOptions& options) const override {
    std::string header = print_header(program, module, options);
    std::string source = print_source(program, module, options, header);
    if (options.single_translation_unit) return {{options.stem + ".cpp", source}};
    return {{options.stem + ".h", header}, {options.stem + ".cpp", source}};
  }

 private:
  static std::string banner(const ir::Program& p) {
    return "// Generated by scangen " SCANGEN_VERSION_TEXT " from " + p.source_path + ". Do not edit.\n";
  }

  // The typed C++ API of one function.
  struct Api {
    std::string name;           // C++ function name
    std::string result_type;    // scangen::Tensor<float>, float, or a struct name
    std::string result_struct;  // the struct definition, for several results
    std::vector<std::string> result_fields;
    std::string params;         // "scangen::TensorRef<const float> A, int32_t k"
    std::vector<std::string> arg_names;  // the C++ names of the parameters
    std::string local;          // the C++ name of the API body's result variable
  };

  // The typed API of every function. Names are chosen for the whole module: the functions and
  // result structs share the namespace with the implementations, and a parameter must not hide
  // a type, the implementation or the result variable that the API body names.
  static std::vector<Api> apis_of(const ir::Program& program, const lir::Module& module) {
    std::set<std::string> module_names;
    for (const lir::Function& lf : module.functions) module_names.insert(lf.symbol);
    std::vector<Api> apis(program.functions.size());
    // Functions first: a fn named f_results keeps its name, fn f's result struct gives way.
    for (size_t f = 0; f < program.functions.size(); ++f)
      apis[f].name = api_identifier(program.functions[f].name, module_names);
    for (size_t f = 0; f < program.functions.size(); ++f)
      if (program.functions[f].results.size() > 1)
        apis[f].result_type = api_identifier(apis[f].name + "_results", module_names);
    for (size_t f = 0; f < program.functions.size(); ++f) {
      const ir::Function& fn = program.functions[f];
      Api& a = apis[f];
      std::set<std::string> body_names = {module.functions[f].symbol};
      if (!a.result_type.empty()) body_names.insert(a.result_type);
      a.local = fn.results.size() == 1 ? "result" : "results";
      std::set<std::string> arg_names = body_names;
      for (size_t i = 0; i < fn.args.size(); ++i) {
        const ir::ArgDecl& arg = fn.args[i];
        if (i) a.params += ", ";
        a.params += arg.type.is_scalar() ? std::string(ctype(arg.type.dtype)) : tensor_type(arg.type.dtype, true);
        a.arg_names.push_back(api_identifier(arg.name, arg_names));
        a.params += " " + a.arg_names.back();
      }
      while (arg_names.count(a.local)) a.local += "_";
      auto one = [&](const ir::ResultDecl& r) {
        return r.type.is_scalar() ? std::string(ctype(r.type.dtype))
                                  : std::string("scangen::Tensor<") + ctype(r.type.dtype) + ">";
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

  static std::string guard_of(const std::string& stem) {
    std::string g = "SCANGEN_GENERATED_";
    for (char c : stem) g += (std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_');
    return g + "_H";
  }

  std::string print_header(const ir::Program& program, const lir::Module& module, const EmitOptions& o) const {
    std::ostringstream os;
    os << banner(program);
    os << "#ifndef " << guard_of(o.stem) << "\n#define " << guard_of(o.stem) << "\n\n";
    os << embedded::file("cpu/scangen_cpu_api.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\n\n";
    std::vector<Api> apis = apis_of(program, module);
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const ir::Function& fn = program.functions[f];
      const Api& a = apis[f];
      os << "// fn " << fn.name << fn.signature() << "\n";
      if (!a.result_struct.empty()) os << a.result_struct;
      os << a.result_type << " " << a.name << "(" << a.params << ");\n\n";
    }
    os << "}  // namespace " << o.cpp_namespace << "\n\n#endif  // " << guard_of(o.stem) << "\n";
    return os.str();
  }

  std::string print_source(const ir::Program& program, const lir::Module& module, const EmitOptions& o,
                           const std::string& header) const {
    std::ostringstream os;
    os << banner(program);
    if (o.single_translation_unit) {
      os << "// The header " << o.stem << ".h follows.\n" << header.substr(header.find('\n') + 1) << "\n";
    } else {
      os << "#include \"" << o.stem << ".h\"\n\n";
    }
    os << "#include <limits>\n\n";
    os << embedded::file("common/scangen_scalar.h") << "\n";
    os << embedded::file("cpu/scangen_cpu_support.h") << "\n";
    os << "namespace " << o.cpp_namespace << " {\nnamespace {\n\nnamespace sg = scangen::scalar_v1;\n\n";
    for (size_t f = 0; f < module.functions.size(); ++f) print_impl(program.functions[f], module.functions[f], os);
    os << "}  // namespace\n\n";
    std::vector<Api> apis = apis_of(program, module);
    for (size_t f = 0; f < module.functions.size(); ++f)
      print_api(program.functions[f], module.functions[f], apis[f], os);
    os << "}  // namespace " << o.cpp_namespace << "\n\n";
    print_abi(program, module, o, os);
    return os.str();
  }

  static void print_impl(const ir::Function& fn, const lir::Function& lf, std::ostringstream& os) {
    std::set<std::string> read;
    reads_of(*lf.body, read);
    os << "// fn " << fn.name << fn.signature() << "\n";
    os << "void " << lf.symbol << "(";
    bool first = true;
    auto sep = [&] {
      if (!first) os << ", ";
      first = false;
    };
    for (const lir::Param& p : lf.params) {
      auto named = [&](const std::string& n) { return read.count(n) ? n : "/*" + n + "*/"; };
      sep();
      if (p.rank == 0) {
        os << ctype(p.dtype) << " " << named(p.name);
        continue;
      }
      os << "const " << ctype(p.dtype) << "* " << named(p.name);
      for (const std::string& d : p.dims) os << ", int64_t " << named(d);
    }
    for (size_t i = 0; i < lf.results.size(); ++i) {
      sep();
      const lir::Param& r = lf.results[i];
      os << (r.rank == 0 ? std::string(ctype(r.dtype)) : std::string("scangen::Tensor<") + ctype(r.dtype) + ">")
         << "& " << r.name;
    }
    os << ") {\n";
    for (const lir::StorageDecl& s : lf.storages) os << "  scangen_rt_v1::Storage<" << ctype(s.elem) << "> " << s.name << ";\n";
    Printer p;
    p.stmt(*lf.body, 2, os);
    os << "}\n\n";
  }

  static void print_api(const ir::Function& fn, const lir::Function& lf, const Api& a, std::ostringstream& os) {
    os << a.result_type << " " << a.name << "(" << a.params << ") {\n";
    for (size_t i = 0; i < fn.args.size(); ++i) {
      const ir::ArgDecl& arg = fn.args[i];
      if (arg.type.is_scalar()) continue;
      os << "  scangen_rt_v1::check_rank(" << quote("argument '" + arg.name + "' of '" + fn.name + "'") << ", "
         << a.arg_names[i] << ".rank(), " << arg.type.rank() << ", " << quote(arg.type.str()) << ", " << arg.loc.line
         << ", " << arg.loc.col << ");\n";
    }
    std::vector<std::string> results;
    if (fn.results.size() == 1) {
      os << "  " << a.result_type << " " << a.local << "{};\n";
      results.push_back(a.local);
    } else {
      os << "  " << a.result_type << " " << a.local << ";\n";
      for (const std::string& f : a.result_fields) results.push_back(a.local + "." + f);
    }
    os << "  " << lf.symbol << "(";
    bool first = true;
    for (size_t i = 0; i < fn.args.size(); ++i) {
      const lir::Param& p = lf.params[i];
      const std::string& arg = a.arg_names[i];
      os << (first ? "" : ", ");
      first = false;
      if (p.rank == 0) {
        os << arg;
        continue;
      }
      os << arg << ".data()";
      for (int d = 0; d < p.rank; ++d) os << ", " << arg << ".dim(" << d << ")";
    }
    for (const std::string& r : results) {
      os << (first ? "" : ", ") << r;
      first = false;
    }
    os << ");\n";
    os << "  return " << a.local << ";\n}\n\n";
  }

  static void print_abi(const ir::Program& program, const lir::Module& module, const EmitOptions& o,
                        std::ostringstream& os) {
    os << "#ifdef SCANGEN_EMIT_MODULE_ABI\n// The C ABI the scangen runtime loads (templates/common/scangen_abi.h).\n";
    os << embedded::file("common/scangen_abi.h") << "\n";
    os << "namespace {\n\n";
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const ir::Function& fn = program.functions[f];
      const lir::Function& lf = module.functions[f];
      std::string entry = "scangen_entry_" + std::to_string(f);
      os << "int32_t " << entry << "(const scangen_tensor* args, int32_t num_args, scangen_tensor* results,\n"
         << "                int32_t num_results, scangen_error* error) {\n";
      os << "  error->line = 0;\n  error->column = 0;\n  error->message[0] = '\\0';\n";
      os << "  if (num_args != " << fn.args.size() << " || num_results != " << fn.results.size() << ") {\n"
         << "    std::snprintf(error->message, sizeof error->message, \"%s\", \"wrong number of arguments or results\");\n"
         << "    return SCANGEN_INTERNAL_ERROR;\n  }\n";
      os << "  try {\n";
      for (size_t i = 0; i < fn.results.size(); ++i) {
        const lir::Param& r = lf.results[i];
        os << "    " << (r.rank == 0 ? std::string(ctype(r.dtype)) : std::string("scangen::Tensor<") + ctype(r.dtype) + ">")
           << " r" << i << "{};\n";
      }
      os << "    " << o.cpp_namespace << "::" << lf.symbol << "(";
      bool first = true;
      for (size_t i = 0; i < lf.params.size(); ++i) {
        const lir::Param& p = lf.params[i];
        os << (first ? "" : ", ");
        first = false;
        if (p.rank == 0) {
          os << "*static_cast<const " << ctype(p.dtype) << "*>(args[" << i << "].data)";
          continue;
        }
        os << "static_cast<const " << ctype(p.dtype) << "*>(args[" << i << "].data)";
        for (int d = 0; d < p.rank; ++d) os << ", args[" << i << "].shape[" << d << "]";
      }
      for (size_t i = 0; i < fn.results.size(); ++i) {
        os << (first ? "" : ", ") << "r" << i;
        first = false;
      }
      os << ");\n";
      for (size_t i = 0; i < fn.results.size(); ++i) {
        const lir::Param& r = lf.results[i];
        std::string res = "results[" + std::to_string(i) + "]";
        os << "    " << res << ".dtype = " << abi_dtype(r.dtype) << ";\n    " << res << ".rank = " << r.rank << ";\n";
        if (r.rank == 0) {
          os << "    " << res << ".owner = std::malloc(64);\n"
             << "    if (!" << res << ".owner) throw std::bad_alloc();\n"
             << "    *static_cast<" << ctype(r.dtype) << "*>(" << res << ".owner) = r" << i << ";\n"
             << "    " << res << ".data = " << res << ".owner;\n";
          continue;
        }
        os << "    for (int d = 0; d < " << r.rank << "; ++d) " << res << ".shape[d] = r" << i << ".dim(d);\n"
           << "    " << res << ".data = r" << i << ".data();\n"
           << "    " << res << ".owner = r" << i << ".release();\n";
      }
      os << "    return SCANGEN_OK;\n";
      os << "  } catch (const scangen::Error& e) {\n"
         << "    error->line = e.line();\n    error->column = e.column();\n"
         << "    std::snprintf(error->message, sizeof error->message, \"%s\", e.what());\n"
         << "    return SCANGEN_USER_ERROR;\n"
         << "  } catch (const std::bad_alloc&) {\n"
         << "    std::snprintf(error->message, sizeof error->message, \"%s\", \"out of memory\");\n"
         << "    return SCANGEN_USER_ERROR;\n"
         << "  } catch (const std::exception& e) {\n"
         << "    std::snprintf(error->message, sizeof error->message, \"%s\", e.what());\n"
         << "    return SCANGEN_INTERNAL_ERROR;\n  }\n}\n\n";
      auto list = [&](const char* name, const std::vector<std::string>& items) {
        os << "const int32_t " << name << "_" << f << "[] = {";
        for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
        if (items.empty()) os << "0";
        os << "};\n";
      };
      std::vector<std::string> ad, ar, rd, rr;
      for (const auto& a : fn.args) {
        ad.push_back(abi_dtype(a.type.dtype));
        ar.push_back(std::to_string(a.type.rank()));
      }
      for (const auto& r : fn.results) {
        rd.push_back(abi_dtype(r.type.dtype));
        rr.push_back(std::to_string(r.type.rank()));
      }
      list("arg_dtypes", ad);
      list("arg_ranks", ar);
      list("result_dtypes", rd);
      list("result_ranks", rr);
      os << "\n";
    }
    os << "const scangen_function_info functions[] = {\n";
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const ir::Function& fn = program.functions[f];
      os << "    {" << quote(fn.name) << ", " << quote(fn.signature()) << ", scangen_entry_" << f << ", "
         << fn.args.size() << ", " << fn.results.size() << ", arg_dtypes_" << f << ", arg_ranks_" << f
         << ", result_dtypes_" << f << ", result_ranks_" << f << "},\n";
    }
    os << "};\n\nconst scangen_module_info module_info = {SCANGEN_ABI_VERSION, " << quote(program.source_path) << ", "
       << module.functions.size() << ", functions};\n\n}  // namespace\n\n";
    os << "extern \"C\" __attribute__((visibility(\"default\"))) const scangen_module_info* scangen_module_v1(void) {\n"
       << "  return &module_info;\n}\n#endif  // SCANGEN_EMIT_MODULE_ABI\n";
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace scangen::codegen
