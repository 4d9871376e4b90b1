// The loop IR as text, for people and for the before/after tests of its passes (`scangen ir
// --lir`, tests/lir). One statement per line, nested blocks indented by two spaces; expressions
// fully parenthesized so that the text says exactly what the tree holds.
#include <sstream>

#include "codegen/loop_ir.h"
#include "support/check.h"

namespace scangen::lir {
namespace {

std::string dtype_text(DType d) { return std::string(dtype_name(d)); }

std::string expr_text(const ExprRef& e) {
  if (!e) return "<none>";
  switch (e->kind) {
    case ExprKind::Imm: return e->imm.str();
    case ExprKind::Var: return e->name;
    case ExprKind::Load: return e->name + "[" + expr_text(e->a) + "]";
    case ExprKind::Unary: return std::string(ir::unary_op_name(e->uop)) + "(" + expr_text(e->a) + ")";
    case ExprKind::Binary:
      return std::string(e->index_math ? "" : ir::binary_op_name(e->bop)) +
             (e->index_math ? "(" + expr_text(e->a) + " " + ir::binary_op_name(e->bop) + " " + expr_text(e->b) + ")"
                            : "(" + expr_text(e->a) + ", " + expr_text(e->b) + ")");
    case ExprKind::Select: return "select(" + expr_text(e->a) + ", " + expr_text(e->b) + ", " + expr_text(e->c) + ")";
    case ExprKind::Cast: return dtype_text(e->type) + "(" + expr_text(e->a) + ")";
    case ExprKind::Call: {
      std::string s = e->name + "(";
      for (size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + expr_text(e->args[i]);
      return s + ")";
    }
  }
  SCANGEN_UNREACHABLE("unknown expression kind");
}

std::string list_text(const std::vector<ExprRef>& es) {
  std::string s;
  for (size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + expr_text(es[i]);
  return s;
}

std::string message_text(const std::vector<MessagePart>& parts) {
  std::string s = "\"";
  for (const MessagePart& p : parts) s += p.value ? "{" + expr_text(p.value) + "}" : p.text;
  return s + "\"";
}

std::string var_type_text(const VarType& t) {
  switch (t.kind) {
    case VarType::Kind::Scalar: return dtype_text(t.elem);
    case VarType::Kind::Pointer: return dtype_text(t.elem) + "*";
    case VarType::Kind::ConstPointer: return "const " + dtype_text(t.elem) + "*";
  }
  SCANGEN_UNREACHABLE("unknown variable type");
}

const char* loop_kind_text(LoopKind k) {
  switch (k) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Vector: return "vector";
    case LoopKind::Time: return "time";
    case LoopKind::Parallel: return "parallel";
  }
  SCANGEN_UNREACHABLE("unknown loop kind");
}

std::string at(const Stmt& s) { return " at " + std::to_string(s.line) + ":" + std::to_string(s.col); }

void print_stmt(const Stmt& s, int indent, std::ostringstream& os);

void print_body(const std::vector<StmtRef>& body, int indent, std::ostringstream& os) {
  for (const StmtRef& c : body) print_stmt(*c, indent, os);
}

// The text of a statement that takes one line (not a block, loop or if).
std::string line_text(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Let:
      return "let " + s.var + ": " + var_type_text(s.vtype) + " = " + expr_text(s.value) +
             (s.vtype.is_pointer() ? " + " + expr_text(s.index) : "");
    case StmtKind::Decl: return "var " + s.var + ": " + var_type_text(s.vtype) + " = " + expr_text(s.value);
    case StmtKind::Assign: return s.var + " = " + expr_text(s.value);
    case StmtKind::Store: return s.var + "[" + expr_text(s.index) + "] = " + expr_text(s.value);
    case StmtKind::Break: return "break";
    case StmtKind::Check: return "check " + expr_text(s.cond) + at(s) + " else " + message_text(s.message);
    case StmtKind::Alloc:
      return std::string(s.mutable_pointer ? "var " : "let ") + s.var + ": " + var_type_text(s.vtype) + " = alloc " +
             s.storage + "[" + expr_text(s.value) + "]" +
             (s.cond ? " or, if " + expr_text(s.cond) + ", lend " + list_text(s.args) : std::string()) + at(s) +
             " else " + message_text(s.message);
    case StmtKind::Grow:
      return s.var + " = grow " + s.storage + "[" + expr_text(s.value) + "] keeping " + expr_text(s.index) + at(s) +
             " else " + message_text(s.message);
    case StmtKind::Call: return "call " + s.callee + "(" + list_text(s.args) + ")";
    case StmtKind::Result:
      return "result " + std::to_string(s.result_index) + " = " + expr_text(s.value) +
             (s.args.empty() && s.storage.empty() ? "" : " [" + list_text(s.args) + "]") +
             (s.storage.empty() ? "" : " owned by " + s.storage);
    case StmtKind::Comment: return "// " + s.text;
    case StmtKind::Barrier: return s.failure_check ? "barrier, then return if a thread failed" : "barrier";
    case StmtKind::Block:
    case StmtKind::For:
    case StmtKind::If: break;
  }
  SCANGEN_UNREACHABLE("not a one-line statement");
}

void print_stmt(const Stmt& s, int indent, std::ostringstream& os) {
  const std::string pad(size_t(indent), ' ');
  switch (s.kind) {
    case StmtKind::Block:
      os << pad << "{\n";
      print_body(s.body, indent + 2, os);
      os << pad << "}\n";
      return;
    case StmtKind::For:
      os << pad << "for " << s.var << " in [" << expr_text(s.begin) << ", " << expr_text(s.end) << ") "
         << loop_kind_text(s.loop)
         << (s.reduction_var.empty() ? "" : std::string(" reduction ") + ir::binary_op_name(s.reduction_op) + " into " + s.reduction_var);
      if (s.loop == LoopKind::Parallel)
        os << " chunks [" << s.var << ", " << s.chunk_end << ") threads " << s.threads << " grain " << expr_text(s.grain)
           << " alignment " << s.alignment;
      os << " {\n";
      print_body(s.body, indent + 2, os);
      os << pad << "}\n";
      return;
    case StmtKind::If:
      os << pad << "if " << expr_text(s.cond) << " {\n";
      print_body(s.body, indent + 2, os);
      if (!s.else_body.empty()) {
        os << pad << "} else {\n";
        print_body(s.else_body, indent + 2, os);
      }
      os << pad << "}\n";
      return;
    case StmtKind::Let:
    case StmtKind::Decl:
    case StmtKind::Assign:
    case StmtKind::Store:
    case StmtKind::Break:
    case StmtKind::Check:
    case StmtKind::Alloc:
    case StmtKind::Grow:
    case StmtKind::Call:
    case StmtKind::Result:
    case StmtKind::Comment:
    case StmtKind::Barrier: os << pad << line_text(s) << "\n"; return;
  }
}

std::string param_text(const Param& p) {
  std::string s = p.name + ": " + dtype_text(p.dtype);
  if (p.rank == 0) return s;
  s += "[";
  for (int d = 0; d < p.rank; ++d) s += (d ? ", " : "") + (size_t(d) < p.dims.size() ? p.dims[size_t(d)] : "?");
  return s + "]";
}

// The decisions of the CUDA passes, when they ran.
void print_kernel_plan(const KernelPlan& k, std::ostringstream& os) {
  if (k.flattened == 0 && k.lanes == 0 && !k.full_occupancy && k.block_shared.empty() && k.width.empty()) return;
  os << "  kernel: " << k.flattened << " element nest(s) flattened, " << k.lanes << " lane loop(s)"
     << (k.full_occupancy ? ", full occupancy" : "");
  if (!k.block_shared.empty()) {
    os << ", block-shared";
    for (const std::string& s : k.block_shared) os << " " << s;
  }
  if (!k.width.empty()) {
    os << ", width max(";
    for (size_t i = 0; i < k.width.size(); ++i) {
      os << (i ? ", " : "") << k.width[i].factor;
      for (auto [arg, axis] : k.width[i].dims) os << " * arg" << arg << ".dim" << axis;
    }
    os << ")";
  }
  os << "\n";
}

}  // namespace

std::string print_function(const Function& f) {
  std::ostringstream os;
  os << "fn " << f.name << " (" << f.symbol << ")\n";
  for (const Param& p : f.params) os << "  param " << param_text(p) << "\n";
  for (const Param& r : f.results) os << "  result " << param_text(r) << "\n";
  if (!f.into.empty()) os << "  param " << f.into << ": bool (results into the caller's memory)\n";
  for (const Param& o : f.outs)
    if (!o.name.empty()) os << "  param " << param_text(o) << "\n";
  for (const StorageDecl& s : f.storages) os << "  storage " << s.name << ": " << dtype_text(s.elem) << "\n";
  print_kernel_plan(f.kernel, os);
  os << "{\n";
  if (f.body) print_body(f.body->body, 2, os);
  os << "}\n";
  return os.str();
}

std::string print_module(const Module& m) {
  std::string s = m.fp_mode == FpMode::Strict ? "" : "fp " + std::string(fp_mode_name(m.fp_mode)) + "\n";
  for (size_t i = 0; i < m.functions.size(); ++i) s += (i ? "\n" : "") + print_function(m.functions[i]);
  return s;
}

}  // namespace scangen::lir
