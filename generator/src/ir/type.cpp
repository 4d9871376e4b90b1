#include "ir/type.h"

#include <atomic>

namespace scangen::ir {

Dim Dim::constant(int64_t value) {
  Dim d;
  d.kind_ = Kind::Const;
  d.offset_ = value;
  return d;
}

Dim Dim::symbol(std::string name, int64_t offset) {
  Dim d;
  d.kind_ = Kind::Sym;
  d.symbol_ = std::move(name);
  d.offset_ = offset;
  return d;
}

Dim Dim::fresh_unknown() {
  static std::atomic<int64_t> next_id{1};
  Dim d;
  d.kind_ = Kind::Unknown;
  d.id_ = next_id.fetch_add(1);
  return d;
}

Dim Dim::plus(int64_t delta) const {
  Dim d = *this;
  d.offset_ += delta;
  return d;
}

bool Dim::same_as(const Dim& o) const {
  if (kind_ != o.kind_ || offset_ != o.offset_) return false;
  switch (kind_) {
    case Kind::Const: return true;
    case Kind::Sym: return symbol_ == o.symbol_;
    case Kind::Unknown: return id_ == o.id_;
  }
  return false;
}

bool Dim::provably_different(const Dim& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Const: return offset_ != o.offset_;
    case Kind::Sym: return symbol_ == o.symbol_ && offset_ != o.offset_;
    case Kind::Unknown: return id_ == o.id_ && offset_ != o.offset_;
  }
  return false;
}

std::string Dim::str() const {
  switch (kind_) {
    case Kind::Const: return std::to_string(offset_);
    case Kind::Sym:
      if (offset_ == 0) return symbol_;
      return symbol_ + (offset_ > 0 ? " + " : " - ") + std::to_string(offset_ > 0 ? offset_ : -offset_);
    case Kind::Unknown: return "?";
  }
  return "?";
}

Type Type::row() const {
  Type t(dtype);
  if (!shape.empty()) t.shape.assign(shape.begin() + 1, shape.end());
  return t;
}

Type Type::stacked(const Dim& d) const {
  Type t(dtype);
  t.shape.reserve(shape.size() + 1);
  t.shape.push_back(d);
  t.shape.insert(t.shape.end(), shape.begin(), shape.end());
  return t;
}

bool Type::same_as(const Type& o) const {
  if (dtype != o.dtype || shape.size() != o.shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!shape[i].same_as(o.shape[i])) return false;
  return true;
}

std::string shape_str(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].str();
  }
  return s + "]";
}

std::string Type::str() const {
  std::string s(dtype_name(dtype));
  if (!shape.empty()) s += shape_str(shape);
  return s;
}

std::optional<std::vector<Dim>> broadcast_shapes(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const Dim* da = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Dim* db = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (!da) { out[i] = *db; continue; }
    if (!db) { out[i] = *da; continue; }
    if (da->same_as(*db) || db->is_const(1)) { out[i] = *da; continue; }
    if (da->is_const(1)) { out[i] = *db; continue; }
    if (da->is_const() && db->is_const()) return std::nullopt;  // both known, different, neither 1
    // One is known (and not 1): if they broadcast at all, the result is that one.
    if (da->is_const()) { out[i] = *da; continue; }
    if (db->is_const()) { out[i] = *db; continue; }
    if (da->provably_different(*db)) {
      out[i] = Dim::fresh_unknown();  // n and n-1 broadcast only when one of them is 1
      continue;
    }
    out[i] = Dim::fresh_unknown();
  }
  return out;
}

}  // namespace scangen::ir
