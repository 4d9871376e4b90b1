// The random program generator (generator.h): dimensions, parameters, the values a scope sees,
// leaves (a value of a wanted shape: an existing one, a new parameter, zeros of its size), and the
// arguments drawn to match the parameters.
#include "generator.h"

namespace scangen::equivalence::generator {

std::string Generator::feature_dim() {
  if (!feature_dims_.empty() && (feature_dims_.size() >= 3 || rng_.chance(0.7))) return rng_.pick(feature_dims_);
  std::string d = "n" + std::to_string(feature_dims_.size());
  sizes_[d] = rng_.chance(opt_.zero_size_probability) ? 0 : rng_.uniform(1, std::max(1, opt_.max_dim));
  feature_dims_.push_back(d);
  return d;
}

std::string Generator::length_dim() {
  if (!length_dims_.empty() && rng_.chance(0.4)) return rng_.pick(length_dims_);
  std::string d = "L" + std::to_string(length_dims_.size());
  sizes_[d] = rng_.chance(opt_.zero_size_probability) ? 0 : rng_.uniform(1, opt_.max_steps + 3);
  length_dims_.push_back(d);
  return d;
}

DType Generator::random_dtype() {
  switch (rng_.weighted({45, 25, 25, 5})) {
    case 0: return DType::F32;
    case 1: return DType::F64;
    case 2: return DType::I64;
    default: return DType::I32;
  }
}

Dims Generator::random_step_dims() {
  switch (rng_.weighted({50, 42, 8})) {
    case 0: return {};
    case 1: return {feature_dim()};
    default: return {feature_dim(), feature_dim()};
  }
}

Val Generator::new_param(DType dt, const Dims& dims, const std::string& prefix) {
  Param p;
  p.name = fresh(prefix);
  p.dt = dt;
  p.dims = dims;
  // Now and then a dimension declared `?` (`w: f64[n, ?]`): the frontend then knows less about
  // every value computed from it than the generator does.
  for (size_t i = 0; i < dims.size(); ++i) p.hidden.push_back(rng_.chance(0.1));
  params_.push_back(p);
  if (!dims.empty() && !is_literal_dim(dims[0]) && !len_expr_.count(dims[0])) len_expr_[dims[0]] = "len(" + p.name + ")";
  Val v{p.name, dt, dims, false, is_float(dt) ? 3.0 : 5.0, false};
  func_.vals.push_back(v);
  return v;
}

std::vector<Val> Generator::visible(const Scope& sc) const {
  std::vector<Val> out;
  std::set<std::string> hidden;
  for (const Scope* s = &sc; s; s = s->parent) {
    for (const Val& v : s->vals)
      if (hidden.empty() || !mentions(v.text, hidden)) out.push_back(v);
    hidden.insert(s->hides.begin(), s->hides.end());
  }
  return out;
}

std::vector<Val> Generator::visible_bools(const Scope& sc, const Dims& dims) const {
  std::vector<Val> out;
  std::set<std::string> hidden;
  for (const Scope* s = &sc; s; s = s->parent) {
    for (const Val& v : s->bools)
      if (v.dims == dims && (hidden.empty() || !mentions(v.text, hidden))) out.push_back(v);
    hidden.insert(s->hides.begin(), s->hides.end());
  }
  return out;
}

std::optional<std::string> Generator::size_text(const Scope& sc, const std::string& d) {
  if (is_literal_dim(d)) return d;
  std::vector<std::string> texts;
  if (len_expr_.count(d)) texts.push_back(len_expr_[d]);
  for (const Val& v : visible(sc))
    if (!v.dims.empty() && v.dims[0] == d && !v.weakdep) texts.push_back("len(" + v.text + ")");
  if (texts.empty()) return std::nullopt;
  return rng_.pick(texts);
}

Val Generator::literal(DType dt) {
  Val v;
  v.weak = true;
  int64_t i = rng_.uniform(-3, 4);
  if (is_float(dt) && rng_.chance(0.4)) {
    static const std::vector<std::string> floats = {"0.5", "1.5", "0.25", "2.0", "-0.5", "-1.5", "0.75"};
    v.text = rng_.pick(floats);
    v.bound = std::fabs(std::stod(v.text));
  } else {
    v.text = std::to_string(i);
    v.bound = double(std::llabs(i));
  }
  if (v.text[0] == '-') v.text = "(" + v.text + ")";
  v.dt = dt;
  return v;
}

Val Generator::convert(const Val& v, DType dt) {
  if (v.dt == dt) return v;
  Val r = v;
  r.text = dt_name(dt) + "(" + v.text + ")";
  r.dt = dt;
  r.weak = false;
  r.weakdep = false;  // a cast decides the dtype, weak operand or not
  return r;
}

Val Generator::bounded(Val v) {
  if (is_float(v.dt) && v.bound > kFloatLimit) {
    if (rng_.chance(0.5)) {
      v.text = "tanh(" + v.text + ")";
      v.bound = 1;
    } else {
      v.text = "clip(" + v.text + ", -8, 8)";
      v.bound = 8;
    }
  } else if (is_int(v.dt) && v.bound > kIntLimit) {
    v.text = "clip(" + v.text + ", -20, 20)";
    v.bound = 20;
  }
  return v;
}

Dims Generator::random_suffix(const Dims& dims) {
  if (dims.empty()) return {};
  switch (rng_.weighted({50, 30, 20})) {
    case 0: return dims;
    case 1: return {};
    default: return tail(dims, size_t(rng_.uniform(0, int64_t(dims.size()))));
  }
}

Val Generator::leaf(Scope& sc, DType dt, const Dims& dims, bool no_weakdep) {
  std::vector<Val> cands;
  for (const Val& v : visible(sc))
    if (v.dims == dims && !(no_weakdep && v.weakdep)) cands.push_back(v);
  // Prefer values of the right dtype, then any value of the right shape (cast).
  std::vector<Val> exact;
  for (const Val& v : cands)
    if (v.dt == dt) exact.push_back(v);
  if (!exact.empty() && rng_.chance(0.8)) return rng_.pick(exact);
  if (dims.empty() && rng_.chance(0.35)) {
    // A strong scalar: a cast literal or a length.
    std::vector<Val> ranked;
    for (const Val& v : visible(sc))
      if (!v.dims.empty()) ranked.push_back(v);
    if (!ranked.empty() && rng_.chance(0.4)) {
      const Val& v = rng_.pick(ranked);
      return convert(Val{"len(" + v.text + ")", DType::I64, {}, false, size_bound(v.dims[0]), false}, dt);
    }
    Val l = literal(dt);
    return Val{dt_name(dt) + "(" + l.text + ")", dt, {}, false, l.bound, false};
  }
  if (!cands.empty() && (rng_.chance(0.75) || !all_known(dims))) return convert(rng_.pick(cands), dt);
  if (all_known(dims)) return new_param(dt, dims, dims.size() >= 2 ? "M" : "p");
  // Unknown sizes come only from existing values, so some value has this shape (maybe weak), or
  // one whose length is each unknown size (a step value of varying size: zeros(f32, len(r), 3)).
  for (const Val& v : visible(sc))
    if (v.dims == dims) return convert(v, dt);
  std::string text = std::string(rng_.chance(0.5) ? "zeros(" : "ones(") + dt_name(dt);
  for (const std::string& d : dims) {
    std::optional<std::string> size = size_text(sc, d);
    if (!size) return zeros_suffix(sc, dt, dims);
    text += ", " + *size;
  }
  return Val{text + ")", dt, dims, false, 1, false};
}

// Zeros of `dims` from a value whose shape ends with them ([?, ?j, n] of a whole inner result
// gives [?j, n]): its leading dimensions summed away, which works for 0 rows too.
Val Generator::zeros_suffix(const Scope& sc, DType dt, const Dims& dims) {
  for (const Val& v : visible(sc)) {
    if (v.dims.size() <= dims.size() || tail(v.dims, v.dims.size() - dims.size()) != dims) continue;
    std::string text = "zeros_like(" + v.text + ")";
    for (size_t k = dims.size(); k < v.dims.size(); ++k) text = "sum(" + text + ", axis = 0)";
    return convert(Val{text, v.dt, dims, false, 0, false}, dt);
  }
  throw std::logic_error("random program generator: no value of the shape wanted");
}

HostTensor Generator::make_argument(const Param& p) {
  Shape shape;
  for (const std::string& d : p.dims) shape.push_back(size_of(d));
  HostTensor t(p.dt, shape);
  if (p.fixed) {
    if (p.dt == DType::I32) *t.data<int32_t>() = int32_t(p.value);
    else *t.data<int64_t>() = p.value;
    return t;
  }
  // Floats: small integers (exact arithmetic), quarters, or reals in [-2, 2] (rounding).
  int mode = rng_.weighted({55, 25, 20});
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    if (is_int(p.dt)) v = double(rng_.uniform(-3, 5));
    else if (mode == 0) v = double(rng_.uniform(-3, 3));
    else if (mode == 1) v = double(rng_.uniform(-8, 8)) / 4;
    else v = rng_.real() * 4 - 2;
    switch (p.dt) {
      case DType::F32: t.data<float>()[i] = float(v); break;
      case DType::F64: t.data<double>()[i] = v; break;
      case DType::I32: t.data<int32_t>()[i] = int32_t(v); break;
      case DType::I64: t.data<int64_t>()[i] = int64_t(v); break;
      case DType::Bool: t.data<bool>()[i] = v > 0; break;
    }
  }
  return t;
}

}  // namespace scangen::equivalence::generator
