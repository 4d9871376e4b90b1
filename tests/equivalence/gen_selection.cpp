// The random program generator (generator.h): the selection builtins. argmax/argmin of a wanted
// shape, flattened or along any axis (negative spellings too) of an operand of rank 1 to 3 (along
// the only axis of a vector it gives a scalar), and `let (v, i) = top_k(x, k)` of an operand of
// rank 1 to 3, whose two results join the scope.
#include "generator.h"

namespace scangen::equivalence::generator {

namespace {

// The numeric dtypes (argmax, argmin and top_k take no bool).
DType numeric(DType dt) { return dt == DType::Bool ? DType::I64 : dt; }

}  // namespace

std::optional<Val> Generator::gen_arg_reduce(Scope& sc, DType dt, const Dims& dims, int depth, bool nw) {
  const std::string f = rng_.chance(0.5) ? "argmax" : "argmin";
  const DType xdt = numeric(random_dtype());
  Val x;
  std::string call_suffix;
  double positions = 1;  // the number of positions the result ranges over
  if (dims.empty() && rng_.chance(0.4)) {
    // Flattened: a position among every element of x, of any rank.
    Dims xd;
    for (int64_t r = rng_.uniform(1, 3); r > 0; --r) xd.push_back(feature_dim());
    x = gen(sc, xdt, xd, depth - 1, nw);
    for (const std::string& d : xd) positions *= size_bound(d);
  } else {
    // Along one axis: an existing value with one more dimension, or a new expression.
    std::vector<std::pair<Val, int>> found;
    for (const Val& v : visible(sc)) {
      if (v.dims.size() != dims.size() + 1 || (nw && v.weakdep)) continue;
      for (size_t p = 0; p < v.dims.size(); ++p) {
        Dims rest = v.dims;
        rest.erase(rest.begin() + long(p));
        if (rest == dims) found.emplace_back(v, int(p));
      }
    }
    int axis;
    if (!found.empty() && rng_.chance(0.5)) {
      std::tie(x, axis) = rng_.pick(found);
    } else {
      if (!all_known(dims) || dims.size() >= 3) return std::nullopt;
      axis = int(rng_.uniform(0, int64_t(dims.size())));
      Dims xd = dims;
      xd.insert(xd.begin() + axis, rng_.chance(0.2) ? length_dim() : feature_dim());
      x = gen(sc, xdt, xd, depth - 1, nw);
    }
    positions = size_bound(x.dims[size_t(axis)]);
    const int shown = rng_.chance(0.4) ? axis - int(x.dims.size()) : axis;
    call_suffix = ", axis = " + std::to_string(shown);
  }
  Val r{f + "(" + x.text + call_suffix + ")", DType::I64, dims, false, positions, x.weakdep};
  return convert(r, dt);
}

bool Generator::gen_top_k(Scope& sc, int depth, bool nw, std::vector<Stmt>& stmts) {
  // x: an existing value of rank 1 to 3 whose last size is known here, or a new expression.
  std::vector<Val> ranked;
  for (const Val& v : visible(sc))
    if (!v.dims.empty() && v.dims.size() <= 3 && size_of(v.dims.back()) >= 0 && !(nw && v.weakdep)) ranked.push_back(v);
  Val x;
  if (!ranked.empty() && rng_.chance(0.5)) {
    x = rng_.pick(ranked);
  } else {
    Dims xd;
    for (int64_t r = rng_.uniform(1, 3); r > 0; --r) xd.push_back(feature_dim());
    x = gen(sc, numeric(random_dtype()), xd, depth, nw);
  }
  const std::string& last = x.dims.back();
  const int64_t size = size_of(last);
  if (size < 0) return false;
  int64_t k = rng_.uniform(0, std::min<int64_t>(size, 3));
  // Now and then one more than the axis holds (a run-time error), where the frontend cannot see
  // the size (a constant k beyond a static size is a compile-time error).
  if (static_size(last) < 0 && rng_.chance(0.05)) k = size + 1;
  // (Not "i": fresh("i") may make i32 or i64, which are dtypes.)
  const std::string v = fresh("kv"), i = fresh("ki");
  std::string k_text = std::to_string(k);
  Dims rd = x.dims;
  rd.back() = k_text;
  // k spelled as an expression now and then: the frontend then knows the results' last size
  // only at run time.
  if (rng_.chance(0.3)) {
    k_text = "(" + k_text + " + 0 * len(" + x.text + "))";
    rd.back() = unknown_dim(k);
  }
  stmts.push_back(Stmt{{"let (" + v + ", " + i + ") = top_k(" + x.text + ", " + k_text + ")"}, Stmt::Let});
  sc.vals.push_back(Val{v, x.dt, rd, false, x.bound, x.weakdep});
  sc.vals.push_back(Val{i, DType::I64, rd, false, double(std::max<int64_t>(size, 1)), x.weakdep});
  return true;
}

}  // namespace scangen::equivalence::generator
