// Element-wise evaluation in the interpreter: NumPy broadcasting, walks over the elements of a
// broadcast shape, and each operator on one element (from templates/common/scangen_scalar.h, the
// header emitted code uses, so both compute the same bits).
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "interpreter/failures.h"
#include "ir/ir.h"
#include "scangen_scalar.h"
#include "support/check.h"

namespace scangen::interp {

namespace sc = scangen::scalar_v1;

// The broadcast shape of a and b, or the run-time error of the node at loc.
Shape broadcast(const Shape& a, const Shape& b, const Loc& loc);

// Element strides of `in` seen through the broadcast `out` shape (0 where broadcast).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls f(out_index, offsets) for every element of `out` in C order, where offsets[k] is the
// element offset into input k.
template <class F>
void for_each_element(const Shape& out, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  int64_t total = shape_numel(out);
  size_t rank = out.size();
  std::vector<int64_t> counter(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, offsets);
    for (size_t d = rank; d-- > 0;) {
      ++counter[d];
      for (size_t k = 0; k < strides.size(); ++k) offsets[k] += strides[k][d];
      if (counter[d] < out[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) offsets[k] -= strides[k][d] * counter[d];
      counter[d] = 0;
    }
  }
}

inline int64_t scalar_i64(const HostTensor& t) { return t.get_as_int64(0); }

template <class T> T unary(ir::UnaryOp op, T a) {
  using ir::UnaryOp;
  if constexpr (std::is_same_v<T, bool>) {
    return op == UnaryOp::Not ? !a : a;
  } else {
    // Sema admits only the integer-capable operators (ops.def) on integers.
    constexpr bool is_float = std::is_floating_point_v<T>;
    switch (op) {
      case UnaryOp::Neg: return sc::neg(a);
      case UnaryOp::Abs: return sc::abs(a);
      case UnaryOp::Sign: return sc::sign(a);
      case UnaryOp::Not: break;
      case UnaryOp::Exp: if constexpr (is_float) return sc::exp(a); break;
      case UnaryOp::Log: if constexpr (is_float) return sc::log(a); break;
      case UnaryOp::Log1p: if constexpr (is_float) return sc::log1p(a); break;
      case UnaryOp::Expm1: if constexpr (is_float) return sc::expm1(a); break;
      case UnaryOp::Sqrt: if constexpr (is_float) return sc::sqrt(a); break;
      case UnaryOp::Sin: if constexpr (is_float) return sc::sin(a); break;
      case UnaryOp::Cos: if constexpr (is_float) return sc::cos(a); break;
      case UnaryOp::Tanh: if constexpr (is_float) return sc::tanh(a); break;
      case UnaryOp::Sigmoid: if constexpr (is_float) return sc::sigmoid(a); break;
      case UnaryOp::Floor: if constexpr (is_float) return sc::floor(a); break;
      case UnaryOp::Ceil: if constexpr (is_float) return sc::ceil(a); break;
    }
    SCANGEN_UNREACHABLE(std::string("unary ") + ir::unary_op_name(op) + " on this dtype");
  }
}

template <class T> bool compare(ir::BinaryOp op, T a, T b) {
  using ir::BinaryOp;
  switch (op) {
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::And:
      if constexpr (std::is_same_v<T, bool>) return a && b;
      break;
    case BinaryOp::Or:
      if constexpr (std::is_same_v<T, bool>) return a || b;
      break;
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod:
    case BinaryOp::Pow:
    case BinaryOp::Min:
    case BinaryOp::Max: break;  // arithmetic: arith()
  }
  SCANGEN_UNREACHABLE(std::string("comparison ") + ir::binary_op_name(op));
}

template <class T> T arith(ir::BinaryOp op, T a, T b, const Loc& loc) {
  using ir::BinaryOp;
  switch (op) {
    case BinaryOp::Add: return sc::add(a, b);
    case BinaryOp::Sub: return sc::sub(a, b);
    case BinaryOp::Mul: return sc::mul(a, b);
    case BinaryOp::Div:
      if (sc::is_int_v<T> && b == 0) fail(loc, RuntimeErrorId::integer_division_by_zero, {});
      return sc::div(a, b);
    case BinaryOp::Mod:
      if (sc::is_int_v<T> && b == 0) fail(loc, RuntimeErrorId::integer_division_by_zero, {});
      return sc::mod(a, b);
    case BinaryOp::Pow:
      if (sc::is_int_v<T> && b < 0) fail(loc, RuntimeErrorId::negative_exponent, {ErrorArg::number(int64_t(b))});
      return sc::pow(a, b);
    case BinaryOp::Min: return sc::min(a, b);
    case BinaryOp::Max: return sc::max(a, b);
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or: break;  // comparisons and logic: compare()
  }
  SCANGEN_UNREACHABLE(std::string("arithmetic ") + ir::binary_op_name(op));
}

}  // namespace scangen::interp
