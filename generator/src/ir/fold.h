// Constant folding, in one place: what an operation of scalar constants gives at run time.
//
// Every result is computed by templates/common/scangen_scalar.h, the functions the interpreter and
// emitted code call (this layer is compiled with the flags of emitted code), so a folded constant
// is bit for bit the value the program would compute. The frontend folds weak literals with it
// (at i64 or f64, and reports what would wrap or fail as compile errors: a literal is an exact
// value) and the rewrite `general` folds every other constant (leaving what fails to run time).
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"

namespace scangen::ir {

// What the caller may need to know besides the value.
enum class FoldIssue {
  None,
  Wrapped,           // an integer result wrapped around: the exact result does not fit its dtype
  DivisionByZero,    // integer `/` or `%` by zero: a run-time error, no value
  NegativeExponent,  // integer `**` with a negative exponent: a run-time error, no value
};

struct Folded {
  std::optional<Scalar> value;  // absent when the operation fails at run time
  FoldIssue issue = FoldIssue::None;
};

// nullopt when the operation is not defined on the operands' dtype (the builder never makes it:
// arithmetic on bool, `exp` of an integer); the operands of a binary operation share a dtype.
std::optional<Folded> fold_unary(UnaryOp op, const Scalar& a);
std::optional<Folded> fold_binary(BinaryOp op, const Scalar& a, const Scalar& b);
// The conversion of a cast (and of a weak literal taking a dtype): never fails.
Scalar fold_cast(const Scalar& a, DType to);
// A unary, binary, cast or select node of these constant operands; nullopt for any other node and
// for what fails at run time.
std::optional<Scalar> fold_node(const Node& n, const std::vector<Scalar>& operands);

}  // namespace scangen::ir
