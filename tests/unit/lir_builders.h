// Builders of loop-IR statement trees for the unit tests, and a compact outline to compare them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace scangen::lir::testing {

// Short names for the loop IR's statement factories (loop_ir.h), as the tests write them.
inline StmtRef let(const std::string& name, ExprRef value) { return let_stmt(name, std::move(value)); }
inline StmtRef decl(const std::string& name, ExprRef value) { return decl_stmt(name, std::move(value)); }
inline StmtRef loop(const std::string& var, ExprRef begin, ExprRef end, std::vector<StmtRef> body) {
  return for_stmt(var, std::move(begin), std::move(end), LoopKind::Serial, std::move(body));
}
inline StmtRef store(const std::string& ptr, ExprRef index, ExprRef value) {
  return store_stmt(ptr, std::move(index), std::move(value));
}
inline StmtRef alloc(const std::string& var, const std::string& storage, ExprRef count) {
  return alloc_stmt(var, DType::F32, storage, std::move(count), false, 0, 0, {});
}

// A compact outline of a statement list: "let a; for i { let b; store p }".
inline std::string outline(const std::vector<StmtRef>& body) {
  std::string s;
  for (const StmtRef& st : body) {
    if (!s.empty()) s += "; ";
    switch (st->kind) {
      case StmtKind::Let: s += "let " + st->var; break;
      case StmtKind::Decl: s += "decl " + st->var; break;
      case StmtKind::Assign: s += "assign " + st->var; break;
      case StmtKind::Store: s += "store " + st->var; break;
      case StmtKind::Alloc: s += "alloc " + st->var; break;
      case StmtKind::For: s += "for " + st->var + " { " + outline(st->body) + " }"; break;
      case StmtKind::Block: s += "{ " + outline(st->body) + " }"; break;
      case StmtKind::If:
        s += "if { " + outline(st->body) + " }";
        if (!st->else_body.empty()) s += " else { " + outline(st->else_body) + " }";
        break;
      case StmtKind::Break: s += "break"; break;
      case StmtKind::Check: s += "check"; break;
      case StmtKind::Grow: s += "grow " + st->var; break;
      case StmtKind::Call: s += "call " + st->callee; break;
      case StmtKind::Result: s += "result"; break;
      case StmtKind::Comment: s += "comment"; break;
      case StmtKind::Barrier: s += st->failure_check ? "barrier+check" : "barrier"; break;
    }
  }
  return s;
}

inline Function function(std::vector<StmtRef> body) {
  Function f;
  f.name = "f";
  f.symbol = "f_impl";
  f.body = block(std::move(body));
  return f;
}

// A loop over elements (no carried dependence: spread over threads on a GPU).
inline StmtRef element_loop(const std::string& var, ExprRef end, std::vector<StmtRef> body) {
  return for_stmt(var, i64(0), std::move(end), LoopKind::Vector, std::move(body));
}

// A time loop (the steps of a scan).
inline StmtRef time_loop(const std::string& var, ExprRef end, std::vector<StmtRef> body) {
  return for_stmt(var, i64(0), std::move(end), LoopKind::Time, std::move(body));
}

// const T* name = base + offset;
inline StmtRef pointer_let(const std::string& name, const std::string& base, ExprRef offset) {
  return let_pointer_stmt(name, ptr_var(base, DType::F32), std::move(offset), true);
}

}  // namespace scangen::lir::testing
