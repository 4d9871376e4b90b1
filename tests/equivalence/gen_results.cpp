// The random program generator (generator.h): a scan's results bound in a let (or used inline)
// and the values made from them: rows, sums, reductions along an axis.
#include "generator.h"

namespace scangen::equivalence::generator {

// Binds a scan's results (in a function or an enclosing body) and returns in `uses` the
// values made from them (the results, their last rows, sums, ...).
void Generator::bind_scan(std::vector<Stmt>& stmts, ScanText st, int level, std::vector<Val>* uses) {
  Stmt::Kind kind = level > 1 ? Stmt::Nested : Stmt::Let;
  if (st.outs.size() == 1 && st.outs[0].dt != DType::Bool && rng_.chance(0.2)) {
    bind_inline(stmts, st, kind, uses);
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
    size_t first = uses->size();
    result_uses(st, o, uses);
    for (size_t i = first; i < uses->size(); ++i) (*uses)[i].weakdep = level > 1 && o.weakdep;
  }
}

// A scan with one output used inline: sum(scan {...}), mean(...), sum(..., axis = 0).
void Generator::bind_inline(std::vector<Stmt>& stmts, const ScanText& st, Stmt::Kind kind, std::vector<Val>* uses) {
  const Out& o = st.outs[0];
  std::string name = fresh(kind == Stmt::Nested ? "g" : "v");
  std::vector<std::string> lines = st.lines;
  double n = double(opt_.max_steps + 4);
  Val v;
  int form = rng_.weighted({50, is_float(o.dt) ? 25.0 : 0.0, o.dims.empty() ? 0.0 : 25.0});
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
  v.weakdep = kind == Stmt::Nested && o.weakdep;
  uses->push_back(bounded(v));
}

// The values made from one bound result `o` of `st`: the result itself and now and then a row, a
// sum, a reduction along an axis. The result of a nested scan with until or `steps = t + c` has
// a number of rows that changes from step to step; it is indexed and reduced all the same.
void Generator::result_uses(const ScanText& st, const Out& o, std::vector<Val>* uses) {
  Val r{o.name, o.dt, prepend(st.steps_token, o.dims), false, o.bound, false};
  uses->push_back(r);
  int64_t n = static_size(st.steps_token);
  const bool flag = o.dt == DType::Bool;  // no arithmetic, no reductions
  const double rows = size_bound(st.steps_token);
  switch (rng_.weighted({25, 10, 6, flag ? 0.0 : 14.0, flag ? 0.0 : 10.0, flag ? 0.0 : 10.0, flag ? 0.0 : 12.0, 25})) {
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
      double b = o.bound * rows;
      for (const std::string& d : o.dims) b *= size_bound(d);
      if (is_float(o.dt) && rng_.chance(0.2)) uses->push_back(Val{"mean(" + o.name + ")", o.dt, {}, false, o.bound, false});
      else uses->push_back(bounded(Val{"sum(" + o.name + ")", o.dt, {}, false, b, false}));
      break;
    }
    case 4: uses->push_back(bounded(Val{"sum(" + o.name + ", axis = 0)", o.dt, o.dims, false, o.bound * rows, false})); break;
    case 5: {
      static const std::vector<std::string> ops = {"mean", "max", "min"};
      std::string op = rng_.pick(ops);
      if (op == "mean" && !is_float(o.dt)) op = "max";
      uses->push_back(Val{op + "(" + o.name + ", axis = 0)", o.dt, o.dims, false, o.bound, false});
      break;
    }
    case 6: {
      // Along another axis than the steps' (the result keeps its rows): [?, a, b] -> [?, b].
      if (o.dims.empty()) break;
      int axis = int(rng_.uniform(1, int64_t(o.dims.size())));
      Dims d = r.dims;
      d.erase(d.begin() + axis);
      std::string op = rng_.chance(0.6) ? "sum" : rng_.chance(0.5) ? "max" : "min";
      int shown = rng_.chance(0.3) ? axis - int(r.dims.size()) : axis;
      double b = op == "sum" ? o.bound * size_bound(r.dims[size_t(axis)]) : o.bound;
      uses->push_back(bounded(Val{op + "(" + o.name + ", axis = " + std::to_string(shown) + ")", o.dt, d, false, b, false}));
      break;
    }
    default: break;  // the whole result only
  }
}

}  // namespace scangen::equivalence::generator
