// The random program generator (generator.h): one scan: its sequences, options, states and
// outputs, its body (lets, definitions, nested scans) and its until.
#include "generator.h"

namespace scangen::equivalence::generator {

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
      // arange over a length (of a step value of an enclosing scan too: its size is the same at
      // every step, or changes from step to step when it is of varying size): i64, or a float.
      std::string n = rng_.chance(0.8) ? "len(" + base.text + ")" : std::to_string(rng_.uniform(0, opt_.max_steps));
      std::string text = "arange(" + n + ")";
      DType dt = DType::I64;
      if (rng_.chance(0.3)) dt = rng_.chance(0.5) ? DType::F32 : DType::F64, text = dt_name(dt) + "(" + text + ")";
      int64_t len = n.rfind("len(", 0) == 0 ? size_of(base.dims[0]) : std::stoll(n);
      src = Val{text, dt, {unknown_dim(len)}, false, double(opt_.max_steps + 4), false};
      if (n.rfind("len(", 0) == 0 && varying_dims_.count(base.dims[0])) varying_dims_.insert(src.dims[0]);
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
  s.dim = src.dims[0];
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

std::string Generator::make_init(Scope& outer, const Out& o, double* bound) {
  int rows = o.lags.empty() ? 1 : o.lags.back();
  Dims d = rows > 1 ? prepend(std::to_string(rows), o.dims) : o.dims;
  if (o.dt == DType::Bool) {
    *bound = 1;
    if (d.empty() && rng_.chance(0.5)) return rng_.chance(0.7) ? "false" : "true";
    bool wd = false;
    return gen_bool(outer, d, 1, true, &wd);
  }
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
      // Not from a state with a bare literal init (see state_update): an inner state's init read
      // by the enclosing scan would take that state's literal for an integer (seed 38 as clang
      // builds the generator: `init x25 = f32(...) * x21[t-1]` with `init x21 = 0`).
      Val v = gen(outer, o.dt, d, int(rng_.uniform(0, 2)), /*no_weakdep=*/true);
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
  if (o.dt == DType::Bool) {
    bool wd = false;
    e = gen_bool(body, o.dims, depth, false, &wd);
    static const std::vector<std::string> ops = {" || ", " && ", " != ", " == "};
    for (int k : o.lags) {
      std::string read = o.name + "[" + index + " - " + std::to_string(k) + "]";
      const std::string& op = rng_.pick(ops);
      e = "(" + (rng_.chance(0.5) ? read + op + e : e + op + read) + ")";
    }
    *bound = 1;
    return e;
  }
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
    // Not from a state with a bare literal init either: while the frontend learns that state's
    // dtype it takes the literal for an integer, and `sqrt` of it for f64, so that this state
    // would be f64 at each step in the first pass though its init is f32 (README.md).
    Val s = gen(body, o.dt, o.dims, depth, /*no_weakdep=*/true);
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
  std::vector<const Out*> scalars, ranked, flags;
  for (const Out& o : outs)
    if (o.dt == DType::Bool) {
      if (o.dims.empty()) flags.push_back(&o);
    } else {
      (o.dims.empty() ? scalars : ranked).push_back(&o);
    }
  auto cmp = [&](const std::string& x, DType dt) {
    int64_t c = rng_.uniform(-2, 3);
    std::string cs = c < 0 ? "(" + std::to_string(c) + ")" : std::to_string(c);
    if (is_float(dt) && rng_.chance(0.3)) cs = std::to_string(c) + ".5";
    // A bound that is never reached, now and then.
    if (rng_.chance(0.1)) cs = "1000";
    return x + (rng_.chance(0.5) ? " > " : " < ") + cs;
  };
  std::string c;
  int form = rng_.weighted({scalars.empty() ? 0.0 : 50.0, ranked.empty() ? 0.0 : 25.0, 15, 10, flags.empty() ? 0.0 : 60.0});
  switch (form) {
    case 4: {
      // A bare read of a bool state (its past steps or this step), sometimes negated.
      const Out* o = rng_.pick(flags);
      std::vector<std::string> reads = {o->name + "[" + index + "]"};
      for (int k : o->lags) reads.push_back(o->name + "[" + index + " - " + std::to_string(k) + "]");
      c = rng_.pick(reads);
      if (rng_.chance(0.2)) c = "!" + c;
      break;
    }
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

// A step value whose size changes from step to step: arange(t + c), as i64 or a float.
Val Generator::varying_value(const std::string& index) {
  int64_t c = rng_.uniform(0, 2);
  std::string n = index + (c ? " + " + std::to_string(c) : "");
  Val v{"arange(" + n + ")", DType::I64, {unknown_dim()}, false, double(2 * (opt_.max_steps + 4)), false};
  varying_dims_.insert(v.dims[0]);
  if (c > 0) min_sizes_[v.dims[0]] = c;
  switch (rng_.weighted({40, 40, 20})) {
    case 0: break;
    case 1: v.dt = DType::F32, v.text = "f32(" + v.text + ")"; break;
    default: v.dt = DType::F64, v.text = "(f64(" + v.text + ") * 0.5)"; break;
  }
  return v;
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

  std::vector<Seq> seqs;
  int nseq = rng_.weighted({15, 45, 30, 10});
  for (int i = 0; i < nseq; ++i) {
    Seq s = make_sequence(pre, level, shadowing);
    bool dup = false;
    for (const Seq& o : seqs) dup = dup || o.src == s.src;
    if (!dup) seqs.push_back(s);
  }
  int64_t static_steps = -1;
  std::vector<std::string> options = scan_options(pre, level, index, seqs, &st, &static_steps);
  std::vector<Out> outs = scan_outputs(pre);
  Scope body = body_scope(outer, index, level, seqs, outs);
  std::vector<Stmt> stmts = scan_statements(body, outs, index, level, nest);

  // until, now and then.
  std::string until;
  if (rng_.chance(0.28)) {
    st.has_until = true;
    until = gen_until(body, outs, index);
  }
  arrange_statements(stmts, seqs, index, until);

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
  for (const Seq& s : seqs) st.varying_steps = st.varying_steps || varying_dims_.count(s.dim);
  if (level > 1 && (st.has_until || st.varying_steps)) varying_dims_.insert(st.steps_token);
  // An until scan stops after at least one step when it has any.
  if (st.varying_steps && st.least_steps > 0) min_sizes_[st.steps_token] = st.has_until ? 1 : st.least_steps;
  return st;
}

// The scan's options: `steps` (sometimes), `reverse`, `index`, `truncate_gradient`, shuffled. Sets
// st->steps (the number of steps when known), the varying steps of `steps = t + c`, and
// *static_steps (the number of steps when the frontend knows it, else -1).
std::vector<std::string> Generator::scan_options(Scope& pre, int level, const std::string& index,
                                                 const std::vector<Seq>& seqs, ScanText* st, int64_t* static_steps_out) {
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
  st->steps = seqs.empty() ? -1 : allowed;
  if (seqs.empty() || rng_.chance(0.25)) {
    int64_t limit = seqs.empty() ? opt_.max_steps : (allowed >= 0 ? allowed : opt_.max_steps);
    int64_t value = rng_.uniform(0, std::max<int64_t>(0, limit));
    if (rng_.chance(0.06)) value = limit + 1, limit = opt_.max_steps;  // more than the sequences allow: an error
    if (rng_.chance(0.02)) value = -1;                                  // an error too
    std::vector<Val> ranked;
    for (const Val& v : visible(pre))
      if (!v.dims.empty() && size_of(v.dims[0]) >= 0 && size_of(v.dims[0]) <= limit && !v.weakdep)
        ranked.push_back(v);  // `steps = len(v)`, v a step value of an enclosing scan too
    // A nested scan without sequences may run `t + c` steps (t the enclosing scan's index): its
    // results then have a length that changes from step to step.
    const bool can_vary = seqs.empty() && level > 1 && !pre.index.empty();
    switch (rng_.weighted({60, 20, ranked.empty() ? 0.0 : 20.0, can_vary ? 30.0 : 0.0})) {
      case 3: {
        int64_t c = rng_.uniform(0, 2);
        options.push_back("steps = " + pre.index + (c ? " + " + std::to_string(c) : ""));
        st->varying_steps = true;
        st->least_steps = c;
        static_steps = -1;
        value = -1;
        break;
      }
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
    st->steps = value;
  }
  bool reverse = rng_.chance(0.25);
  if (reverse) options.push_back(rng_.chance(0.8) ? "reverse" : "reverse = true");
  else if (rng_.chance(0.04)) options.push_back("reverse = false");
  if (index != "t" || rng_.chance(0.05)) options.push_back("index = " + index);
  if (rng_.chance(0.04)) options.push_back("truncate_gradient = " + std::string(rng_.chance(0.5) ? "-1" : "3"));
  rng_.shuffle(options);

  *static_steps_out = static_steps;
  return options;
}

// The scan's states (with their inits, evaluated in `pre`) and per-step outputs.
std::vector<Out> Generator::scan_outputs(Scope& pre) {
  std::vector<Out> outs;
  int nstates = rng_.weighted({25, 40, 25, 10});
  int nouts = rng_.weighted({30, 45, 25});
  if (nstates + nouts == 0) nouts = 1;
  for (int i = 0; i < nstates; ++i) {
    Out o;
    o.state = true;
    o.name = fresh("x");
    // Now and then a bool state (until may read it bare: `until a[t-1]`).
    o.dt = rng_.chance(0.1) ? DType::Bool : random_dtype();
    o.dims = o.dt == DType::Bool && rng_.chance(0.75) ? Dims{} : random_step_dims();
    if (!rng_.chance(0.08)) {
      int L = rng_.weighted({55, 25, 20}) + 1;
      for (int k = 1; k <= L; ++k)
        if (k == L || rng_.chance(0.5)) o.lags.push_back(k);
    }
    o.weak_init = o.dt != DType::Bool && o.dims.empty() && o.lags.size() == 1 && o.lags[0] == 1 && rng_.chance(0.3);
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

  return outs;
}

// The body's scope: the index, the sequences' taps, the states' past steps.
Scope Generator::body_scope(Scope& outer, const std::string& index, int level, const std::vector<Seq>& seqs,
                            std::vector<Out>& outs) {
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
      add(body, Val{o.name + "[" + index + " - " + std::to_string(k) + "]", o.dt, o.dims, false, std::max(o.bound, 20.0),
                    o.weak_init});

  return body;
}

// The definitions, in a random order that respects their dependencies: inits, lets (some of a
// size that changes from step to step), states' and outputs' step values, and a nested scan.
std::vector<Stmt> Generator::scan_statements(Scope& body, std::vector<Out>& outs, const std::string& index, int level,
                                             bool nest) {
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
    if (slot == 'L' && rng_.chance(0.15)) {
      Val v = varying_value(index);
      std::string name = fresh("r");
      stmts.push_back(Stmt{{"let " + name + " = " + v.text}, Stmt::Let});
      v.text = name;
      body.vals.push_back(v);
    } else if (slot == 'L' && rng_.chance(0.15) && gen_top_k(body, depth, false, stmts)) {
      // let (v, i) = top_k(...) of a step value or an outside one.
    } else if (slot == 'L') {
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
      o.weakdep = wd;
      stmts.push_back(Stmt{{o.name + "[" + index + "] = " + text}, Stmt::Def});
      add(body, Val{o.name + "[" + index + "]", o.dt, o.dims, false, o.bound, wd});
    } else {
      // A nested scan: bound in a let (or used inline), or its whole result as an output of this
      // scan (only without until, so that its number of steps does not change from step to step).
      ScanText inner = gen_scan(body, level + 1);
      if (inner.has_until || inner.varying_steps || inner.outs.size() != 1 || !rng_.chance(0.3)) {
        std::vector<Val> uses;
        bind_scan(stmts, inner, level + 1, &uses);
        for (Val& u : uses) add(body, u);
      } else {
        Out o;
        o.name = fresh("y");
        o.dt = inner.outs[0].dt;
        o.dims = prepend(inner.steps_token, inner.outs[0].dims);
        o.bound = inner.outs[0].bound;
        o.whole_inner = true;
        o.weakdep = inner.outs[0].weakdep;
        std::vector<std::string> lines = inner.lines;
        lines[0] = o.name + "[" + index + "] = " + lines[0];
        stmts.push_back(Stmt{lines, Stmt::Nested});
        add(body, Val{o.name + "[" + index + "]", o.dt, o.dims, false, o.bound, o.weakdep});
        outs.push_back(o);
      }
    }
  }

  return stmts;
}

// Every tap written in the body, then any textual order, then until.
void Generator::arrange_statements(std::vector<Stmt>& stmts, const std::vector<Seq>& seqs, const std::string& index,
                                   const std::string& until) {
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

}

}  // namespace scangen::equivalence::generator
