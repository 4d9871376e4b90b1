// The random program generator (generator.h): an expression of a wanted dtype and shape, built
// from the values in scope (operators, math, reductions, products, indexing, set/inc, casts).
#include "generator.h"

namespace scangen::equivalence::generator {

Val Generator::operand(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (dims.empty() && rng_.chance(0.3)) return literal(is_float(dt) ? dt : DType::I64);
  std::vector<DType> lower = lower_types(dt);
  DType odt = !lower.empty() && rng_.chance(0.25) ? rng_.pick(lower) : dt;
  return gen(sc, odt, dims, depth, nw);
}

Val Generator::gen(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (depth <= 0 || rng_.chance(0.2)) return bounded(leaf(sc, dt, dims, nw));
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::optional<Val> v;
    switch (rng_.weighted({28, 7, 12, 6, 6, 9, 8, 6, 5, 5, 3, 4})) {
      case 0: v = gen_binary(sc, dt, dims, depth, nw); break;
      case 1: v = gen_divmod(sc, dt, dims, depth, nw); break;
      case 2: v = gen_unary(sc, dt, dims, depth, nw); break;
      case 3: v = gen_minmax(sc, dt, dims, depth, nw); break;
      case 4: v = gen_where(sc, dt, dims, depth, nw); break;
      case 5: v = gen_reduce(sc, dt, dims, depth, nw); break;
      case 6: v = gen_matmul(sc, dt, dims, depth, nw); break;
      case 7: v = gen_index(sc, dt, dims, depth, nw); break;
      case 8: v = gen_cast(sc, dt, dims, depth, nw); break;
      case 9: v = gen_set(sc, dt, dims, depth, nw); break;
      case 10: v = gen_construct(sc, dt, dims, depth, nw); break;
      default: v = gen_arg_reduce(sc, dt, dims, depth, nw); break;
    }
    if (v) {
      if (v->dt != dt || v->dims != dims || v->weak) throw std::logic_error("random program generator: wrong type for " + v->text);
      return bounded(*v);
    }
  }
  return bounded(leaf(sc, dt, dims, nw));
}

std::optional<Val> Generator::gen_binary(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  Val a = gen(sc, dt, dims, depth - 1, nw);
  Val b = operand(sc, dt, random_suffix(dims), depth - 1, nw);
  int op = int(rng_.uniform(0, 2));
  double bound = op == 2 ? a.bound * b.bound : a.bound + b.bound;
  if (rng_.chance(0.5)) std::swap(a, b);
  static const char* ops[] = {" + ", " - ", " * "};
  return Val{"(" + a.text + ops[op] + b.text + ")", dt, dims, false, bound, a.weakdep || b.weakdep};
}

std::optional<Val> Generator::gen_divmod(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  Val a = gen(sc, dt, dims, depth - 1, nw);
  std::vector<DType> lower = lower_types(dt);
  DType bdt = !lower.empty() && rng_.chance(0.3) ? rng_.pick(lower) : dt;
  Val b = gen(sc, bdt, random_suffix(dims), depth - 1, nw);
  bool mod = rng_.chance(0.3);
  std::string den = "(abs(" + b.text + ") + 1)";
  // Now and then an unguarded integer division: a run-time error when the divisor is 0.
  if (is_int(dt) && rng_.chance(0.05)) den = b.text;
  double bound = mod ? std::min(a.bound, b.bound + 1) : a.bound;
  return Val{"(" + a.text + (mod ? " % " : " / ") + den + ")", dt, dims, false, bound, a.weakdep || b.weakdep};
}

std::optional<Val> Generator::gen_unary(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (is_float(dt)) {
    // Math functions of an integer give f64.
    bool int_arg = dt == DType::F64 && rng_.chance(0.2);
    static const std::vector<std::string> math = {"tanh", "sigmoid", "sin", "cos", "exp_tanh", "sqrt_abs",
                                                  "log1p_abs", "expm1_tanh", "exp_clip"};
    static const std::vector<std::string> keep = {"abs", "floor", "ceil", "sign", "relu", "neg", "square"};
    bool use_math = int_arg || rng_.chance(0.6);
    std::string f = use_math ? rng_.pick(math) : rng_.pick(keep);
    Val a = gen(sc, int_arg ? (rng_.chance(0.8) ? DType::I64 : DType::I32) : dt, dims, depth - 1, nw);
    Val r{"", dt, dims, false, 1, a.weakdep};
    if (f == "exp_tanh") r.text = "exp(tanh(" + a.text + "))", r.bound = 2.72;
    else if (f == "sqrt_abs") r.text = "sqrt(abs(" + a.text + "))", r.bound = std::sqrt(a.bound) + 1;
    else if (f == "log1p_abs") r.text = "log1p(abs(" + a.text + "))", r.bound = std::log1p(a.bound) + 1;
    else if (f == "expm1_tanh") r.text = "expm1(tanh(" + a.text + "))", r.bound = 1.72;
    else if (f == "exp_clip") r.text = "exp(clip(" + a.text + ", -3, 3))", r.bound = 20.1;
    else if (f == "neg") r.text = "(-" + a.text + ")", r.bound = a.bound;
    else if (f == "square") r.text = "(" + a.text + " ** 2)", r.bound = a.bound * a.bound;
    else if (f == "abs" || f == "floor" || f == "ceil" || f == "relu") r.text = f + "(" + a.text + ")", r.bound = a.bound + 1;
    else r.text = f + "(" + a.text + ")", r.bound = 1;
    return r;
  }
  static const std::vector<std::string> ints = {"abs", "sign", "relu", "floor", "ceil", "neg", "square"};
  std::string f = rng_.pick(ints);
  Val a = gen(sc, dt, dims, depth - 1, nw);
  Val r{"", dt, dims, false, a.bound, a.weakdep};
  if (f == "neg") r.text = "(-" + a.text + ")";
  else if (f == "square") r.text = "(" + a.text + " ** 2)", r.bound = a.bound * a.bound;
  else if (f == "sign") r.text = "sign(" + a.text + ")", r.bound = 1;
  else r.text = f + "(" + a.text + ")";
  return r;
}

std::optional<Val> Generator::gen_minmax(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  Val a = gen(sc, dt, dims, depth - 1, nw);
  if (rng_.chance(0.35)) {
    int64_t lo = rng_.uniform(-6, 0), hi = rng_.uniform(1, 6);
    std::string los = std::to_string(lo), his = std::to_string(hi);
    if (is_float(dt) && rng_.chance(0.3)) los += ".5", his += ".5";  // -3.5 .. 2.5 (lo <= 0.5)
    double bound = std::max(std::fabs(std::stod(los)), std::fabs(std::stod(his)));
    return Val{"clip(" + a.text + ", " + los + ", " + his + ")", dt, dims, false, bound, a.weakdep};
  }
  Val b = operand(sc, dt, random_suffix(dims), depth - 1, nw);
  if (rng_.chance(0.5)) std::swap(a, b);
  std::string f = rng_.chance(0.5) ? "min" : "max";
  return Val{f + "(" + a.text + ", " + b.text + ")", dt, dims, false, std::max(a.bound, b.bound), a.weakdep || b.weakdep};
}

std::string Generator::gen_bool(Scope& sc, const Dims& dims, int depth, bool nw, bool* weakdep) {
  DType xdt = random_dtype();
  Val x = gen(sc, xdt, dims, depth, nw);
  Val y = operand(sc, xdt, random_suffix(dims), std::max(0, depth - 1), nw);
  static const std::vector<std::string> cmps = {" < ", " <= ", " > ", " >= ", " == ", " != "};
  std::string c = "(" + x.text + rng_.pick(cmps) + y.text + ")";
  *weakdep = *weakdep || x.weakdep || y.weakdep;
  // A bool value (a bool state's read, a bool result): bare, negated or compared.
  std::vector<Val> bools = visible_bools(sc, dims);
  if (!bools.empty() && rng_.chance(0.35)) {
    const Val& b = rng_.pick(bools);
    c = rng_.chance(0.4) ? b.text : rng_.chance(0.5) ? "(!" + b.text + ")" : "(" + b.text + " != " + c + ")";
  }
  switch (rng_.weighted({70, 10, 10, 10})) {
    case 1: return "(" + c + " && " + gen_bool(sc, random_suffix(dims), 0, nw, weakdep) + ")";
    case 2: return "(" + c + " || " + gen_bool(sc, random_suffix(dims), 0, nw, weakdep) + ")";
    case 3: return "(!" + c + ")";
    default: return c;
  }
}

std::optional<Val> Generator::gen_where(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  bool wd = false;
  std::string c = gen_bool(sc, random_suffix(dims), depth - 1, nw, &wd);
  Val a = gen(sc, dt, dims, depth - 1, nw);
  Val b = operand(sc, dt, random_suffix(dims), depth - 1, nw);
  if (rng_.chance(0.5)) std::swap(a, b);
  std::string text = rng_.chance(0.5) ? "where(" + c + ", " + a.text + ", " + b.text + ")"
                                      : "(" + c + " ? " + a.text + " : " + b.text + ")";
  return Val{text, dt, dims, false, std::max(a.bound, b.bound), wd || a.weakdep || b.weakdep};
}

std::optional<Val> Generator::gen_reduce(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  static const std::vector<std::string> ops = {"sum", "sum", "sum", "max", "min", "mean", "mean", "prod"};
  std::string op = rng_.pick(ops);
  if (op == "mean" && !is_float(dt)) op = "sum";
  if (op == "prod" && !is_float(dt)) op = "max";
  // The dtype of the reduced value: the result's, or for mean into f64 sometimes an integer.
  DType xdt = op == "mean" && dt == DType::F64 && rng_.chance(0.3) ? DType::I64 : dt;
  auto finish = [&](Val x, const std::string& call_suffix, double n) -> Val {
    if (op == "prod" && !is_float(x.dt)) op = "sum";
    if (op == "mean" && xdt != x.dt && !is_float(x.dt) && rng_.chance(0.5)) op = "sum";
    std::string inner = x.text;
    double xb = x.bound;
    if (op == "prod") inner = "tanh(" + inner + ")", xb = 1;
    double bound = op == "sum" ? xb * n : xb;
    DType rdt = op == "mean" && is_int(x.dt) ? DType::F64 : x.dt;
    Val r{op + "(" + inner + call_suffix + ")", rdt, dims, false, bound, x.weakdep};
    return convert(r, dt);
  };
  bool slice = rng_.chance(0.12);
  auto sliced = [&](Val x) {
    // x[1:] or x[:-1]: the leading dimension becomes unknown.
    if (!slice || x.dims.empty()) return x;
    x.text = x.text + (rng_.chance(0.5) ? "[1:]" : "[:-1]");
    x.dims[0] = unknown_dim();
    return x;
  };
  if (dims.empty() && rng_.chance(0.5)) {
    // A full reduction, of an existing value (scan results included) or of a new expression.
    std::vector<Val> ranked;
    for (const Val& v : visible(sc))
      if (!v.dims.empty() && !(nw && v.weakdep) && (v.dt == xdt || rng_.chance(0.3))) ranked.push_back(v);
    Val x;
    if (!ranked.empty() && rng_.chance(0.6)) {
      x = rng_.pick(ranked);
    } else {
      Dims xd = rng_.chance(0.7) ? Dims{feature_dim()} : Dims{feature_dim(), feature_dim()};
      x = gen(sc, xdt, xd, depth - 1, nw);
    }
    x = sliced(x);
    double n = 1;
    for (const std::string& d : x.dims) n *= size_bound(d);
    return finish(x, "", n);
  }
  // Reduce over one axis: an existing value with one more dimension, or a new expression.
  std::vector<std::pair<Val, int>> found;
  for (const Val& v : visible(sc)) {
    if (v.dims.size() != dims.size() + 1 || (nw && v.weakdep)) continue;
    for (size_t p = 0; p < v.dims.size(); ++p) {
      Dims rest = v.dims;
      rest.erase(rest.begin() + long(p));
      if (rest == dims) found.emplace_back(v, int(p));
    }
  }
  Val x;
  int axis;
  if (!found.empty() && rng_.chance(0.6)) {
    auto [v, p] = rng_.pick(found);
    x = v;
    axis = p;
  } else {
    if (!all_known(dims) || dims.size() >= 3) return std::nullopt;
    axis = int(rng_.uniform(0, int64_t(dims.size())));
    Dims xd = dims;
    xd.insert(xd.begin() + axis, rng_.chance(0.2) ? length_dim() : feature_dim());
    // Now and then ones or zeros sized by lengths of values in scope (step values included), the
    // shape of the reduction then coming through them: `sum(ones(i64, len(k[t]), 3), axis = 0)`.
    std::optional<Val> made = rng_.chance(0.15) ? gen_construct(sc, xdt, xd, depth - 1, nw) : std::nullopt;
    x = made ? *made : gen(sc, xdt, xd, depth - 1, nw);
  }
  if (axis == 0) x = sliced(x);
  double n = size_bound(x.dims[size_t(axis)]);
  int shown = rng_.chance(0.3) ? axis - int(x.dims.size()) : axis;
  return finish(x, ", axis = " + std::to_string(shown), n);
}

std::optional<Val> Generator::gen_matmul(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (!all_known(dims) || dims.size() > 2) return std::nullopt;
  // The contracted dimension: often that of an existing vector, so that rows meet weights.
  std::string e;
  std::vector<Val> vecs;
  for (const Val& v : visible(sc))
    if (v.dims.size() == 1 && (all_known(v.dims) || dims.empty())) vecs.push_back(v);
  // An unknown contracted size only for vector . vector (r @ r of a step value of varying size):
  // only those operands are sure to exist.
  std::vector<Val> varying;
  for (const Val& v : vecs)
    if (!all_known(v.dims)) varying.push_back(v);
  if (!varying.empty() && rng_.chance(0.3)) e = rng_.pick(varying).dims[0];  // r @ r
  else e = !vecs.empty() && rng_.chance(0.5) ? rng_.pick(vecs).dims[0] : feature_dim();
  Dims ad, bd;
  if (dims.empty()) ad = {e}, bd = {e};
  else if (dims.size() == 1) {
    if (rng_.chance(0.6)) ad = {e}, bd = {e, dims[0]};
    else ad = {dims[0], e}, bd = {e};
  } else {
    ad = {dims[0], e}, bd = {e, dims[1]};
  }
  Val a = gen(sc, dt, ad, depth - 1, nw);
  std::vector<DType> lower = lower_types(dt);
  Val b = gen(sc, !lower.empty() && rng_.chance(0.2) ? rng_.pick(lower) : dt, bd, depth - 1, nw);
  if (rng_.chance(0.2) && ad.size() == bd.size()) {
    // Promotion works both ways; an operand of a lower dtype may come first.
  }
  return Val{"(" + a.text + " @ " + b.text + ")", dt, dims, false, a.bound * b.bound * size_bound(e), a.weakdep || b.weakdep};
}

std::optional<Val> Generator::gen_index(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  std::vector<std::pair<Val, int>> found;  // value, number of leading dimensions indexed
  for (const Val& v : visible(sc)) {
    if (nw && v.weakdep) continue;
    for (int k = 1; k <= 2; ++k)
      if (v.dims.size() == dims.size() + size_t(k) && tail(v.dims, size_t(k)) == dims) found.emplace_back(v, k);
  }
  Val x;
  int k = 1;
  if (!found.empty() && rng_.chance(0.7)) {
    auto [v, kk] = rng_.pick(found);
    x = v;
    k = kk;
  } else {
    if (!all_known(dims) || dims.size() >= 3) return std::nullopt;
    x = gen(sc, dt, prepend(feature_dim(), dims), depth - 1, nw);
  }
  std::string text = x.text;
  std::optional<std::string> i0 = const_index(x.dims[0]);
  std::optional<std::string> i1 = k == 2 ? const_index(x.dims[1]) : std::optional<std::string>("0");
  if (!i0 || !i1) return std::nullopt;
  if (!sc.index.empty() && k == 1 && rng_.chance(0.1)) {
    // The step number clamped to the size (never `t` alone: that would make x a sequence).
    text += "[min(" + sc.index + ", len(" + x.text + ") - 1)]";
  } else if (k == 1) {
    text += "[" + *i0 + "]";
  } else if (rng_.chance(0.5)) {
    text += "[" + *i0 + ", " + *i1 + "]";
  } else {
    text += "[" + *i0 + "][" + *i1 + "]";
  }
  return convert(Val{text, x.dt, dims, false, x.bound, x.weakdep}, dt);
}

std::optional<Val> Generator::gen_cast(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (rng_.chance(0.2)) {
    bool wd = false;
    std::string c = gen_bool(sc, dims, depth - 1, nw, &wd);
    return Val{dt_name(dt) + "(" + c + ")", dt, dims, false, 1, false};
  }
  DType from = random_dtype();
  if (from == dt) from = is_float(dt) ? DType::I64 : DType::F32;
  Val x = gen(sc, from, dims, depth - 1, nw);
  return Val{dt_name(dt) + "(" + x.text + ")", dt, dims, false, x.bound + 1, false};
}

std::optional<Val> Generator::gen_set(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  if (dims.empty()) return std::nullopt;
  // x: a value or a new array from one (an indexing of a name or a call: x[...]).
  Val x = leaf(sc, dt, dims, nw);
  // zeros_like of a step value too: its shape is known to be the same at every step.
  if (rng_.chance(0.3))
    x.text = (rng_.chance(0.5) ? "zeros_like(" : "ones_like(") + x.text + ")", x.bound = 1;
  // set's first argument is one indexing with one index list: x must not be an indexing itself.
  else if (x.text.back() == ']') x.text = "(" + x.text + " * 1)";
  std::string pos;
  Dims region;
  int form = rng_.weighted({45, 15, 15, 15, 10});
  if (form == 1 && dims.size() < 2) form = 0;
  if (form == 2 && dims.size() < 2) form = 0;
  if (form == 4 && sc.index.empty()) form = 0;
  std::optional<std::string> i0 = const_index(dims[0]);
  std::optional<std::string> i1 = dims.size() >= 2 ? const_index(dims[1]) : std::optional<std::string>("0");
  if ((form == 0 || form == 1) && !i0) form = 3;
  if ((form == 1 || form == 2) && !i1) form = 3;
  switch (form) {
    case 1: pos = *i0 + ", " + *i1, region = tail(dims, 2); break;
    case 2: pos = ":, " + *i1, region = prepend(dims[0], tail(dims, 2)); break;
    case 3: pos = rng_.chance(0.5) ? "1:" : ":-1", region = prepend(unknown_dim(), tail(dims, 1)); break;
    case 4: pos = "min(" + sc.index + ", len(" + x.text + ") - 1)", region = tail(dims, 1); break;
    default: pos = *i0, region = tail(dims, 1); break;
  }
  // The value: a weak literal or a value of the region's shape (or a suffix), never downcast.
  Dims vd = random_suffix(region);
  while (!all_known(vd)) vd = tail(vd, 1);
  Val v = vd.empty() && rng_.chance(0.35) ? literal(is_float(dt) ? dt : DType::I64) : operand(sc, dt, vd, depth - 1, nw);
  bool inc = rng_.chance(0.4);
  double bound = inc ? x.bound + v.bound : std::max(x.bound, v.bound);
  return Val{std::string(inc ? "inc(" : "set(") + x.text + "[" + pos + "], " + v.text + ")", dt, dims, false, bound,
             x.weakdep || v.weakdep};
}

std::optional<Val> Generator::gen_construct(Scope& sc, DType dt, const Dims& dims, int /*depth*/, bool nw) {
  // zeros(dt, len(x), ...): x a parameter, a let, a step value (of varying size too).
  std::vector<std::string> sizes;
  for (const std::string& d : dims)
    if (std::optional<std::string> size = size_text(sc, d)) sizes.push_back(*size);
  if (!dims.empty() && sizes.size() == dims.size() && rng_.chance(0.4)) {
    std::string text = std::string(rng_.chance(0.5) ? "zeros(" : "ones(") + dt_name(dt);
    for (const std::string& size : sizes) text += ", " + size;
    return Val{text + ")", dt, dims, false, 1, false};
  }
  Val x = leaf(sc, dt, dims, nw);
  switch (rng_.uniform(0, 2)) {
    case 0: return Val{"zeros_like(" + x.text + ")", dt, dims, false, 1, x.weakdep};
    case 1: return Val{"ones_like(" + x.text + ")", dt, dims, false, 1, x.weakdep};
    default: {
      Val l = literal(is_float(dt) ? dt : DType::I64);
      return Val{"full_like(" + x.text + ", " + l.text + ")", dt, dims, false, l.bound, x.weakdep};
    }
  }
}

}  // namespace scangen::equivalence::generator
