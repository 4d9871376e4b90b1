#include "codegen/index_poly.h"

#include <algorithm>

namespace scangen::codegen {

using lir::ExprKind;
using lir::ExprRef;
using lir::Stmt;
using lir::StmtKind;

IndexPoly poly_const(int64_t v) {
  IndexPoly p;
  if (v != 0) p[{}] = v;
  return p;
}

IndexPoly poly_var(const std::string& name) { return IndexPoly{{{name}, 1}}; }

std::optional<IndexPoly> poly_add(const IndexPoly& a, const IndexPoly& b, int64_t sign) {
  IndexPoly out = a;
  for (const auto& [m, c] : b) {
    int64_t term = 0, sum = 0;
    if (__builtin_mul_overflow(c, sign, &term) || __builtin_add_overflow(out[m], term, &sum)) return std::nullopt;
    if (sum == 0) out.erase(m);
    else out[m] = sum;
  }
  return out;
}

std::optional<IndexPoly> poly_mul(const IndexPoly& a, const IndexPoly& b) {
  IndexPoly out;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t term = 0;
      if (__builtin_mul_overflow(ca, cb, &term)) return std::nullopt;
      auto r = poly_add(out, IndexPoly{{m, term}});
      if (!r) return std::nullopt;
      out = std::move(*r);
    }
  return out;
}

bool poly_divisible(const IndexPoly& p, const IndexPoly& n) {
  if (p.empty()) return true;
  if (n.size() != 1) return false;
  const auto& [factors, c] = *n.begin();
  for (const auto& [m, coefficient] : p) {
    if (coefficient % c != 0) return false;
    // Both are sorted: n's variables, repeats counted, are a sub-multiset of m's.
    if (!std::includes(m.begin(), m.end(), factors.begin(), factors.end())) return false;
  }
  return true;
}

bool poly_mentions(const IndexPoly& p, const std::set<std::string>& vars) {
  for (const auto& [m, c] : p)
    for (const std::string& v : m)
      if (vars.count(v)) return true;
  return false;
}

IndexPolys::IndexPolys(const Stmt& body) { collect(body); }

void IndexPolys::collect(const Stmt& s) {
  if (lir::defines_var(s.kind)) ++definitions_[s.var];
  if (s.kind == StmtKind::Let) {
    if (s.vtype.is_pointer()) pointers_[s.var] = &s;
    else lets_[s.var] = s.value;
  }
  for (const auto& c : s.body) collect(*c);
  for (const auto& c : s.else_body) collect(*c);
}

void IndexPolys::define(const std::string& name, const ExprRef& value) {
  definitions_[name] = 1;
  lets_[name] = value;
}

std::optional<IndexPoly> IndexPolys::of(const ExprRef& e) const { return of(e, 0); }

std::optional<IndexPoly> IndexPolys::of(const ExprRef& e, int depth) const {
  if (!e || depth > 256 || e->type != DType::I64) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Imm: return poly_const(e->imm.i);
    case ExprKind::Var: {
      auto d = definitions_.find(e->name);
      if (d != definitions_.end() && d->second > 1) return std::nullopt;
      if (auto it = lets_.find(e->name); it != lets_.end())
        if (auto value = of(it->second, depth + 1)) return value;
      // A parameter, a loop variable, or a let of other arithmetic: an unknown of its own.
      return poly_var(e->name);
    }
    case ExprKind::Binary: {
      if (!e->index_math) return std::nullopt;
      if (e->bop != ir::BinaryOp::Add && e->bop != ir::BinaryOp::Sub && e->bop != ir::BinaryOp::Mul)
        return std::nullopt;
      auto a = of(e->a, depth + 1), b = of(e->b, depth + 1);
      if (!a || !b) return std::nullopt;
      if (e->bop == ir::BinaryOp::Mul) return poly_mul(*a, *b);
      return poly_add(*a, *b, e->bop == ir::BinaryOp::Add ? 1 : -1);
    }
    case ExprKind::Load:
    case ExprKind::Unary:
    case ExprKind::Select:
    case ExprKind::Cast:
    case ExprKind::Call: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<IndexPoly> IndexPolys::address(const std::string& pointer, const ExprRef& index) const {
  std::optional<IndexPoly> total = of(index);
  std::string p = pointer;
  for (int hops = 0; total && hops < 256; ++hops) {
    auto it = pointers_.find(p);
    if (it == pointers_.end()) return total;
    if (definitions_.at(p) > 1) return std::nullopt;
    const Stmt& let = *it->second;
    if (let.index) {
      auto offset = of(let.index);
      if (!offset) return std::nullopt;
      total = poly_add(*total, *offset);
    }
    p = lir::pointer_base(let).name;
  }
  return std::nullopt;
}

}  // namespace scangen::codegen
