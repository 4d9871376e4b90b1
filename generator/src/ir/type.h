// Types of IR values: an element type and a shape whose dimensions are known statically as a
// constant, a symbol of the function's signature (plus an offset), or unknown until run time.
// Static dimensions serve diagnostics and the choice of fast loops; every backend still computes
// and checks the actual sizes at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scangen/runtime/dtype.h"

namespace scangen::ir {

class Dim {
 public:
  enum class Kind : uint8_t { Const, Sym, Unknown };

  static Dim constant(int64_t value);
  static Dim symbol(std::string name, int64_t offset = 0);
  // A fresh unknown dimension, different from every other one.
  static Dim fresh_unknown();

  Kind kind() const { return kind_; }
  bool is_const() const { return kind_ == Kind::Const; }
  bool is_const(int64_t v) const { return kind_ == Kind::Const && offset_ == v; }
  std::optional<int64_t> const_value() const {
    if (kind_ == Kind::Const) return offset_;
    return std::nullopt;
  }
  const std::string& symbol_name() const { return symbol_; }
  int64_t offset() const { return offset_; }

  // This dimension plus a constant (for a tap span, `n - 2`).
  Dim plus(int64_t delta) const;

  // True when both are the same size whatever the arguments.
  bool same_as(const Dim& other) const;
  // True when they can never be the same size.
  bool provably_different(const Dim& other) const;

  std::string str() const;  // "3", "n", "n - 2", "?"

 private:
  Kind kind_ = Kind::Unknown;
  int64_t offset_ = 0;  // the value of a constant; added to a symbol or an unknown
  std::string symbol_;
  int64_t id_ = 0;  // identity of an unknown
};

struct Type {
  DType dtype = DType::F32;
  std::vector<Dim> shape;

  Type() = default;
  Type(DType d, std::vector<Dim> s = {}) : dtype(d), shape(std::move(s)) {}
  static Type scalar(DType d) { return Type(d); }

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_scalar() const { return shape.empty(); }
  Type with_dtype(DType d) const { return Type(d, shape); }
  // The type of one row: the shape without its leading dimension.
  Type row() const;
  // [d, shape...]
  Type stacked(const Dim& d) const;
  // Same dtype and every dimension provably the same.
  bool same_as(const Type& other) const;

  std::string str() const;  // "f32[n, 3]", "i64"
};

// NumPy broadcasting of static shapes: nullopt when provably incompatible.
std::optional<std::vector<Dim>> broadcast_shapes(const std::vector<Dim>& a, const std::vector<Dim>& b);
std::string shape_str(const std::vector<Dim>& shape);

}  // namespace scangen::ir
