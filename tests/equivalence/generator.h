// The random program generator's model of a program and its class (random_programs.h is the
// interface). One job per file: gen_values.cpp (dimensions, parameters, scopes, leaves and
// arguments), gen_expressions.cpp (expressions of a wanted dtype and shape), gen_scans.cpp (a
// scan: sequences, options, states and outputs, the body, until), gen_results.cpp (a scan's results
// bound and the values made from them), gen_program.cpp (the function: lets, scans, returns and
// the signature).
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
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "random_programs.h"

namespace scangen::equivalence::generator {

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

inline bool is_unknown(const std::string& d) { return !d.empty() && d[0] == '?'; }
inline bool is_literal_dim(const std::string& d) { return !d.empty() && d[0] >= '0' && d[0] <= '9'; }
inline bool all_known(const Dims& dims) {
  return std::none_of(dims.begin(), dims.end(), [](const std::string& d) { return is_unknown(d); });
}
inline Dims tail(const Dims& dims, size_t from) { return from >= dims.size() ? Dims{} : Dims(dims.begin() + long(from), dims.end()); }
inline Dims prepend(const std::string& d, const Dims& dims) {
  Dims r{d};
  r.insert(r.end(), dims.begin(), dims.end());
  return r;
}

inline std::string dt_name(DType t) { return std::string(dtype_name(t)); }

// The strong dtypes that, combined with `t`, give `t` (no downcast, no change).
inline std::vector<DType> lower_types(DType t) {
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

inline bool mentions(const std::string& text, const std::set<std::string>& names) {
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
  // bool values (bool states' reads and results): kept apart, as bool takes part only in
  // comparisons, `&& || !`, `where`, `?:` and casts (no arithmetic, no reductions).
  std::vector<Val> bools;
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
  std::vector<bool> hidden;  // dimensions declared `?` in the signature (their sizes stay known here)
};

// A sequence of a scan: `src[t + k]` for k in taps.
struct Seq {
  std::string src;
  std::string dim;  // the source's leading dimension
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
  // Depends on a state with a bare literal init (Val::weakdep): the results of a nested scan
  // reading the enclosing scan's such states must not decide that scan's states' dtypes either.
  bool weakdep = false;
};

struct Stmt {
  std::vector<std::string> lines;
  enum Kind { Let, Init, Def, Until, Nested } kind = Let;
};

struct ScanText {
  std::vector<std::string> lines;  // "scan(...) {", the body (indented), "}"
  std::vector<Out> outs;
  bool has_until = false;
  bool varying_steps = false;  // `steps = t + c` of the enclosing scan's index
  int64_t least_steps = 0;      // the least number of steps then (c)
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
    // A size that changes from step to step but has a lower bound (`arange(t + 1)`, an inner
    // `scan(steps = t + 1)`): mostly in range, so that most programs run to the end.
    auto least = min_sizes_.find(d);
    if (s < 0 && least != min_sizes_.end() && (i >= least->second || i < -least->second) && rng_.chance(0.9))
      i = rng_.chance(0.5) ? 0 : -1;
    return std::to_string(i);
  }
  // The size of `d` as an expression: a literal, or len() of a visible value (a step value too)
  // or of the parameter that first had it; nullopt when there is none.
  std::optional<std::string> size_text(const Scope& sc, const std::string& d);
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
  std::vector<Val> visible_bools(const Scope& sc, const Dims& dims) const;
  // A value goes to its scope's bools or vals by its dtype.
  static void add(Scope& sc, const Val& v) { (v.dt == DType::Bool ? sc.bools : sc.vals).push_back(v); }
  Val gen(Scope& sc, DType dt, const Dims& dims, int depth, bool no_weakdep = false);
  Val leaf(Scope& sc, DType dt, const Dims& dims, bool no_weakdep);
  Val zeros_suffix(const Scope& sc, DType dt, const Dims& dims);
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
  // gen_selection.cpp: argmax/argmin of a wanted shape; `let (v, i) = top_k(x, k)` appended to
  // `stmts`, its results added to `sc` (false when no operand fits).
  std::optional<Val> gen_arg_reduce(Scope& sc, DType dt, const Dims& dims, int depth, bool nw);
  bool gen_top_k(Scope& sc, int depth, bool nw, std::vector<Stmt>& stmts);
  std::string gen_bool(Scope& sc, const Dims& dims, int depth, bool nw, bool* weakdep);

  // ---- scans
  ScanText gen_scan(Scope& outer, int level);
  std::vector<std::string> scan_options(Scope& pre, int level, const std::string& index, const std::vector<Seq>& seqs,
                                        ScanText* st, int64_t* static_steps);
  std::vector<Out> scan_outputs(Scope& pre);
  Scope body_scope(Scope& outer, const std::string& index, int level, const std::vector<Seq>& seqs,
                   std::vector<Out>& outs);
  std::vector<Stmt> scan_statements(Scope& body, std::vector<Out>& outs, const std::string& index, int level, bool nest);
  void arrange_statements(std::vector<Stmt>& stmts, const std::vector<Seq>& seqs, const std::string& index,
                          const std::string& until);
  Val varying_value(const std::string& index);
  Seq make_sequence(Scope& outer, int level, bool fresh_sources_only);
  std::string make_init(Scope& outer, const Out& o, double* bound);
  std::string state_update(Scope& body, const Out& o, const std::string& index, double* bound);
  std::string gen_until(Scope& body, const std::vector<Out>& outs, const std::string& index);
  void bind_scan(std::vector<Stmt>& stmts, ScanText st, int level, std::vector<Val>* uses);
  void bind_inline(std::vector<Stmt>& stmts, const ScanText& st, Stmt::Kind kind, std::vector<Val>* uses);
  void result_uses(const ScanText& st, const Out& o, std::vector<Val>* uses);

  // ---- arguments
  HostTensor make_argument(const Param& p);

  Rng rng_;
  GeneratorOptions opt_;
  int counter_ = 0;
  std::map<std::string, int64_t> sizes_;    // dimension -> size, when known
  std::map<std::string, int64_t> static_sizes_;  // unknown dimension -> size known at compile time
  std::map<std::string, int64_t> min_sizes_;  // unknown dimension -> its least size at every step
  // Unknown dimensions whose size changes from step to step of the scan that computes them
  // (arange(t + 1), an inner until scan's results): an inner scan over a sequence of such a length
  // takes a number of steps that changes too.
  std::set<std::string> varying_dims_;
  std::vector<std::string> feature_dims_;   // n0, n1, ...
  std::vector<std::string> length_dims_;    // L0, L1, ...
  std::map<std::string, std::string> len_expr_;  // symbol -> "len(p3)"
  std::vector<Param> params_;
  Scope func_;
};


// `src[t + k]` without its closing bracket (a tap read may carry more indices: `u[t - 1, 0]`).
inline std::string tap_text(const std::string& src, const std::string& index, int k) {
  std::string base = src + "[" + index;
  if (k > 0) return base + " + " + std::to_string(k);
  if (k < 0) return base + " - " + std::to_string(-k);
  return base;
}

inline std::vector<std::string> indent(const std::vector<std::string>& lines) {
  std::vector<std::string> r;
  for (const std::string& l : lines) r.push_back("    " + l);
  return r;
}

}  // namespace scangen::equivalence::generator
