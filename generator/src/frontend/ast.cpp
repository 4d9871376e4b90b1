#include "frontend/ast.h"

#include <sstream>

namespace scangen::ast {

const char* unary_op_spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Plus: return "+";
    case UnaryOp::Not: return "!";
  }
  return "?";
}

const char* binary_op_spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
  }
  return "?";
}

namespace {

void print(std::ostream& os, const Expr& e);

void print_items(std::ostream& os, const std::vector<IndexItem>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) os << ", ";
    const IndexItem& it = items[i];
    if (!it.is_slice) {
      print(os, *it.index);
      continue;
    }
    if (it.lo) print(os, *it.lo);
    os << ":";
    if (it.hi) print(os, *it.hi);
  }
}

void print(std::ostream& os, const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: os << as<IntLit>(e).text; break;
    case ExprKind::FloatLit: os << as<FloatLit>(e).text; break;
    case ExprKind::BoolLit: os << (as<BoolLit>(e).value ? "true" : "false"); break;
    case ExprKind::Name: os << as<Name>(e).name; break;
    case ExprKind::DTypeName: os << dtype_name(as<DTypeName>(e).dtype); break;
    case ExprKind::Unary: {
      const auto& u = as<Unary>(e);
      os << unary_op_spelling(u.op);
      print(os, *u.operand);
      break;
    }
    case ExprKind::Binary: {
      const auto& b = as<Binary>(e);
      bool paren_l = b.lhs->kind == ExprKind::Binary || b.lhs->kind == ExprKind::Ternary;
      bool paren_r = b.rhs->kind == ExprKind::Binary || b.rhs->kind == ExprKind::Ternary;
      if (paren_l) os << "(";
      print(os, *b.lhs);
      if (paren_l) os << ")";
      os << " " << binary_op_spelling(b.op) << " ";
      if (paren_r) os << "(";
      print(os, *b.rhs);
      if (paren_r) os << ")";
      break;
    }
    case ExprKind::Ternary: {
      const auto& t = as<Ternary>(e);
      print(os, *t.cond);
      os << " ? ";
      print(os, *t.then_expr);
      os << " : ";
      print(os, *t.else_expr);
      break;
    }
    case ExprKind::Call: {
      const auto& c = as<Call>(e);
      os << c.callee << "(";
      bool first = true;
      for (const auto& a : c.args) {
        if (!first) os << ", ";
        first = false;
        print(os, *a);
      }
      for (const auto& kw : c.kwargs) {
        if (!first) os << ", ";
        first = false;
        os << kw.name << " = ";
        print(os, *kw.value);
      }
      os << ")";
      break;
    }
    case ExprKind::Index: {
      const auto& i = as<Index>(e);
      bool paren = i.base->kind == ExprKind::Binary || i.base->kind == ExprKind::Unary ||
                   i.base->kind == ExprKind::Ternary;
      if (paren) os << "(";
      print(os, *i.base);
      if (paren) os << ")";
      os << "[";
      print_items(os, i.items);
      os << "]";
      break;
    }
    case ExprKind::Scan: os << "scan {...}"; break;
    case ExprKind::Tuple: {
      const auto& t = as<Tuple>(e);
      os << "(";
      for (size_t i = 0; i < t.elements.size(); ++i) {
        if (i) os << ", ";
        print(os, *t.elements[i]);
      }
      os << ")";
      break;
    }
  }
}

}  // namespace

std::string to_source(const Expr& e) {
  std::ostringstream os;
  print(os, e);
  return os.str();
}

}  // namespace scangen::ast
