// The scalar semantics of the scan language: what one element of every operator computes.
//
// Both the interpreter (the semantic oracle) and every emitted C++ source use exactly these
// functions, so element results agree bit for bit; the backends differ only in how they loop.
// The definitions are total: no undefined behaviour for any input. Conditions that are run-time
// errors (integer division by zero, a negative integer exponent) are checked by the caller before
// the call; these functions then return a harmless value.
//
// This file is embedded verbatim into emitted code; keep it self-contained C++17.
#ifndef SCANGEN_SCALAR_V1_H
#define SCANGEN_SCALAR_V1_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace scangen {
namespace scalar_v1 {

template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Integer arithmetic wraps around (two's complement), as in NumPy.
template <class T> inline T add(T a, T b) {
  if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T> inline T sub(T a, T b) {
  if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T> inline T mul(T a, T b) {
  if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <class T> inline T neg(T a) {
  if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(a));
  } else {
    return -a;
  }
}

// Integer division truncates (C++); b == 0 is the caller's error; MIN / -1 wraps to MIN.
template <class T> inline T div(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return 0;
    if (b == -1) return neg(a);
    return a / b;
  } else {
    return a / b;
  }
}
// Integer remainder has the sign of a (C++); float remainder is fmod.
template <class T> inline T mod(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0 || b == -1) return 0;
    return a % b;
  } else {
    return std::fmod(a, b);
  }
}
// Integer power by squaring, wrapping; a negative exponent is the caller's error.
template <class T> inline T pow(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b < 0) return 0;
    T result = 1;
    T base = a;
    while (b > 0) {
      if (b & 1) result = mul(result, base);
      b = static_cast<T>(b >> 1);
      if (b > 0) base = mul(base, base);
    }
    return result;
  } else {
    return std::pow(a, b);
  }
}

// min and max propagate NaN (NumPy's minimum/maximum); otherwise the first wins a tie.
template <class T> inline T min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}
template <class T> inline T max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}

template <class T> inline T abs(T a) {
  if constexpr (is_int_v<T>) {
    return a < 0 ? neg(a) : a;
  } else {
    return std::fabs(a);
  }
}
// -1, 0 or 1; for floats, zeros keep their sign and NaN stays NaN.
template <class T> inline T sign(T a) {
  if (a > T(0)) return T(1);
  if (a < T(0)) return T(-1);
  return a;
}

template <class T> inline T exp(T a) { return std::exp(a); }
template <class T> inline T log(T a) { return std::log(a); }
template <class T> inline T log1p(T a) { return std::log1p(a); }
template <class T> inline T expm1(T a) { return std::expm1(a); }
template <class T> inline T sqrt(T a) { return std::sqrt(a); }
template <class T> inline T sin(T a) { return std::sin(a); }
template <class T> inline T cos(T a) { return std::cos(a); }
template <class T> inline T tanh(T a) { return std::tanh(a); }
template <class T> inline T sigmoid(T a) { return T(1) / (T(1) + std::exp(-a)); }
template <class T> inline T floor(T a) { return std::floor(a); }
template <class T> inline T ceil(T a) { return std::ceil(a); }

// Conversions: to bool is `!= 0`; float to integer truncates and saturates, NaN gives 0; integer
// narrowing wraps.
template <class To, class From> inline To cast(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && is_int_v<To>) {
    if (x != x) return 0;
    if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else if constexpr (is_int_v<From> && is_int_v<To> && sizeof(To) < sizeof(From)) {
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace scalar_v1
}  // namespace scangen

#endif  // SCANGEN_SCALAR_V1_H
