// The random program generator (see random_programs.h).
//
// How it works. The generator writes one function top-down while keeping a model of every value it
// has written: its text, dtype, shape and a bound on its elements. An expression is always asked
// for with an exact dtype and shape (`gen(scope, dtype, dims, depth)`), so that the init of a state
// and its step value agree exactly, and so that the declared result types are right. Shapes are
// lists of dimension names: a symbol of the signature ("n0", "L1"), a literal ("3"), or an unknown
// size ("?4", e.g. the number of steps of a scan); two values are combined only when their
// dimensions are equal by name, or one is a suffix of the other (broadcasting).
//
// Values come from scopes: the function's (parameters, lets, results of scans) and each scan
// body's (the loop index, sequence taps, past steps of states, lets, current values of outputs).
// A body sees its enclosing scopes' values as loop-invariant outside values, except those whose
// text mentions a name the body rebinds (its loop index).
//
// Parameters are created on demand: when no value of the wanted dtype and shape exists, a new
// parameter is added to the signature. Dimension sizes are drawn once per symbol; arguments are
// generated at the end to match.
#include "random_programs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace scangen::equivalence {
namespace {

// splitmix64: small, fast, and the same on every platform (unlike std::uniform_int_distribution).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0xD1342543DE82EF95ULL + 0x2545F4914F6CDD1DULL) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  int64_t uniform(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo + 1)); }
  double real() { return double(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return real() < p; }
  template <class T> const T& pick(const std::vector<T>& v) { return v.at(size_t(uniform(0, int64_t(v.size()) - 1))); }
  // An index chosen with the given (relative) weights.
  int weighted(std::initializer_list<double> weights) {
    double total = 0;
    for (double w : weights) total += w;
    double r = real() * total;
    int i = 0;
    for (double w : weights) {
      if (r < w) return i;
      r -= w;
      ++i;
    }
    return i - 1;
  }
  template <class T> void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(uniform(0, int64_t(i) - 1))]);
  }

 private:
  uint64_t state_;
};

using Dims = std::vector<std::string>;

bool is_unknown(const std::string& d) { return !d.empty() && d[0] == '?'; }
bool is_literal_dim(const std::string& d) { return !d.empty() && d[0] >= '0' && d[0] <= '9'; }
bool all_known(const Dims& dims) {
  return std::none_of(dims.begin(), dims.end(), [](const std::string& d) { return is_unknown(d); });
}
Dims tail(const Dims& dims, size_t from) { return from >= dims.size() ? Dims{} : Dims(dims.begin() + long(from), dims.end()); }
Dims prepend(const std::string& d, const Dims& dims) {
  Dims r{d};
  r.insert(r.end(), dims.begin(), dims.end());
  return r;
}

std::string dt_name(DType t) { return std::string(dtype_name(t)); }

// The strong dtypes that, combined with `t`, give `t` (no downcast, no change).
std::vector<DType> lower_types(DType t) {
  switch (t) {
    case DType::F64: return {DType::F32, DType::I64, DType::I32};
    case DType::F32: return {DType::I64, DType::I32};
    case DType::I64: return {DType::I32};
    default: return {};
  }
}

// A value the generator has written.
struct Val {
  std::string text;      // parenthesized unless it is a name, a call or an indexing
  DType dt = DType::F32;
  Dims dims;
  bool weak = false;     // a weak literal
  double bound = 1;      // |element| <= bound (an estimate that errs on the large side)
  // Depends on a state whose init is a bare literal: while the frontend learns that state's dtype
  // its reads are weak, so such values must not decide the dtype of that state's step value.
  bool weakdep = false;
};

bool mentions(const std::string& text, const std::set<std::string>& names) {
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      if (names.count(text.substr(i, j - i))) return true;
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
  return false;
}

struct Scope {
  Scope* parent = nullptr;
  std::vector<Val> vals;
  std::set<std::string> hides;  // names that, in this scope, no longer mean what they mean outside
  std::string index;            // the loop index of a scan body; empty at function level
  int level = 0;                // 0: function, 1: a top-level scan's body, 2: a nested scan's body
};

struct Param {
  std::string name;
  DType dt = DType::F32;
  Dims dims;
  bool fixed = false;  // a scalar with a chosen value (a `steps` argument)
  int64_t value = 0;
};

// A sequence of a scan: `src[t + k]` for k in taps.
struct Seq {
  std::string src;
  DType dt = DType::F32;
  Dims step_dims;
  std::vector<int> taps;
  int64_t length = -1;         // known at generation time, or -1
  int64_t static_length = -1;  // known to the frontend, or -1
  double bound = 1;
};

// An output of a scan: a state (with init) or a per-step output.
struct Out {
  std::string name;
  DType dt = DType::F32;
  Dims dims;  // of one step
  bool state = false;
  std::vector<int> lags;  // lags read (k of x[t - k]), sorted; empty: never read
  bool weak_init = false;
  std::string init;
  double bound = 1;
  bool whole_inner = false;  // its step value is a whole inner scan (no until)
};

struct Stmt {
  std::vector<std::string> lines;
  enum Kind { Let, Init, Def, Until, Nested } kind = Let;
};

struct ScanText {
  std::vector<std::string> lines;  // "scan(...) {", the body (indented), "}"
  std::vector<Out> outs;
  bool has_until = false;
  std::string steps_token;  // the unknown dimension standing for its number of steps
  int64_t steps = -1;       // known number of steps (without until), or -1
};

constexpr double kFloatLimit = 1e4;
constexpr double kIntLimit = 1e6;

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& options) : rng_(seed), opt_(options) {}

  RandomProgram run(uint64_t seed);

 private:
  // ---- names, dimensions, parameters
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }
  std::string feature_dim();
  std::string length_dim();
  std::string unknown_dim(int64_t size = -1) {
    std::string d = "?" + std::to_string(counter_++);
    if (size >= 0) sizes_[d] = size;
    return d;
  }
  // The size of a dimension when the frontend knows it at compile time (a constant index out of
  // range is then a compile error), else -1.
  int64_t static_size(const std::string& d) const {
    if (is_literal_dim(d)) return std::stoll(d);
    auto it = static_sizes_.find(d);
    return it == static_sizes_.end() ? -1 : it->second;
  }
  // A constant index into a dimension: 0, -1, 1 or 2, in range when the size is static; nullopt
  // when the dimension is statically empty.
  std::optional<std::string> const_index(const std::string& d) {
    int64_t s = static_size(d);
    if (s == 0) return std::nullopt;
    static const int64_t choices[] = {0, -1, 1, 2};
    int64_t i = choices[rng_.weighted({35, 35, 15, 15})];
    if (s > 0 && (i >= s || i < -s)) i = rng_.chance(0.5) ? 0 : -1;
    return std::to_string(i);
  }
  int64_t size_of(const std::string& d) const {
    if (is_literal_dim(d)) return std::stoll(d);
    auto it = sizes_.find(d);
    return it == sizes_.end() ? -1 : it->second;
  }
  double size_bound(const std::string& d) const {
    int64_t s = size_of(d);
    return s >= 0 ? double(std::max<int64_t>(s, 1)) : double(opt_.max_steps + 4);
  }
  Val new_param(DType dt, const Dims& dims, const std::string& prefix = "p");
  DType random_dtype();
  Dims random_step_dims();

  // ---- expressions
  std::vector<Val> visible(const Scope& sc) const;
  // A value of the function's scope (a parameter, a let, a scan's result), not a step value.
  bool function_level(const Val& v) const {
    return std::any_of(func_.vals.begin(), func_.vals.end(), [&](const Val& f) { return f.text == v.text; });
  }
  Val gen(Scope& sc, DType dt, const Dims& dims, int depth, bool no_weakdep = false);
  Val leaf(Scope& sc, DType dt, const Dims& dims, bool no_weakdep);
  Val operand(Scope& sc, DType dt, const Dims& dims, int depth, bool no_weakdep);
  Val literal(DType dt);
  Val convert(const Val& v, DType dt);
  Val bounded(Val v);
  Dims random_suffix(const Dims& dims);
  std::optional<Val> gen_binary(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_divmod(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_unary(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_minmax(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_where(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_reduce(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_matmul(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_index(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_cast(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_set(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::optional<Val> gen_construct(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  std::string gen_bool(Scope& sc, const Dims& dims, int depth, bool nw, bool* weakdep);

  // ---- scans
  ScanText gen_scan(Scope& outer, int level);
  Seq make_sequence(Scope& outer, int level, bool fresh_sources_only);
  std::string make_init(Scope& outer, const Out& o, double* bound);
  std::string state_update(Scope& body, const Out& o, const std::string& index, double* bound);
  std::string gen_until(Scope& body, const std::vector<Out>& outs, const std::string& index);
  void bind_scan(std::vector<Stmt>& stmts, ScanText st, int level, std::vector<Val>* uses);

  // ---- arguments
  HostTensor make_argument(const Param& p);

  Rng rng_;
  GeneratorOptions opt_;
  int counter_ = 0;
  std::map<std::string, int64_t> sizes_;    // dimension -> size, when known
  std::map<std::string, int64_t> static_sizes_;  // unknown dimension -> size known at compile time
  std::vector<std::string> feature_dims_;   // n0, n1, ...
  std::vector<std::string> length_dims_;    // L0, L1, ...
  std::map<std::string, std::string> len_expr_;  // symbol -> "len(p3)"
  std::vector<Param> params_;
  Scope func_;
};

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
  // Unknown sizes come only from existing values, so some value has this shape (maybe weak).
  for (const Val& v : visible(sc))
    if (v.dims == dims) return convert(v, dt);
  throw std::logic_error("random program generator: no value of the shape wanted");
}

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
    switch (rng_.weighted({28, 7, 12, 6, 6, 9, 8, 6, 5, 5, 3})) {
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
      default: v = gen_construct(sc, dt, dims, depth, nw); break;
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
    x = gen(sc, xdt, xd, depth - 1, nw);
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
    if (v.dims.size() == 1 && all_known(v.dims)) vecs.push_back(v);
  e = !vecs.empty() && rng_.chance(0.5) ? rng_.pick(vecs).dims[0] : feature_dim();
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
  // (Not in a scan body: the frontend takes zeros_like of a step value for a shape that changes
  // from step to step, see README.md.)
  if (sc.index.empty() && rng_.chance(0.3))
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
  bool lens = all_known(dims) && !dims.empty();
  for (const std::string& d : dims) lens = lens && (is_literal_dim(d) || len_expr_.count(d));
  if (lens && rng_.chance(0.4)) {
    std::string text = std::string(rng_.chance(0.5) ? "zeros(" : "ones(") + dt_name(dt);
    for (const std::string& d : dims) text += ", " + (is_literal_dim(d) ? d : len_expr_[d]);
    return Val{text + ")", dt, dims, false, 1, false};
  }
  // In a scan body, only of an outside value: the frontend takes zeros_like(step value) for a shape
  // that changes from step to step (see README.md).
  if (!sc.index.empty() && !dims.empty() && !all_known(dims)) return std::nullopt;
  Val x = leaf(!sc.index.empty() && !dims.empty() ? func_ : sc, dt, dims, nw);
  switch (rng_.uniform(0, 2)) {
    case 0: return Val{"zeros_like(" + x.text + ")", dt, dims, false, 1, x.weakdep};
    case 1: return Val{"ones_like(" + x.text + ")", dt, dims, false, 1, x.weakdep};
    default: {
      Val l = literal(is_float(dt) ? dt : DType::I64);
      return Val{"full_like(" + x.text + ", " + l.text + ")", dt, dims, false, l.bound, x.weakdep};
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scans

Seq Generator::make_sequence(Scope& outer, int level, bool fresh_sources_only) {
  Seq s;
  std::vector<Val> ranked;
  if (!fresh_sources_only)
    for (const Val& v : visible(outer))
      if (!v.dims.empty() && !v.weakdep) ranked.push_back(v);
  int choice = rng_.weighted({level == 1 ? 55.0 : 25.0, ranked.empty() ? 0.0 : (level == 1 ? 20.0 : 50.0),
                              fresh_sources_only || ranked.empty() ? 0.0 : 25.0});
  Val src;
  if (choice == 0) {
    Dims d = prepend(length_dim(), rng_.chance(0.6) ? Dims{} : random_step_dims());
    src = new_param(random_dtype(), d, "u");
  } else if (choice == 1) {
    src = rng_.pick(ranked);
  } else {
    const Val& base = rng_.pick(ranked);
    if (rng_.chance(0.3)) {
      // arange over a length: i64, or cast to a float.
      // Not the length of a step value of an enclosing scan: the frontend takes it for a number of
      // steps that changes from step to step (see README.md).
      std::string n = rng_.chance(0.8) && function_level(base) ? "len(" + base.text + ")"
                                                               : std::to_string(rng_.uniform(0, opt_.max_steps));
      std::string text = "arange(" + n + ")";
      DType dt = DType::I64;
      if (rng_.chance(0.3)) dt = rng_.chance(0.5) ? DType::F32 : DType::F64, text = dt_name(dt) + "(" + text + ")";
      int64_t len = n.rfind("len(", 0) == 0 ? size_of(base.dims[0]) : std::stoll(n);
      src = Val{text, dt, {unknown_dim(len)}, false, double(opt_.max_steps + 4), false};
      int64_t known = n.rfind("len(", 0) == 0 ? static_size(base.dims[0]) : len;
      if (known >= 0) static_sizes_[src.dims[0]] = known;
    } else {
      // An expression of the shape of an existing value: (u * 2.0), tanh(u), ...
      src = gen(outer, rng_.chance(0.7) ? base.dt : random_dtype(), base.dims, 1);
      if (src.text.find('[') != std::string::npos && rng_.chance(0.5)) {
        // Keep it simple to read when it got complicated.
      }
    }
  }
  s.src = src.text;
  s.dt = src.dt;
  s.step_dims = tail(src.dims, 1);
  s.length = size_of(src.dims[0]);
  s.static_length = static_size(src.dims[0]);
  s.bound = src.bound;
  // Taps: 1 to 3 distinct offsets in [-3, 3], small ones more often.
  int ntaps = rng_.weighted({50, 35, 15}) + 1;
  static const std::vector<int> pool = {0, 0, 0, -1, -1, 1, 1, -2, 2, -3, 3};
  while (int(s.taps.size()) < ntaps) {
    int k = rng_.pick(pool);
    if (std::find(s.taps.begin(), s.taps.end(), k) == s.taps.end()) s.taps.push_back(k);
  }
  std::sort(s.taps.begin(), s.taps.end());
  return s;
}

std::string tap_text(const std::string& src, const std::string& index, int k) {
  std::string base = src + "[" + index;
  if (k > 0) return base + " + " + std::to_string(k);
  if (k < 0) return base + " - " + std::to_string(-k);
  return base;
}

std::string Generator::make_init(Scope& outer, const Out& o, double* bound) {
  int rows = o.lags.empty() ? 1 : o.lags.back();
  Dims d = rows > 1 ? prepend(std::to_string(rows), o.dims) : o.dims;
  if (o.weak_init) {
    static const std::vector<std::string> ints = {"0", "1", "2", "-1"};
    static const std::vector<std::string> floats = {"0", "0.5", "1", "-1.5"};
    std::string t = is_float(o.dt) ? rng_.pick(floats) : rng_.pick(ints);
    *bound = 2;
    return t;
  }
  switch (rng_.weighted({40, 35, 25})) {
    case 0: {
      Val v = new_param(o.dt, d, "z");
      *bound = v.bound;
      return v.text;
    }
    case 1: {
      Val v = gen(outer, o.dt, d, int(rng_.uniform(0, 2)));
      *bound = v.bound;
      return v.text;
    }
    default: {
      *bound = 1;
      bool lens = true;
      for (const std::string& x : d) lens = lens && (is_literal_dim(x) || len_expr_.count(x));
      if (!d.empty() && lens && all_known(d)) {
        std::string text = std::string(rng_.chance(0.5) ? "zeros(" : "ones(") + dt_name(o.dt);
        for (const std::string& x : d) text += ", " + (is_literal_dim(x) ? x : len_expr_[x]);
        return text + ")";
      }
      if (d.empty()) {
        Val l = literal(o.dt);
        *bound = l.bound;
        return dt_name(o.dt) + "(" + l.text + ")";
      }
      Val x = leaf(outer.level == 0 || !all_known(d) ? outer : func_, o.dt, d, false);
      return (rng_.chance(0.5) ? "zeros_like(" : "ones_like(") + x.text + ")";
    }
  }
}

std::string Generator::state_update(Scope& body, const Out& o, const std::string& index, double* bound) {
  const int depth = int(rng_.uniform(1, opt_.max_depth));
  std::string e;
  if (o.weak_init) {
    // x[t] = wrap(x[t-a] * c + ... + S): S, strong and of the state's dtype, decides the dtype
    // while the frontend still sees the reads of x as weak.
    for (int k : o.lags) {
      std::string term = o.name + "[" + index + " - " + std::to_string(k) + "]";
      if (rng_.chance(0.3)) term = "(" + term + " * " + std::to_string(rng_.uniform(-2, 2)) + ")";
      e += term + " + ";
    }
    Val s = gen(body, o.dt, o.dims, depth, /*no_weakdep=*/true);
    e = "(" + e + s.text + ")";
  } else {
    Val s = gen(body, o.dt, o.dims, depth);
    e = s.text;
    std::vector<std::string> ops = {" + ", " - ", " * "};
    for (int k : o.lags) {
      std::string read = o.name + "[" + index + " - " + std::to_string(k) + "]";
      int op = int(rng_.uniform(0, 2));
      if (op == 2 && !rng_.chance(0.3)) op = 0;
      e = "(" + (rng_.chance(0.5) ? read + ops[size_t(op)] + e : e + ops[size_t(op)] + read) + ")";
    }
  }
  // Keep the state bounded: states are where values would otherwise grow step after step.
  if (is_float(o.dt)) {
    if (rng_.chance(0.5)) {
      *bound = 1;
      return "tanh(" + e + ")";
    }
    *bound = 8;
    return "clip(" + e + ", -8, 8)";
  }
  if (rng_.chance(0.3)) {
    *bound = 12;
    return "(" + e + " % 13)";
  }
  *bound = 20;
  return "clip(" + e + ", -20, 20)";
}

std::string Generator::gen_until(Scope& body, const std::vector<Out>& outs, const std::string& index) {
  std::vector<const Out*> scalars, ranked;
  for (const Out& o : outs) (o.dims.empty() ? scalars : ranked).push_back(&o);
  auto cmp = [&](const std::string& x, DType dt) {
    int64_t c = rng_.uniform(-2, 3);
    std::string cs = c < 0 ? "(" + std::to_string(c) + ")" : std::to_string(c);
    if (is_float(dt) && rng_.chance(0.3)) cs = std::to_string(c) + ".5";
    // A bound that is never reached, now and then.
    if (rng_.chance(0.1)) cs = "1000";
    return x + (rng_.chance(0.5) ? " > " : " < ") + cs;
  };
  std::string c;
  int form = rng_.weighted({scalars.empty() ? 0.0 : 50.0, ranked.empty() ? 0.0 : 25.0, 15, 10});
  switch (form) {
    case 0: {
      const Out* o = rng_.pick(scalars);
      c = cmp(o->name + "[" + index + "]", o->dt);
      break;
    }
    case 1: {
      const Out* o = rng_.pick(ranked);
      c = cmp(std::string(rng_.chance(0.6) ? "sum(" : "max(") + o->name + "[" + index + "])", o->dt);
      break;
    }
    case 2: c = index + " >= " + std::to_string(rng_.uniform(0, 6)); break;
    default: {
      Val v = gen(body, DType::F32, {}, 1);
      c = "(" + cmp(v.text, DType::F32) + ") || (" + index + " >= " + std::to_string(rng_.uniform(1, 5)) + ")";
      break;
    }
  }
  return c;
}

std::vector<std::string> indent(const std::vector<std::string>& lines) {
  std::vector<std::string> r;
  for (const std::string& l : lines) r.push_back("    " + l);
  return r;
}

ScanText Generator::gen_scan(Scope& outer, int level) {
  ScanText st;
  const bool nest = opt_.nested_scans && level == 1 && rng_.chance(0.22);
  std::string index;
  if (level == 1) {
    index = nest ? rng_.pick(std::vector<std::string>{"s", "i", "t"}) : (rng_.chance(0.92) ? "t" : "i");
  } else {
    index = outer.index == "t" ? (rng_.chance(0.25) ? "t" : "j") : "t";
  }
  // The same index name as the enclosing scan's shadows it; the inner scan then iterates only
  // over sequences of its own (reading the outer tap values would be ambiguous).
  const bool shadowing = level > 1 && index == outer.index;
  // Sequences, `steps` and inits are written inside the scan but evaluated outside it: they must
  // not mention what the scan's index hides.
  Scope pre;
  pre.parent = &outer;
  pre.hides = {index};
  pre.index = shadowing ? "" : outer.index;
  pre.level = outer.level;

  // Sequences.
  std::vector<Seq> seqs;
  int nseq = rng_.weighted({15, 45, 30, 10});
  for (int i = 0; i < nseq; ++i) {
    Seq s = make_sequence(pre, level, shadowing);
    bool dup = false;
    for (const Seq& o : seqs) dup = dup || o.src == s.src;
    if (!dup) seqs.push_back(s);
  }
  int64_t allowed = -1;  // the number of steps the sequences allow, when known
  bool all_lengths = true;
  for (const Seq& s : seqs) {
    int64_t m = std::min(0, s.taps.front()), M = std::max(0, s.taps.back());
    if (s.length < 0) all_lengths = false;
    else allowed = allowed < 0 ? std::max<int64_t>(0, s.length - (M - m)) : std::min(allowed, std::max<int64_t>(0, s.length - (M - m)));
  }
  if (!all_lengths) allowed = -1;
  // The number of steps when the frontend knows it (then a constant index into a result must be
  // in range), else -1.
  int64_t static_steps = seqs.empty() ? -1 : std::numeric_limits<int64_t>::max();
  for (const Seq& s : seqs) {
    int64_t m = std::min(0, s.taps.front()), M = std::max(0, s.taps.back());
    if (s.static_length < 0) static_steps = -1;
    else if (static_steps >= 0) static_steps = std::min(static_steps, std::max<int64_t>(0, s.static_length - (M - m)));
  }

  // Options.
  std::vector<std::string> options;
  st.steps = seqs.empty() ? -1 : allowed;
  if (seqs.empty() || rng_.chance(0.25)) {
    int64_t limit = seqs.empty() ? opt_.max_steps : (allowed >= 0 ? allowed : opt_.max_steps);
    int64_t value = rng_.uniform(0, std::max<int64_t>(0, limit));
    if (rng_.chance(0.06)) value = limit + 1, limit = opt_.max_steps;  // more than the sequences allow: an error
    if (rng_.chance(0.02)) value = -1;                                  // an error too
    std::vector<Val> ranked;
    for (const Val& v : visible(pre))
      if (!v.dims.empty() && size_of(v.dims[0]) >= 0 && size_of(v.dims[0]) <= limit && !v.weakdep && function_level(v))
        ranked.push_back(v);  // `steps = len(v)`, v not a step value (as for arange above)
    switch (rng_.weighted({60, 20, ranked.empty() ? 0.0 : 20.0})) {
      case 0: {
        static_steps = -1;
        Param p;
        p.name = fresh("k");
        p.dt = rng_.chance(0.8) ? DType::I64 : DType::I32;
        p.fixed = true;
        p.value = value;
        params_.push_back(p);
        options.push_back("steps = " + p.name);
        break;
      }
      case 1:
        value = std::max<int64_t>(0, value);
        options.push_back("steps = " + std::to_string(value));
        static_steps = value;
        break;
      default: {
        const Val& v = rng_.pick(ranked);
        options.push_back("steps = len(" + v.text + ")");
        value = size_of(v.dims[0]);
        static_steps = static_size(v.dims[0]);
        break;
      }
    }
    st.steps = value;
  }
  bool reverse = rng_.chance(0.25);
  if (reverse) options.push_back(rng_.chance(0.8) ? "reverse" : "reverse = true");
  else if (rng_.chance(0.04)) options.push_back("reverse = false");
  if (index != "t" || rng_.chance(0.05)) options.push_back("index = " + index);
  if (rng_.chance(0.04)) options.push_back("truncate_gradient = " + std::string(rng_.chance(0.5) ? "-1" : "3"));
  rng_.shuffle(options);

  // Outputs: states and per-step outputs.
  std::vector<Out> outs;
  int nstates = rng_.weighted({25, 40, 25, 10});
  int nouts = rng_.weighted({30, 45, 25});
  if (nstates + nouts == 0) nouts = 1;
  for (int i = 0; i < nstates; ++i) {
    Out o;
    o.state = true;
    o.name = fresh("x");
    o.dt = random_dtype();
    o.dims = random_step_dims();
    if (!rng_.chance(0.08)) {
      int L = rng_.weighted({55, 25, 20}) + 1;
      for (int k = 1; k <= L; ++k)
        if (k == L || rng_.chance(0.5)) o.lags.push_back(k);
    }
    o.weak_init = o.dims.empty() && o.lags.size() == 1 && o.lags[0] == 1 && rng_.chance(0.3);
    o.init = make_init(pre, o, &o.bound);
    outs.push_back(o);
  }
  for (int i = 0; i < nouts; ++i) {
    Out o;
    o.name = fresh("y");
    o.dt = random_dtype();
    o.dims = random_step_dims();
    outs.push_back(o);
  }

  // The body's scope: the index, the sequences' taps, the states' past steps.
  Scope body;
  body.parent = &outer;
  body.index = index;
  body.level = level;
  body.hides = {index};
  body.vals.push_back(Val{index, DType::I64, {}, false, double(opt_.max_steps + 4), false});
  for (const Seq& s : seqs)
    for (int k : s.taps) {
      body.vals.push_back(Val{tap_text(s.src, index, k) + "]", s.dt, s.step_dims, false, s.bound, false});
      if (!s.step_dims.empty() && rng_.chance(0.3))
        body.vals.push_back(Val{tap_text(s.src, index, k) + ", " + (rng_.chance(0.5) ? "0" : "-1") + "]", s.dt,
                                tail(s.step_dims, 1), false, s.bound, false});
    }
  for (Out& o : outs)
    for (int k : o.lags)
      body.vals.push_back(Val{o.name + "[" + index + " - " + std::to_string(k) + "]", o.dt, o.dims, false,
                              std::max(o.bound, 20.0), o.weak_init});

  // The definitions, in a random order that respects their dependencies.
  std::vector<Stmt> stmts;
  for (const Out& o : outs)
    if (o.state) stmts.push_back(Stmt{{"init " + o.name + " = " + o.init}, Stmt::Init});
  std::vector<char> slots;
  for (const Out& o : outs) slots.push_back(o.state ? 'S' : 'O');
  for (int i = rng_.weighted({35, 35, 20, 10}); i > 0; --i) slots.push_back('L');
  if (nest) slots.push_back('N');
  rng_.shuffle(slots);
  size_t next_state = 0, next_out = 0;
  std::vector<size_t> state_ix, out_ix;
  for (size_t i = 0; i < outs.size(); ++i) (outs[i].state ? state_ix : out_ix).push_back(i);
  for (char slot : slots) {
    const int depth = int(rng_.uniform(1, opt_.max_depth));
    if (slot == 'L') {
      std::string name = fresh("h");
      DType dt = random_dtype();
      Dims dims;
      std::vector<Val> vis = visible(body);
      if (rng_.chance(0.3)) dims = rng_.pick(vis).dims;
      else dims = random_step_dims();
      Val v = gen(body, dt, dims, depth);
      stmts.push_back(Stmt{{"let " + name + " = " + v.text}, Stmt::Let});
      body.vals.push_back(Val{name, v.dt, v.dims, false, v.bound, v.weakdep});
    } else if (slot == 'S' || slot == 'O') {
      Out& o = outs[slot == 'S' ? state_ix[next_state++] : out_ix[next_out++]];
      std::string text;
      bool wd = false;
      if (o.state) {
        double b;
        text = state_update(body, o, index, &b);
        o.bound = std::max(o.bound, b);
        wd = o.weak_init;
      } else {
        Val v = gen(body, o.dt, o.dims, depth);
        text = v.text;
        o.bound = v.bound;
        wd = v.weakdep;
      }
      stmts.push_back(Stmt{{o.name + "[" + index + "] = " + text}, Stmt::Def});
      body.vals.push_back(Val{o.name + "[" + index + "]", o.dt, o.dims, false, o.bound, wd});
    } else {
      // A nested scan: bound in a let (or used inline), or its whole result as an output of this
      // scan (only without until, so that its number of steps does not change from step to step).
      ScanText inner = gen_scan(body, level + 1);
      if (inner.has_until || inner.outs.size() != 1 || !rng_.chance(0.3)) {
        std::vector<Val> uses;
        bind_scan(stmts, inner, level + 1, &uses);
        for (Val& u : uses) body.vals.push_back(u);
      } else {
        Out o;
        o.name = fresh("y");
        o.dt = inner.outs[0].dt;
        o.dims = prepend(inner.steps_token, inner.outs[0].dims);
        o.bound = inner.outs[0].bound;
        o.whole_inner = true;
        std::vector<std::string> lines = inner.lines;
        lines[0] = o.name + "[" + index + "] = " + lines[0];
        stmts.push_back(Stmt{lines, Stmt::Nested});
        body.vals.push_back(Val{o.name + "[" + index + "]", o.dt, o.dims, false, o.bound, false});
        outs.push_back(o);
      }
    }
  }

  // until, now and then.
  std::string until;
  if (rng_.chance(0.28)) {
    st.has_until = true;
    until = gen_until(body, outs, index);
  }

  // Every tap must be written in the body (taps come from the text): an unused let reads those
  // that no expression happened to read. Only this scan's own statements are searched.
  std::string own;
  for (const Stmt& s : stmts)
    if (s.kind != Stmt::Nested)
      for (const std::string& l : s.lines) own += l + "\n";
  own += until;
  for (const Seq& s : seqs)
    for (int k : s.taps) {
      std::string t = tap_text(s.src, index, k);
      if (own.find(t + "]") == std::string::npos && own.find(t + ",") == std::string::npos) {
        Stmt u{{"let " + fresh("unused") + " = " + t + "]"}, Stmt::Let};
        stmts.insert(stmts.begin() + long(rng_.uniform(0, int64_t(stmts.size()))), u);
      }
    }

  // Any textual order: definitions may move later (Y[t] may be read before it is defined), inits
  // anywhere, until anywhere.
  for (size_t i = stmts.size(); i-- > 0;) {
    if ((stmts[i].kind == Stmt::Def && rng_.chance(0.3)) || (stmts[i].kind == Stmt::Init && rng_.chance(0.15))) {
      Stmt s = stmts[i];
      stmts.erase(stmts.begin() + long(i));
      size_t lo = s.kind == Stmt::Init ? 0 : i;
      stmts.insert(stmts.begin() + long(rng_.uniform(int64_t(lo), int64_t(stmts.size()))), s);
    }
  }
  if (!until.empty()) {
    Stmt u{{"until " + until}, Stmt::Until};
    if (rng_.chance(0.8)) stmts.push_back(u);
    else stmts.insert(stmts.begin() + long(rng_.uniform(0, int64_t(stmts.size()))), u);
  }

  std::string head = "scan";
  if (!options.empty() || rng_.chance(0.05)) {
    head += "(";
    for (size_t i = 0; i < options.size(); ++i) head += (i ? ", " : "") + options[i];
    head += ")";
  }
  st.lines.push_back(head + " {");
  for (const Stmt& s : stmts)
    for (const std::string& l : indent(s.lines)) st.lines.push_back(l);
  st.lines.push_back("}");
  st.outs = outs;
  st.steps_token = unknown_dim(st.has_until ? -1 : st.steps);
  if (!st.has_until && static_steps >= 0) static_sizes_[st.steps_token] = static_steps;
  return st;
}

// Binds a scan's results (in a function or an enclosing body) and returns in `uses` the
// values made from them (the results, their last rows, sums, ...).
void Generator::bind_scan(std::vector<Stmt>& stmts, ScanText st, int level, std::vector<Val>* uses) {
  Stmt::Kind kind = level > 1 ? Stmt::Nested : Stmt::Let;
  // A nested scan that stops on until has a number of steps that changes from step to step of the
  // enclosing scan. Its results may only be reduced to scalars there: the frontend rejects even
  // r[-1] then (see README.md).
  const bool ragged = level > 1 && st.has_until;
  auto result_val = [&](const Out& o) {
    return Val{o.name, o.dt, prepend(st.steps_token, o.dims), false, o.bound, false};
  };
  if (st.outs.size() == 1 && rng_.chance(0.2)) {
    // Used inline: sum(scan {...}), mean(...), sum(..., axis = 0).
    const Out& o = st.outs[0];
    std::string name = fresh(level > 1 ? "g" : "v");
    std::vector<std::string> lines = st.lines;
    double n = double(opt_.max_steps + 4);
    Val v;
    int form = rng_.weighted({50, is_float(o.dt) ? 25.0 : 0.0, o.dims.empty() || ragged ? 0.0 : 25.0});
    if (form == 0) {
      lines[0] = "let " + name + " = sum(" + lines[0];
      lines.back() += ")";
      v = Val{name, o.dt, {}, false, o.bound * n, false};
      for (const std::string& d : o.dims) v.bound *= size_bound(d);
    } else if (form == 1) {
      lines[0] = "let " + name + " = mean(" + lines[0];
      lines.back() += ")";
      v = Val{name, o.dt, {}, false, o.bound, false};
    } else {
      lines[0] = "let " + name + " = sum(" + lines[0];
      lines.back() += ", axis = 0)";
      v = Val{name, o.dt, o.dims, false, o.bound * n, false};
    }
    stmts.push_back(Stmt{lines, kind});
    uses->push_back(bounded(v));
    return;
  }
  // Bind some outputs by name; the others are never computed.
  std::vector<Out> bound;
  for (const Out& o : st.outs)
    if (rng_.chance(0.7)) bound.push_back(o);
  if (bound.empty()) bound.push_back(rng_.pick(st.outs));
  rng_.shuffle(bound);
  std::vector<std::string> lines = st.lines;
  if (bound.size() == 1 && rng_.chance(0.85)) {
    lines[0] = "let " + bound[0].name + " = " + lines[0];
  } else {
    std::string names;
    for (size_t i = 0; i < bound.size(); ++i) names += (i ? ", " : "") + bound[i].name;
    lines[0] = "let (" + names + ") = " + lines[0];
  }
  stmts.push_back(Stmt{lines, kind});
  for (const Out& o : bound) {
    if (ragged) {
      double b = o.bound * double(opt_.max_steps + 4);
      for (const std::string& d : o.dims) b *= size_bound(d);
      if (is_float(o.dt) && rng_.chance(0.4)) uses->push_back(Val{"mean(" + o.name + ")", o.dt, {}, false, o.bound, false});
      else uses->push_back(bounded(Val{"sum(" + o.name + ")", o.dt, {}, false, b, false}));
      continue;
    }
    Val r = result_val(o);
    uses->push_back(r);
    int64_t n = static_size(st.steps_token);
    switch (rng_.weighted({25, 10, 6, 14, 10, 10, 25})) {
      case 0:
        if (n != 0) uses->push_back(Val{o.name + "[-1]", o.dt, o.dims, false, o.bound, false});
        break;
      case 1:
        if (n != 0) uses->push_back(Val{o.name + "[0]", o.dt, o.dims, false, o.bound, false});
        break;
      case 2: {
        int64_t i = rng_.uniform(1, 3);
        if (n >= 0 && i >= n) i = -1;
        if (n != 0) uses->push_back(Val{o.name + "[" + std::to_string(i) + "]", o.dt, o.dims, false, o.bound, false});
        break;
      }
      case 3: {
        double b = o.bound * double(opt_.max_steps + 4);
        for (const std::string& d : o.dims) b *= size_bound(d);
        uses->push_back(bounded(Val{"sum(" + o.name + ")", o.dt, {}, false, b, false}));
        break;
      }
      case 4: uses->push_back(bounded(Val{"sum(" + o.name + ", axis = 0)", o.dt, o.dims, false, o.bound * double(opt_.max_steps + 4), false})); break;
      case 5:
        if (is_float(o.dt)) uses->push_back(Val{"mean(" + o.name + ", axis = 0)", o.dt, o.dims, false, o.bound, false});
        else uses->push_back(Val{"max(" + o.name + ", axis = 0)", o.dt, o.dims, false, o.bound, false});
        break;
      default: break;  // the whole result only
    }
  }
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

std::string type_text(DType dt, const Dims& dims) {
  std::string s = dt_name(dt);
  if (dims.empty()) return s;
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (is_unknown(dims[i]) ? std::string("?") : dims[i]);
  return s + "]";
}

RandomProgram Generator::run(uint64_t seed) {
  RandomProgram prog;
  prog.fn = opt_.fn_name.empty() ? "prog" + std::to_string(seed) : opt_.fn_name;
  std::vector<Stmt> stmts;
  std::vector<Val> returns, last_uses;

  // Lets before the scans.
  for (int i = rng_.weighted({60, 30, 10}); i > 0; --i) {
    std::string name = fresh("e");
    Val v = gen(func_, random_dtype(), random_step_dims(), 2);
    stmts.push_back(Stmt{{"let " + name + " = " + v.text}, Stmt::Let});
    func_.vals.push_back(Val{name, v.dt, v.dims, false, v.bound, false});
  }
  int nscans = std::min(std::max(1, opt_.max_scans), rng_.weighted({55, 35, 10}) + 1);
  for (int i = 0; i < nscans; ++i) {
    ScanText st = gen_scan(func_, 1);
    std::vector<Val> uses;
    bind_scan(stmts, st, 1, &uses);
    last_uses = uses;
    for (const Val& u : uses) {
      func_.vals.push_back(u);
      if (rng_.chance(0.45)) returns.push_back(u);
    }
    // Now and then a value computed from the results (or anything else) after the scan.
    if (rng_.chance(0.3)) {
      std::string name = fresh("r");
      std::vector<Val> vis = visible(func_);
      Dims dims = rng_.chance(0.5) ? rng_.pick(vis).dims : random_step_dims();
      Val v = gen(func_, random_dtype(), dims, 2);
      stmts.push_back(Stmt{{"let " + name + " = " + v.text}, Stmt::Let});
      Val r{name, v.dt, v.dims, false, v.bound, false};
      func_.vals.push_back(r);
      if (rng_.chance(0.6)) returns.push_back(r);
    }
  }
  if (returns.empty()) returns.push_back(rng_.pick(last_uses));  // something of the last scan
  rng_.shuffle(returns);
  if (returns.size() > 4) returns.resize(4);

  // The text.
  std::ostringstream os;
  os << "fn " << prog.fn << "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    os << (i ? ", " : "") << params_[i].name << ": " << type_text(params_[i].dt, params_[i].dims);
    prog.arg_names.push_back(params_[i].name);
  }
  os << ") -> ";
  bool named = rng_.chance(0.3);
  if (returns.size() > 1 || named) os << "(";
  for (size_t i = 0; i < returns.size(); ++i) {
    os << (i ? ", " : "");
    if (named) os << "out_" << i << ": ";
    os << type_text(returns[i].dt, returns[i].dims);
  }
  if (returns.size() > 1 || named) os << ")";
  os << " {\n";
  for (const Stmt& s : stmts)
    for (const std::string& l : indent(s.lines)) os << l << "\n";
  if (returns.size() == 1) {
    os << "    return " << returns[0].text << "\n";
  } else {
    os << "    return (";
    for (size_t i = 0; i < returns.size(); ++i) os << (i ? ", " : "") << returns[i].text;
    os << ")\n";
  }
  os << "}\n";
  prog.text = os.str();
  for (const Param& p : params_) prog.args.push_back(make_argument(p));
  return prog;
}

}  // namespace

RandomProgram generate_program(uint64_t seed, const GeneratorOptions& options) {
  Generator g(seed, options);
  return g.run(seed);
}

std::string rename_function(const std::string& text, const std::string& old_name, const std::string& new_name) {
  std::string from = "fn " + old_name + "(";
  size_t at = text.find(from);
  if (at == std::string::npos) throw std::invalid_argument("rename_function: no function '" + old_name + "'");
  return text.substr(0, at) + "fn " + new_name + "(" + text.substr(at + from.size());
}

namespace {

void format_elements(std::ostringstream& os, const HostTensor& t, size_t axis, int64_t& flat) {
  if (axis == t.shape().size()) {
    char buf[64];
    switch (t.dtype()) {
      case DType::F32: std::snprintf(buf, sizeof buf, "%.9g", double(t.data<float>()[flat])); break;
      case DType::F64: std::snprintf(buf, sizeof buf, "%.17g", t.data<double>()[flat]); break;
      case DType::Bool: std::snprintf(buf, sizeof buf, "%s", t.data<bool>()[flat] ? "true" : "false"); break;
      default: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.get_as_int64(flat))); break;
    }
    os << buf;
    ++flat;
    return;
  }
  os << "[";
  for (int64_t i = 0; i < t.shape()[axis]; ++i) {
    if (i) os << ",";
    format_elements(os, t, axis + 1, flat);
  }
  os << "]";
}

}  // namespace

std::string format_tensor(const HostTensor& t) {
  std::ostringstream v;
  int64_t flat = 0;
  format_elements(v, t, 0, flat);
  return v.str();
}

std::string format_arguments(const std::vector<std::string>& names, const std::vector<HostTensor>& args) {
  std::ostringstream os;
  for (size_t i = 0; i < args.size(); ++i) {
    const HostTensor& t = args[i];
    os << (i ? " " : "") << (i < names.size() ? names[i] : "arg" + std::to_string(i)) << "=";
    // JSON cannot give the inner sizes of an empty array of rank 2 or more ("[]").
    if (t.rank() >= 2 && t.numel() == 0) {
      os << "<zeros " << dtype_name(t.dtype()) << shape_to_string(t.shape()) << ">";
      continue;
    }
    std::string s = format_tensor(t);
    os << (t.rank() > 0 ? "'" + s + "'" : s);
  }
  return os.str();
}

}  // namespace scangen::equivalence
