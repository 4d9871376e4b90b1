// Constant folding with the element semantics of run time (ir/fold.h).
#include "ir/fold.h"

#include <type_traits>

#include "scangen_scalar.h"

namespace scangen::ir {
namespace {

namespace sc = scangen::scalar_v1;

template <class T> T get(const Scalar& s) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(s.f);
  else return static_cast<T>(s.i);
}

template <class T> Scalar make(DType d, T v) {
  if constexpr (std::is_same_v<T, bool>) return Scalar::of_bool(v);
  else if constexpr (std::is_floating_point_v<T>) return Scalar::of_float(d, double(v));
  else return Scalar::of_int(d, int64_t(v));
}

template <class T> std::optional<Folded> value(DType d, T v, bool wrapped = false) {
  return Folded{make<T>(d, v), wrapped ? FoldIssue::Wrapped : FoldIssue::None};
}

std::optional<Folded> fails(FoldIssue why) { return Folded{std::nullopt, why}; }

// A math function of floats (`exp` of an integer is never built).
template <class T, class F> std::optional<Folded> float_math(DType d, T x, F f) {
  if constexpr (sc::is_float_v<T>) return value<T>(d, f(x));
  else return std::nullopt;
}

// Whether an integer operation wraps: its exact result does not fit T. Never for floats.
template <class T> bool add_wraps([[maybe_unused]] T a, [[maybe_unused]] T b) {
  if constexpr (sc::is_int_v<T>) {
    T r;
    return __builtin_add_overflow(a, b, &r);
  } else {
    return false;
  }
}
template <class T> bool sub_wraps([[maybe_unused]] T a, [[maybe_unused]] T b) {
  if constexpr (sc::is_int_v<T>) {
    T r;
    return __builtin_sub_overflow(a, b, &r);
  } else {
    return false;
  }
}
template <class T> bool mul_wraps([[maybe_unused]] T a, [[maybe_unused]] T b) {
  if constexpr (sc::is_int_v<T>) {
    T r;
    return __builtin_mul_overflow(a, b, &r);
  } else {
    return false;
  }
}
template <class T> bool is_int_min([[maybe_unused]] T a) {
  if constexpr (sc::is_int_v<T>) return a == sc::int_min<T>();
  else return false;
}
// sc::pow's squarings, checked: a square is taken only when a higher bit of the exponent needs
// it, so any product that overflows is a factor of the exact power.
template <class T> bool pow_wraps([[maybe_unused]] T a, [[maybe_unused]] T b) {
  if constexpr (sc::is_int_v<T>) {
    T result = 1, base = a;
    bool wraps = false;
    while (b > 0) {
      if (b & 1) wraps |= __builtin_mul_overflow(result, base, &result);
      b = static_cast<T>(b >> 1);
      if (b > 0) wraps |= __builtin_mul_overflow(base, base, &base);
    }
    return wraps;
  } else {
    return false;
  }
}

template <class T> std::optional<Folded> unary_of(UnaryOp op, DType d, T x) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == UnaryOp::Not) return value<bool>(d, !x);
    return std::nullopt;
  } else {
    switch (op) {
      case UnaryOp::Not: return std::nullopt;
      case UnaryOp::Neg: return value<T>(d, sc::neg(x), is_int_min(x));
      case UnaryOp::Abs: return value<T>(d, sc::abs(x), is_int_min(x));
      case UnaryOp::Sign: return value<T>(d, sc::sign(x));
      case UnaryOp::Exp: return float_math(d, x, [](auto v) { return sc::exp(v); });
      case UnaryOp::Log: return float_math(d, x, [](auto v) { return sc::log(v); });
      case UnaryOp::Log1p: return float_math(d, x, [](auto v) { return sc::log1p(v); });
      case UnaryOp::Expm1: return float_math(d, x, [](auto v) { return sc::expm1(v); });
      case UnaryOp::Sqrt: return float_math(d, x, [](auto v) { return sc::sqrt(v); });
      case UnaryOp::Sin: return float_math(d, x, [](auto v) { return sc::sin(v); });
      case UnaryOp::Cos: return float_math(d, x, [](auto v) { return sc::cos(v); });
      case UnaryOp::Tanh: return float_math(d, x, [](auto v) { return sc::tanh(v); });
      case UnaryOp::Sigmoid: return float_math(d, x, [](auto v) { return sc::sigmoid(v); });
      case UnaryOp::Floor: return float_math(d, x, [](auto v) { return sc::floor(v); });
      case UnaryOp::Ceil: return float_math(d, x, [](auto v) { return sc::ceil(v); });
    }
    return std::nullopt;
  }
}

template <class T> std::optional<Folded> compare(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::Eq: return value<bool>(DType::Bool, x == y);
    case BinaryOp::Ne: return value<bool>(DType::Bool, x != y);
    case BinaryOp::Lt: return value<bool>(DType::Bool, x < y);
    case BinaryOp::Le: return value<bool>(DType::Bool, x <= y);
    case BinaryOp::Gt: return value<bool>(DType::Bool, x > y);
    case BinaryOp::Ge: return value<bool>(DType::Bool, x >= y);
    case BinaryOp::And:
      if constexpr (std::is_same_v<T, bool>) return value<bool>(DType::Bool, x && y);
      else return std::nullopt;
    case BinaryOp::Or:
      if constexpr (std::is_same_v<T, bool>) return value<bool>(DType::Bool, x || y);
      else return std::nullopt;
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    case BinaryOp::Mod: case BinaryOp::Pow: case BinaryOp::Min: case BinaryOp::Max: break;
  }
  return std::nullopt;
}

template <class T> std::optional<Folded> arith(BinaryOp op, DType d, T x, T y) {
  // What fails at run time for these operands (scangen_scalar.h leaves it to the caller).
  if constexpr (sc::is_int_v<T>) {
    if ((op == BinaryOp::Div || op == BinaryOp::Mod) && y == 0) return fails(FoldIssue::DivisionByZero);
    if (op == BinaryOp::Pow && y < 0) return fails(FoldIssue::NegativeExponent);
  }
  switch (op) {
    case BinaryOp::Add: return value<T>(d, sc::add(x, y), add_wraps(x, y));
    case BinaryOp::Sub: return value<T>(d, sc::sub(x, y), sub_wraps(x, y));
    case BinaryOp::Mul: return value<T>(d, sc::mul(x, y), mul_wraps(x, y));
    case BinaryOp::Div: return value<T>(d, sc::div(x, y), is_int_min(x) && y == T(-1));
    case BinaryOp::Mod: return value<T>(d, sc::mod(x, y));
    case BinaryOp::Pow: return value<T>(d, sc::pow(x, y), pow_wraps(x, y));
    case BinaryOp::Min: return value<T>(d, sc::min(x, y));
    case BinaryOp::Max: return value<T>(d, sc::max(x, y));
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
    case BinaryOp::Ge: case BinaryOp::And: case BinaryOp::Or: break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Folded> fold_unary(UnaryOp op, const Scalar& a) {
  return dispatch_dtype(a.dtype, [&](auto tag) { return unary_of(op, a.dtype, get<decltype(tag)>(a)); });
}

std::optional<Folded> fold_binary(BinaryOp op, const Scalar& a, const Scalar& b) {
  if (a.dtype != b.dtype) return std::nullopt;
  return dispatch_dtype(a.dtype, [&](auto tag) -> std::optional<Folded> {
    using T = decltype(tag);
    T x = get<T>(a), y = get<T>(b);
    if (binary_op_class(op) != BinaryClass::Arith) return compare(op, x, y);
    if constexpr (std::is_same_v<T, bool>) return std::nullopt;
    else return arith(op, a.dtype, x, y);
  });
}

Scalar fold_cast(const Scalar& a, DType to) {
  return dispatch_dtype(a.dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    return dispatch_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      return make<To>(to, sc::cast<To, From>(get<From>(a)));
    });
  });
}

std::optional<Scalar> fold_node(const Node& n, const std::vector<Scalar>& c) {
  std::optional<Folded> folded;
  if (const auto* u = n.as<UnaryNode>()) folded = fold_unary(u->op(), c.at(0));
  else if (const auto* b = n.as<BinaryNode>()) folded = fold_binary(b->op(), c.at(0), c.at(1));
  else if (n.kind() == NodeKind::Cast) return fold_cast(c.at(0), n.output_types()[0].dtype);
  else if (n.kind() == NodeKind::Select) return c.at(0).i ? c.at(1) : c.at(2);
  if (!folded) return std::nullopt;
  return folded->value;
}

}  // namespace scangen::ir
