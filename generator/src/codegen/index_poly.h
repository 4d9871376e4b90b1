// Index expressions of the loop IR as polynomials over i64 variables, so that two ways of writing
// the same address compare equal: `(i0 * C) + i1` with `i1 = e - i0 * C` is `e`, and `in_k + j`
// with `in_k = o * C + k` is `o * C + k + j`. The CUDA backend's loop rewrites (element_nests.h,
// lanes.h) use it to prove that each element of a loop touches only its own addresses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace scangen::codegen {

// A sum of monomials: sorted variable names (repeated for powers) -> coefficient.
using Monomial = std::vector<std::string>;
using IndexPoly = std::map<Monomial, int64_t>;

IndexPoly poly_const(int64_t v);
IndexPoly poly_var(const std::string& name);
// Sum, difference and product; nullopt when a coefficient overflows.
std::optional<IndexPoly> poly_add(const IndexPoly& a, const IndexPoly& b, int64_t sign = 1);
std::optional<IndexPoly> poly_mul(const IndexPoly& a, const IndexPoly& b);
// Whether `p` is `n` times a polynomial, for `n` a single term (c * x * y...): every term of `p`
// has n's variables and a multiple of c. An `n` of several terms divides only 0.
bool poly_divisible(const IndexPoly& p, const IndexPoly& n);
// Whether a monomial of `p` names a variable of `vars`.
bool poly_mentions(const IndexPoly& p, const std::set<std::string>& vars);

// Reads index expressions of one function as polynomials. A scalar let whose value is index
// arithmetic (+, -, * on i64) stands for its value; any other variable is an unknown. Variables
// defined more than once in the function have no single value and make an expression unreadable.
class IndexPolys {
 public:
  explicit IndexPolys(const lir::Stmt& body);
  // `name` is now defined once, by a let of `value` (a new let, or a loop variable that became one).
  void define(const std::string& name, const lir::ExprRef& value);
  // The polynomial of `e`; nullopt when it is not index arithmetic over readable variables.
  std::optional<IndexPoly> of(const lir::ExprRef& e) const;
  // The address of element `index` of `pointer`, counted from the buffer it points into
  // (pointer lets add their offsets); nullopt when unreadable.
  std::optional<IndexPoly> address(const std::string& pointer, const lir::ExprRef& index) const;

 private:
  std::optional<IndexPoly> of(const lir::ExprRef& e, int depth) const;
  void collect(const lir::Stmt& s);
  std::map<std::string, lir::ExprRef> lets_;
  std::map<std::string, const lir::Stmt*> pointers_;
  std::map<std::string, int> definitions_;
};

}  // namespace scangen::codegen
