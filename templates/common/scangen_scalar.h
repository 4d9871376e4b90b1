// The scalar semantics of the scan language: what one element of every operator computes.
//
// Both the interpreter (the semantic oracle) and every emitted C++ source use exactly these
// functions, so element results agree bit for bit; the backends differ only in how they loop.
// The definitions are total: no undefined behaviour for any input. Conditions that are run-time
// errors (integer division by zero, a negative integer exponent) are checked by the caller before
// the call; these functions then return a harmless value.
//
// This file is embedded verbatim into emitted code; keep it self-contained C++17. It compiles as
// host C++, as CUDA with nvcc (host and device) and with NVRTC, which has no standard headers:
// the few traits it needs are its own, and on the device the math functions are CUDA's.
#ifndef SCANGEN_SCALAR_V1_H
#define SCANGEN_SCALAR_V1_H

#if defined(__CUDACC_RTC__)
// NVRTC: the fixed-width types emitted code names.
typedef int int32_t;
typedef long long int64_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#ifndef INT32_MIN
#define INT32_MIN (-2147483647 - 1)
#endif
#ifndef INT64_MIN
#define INT64_MIN (-9223372036854775807LL - 1)
#endif
#else
#include <cmath>
#include <cstdint>
#endif

#if defined(__CUDACC__)
#define SCANGEN_SCALAR_FN __host__ __device__ inline
// CUDA's overloads for float and double, in the global namespace on the device.
#define SCANGEN_MATH(f) ::f
#else
#define SCANGEN_SCALAR_FN inline
#define SCANGEN_MATH(f) std::f
#endif

namespace scangen {
namespace scalar_v1 {

template <class A, class B> struct same_type { static constexpr bool value = false; };
template <class A> struct same_type<A, A> { static constexpr bool value = true; };
template <class A, class B> constexpr bool same_v = same_type<A, B>::value;

// The element types of the language: bool, i32, i64, f32, f64 (int64_t is long or long long).
template <class T> constexpr bool is_float_v = same_v<T, float> || same_v<T, double>;
template <class T>
constexpr bool is_int_v = same_v<T, int> || same_v<T, long> || same_v<T, long long>;

template <class T> struct unsigned_of;
template <> struct unsigned_of<int> { using type = unsigned int; };
template <> struct unsigned_of<long> { using type = unsigned long; };
template <> struct unsigned_of<long long> { using type = unsigned long long; };
template <class T> using unsigned_t = typename unsigned_of<T>::type;

// The range of an integer type (two's complement).
template <class T> SCANGEN_SCALAR_FN constexpr T int_max() { return static_cast<T>(~unsigned_t<T>(0) >> 1); }
template <class T> SCANGEN_SCALAR_FN constexpr T int_min() { return static_cast<T>(-int_max<T>() - 1); }

// Integer arithmetic wraps around (two's complement), as in NumPy. Code compiled with -fwrapv
// (the JIT and scangen_add_library pass it with -DSCANGEN_FWRAPV) uses the plain operators, which
// then wrap; other code computes in the unsigned type. Plain operators are not only shorter: GCC 12
// at -O3 vectorizes integer reductions whose accumulator passes through the sign conversions into
// wrong sums (a sum along an axis of a few elements: samples/regressions/integer_reductions.scan).
// SCANGEN_FWRAPV without -fwrapv would be undefined behaviour.
#if defined(SCANGEN_FWRAPV) && !defined(__CUDACC__)
template <class T> constexpr bool computes_unsigned_v = false;
#else
template <class T> constexpr bool computes_unsigned_v = is_int_v<T>;
#endif

template <class T> SCANGEN_SCALAR_FN T add(T a, T b) {
  if constexpr (computes_unsigned_v<T>) {
    using U = unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T> SCANGEN_SCALAR_FN T sub(T a, T b) {
  if constexpr (computes_unsigned_v<T>) {
    using U = unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T> SCANGEN_SCALAR_FN T mul(T a, T b) {
  if constexpr (computes_unsigned_v<T>) {
    using U = unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <class T> SCANGEN_SCALAR_FN T neg(T a) {
  if constexpr (computes_unsigned_v<T>) {
    using U = unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(a));
  } else {
    return -a;
  }
}

// The argument of a math function the C library may not round correctly, as a value the
// optimizer knows nothing about: g++ folds such functions of constants with its own, correctly
// rounded arithmetic, where the interpreter (and every call with a run-time value) gets the C
// library's result, which may differ in the last bit (tanh(sin(-3.0f)) did). An empty asm keeps
// the value where it is; it costs nothing beside the call.
#if defined(__CUDACC__)
template <class T> SCANGEN_SCALAR_FN T at_run_time(T a) { return a; }
#else
template <class T> inline T at_run_time(T a) {
  static_assert(is_float_v<T>, "math functions of floats only");
#if defined(__x86_64__)
  __asm__("" : "+x"(a));
#elif defined(__aarch64__)
  __asm__("" : "+w"(a));
#else
  __asm__("" : "+m"(a));
#endif
  return a;
}
#endif

// Integer division truncates (C++); b == 0 is the caller's error; MIN / -1 wraps to MIN.
template <class T> SCANGEN_SCALAR_FN T div(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return 0;
    if (b == -1) return neg(a);
    return a / b;
  } else {
    return a / b;
  }
}
// Integer remainder has the sign of a (C++); float remainder is fmod.
template <class T> SCANGEN_SCALAR_FN T mod(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0 || b == -1) return 0;
    return a % b;
  } else {
    return SCANGEN_MATH(fmod)(a, b);
  }
}
// Integer power by squaring, wrapping; a negative exponent is the caller's error.
template <class T> SCANGEN_SCALAR_FN T pow(T a, T b) {
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
    return SCANGEN_MATH(pow)(at_run_time(a), at_run_time(b));
  }
}

// min and max propagate NaN (NumPy's minimum/maximum); otherwise the first wins a tie.
template <class T> SCANGEN_SCALAR_FN T min(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}
template <class T> SCANGEN_SCALAR_FN T max(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}

// The orders of argmax, argmin and top_k (NumPy's): NaN ranks beyond every number, so the first
// NaN wins; otherwise a strict comparison, so the first of equal elements stays. Branch-free, so
// that a loop of selects over them vectorizes.
template <class T> SCANGEN_SCALAR_FN bool ranks_above(T a, T b) {
  if constexpr (is_float_v<T>) {
    return (a > b) | ((a != a) & (b == b));
  } else {
    return a > b;
  }
}
template <class T> SCANGEN_SCALAR_FN bool ranks_below(T a, T b) {
  if constexpr (is_float_v<T>) {
    return (a < b) | ((a != a) & (b == b));
  } else {
    return a < b;
  }
}
template <class T> SCANGEN_SCALAR_FN T abs(T a) {
  if constexpr (is_int_v<T>) {
    return a < 0 ? neg(a) : a;
  } else {
    return SCANGEN_MATH(fabs)(a);
  }
}
// -1, 0 or 1; for floats, zeros keep their sign and NaN stays NaN.
template <class T> SCANGEN_SCALAR_FN T sign(T a) {
  if (a > T(0)) return T(1);
  if (a < T(0)) return T(-1);
  return a;
}

template <class T> SCANGEN_SCALAR_FN T exp(T a) { return SCANGEN_MATH(exp)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T log(T a) { return SCANGEN_MATH(log)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T log1p(T a) { return SCANGEN_MATH(log1p)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T expm1(T a) { return SCANGEN_MATH(expm1)(at_run_time(a)); }
// IEEE arithmetic: correctly rounded, so folding it gives the same bits.
template <class T> SCANGEN_SCALAR_FN T sqrt(T a) { return SCANGEN_MATH(sqrt)(a); }
template <class T> SCANGEN_SCALAR_FN T sin(T a) { return SCANGEN_MATH(sin)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T cos(T a) { return SCANGEN_MATH(cos)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T tanh(T a) { return SCANGEN_MATH(tanh)(at_run_time(a)); }
template <class T> SCANGEN_SCALAR_FN T sigmoid(T a) { return T(1) / (T(1) + SCANGEN_MATH(exp)(at_run_time(-a))); }
template <class T> SCANGEN_SCALAR_FN T floor(T a) { return SCANGEN_MATH(floor)(a); }
template <class T> SCANGEN_SCALAR_FN T ceil(T a) { return SCANGEN_MATH(ceil)(a); }

// Conversions: to bool is `!= 0`; float to integer truncates and saturates, NaN gives 0; integer
// narrowing wraps.
template <class To, class From> SCANGEN_SCALAR_FN To cast(From x) {
  if constexpr (same_v<To, From>) {
    return x;
  } else if constexpr (same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (is_float_v<From> && is_int_v<To>) {
    if (x != x) return 0;
    if (x <= static_cast<From>(int_min<To>())) return int_min<To>();
    if (x >= static_cast<From>(int_max<To>())) return int_max<To>();
    return static_cast<To>(x);
  } else if constexpr (is_int_v<From> && is_int_v<To> && sizeof(To) < sizeof(From)) {
    using U = unsigned_t<To>;
    return static_cast<To>(static_cast<U>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace scalar_v1
}  // namespace scangen

#endif  // SCANGEN_SCALAR_V1_H
