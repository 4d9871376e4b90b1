// Element types shared by the generator, the runtime and emitted code (their numeric values are
// the ABI's SCANGEN_DTYPE_* codes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace scangen {

enum class DType : int32_t { Bool = 0, I32 = 1, I64 = 2, F32 = 3, F64 = 4 };

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64};

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  return "?";
}

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::F32: return 4;
    case DType::F64: return 8;
  }
  return 0;
}

constexpr bool is_float(DType t) { return t == DType::F32 || t == DType::F64; }
constexpr bool is_int(DType t) { return t == DType::I32 || t == DType::I64; }
constexpr bool is_numeric(DType t) { return t != DType::Bool; }

inline std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

// The C++ type of one element.
template <DType T> struct DTypeTraits;
template <> struct DTypeTraits<DType::Bool> { using type = bool; };
template <> struct DTypeTraits<DType::I32> { using type = int32_t; };
template <> struct DTypeTraits<DType::I64> { using type = int64_t; };
template <> struct DTypeTraits<DType::F32> { using type = float; };
template <> struct DTypeTraits<DType::F64> { using type = double; };
template <DType T> using ctype_t = typename DTypeTraits<T>::type;

template <class C> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::I64; }
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }

// Calls f with a value of the element's C++ type (a tag) chosen at run time:
//   dispatch_dtype(t, [&](auto tag) { using T = decltype(tag); ... });
template <class F> decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::F32: return f(float{});
    case DType::F64: break;
  }
  return f(double{});
}

}  // namespace scangen
