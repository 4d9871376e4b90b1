// The random program generator (generator.h): the function: lets, scans and what is returned,
// and its text with the signature.
#include "generator.h"

#include <sstream>

namespace scangen::equivalence::generator {

namespace {

std::string type_text(DType dt, const Dims& dims, const std::vector<bool>& hidden = {}) {
  std::string s = dt_name(dt);
  if (dims.empty()) return s;
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    bool unknown = is_unknown(dims[i]) || (i < hidden.size() && hidden[i]);
    s += (i ? ", " : "") + (unknown ? std::string("?") : dims[i]);
  }
  return s + "]";
}

// A symbol must appear in some argument's type: a symbol of a result type that every parameter
// declares `?` is shown again where it first appears.
void show_result_symbols(std::vector<Param>& params, const std::vector<Val>& returns) {
  std::set<std::string> shown;
  for (const Param& p : params)
    for (size_t i = 0; i < p.dims.size(); ++i)
      if (!p.hidden[i]) shown.insert(p.dims[i]);
  for (const Val& r : returns)
    for (const std::string& d : r.dims) {
      if (is_unknown(d) || is_literal_dim(d) || shown.count(d)) continue;
      for (Param& p : params)
        for (size_t i = 0; i < p.dims.size() && !shown.count(d); ++i)
          if (p.dims[i] == d) p.hidden[i] = false, shown.insert(d);
    }
}

}  // namespace

RandomProgram Generator::run(uint64_t seed) {
  RandomProgram prog;
  prog.fn = opt_.fn_name.empty() ? "prog" + std::to_string(seed) : opt_.fn_name;
  std::vector<Stmt> stmts;
  std::vector<Val> returns, last_uses;

  // Lets before the scans.
  for (int i = rng_.weighted({60, 30, 10}); i > 0; --i) {
    if (rng_.chance(0.15) && gen_top_k(func_, 2, false, stmts)) continue;
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
      add(func_, u);
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
  show_result_symbols(params_, returns);
  std::ostringstream os;
  os << "fn " << prog.fn << "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    os << (i ? ", " : "") << params_[i].name << ": " << type_text(params_[i].dt, params_[i].dims, params_[i].hidden);
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

}  // namespace scangen::equivalence::generator

namespace scangen::equivalence {

RandomProgram generate_program(uint64_t seed, const GeneratorOptions& options) {
  generator::Generator g(seed, options);
  return g.run(seed);
}

}  // namespace scangen::equivalence
