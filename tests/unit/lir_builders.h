// Builders of loop-IR statement trees for the unit tests, and a compact outline to compare them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace scangen::lir::testing {

inline std::shared_ptr<Stmt> stmt(StmtKind k) {
  auto s = std::make_shared<Stmt>();
  s->kind = k;
  return s;
}

inline StmtRef let(const std::string& name, ExprRef value) {
  auto s = stmt(StmtKind::Let);
  s->var = name;
  s->vtype = VarType::scalar(value->type);
  s->value = std::move(value);
  return s;
}

inline StmtRef decl(const std::string& name, ExprRef value) {
  auto s = stmt(StmtKind::Decl);
  s->var = name;
  s->vtype = VarType::scalar(value->type);
  s->value = std::move(value);
  return s;
}

inline StmtRef loop(const std::string& var, ExprRef begin, ExprRef end, std::vector<StmtRef> body) {
  auto s = stmt(StmtKind::For);
  s->var = var;
  s->begin = std::move(begin);
  s->end = std::move(end);
  s->body = std::move(body);
  return s;
}

inline StmtRef store(const std::string& ptr, ExprRef index, ExprRef value) {
  auto s = stmt(StmtKind::Store);
  s->var = ptr;
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}

inline StmtRef alloc(const std::string& var, const std::string& storage, ExprRef count) {
  auto s = stmt(StmtKind::Alloc);
  s->var = var;
  s->vtype = VarType::pointer(DType::F32);
  s->storage = storage;
  s->value = std::move(count);
  return s;
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
  StmtRef s = loop(var, i64(0), std::move(end), std::move(body));
  s->loop = LoopKind::Vector;
  return s;
}

// A time loop (the steps of a scan).
inline StmtRef time_loop(const std::string& var, ExprRef end, std::vector<StmtRef> body) {
  StmtRef s = loop(var, i64(0), std::move(end), std::move(body));
  s->loop = LoopKind::Time;
  return s;
}

// const T* name = base + offset;
inline StmtRef pointer_let(const std::string& name, const std::string& base, ExprRef offset) {
  auto s = std::make_shared<Stmt>();
  s->kind = StmtKind::Let;
  s->var = name;
  s->vtype = VarType::pointer(DType::F32);
  s->value = ptr_var(base, DType::F32);
  s->index = std::move(offset);
  return s;
}

}  // namespace scangen::lir::testing
