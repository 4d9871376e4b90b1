// Semantic analysis, part 4: scans.
//
// A scan is analyzed in four steps:
//  1. its statements are collected: inits, step definitions X[t] = E, lets, until;
//  2. its body's text is walked to classify every read at the loop index (`E[t + k]`): an output
//     of the scan (a state tap or the current step), or a *sequence* when E is written only with
//     names from outside the scan. Taps come from the text, so every such read counts;
//  3. sequences, inits and `steps` are analyzed in the enclosing scope;
//  4. the body is analyzed in a region of its own (definitions on demand, so that Y[t] may be read
//     in any order), and the values it uses from outside become the scan's parameters (closure
//     conversion) when the scan node is built.
// A state with a bare literal init (`init s = 0`) takes the dtype of its step value: the body is
// analyzed once silently to learn it, then for real.
#include <algorithm>
#include <climits>
#include <sstream>

#include "frontend/sema_internal.h"
#include "ir/analysis.h"
#include "ir/mutator.h"
#include "support/check.h"

namespace scangen::sema {

using ir::Dim;
using ir::Value;

const TapRead* Analyzer::tap_read_of(const ast::Expr& e) const {
  auto it = tap_reads.find(&e);
  if (it == tap_reads.end()) return nullptr;
  for (ScanFrame* f : frames)
    if (f->serial == it->second.frame_serial) return &it->second;
  return nullptr;
}

namespace {

// Step 2: classifies reads at the loop index in the body's text.
class TapWalker {
 public:
  TapWalker(Analyzer& a, ScanFrame& f, Scope& enclosing) : a_(a), f_(f), enclosing_(enclosing) {
    for (const auto& l : f.lets)
      for (const auto& n : l.stmt->names) own_locals_.insert(n.name);
  }

  void walk_body() {
    for (const auto& s : f_.syntax->body) walk_stmt(*s);
  }

 private:
  enum class Ref { ThisIndex, ThisOutput, Inside, Outside };

  Ref resolve(const std::string& n) const {
    for (auto it = nested_.rbegin(); it != nested_.rend(); ++it)
      if (it->count(n)) return Ref::Inside;
    if (n == f_.index_name) return Ref::ThisIndex;
    for (const auto& o : f_.outputs)
      if (o.name == n) return Ref::ThisOutput;
    if (own_locals_.count(n)) return Ref::Inside;
    return Ref::Outside;
  }

  int output_slot(const std::string& n) const {
    for (size_t i = 0; i < f_.outputs.size(); ++i)
      if (f_.outputs[i].name == n) return int(i);
    return -1;
  }

  // Written only with names from outside the scan (and no scan of its own).
  bool is_outside(const ast::Expr& e) const {
    switch (e.kind) {
      case ast::ExprKind::IntLit:
      case ast::ExprKind::FloatLit:
      case ast::ExprKind::BoolLit:
      case ast::ExprKind::DTypeName: return true;
      case ast::ExprKind::Name: return resolve(ast::as<ast::Name>(e).name) == Ref::Outside;
      case ast::ExprKind::Scan: return false;
      case ast::ExprKind::Unary: return is_outside(*ast::as<ast::Unary>(e).operand);
      case ast::ExprKind::Binary: {
        const auto& b = ast::as<ast::Binary>(e);
        return is_outside(*b.lhs) && is_outside(*b.rhs);
      }
      case ast::ExprKind::Ternary: {
        const auto& t = ast::as<ast::Ternary>(e);
        return is_outside(*t.cond) && is_outside(*t.then_expr) && is_outside(*t.else_expr);
      }
      case ast::ExprKind::Call: {
        const auto& c = ast::as<ast::Call>(e);
        for (const auto& x : c.args)
          if (!is_outside(*x)) return false;
        for (const auto& kw : c.kwargs)
          if (!is_outside(*kw.value)) return false;
        return true;
      }
      case ast::ExprKind::Index: {
        const auto& i = ast::as<ast::Index>(e);
        if (!is_outside(*i.base)) return false;
        for (const auto& it : i.items)
          for (const ast::ExprPtr* x : {&it.index, &it.lo, &it.hi})
            if (*x && !is_outside(**x)) return false;
        return true;
      }
      case ast::ExprKind::Tuple: {
        for (const auto& x : ast::as<ast::Tuple>(e).elements)
          if (!is_outside(*x)) return false;
        return true;
      }
    }
    return false;
  }

  // k when e is `t`, `t + k` or `t - k` with this scan's index t and an integer literal k.
  std::optional<int64_t> tap_offset(const ast::Expr& e) const {
    if (e.kind == ast::ExprKind::Name)
      return resolve(ast::as<ast::Name>(e).name) == Ref::ThisIndex ? std::optional<int64_t>(0) : std::nullopt;
    if (e.kind != ast::ExprKind::Binary) return std::nullopt;
    const auto& b = ast::as<ast::Binary>(e);
    if (b.op != ast::BinaryOp::Add && b.op != ast::BinaryOp::Sub) return std::nullopt;
    if (b.lhs->kind != ast::ExprKind::Name || b.rhs->kind != ast::ExprKind::IntLit) return std::nullopt;
    if (resolve(ast::as<ast::Name>(*b.lhs).name) != Ref::ThisIndex) return std::nullopt;
    int64_t k = ast::as<ast::IntLit>(*b.rhs).value;
    return b.op == ast::BinaryOp::Add ? k : -k;
  }

  // The expression with every name replaced by its binding's identity: two sequences written the
  // same (naming the same things) have the same key.
  std::string key(const ast::Expr& e) const {
    std::ostringstream os;
    write_key(os, e);
    return os.str();
  }
  void write_key(std::ostream& os, const ast::Expr& e) const {
    switch (e.kind) {
      case ast::ExprKind::Name: {
        const std::string& n = ast::as<ast::Name>(e).name;
        Binding* b = enclosing_.find(n);
        os << (b ? "#" + std::to_string(b->id) : "?" + n);
        return;
      }
      case ast::ExprKind::Unary: {
        const auto& u = ast::as<ast::Unary>(e);
        os << "(" << ast::unary_op_spelling(u.op);
        write_key(os, *u.operand);
        os << ")";
        return;
      }
      case ast::ExprKind::Binary: {
        const auto& b = ast::as<ast::Binary>(e);
        os << "(";
        write_key(os, *b.lhs);
        os << ast::binary_op_spelling(b.op);
        write_key(os, *b.rhs);
        os << ")";
        return;
      }
      case ast::ExprKind::Ternary: {
        const auto& t = ast::as<ast::Ternary>(e);
        os << "(";
        write_key(os, *t.cond);
        os << "?";
        write_key(os, *t.then_expr);
        os << ":";
        write_key(os, *t.else_expr);
        os << ")";
        return;
      }
      case ast::ExprKind::Call: {
        const auto& c = ast::as<ast::Call>(e);
        os << c.callee << "(";
        for (const auto& x : c.args) {
          write_key(os, *x);
          os << ",";
        }
        for (const auto& kw : c.kwargs) {
          os << kw.name << "=";
          write_key(os, *kw.value);
          os << ",";
        }
        os << ")";
        return;
      }
      case ast::ExprKind::Index: {
        const auto& i = ast::as<ast::Index>(e);
        write_key(os, *i.base);
        os << "[";
        for (const auto& it : i.items) {
          if (it.index) write_key(os, *it.index);
          if (it.is_slice) {
            if (it.lo) write_key(os, *it.lo);
            os << ":";
            if (it.hi) write_key(os, *it.hi);
          }
          os << ",";
        }
        os << "]";
        return;
      }
      default: os << ast::to_source(e); return;
    }
  }

  void mark(const ast::Expr& e, TapRead::Kind kind, int slot, int64_t k) {
    TapRead r;
    r.frame = &f_;
    r.frame_serial = f_.serial;
    r.kind = kind;
    r.slot = slot;
    r.k = k;
    a_.tap_reads[&e] = r;
  }

  void walk_items(const ast::Index& i, size_t first) {
    for (size_t n = first; n < i.items.size(); ++n)
      for (const ast::ExprPtr* x : {&i.items[n].index, &i.items[n].lo, &i.items[n].hi})
        if (*x) walk(**x);
  }

  // `sequences` is false for the position argument of set/inc, which names where to write in a
  // value and never makes it a sequence; an output's tap there is still a tap (`set(h[t-1, j], v)`
  // updates h[t-1]: a bare output is no value).
  void walk_index(const ast::Index& i, bool sequences) {
    if (!i.items.empty() && !i.items[0].is_slice) {
      if (auto k = tap_offset(*i.items[0].index)) {
        if (i.base->kind == ast::ExprKind::Name && resolve(ast::as<ast::Name>(*i.base).name) == Ref::ThisOutput) {
          int slot = output_slot(ast::as<ast::Name>(*i.base).name);
          mark(i, TapRead::Kind::Output, slot, *k);
          if (*k < 0) f_.outputs[size_t(slot)].lags.insert(-*k);
          walk_items(i, 1);
          return;
        }
        if (sequences && is_outside(*i.base)) {
          std::string k_text = key(*i.base);
          int slot = -1;
          for (size_t s = 0; s < f_.sequences.size(); ++s)
            if (f_.sequences[s].key == k_text) slot = int(s);
          if (slot < 0) {
            ScanFrame::Sequence seq;
            seq.key = k_text;
            seq.base = i.base.get();
            seq.label = ast::to_source(*i.base);
            f_.sequences.push_back(std::move(seq));
            slot = int(f_.sequences.size()) - 1;
          }
          f_.sequences[size_t(slot)].taps.insert(*k);
          mark(i, TapRead::Kind::Sequence, slot, *k);
          walk_items(i, 1);
          return;
        }
      }
    }
    walk(*i.base);
    walk_items(i, 0);
  }

  void walk(const ast::Expr& e) {
    switch (e.kind) {
      case ast::ExprKind::Index: walk_index(ast::as<ast::Index>(e), true); return;
      case ast::ExprKind::Unary: walk(*ast::as<ast::Unary>(e).operand); return;
      case ast::ExprKind::Binary:
        walk(*ast::as<ast::Binary>(e).lhs);
        walk(*ast::as<ast::Binary>(e).rhs);
        return;
      case ast::ExprKind::Ternary: {
        const auto& t = ast::as<ast::Ternary>(e);
        walk(*t.cond);
        walk(*t.then_expr);
        walk(*t.else_expr);
        return;
      }
      case ast::ExprKind::Call: {
        const auto& c = ast::as<ast::Call>(e);
        for (size_t i = 0; i < c.args.size(); ++i) {
          // The position argument of set/inc names where to write; it never makes a sequence.
          if (i == 0 && (c.callee == "set" || c.callee == "inc") && !c.cast_to &&
              c.args[0]->kind == ast::ExprKind::Index) {
            walk_index(ast::as<ast::Index>(*c.args[0]), false);
            continue;
          }
          walk(*c.args[i]);
        }
        for (const auto& kw : c.kwargs) walk(*kw.value);
        return;
      }
      case ast::ExprKind::Tuple:
        for (const auto& x : ast::as<ast::Tuple>(e).elements) walk(*x);
        return;
      case ast::ExprKind::Scan: walk_scan(ast::as<ast::Scan>(e)); return;
      default: return;
    }
  }

  void walk_stmt(const ast::Stmt& s) {
    switch (s.kind) {
      case ast::StmtKind::Let: walk(*ast::as<ast::Let>(s).value); return;
      case ast::StmtKind::Return:
        for (const auto& v : ast::as<ast::Return>(s).values) walk(*v);
        return;
      case ast::StmtKind::Init: walk(*ast::as<ast::Init>(s).value); return;
      case ast::StmtKind::StepDef: walk(*ast::as<ast::StepDef>(s).value); return;
      case ast::StmtKind::Until: walk(*ast::as<ast::Until>(s).cond); return;
    }
  }

  // A nested scan: its options and inits belong to this body; its own body sees its names.
  void walk_scan(const ast::Scan& s) {
    std::set<std::string> names{"t"};
    for (const auto& opt : s.options) {
      if (opt.value) walk(*opt.value);
      if (opt.name == "index" && opt.value && opt.value->kind == ast::ExprKind::Name) {
        names.erase("t");
        names.insert(ast::as<ast::Name>(*opt.value).name);
      }
    }
    for (const auto& st : s.body) {
      if (st->kind == ast::StmtKind::Init) {
        walk(*ast::as<ast::Init>(*st).value);
        names.insert(ast::as<ast::Init>(*st).name.name);
      } else if (st->kind == ast::StmtKind::Let) {
        for (const auto& n : ast::as<ast::Let>(*st).names) names.insert(n.name);
      } else if (st->kind == ast::StmtKind::StepDef) {
        names.insert(ast::as<ast::StepDef>(*st).target.name);
      }
    }
    nested_.push_back(std::move(names));
    for (const auto& st : s.body)
      if (st->kind != ast::StmtKind::Init) walk_stmt(*st);
    nested_.pop_back();
  }

  Analyzer& a_;
  ScanFrame& f_;
  Scope& enclosing_;
  std::set<std::string> own_locals_;
  std::vector<std::set<std::string>> nested_;
};

DType weak_default_dtype(const SValue& v) { return is_float(v.dtype()) ? DType::F32 : DType::I64; }

}  // namespace

// ---- reads of outputs and lets inside a body

void Analyzer::ensure_output(ScanFrame& f, int o) {
  ScanFrame::Output& out = f.outputs[size_t(o)];
  if (out.progress == Progress::Done) return;
  if (out.progress == Progress::InProgress) {
    out.step_value = SValue::invalid();
    return;  // the reader reports the cycle
  }
  out.progress = Progress::InProgress;
  RegionGuard region(*this, f.region);
  f.position_stack.push_back(out.stmt);
  SValue v = single(expr(*out.def->value, f.body_scope), out.def->value->loc);
  f.position_stack.pop_back();
  Loc loc = out.def->value->loc;
  if (v.ok()) {
    if (out.is_state()) {
      bool learning = f.dry_run && out.weak_init;
      DType state_dtype = out.step_type.dtype;
      if (v.weak && learning) {
        // Both literals: the silent pass learns the state's dtype from them (see scan()).
      } else if (v.weak &&
                 (state_dtype == DType::Bool || (is_float(v.dtype()) && is_int(state_dtype)))) {
        auto& d =
            diags_.report(DiagId::err_downcast, loc, "the step value of state '" + out.name + "'",
                          type_words(v), dtype_name(state_dtype));
        diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
        v = SValue::invalid();
      } else if (v.weak) {
        v = materialize(v, state_dtype, loc);
      } else if (learning) {
        // The silent pass learns the state's dtype from a strong step value.
      } else if (v.dtype() != out.step_type.dtype) {
        auto& d = diags_.report(DiagId::err_state_type_mismatch, loc, out.name, v.type().str(), out.step_type.str());
        diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
        v = SValue::invalid();
      }
      if (v.ok() && !learning) {
        const ir::Type& want = out.step_type;
        bool bad = v.type().rank() != want.rank();
        bool need_check = false;
        for (size_t i = 0; !bad && i < want.shape.size(); ++i) {
          if (v.type().shape[i].same_as(want.shape[i])) continue;
          if (v.type().shape[i].provably_different(want.shape[i])) bad = true;
          need_check = true;
        }
        if (bad) {
          auto& d = diags_.report(DiagId::err_state_type_mismatch, loc, out.name, v.type().str(), want.str());
          diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
          v = SValue::invalid();
        } else if (need_check) {
          // The step value must have the init's shape; checked at run time against the init.
          std::vector<ir::DimCheck> checks(want.shape.size());
          std::vector<Value> operands;
          int offset = out.init_value.type().rank() - want.rank();
          for (size_t i = 0; i < want.shape.size(); ++i) {
            if (v.type().shape[i].same_as(want.shape[i])) continue;
            operands.push_back(dim_value(out.init_value.value, int(i) + offset, loc));
            checks[i] = {ir::DimCheck::Kind::Operand, int64_t(operands.size()), ""};
          }
          v = SValue::tensor(builder_.check_shape(v.value, std::move(checks), std::move(operands),
                                                  "the step value of state '" + out.name + "'", want.shape, loc),
                             v.loc);
        }
      }
    } else if (v.weak) {
      v = materialize(v, weak_default_dtype(v), loc);
    }
  }
  out.step_value = v;
  out.progress = Progress::Done;
}

void Analyzer::report_cycle(ScanFrame& f, const std::string& name, Loc loc) {
  auto& d = diags_.report(DiagId::err_step_cycle, loc, name);
  // The reads since `name`'s definition began: its own read, unless it is where analysis started.
  size_t first = 0;
  for (size_t i = f.reads.size(); i-- > 0;)
    if (f.reads[i].first == name) {
      first = i + 1;
      break;
    }
  for (size_t i = first; i < f.reads.size(); ++i)
    diags_.note(d, DiagId::note_cycle_through, f.reads[i].second, f.reads[i].first);
}

SValue Analyzer::output_read(ScanFrame& f, int o, int64_t k, const ast::Expr& at, Loc loc) {
  ScanFrame::Output& out = f.outputs[size_t(o)];
  (void)at;
  if (k > 0) {
    diags_.report(DiagId::err_future_read, loc, out.name, f.index_name, k);
    return SValue::invalid();
  }
  if (k < 0) {
    if (!out.is_state()) {
      diags_.report(DiagId::err_output_lag_without_init, loc, out.name, f.index_name, -k);
      return SValue::invalid();
    }
    auto it = out.lags.find(-k);
    SCANGEN_CHECK(it != out.lags.end(), "a lag read that the walk did not see");
    SValue v = SValue::tensor(out.lag_params.at(size_t(std::distance(out.lags.begin(), it))), loc);
    if (f.dry_run && out.weak_init) {
      v.weak = true;
      Value p = v.value;
      v.remake = [this, p, loc](DType d) { return d == p.type().dtype ? p : builder_.cast(p, d, loc); };
    }
    return v;
  }
  if (out.progress == Progress::InProgress) {
    report_cycle(f, out.name, loc);
    return SValue::invalid();
  }
  f.reads.emplace_back(out.name, loc);
  ensure_output(f, o);
  f.reads.pop_back();
  SValue v = out.step_value;
  v.loc = loc;
  return v;
}

void Analyzer::ensure_let(ScanFrame& f, int j) {
  ScanFrame::LetInfo& let = f.lets[size_t(j)];
  if (let.progress != Progress::NotStarted) return;
  let.progress = Progress::InProgress;
  RegionGuard region(*this, f.region);
  f.position_stack.push_back(let.position);
  let.values = let_values(*let.stmt, expr(*let.stmt->value, f.body_scope));
  f.position_stack.pop_back();
  let.progress = Progress::Done;
}

SValue Analyzer::let_read(ScanFrame& f, int j, const std::string& n, Loc loc) {
  ScanFrame::LetInfo& let = f.lets[size_t(j)];
  int position = f.position_stack.empty() ? INT_MAX : f.position_stack.back();
  const ast::NameDecl* decl = nullptr;
  size_t index = 0;
  for (size_t i = 0; i < let.stmt->names.size(); ++i)
    if (let.stmt->names[i].name == n) {
      decl = &let.stmt->names[i];
      index = i;
    }
  SCANGEN_CHECK(decl, "let binding without its name");
  if (let.position >= position) {
    auto& d = diags_.report(DiagId::err_use_before_definition, loc, n);
    diags_.note(d, DiagId::note_defined_here, decl->loc, n);
    return SValue::invalid();
  }
  if (let.progress == Progress::InProgress) {
    report_cycle(f, n, loc);
    return SValue::invalid();
  }
  f.reads.emplace_back(n, loc);
  ensure_let(f, j);
  f.reads.pop_back();
  SValue v = let.values.at(index);
  v.loc = loc;
  return v;
}

// ---- the scan expression

namespace {

// Collects the statements of a body (step 1); false when nothing can be analyzed.
bool collect_statements(Analyzer& a, ScanFrame& f) {
  SemaDiagnostics& diags = a.diags();
  const int errors_before = diags.error_count();
  std::map<std::string, const ast::Init*> inits;
  std::map<std::string, Loc> defined;  // every name the body defines, for duplicates
  std::vector<ScanFrame::Output> states, outputs;
  auto define = [&](const std::string& n, Loc loc) {
    if (n == f.index_name) {
      diags.report(DiagId::err_index_name_reserved, loc, n);
      return false;
    }
    auto [it, inserted] = defined.emplace(n, loc);
    if (!inserted) {
      auto& d = diags.report(DiagId::err_redefinition, loc, n);
      diags.note(d, DiagId::note_previous_definition, it->second, n);
      return false;
    }
    return true;
  };
  const auto& body = f.syntax->body;
  for (const auto& s : body)
    if (s->kind == ast::StmtKind::Init) {
      const auto& init = ast::as<ast::Init>(*s);
      auto [it, inserted] = inits.emplace(init.name.name, &init);
      if (!inserted) {
        auto& d = diags.report(DiagId::err_duplicate_init, init.name.loc, init.name.name);
        diags.note(d, DiagId::note_previous_definition, it->second->name.loc, init.name.name);
      }
    }
  std::set<std::string> assigned;
  std::set<std::string> rejected;  // targets of definitions already reported as malformed
  for (size_t i = 0; i < body.size(); ++i) {
    const ast::Stmt& s = *body[i];
    switch (s.kind) {
      case ast::StmtKind::Let: {
        const auto& let = ast::as<ast::Let>(s);
        bool ok = true;
        for (const auto& n : let.names) ok = define(n.name, n.loc) && ok;
        if (!ok) break;
        ScanFrame::LetInfo info;
        info.stmt = &let;
        info.position = int(i);
        f.lets.push_back(info);
        break;
      }
      case ast::StmtKind::StepDef: {
        const auto& def = ast::as<ast::StepDef>(s);
        if (def.step->kind != ast::ExprKind::Name || ast::as<ast::Name>(*def.step).name != f.index_name) {
          diags.report(DiagId::err_step_target, def.step->loc, f.index_name);
          rejected.insert(def.target.name);
          break;
        }
        if (assigned.count(def.target.name)) {
          diags.report(DiagId::err_duplicate_step_def, def.target.loc, def.target.name, f.index_name);
          break;
        }
        assigned.insert(def.target.name);
        if (!define(def.target.name, def.target.loc)) break;
        ScanFrame::Output o;
        o.name = def.target.name;
        o.loc = def.target.loc;
        o.def = &def;
        o.stmt = int(i);
        auto init = inits.find(def.target.name);
        if (init != inits.end()) {
          o.init = init->second;
          states.push_back(std::move(o));
        } else {
          outputs.push_back(std::move(o));
        }
        break;
      }
      case ast::StmtKind::Until: {
        const auto& u = ast::as<ast::Until>(s);
        if (f.until) {
          diags.report(DiagId::err_duplicate_until, u.loc);
          break;
        }
        f.until = &u;
        break;
      }
      case ast::StmtKind::Init:
      case ast::StmtKind::Return: break;  // inits are collected above; return was reported
    }
  }
  for (const auto& [n, init] : inits)
    if (!assigned.count(n) && !rejected.count(n))
      diags.report(DiagId::err_init_without_step, init->name.loc, n, n, f.index_name);
  f.num_states = int(states.size());
  for (auto& s : states) f.outputs.push_back(std::move(s));
  for (auto& o : outputs) f.outputs.push_back(std::move(o));
  if (f.outputs.empty()) {
    // A definition that was rejected above is not reported a second time as missing.
    if (diags.error_count() == errors_before)
      diags.report(DiagId::err_scan_no_outputs, f.syntax->loc);
    return false;
  }
  return true;
}

// A flag option (`reverse`, `parallel`): on without a value, or `= true` / `= false`; nullopt (after
// reporting) for anything else.
std::optional<bool> flag_option(const ast::ScanOption& opt, SemaDiagnostics& diags) {
  if (!opt.value) return true;
  if (opt.value->kind == ast::ExprKind::BoolLit) return ast::as<ast::BoolLit>(*opt.value).value;
  diags.report(DiagId::err_scan_option_value, opt.value->loc, opt.name, "takes no value, or true or false");
  return std::nullopt;
}

}  // namespace

SValue Analyzer::scan(const ast::Scan& s, Scope& scope) {
  auto frame_owner = std::make_unique<ScanFrame>();
  ScanFrame& f = *frame_owner;
  f.serial = next_frame_serial++;
  f.syntax = &s;
  f.parent = frames.empty() ? nullptr : frames.back();
  const int enclosing_region = current_region();

  // ---- options
  bool ok = true;
  std::set<std::string> seen;
  // A `steps` whose value is wrong still bounds the scan: no second error says it has no steps.
  bool steps_given = false;
  for (const ast::ScanOption& opt : s.options) {
    if (!seen.insert(opt.name).second) {
      diags_.report(DiagId::err_duplicate_scan_option, opt.loc, opt.name);
      ok = false;
      continue;
    }
    if (opt.name == "steps") {
      steps_given = true;
      if (!opt.value) {
        diags_.report(DiagId::err_scan_option_value, opt.loc, "steps", "needs a value: steps = n");
        ok = false;
        continue;
      }
      SValue v = single(expr(*opt.value, scope), opt.value->loc);
      if (v.ok() && (!v.type().is_scalar() || !is_int(v.dtype()))) {
        diags_.report(DiagId::err_steps_type, opt.value->loc, v.weak ? "a float literal" : v.type().str());
        ok = false;
        continue;
      }
      if (!v.ok()) {
        ok = false;
        continue;
      }
      SValue i64 = materialize(v, DType::I64, opt.value->loc);
      i64.as_dim = v.as_dim;
      f.steps = i64;
    } else if (opt.name == "reverse" || opt.name == "parallel") {
      std::optional<bool> on = flag_option(opt, diags_);
      if (!on) ok = false;
      else (opt.name == "reverse" ? f.reverse : f.parallel) = *on;
    } else if (opt.name == "index") {
      if (!opt.value || opt.value->kind != ast::ExprKind::Name) {
        diags_.report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "index",
                      "needs a name: index = s");
        ok = false;
        continue;
      }
      f.index_name = ast::as<ast::Name>(*opt.value).name;
      f.index_loc = opt.value->loc;
    } else if (opt.name == "truncate_gradient") {
      std::optional<int64_t> n;
      if (opt.value && opt.value->kind == ast::ExprKind::IntLit) n = ast::as<ast::IntLit>(*opt.value).value;
      if (opt.value && opt.value->kind == ast::ExprKind::Unary) {
        const auto& u = ast::as<ast::Unary>(*opt.value);
        if (u.op == ast::UnaryOp::Neg && u.operand->kind == ast::ExprKind::IntLit)
          n = -ast::as<ast::IntLit>(*u.operand).value;
      }
      if (!n || *n < -1) {
        diags_.report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "truncate_gradient",
                      "needs an integer literal: -1 (no truncation) or N >= 0");
        ok = false;
        continue;
      }
      f.truncate_gradient = *n;
    } else if (opt.name == "checkpoint") {
      if (!opt.value || opt.value->kind != ast::ExprKind::IntLit || ast::as<ast::IntLit>(*opt.value).value < 1) {
        diags_.report(DiagId::err_scan_option_value, opt.value ? opt.value->loc : opt.loc, "checkpoint",
                      "needs an integer literal >= 1: checkpoint = N keeps every N-th step for gradients");
        ok = false;
        continue;
      }
      f.checkpoint = ast::as<ast::IntLit>(*opt.value).value;
    } else {
      diags_.report(DiagId::err_unknown_scan_option, opt.loc, opt.name);
      // An unknown option with a value may be a misspelled `steps = n` (`step = n`).
      steps_given = steps_given || opt.value != nullptr;
      ok = false;
    }
  }

  // ---- statements, names, taps
  if (!collect_statements(*this, f)) return SValue::invalid();
  f.body_scope.parent = &scope;
  {
    Binding b;
    b.kind = Binding::Kind::Index;
    b.frame = &f;
    b.loc = f.index_loc.valid() ? f.index_loc : s.loc;
    b.id = new_binding_id();
    f.body_scope.names[f.index_name] = b;
  }
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    Binding b;
    b.kind = Binding::Kind::Output;
    b.frame = &f;
    b.slot = int(i);
    b.loc = f.outputs[i].loc;
    b.id = new_binding_id();
    f.body_scope.names[f.outputs[i].name] = b;
  }
  for (size_t i = 0; i < f.lets.size(); ++i)
    for (const auto& n : f.lets[i].stmt->names) {
      Binding b;
      b.kind = Binding::Kind::Let;
      b.frame = &f;
      b.slot = int(i);
      b.loc = n.loc;
      b.id = new_binding_id();
      f.body_scope.names[n.name] = b;
    }
  TapWalker(*this, f, scope).walk_body();

  // ---- sequences and inits, in the enclosing scope
  for (auto& seq : f.sequences) {
    // In a nested scan, Y[t] of an output Y of an enclosing scan that also calls its index t
    // reads Y as a sequence of this scan: almost certainly not what was meant.
    if (seq.base->kind == ast::ExprKind::Name) {
      const std::string& n = ast::as<ast::Name>(*seq.base).name;
      Binding* b = scope.find(n);
      if (b && b->kind == Binding::Kind::Output && b->frame->index_name == f.index_name) {
        diags_.report(DiagId::err_index_shadow_ambiguous, seq.base->loc, f.index_name,
                      "the loop index of the enclosing scan that defines '" + n + "'");
        ok = false;
        continue;
      }
    }
    seq.value = single(expr(*seq.base, scope), seq.base->loc);
    if (seq.value.ok() && seq.value.weak)
      seq.value = materialize(seq.value, weak_default_dtype(seq.value), seq.base->loc);
    if (seq.value.ok() && seq.value.type().is_scalar()) {
      diags_.report(DiagId::err_sequence_scalar, seq.base->loc, seq.label);
      seq.value = SValue::invalid();
    }
    ok = ok && seq.value.ok();
  }
  if (!steps_given && f.sequences.empty()) {
    diags_.report(DiagId::err_scan_no_steps, s.loc);
    ok = false;
  }
  bool any_weak_init = false;
  for (auto& out : f.outputs) {
    if (!out.is_state()) continue;
    SValue init = single(expr(*out.init->value, scope), out.init->value->loc);
    if (!init.ok()) {
      ok = false;
      continue;
    }
    int64_t rows = out.lags.empty() ? 0 : *out.lags.rbegin();
    Loc loc = out.init->value->loc;
    if (init.weak && rows <= 1) {
      out.weak_init = true;
      any_weak_init = true;
      out.step_type = ir::Type(weak_default_dtype(init), init.type().shape);
      out.init_value = init;
      continue;
    }
    if (init.weak) init = materialize(init, weak_default_dtype(init), loc);
    if (rows > 1) {
      // The init holds one row per step read: init[0] is X[t - rows] at step 0.
      const ir::Type& t = init.type();
      if (t.is_scalar() || (t.shape[0].is_const() && !t.shape[0].is_const(rows))) {
        std::vector<Dim> want{Dim::constant(rows)};
        if (!t.is_scalar()) want.insert(want.end(), t.shape.begin() + 1, t.shape.end());
        auto& d = diags_.report(DiagId::err_init_shape, loc, out.name, ir::shape_str(want), ir::shape_str(t.shape));
        diags_.note(d, DiagId::note_init_lags, out.loc, out.name, rows, plural(size_t(rows)));
        ok = false;
        continue;
      }
      if (!t.shape[0].is_const(rows)) {
        std::vector<ir::DimCheck> checks(size_t(t.rank()));
        checks[0] = {ir::DimCheck::Kind::Const, rows, ""};
        std::vector<Dim> shape = t.shape;
        shape[0] = Dim::constant(rows);
        init = SValue::tensor(builder_.check_shape(init.value, std::move(checks), {},
                                                   "the init of state '" + out.name + "'", shape, loc),
                              init.loc);
      }
      out.step_type = init.type().row();
    } else {
      out.step_type = init.type();
    }
    out.init_value = init;
  }
  if (!ok) {
    // Still analyze the body for its own errors, without types for what failed.
    return SValue::invalid();
  }

  // ---- the body
  f.region = new_region(enclosing_region);
  auto run_pass = [&](bool dry) {
    f.dry_run = dry;
    for (auto& out : f.outputs) {
      out.progress = Progress::NotStarted;
      out.step_value = SValue::invalid();
      out.lag_params.clear();
    }
    for (auto& let : f.lets) {
      let.progress = Progress::NotStarted;
      let.values.clear();
    }
    RegionGuard region(*this, f.region);
    int next_param = 0;
    f.index_param = builder_.param(ir::Type(DType::I64), next_param++, f.index_name, s.loc);
    for (auto& seq : f.sequences) {
      seq.tap_params.clear();
      for (int64_t k : seq.taps) {
        std::string n = seq.label + "[" + f.index_name + (k > 0 ? " + " + std::to_string(k) : k < 0 ? " - " + std::to_string(-k) : "") + "]";
        seq.tap_params.push_back(builder_.param(seq.value.type().row(), next_param++, n, seq.base->loc));
      }
    }
    for (auto& out : f.outputs)
      for (int64_t k : out.lags)
        out.lag_params.push_back(builder_.param(out.step_type, next_param++,
                                                out.name + "[" + f.index_name + " - " + std::to_string(k) + "]",
                                                out.loc));
    frames.push_back(&f);
    for (size_t i = 0; i < s.body.size(); ++i) {
      const ast::Stmt& st = *s.body[i];
      if (st.kind == ast::StmtKind::Let) {
        for (size_t j = 0; j < f.lets.size(); ++j)
          if (f.lets[j].stmt == &st) ensure_let(f, int(j));
      } else if (st.kind == ast::StmtKind::StepDef) {
        for (size_t o = 0; o < f.outputs.size(); ++o)
          if (f.outputs[o].def == &st) ensure_output(f, int(o));
      }
    }
    SValue cond;
    if (f.until) {
      f.position_stack.push_back(int(s.body.size()));
      cond = single(expr(*f.until->cond, f.body_scope), f.until->cond->loc);
      f.position_stack.pop_back();
      if (cond.ok() && (cond.dtype() != DType::Bool || !cond.type().is_scalar())) {
        diags_.report(DiagId::err_until_type, f.until->cond->loc, type_words(cond));
        cond = SValue::invalid();
      }
    }
    frames.pop_back();
    return cond;
  };

  if (any_weak_init) {
    diags_.push_mute();
    run_pass(/*dry=*/true);
    diags_.pop_mute();
    RegionGuard outer(*this, enclosing_region);
    bool init_ok = true;
    for (auto& out : f.outputs) {
      if (!out.weak_init) continue;
      const SValue& v = out.step_value;
      if (v.ok() && v.weak) {
        // A literal init and a step computed from literals: a float if either is one.
        out.step_type.dtype =
            is_float(v.dtype()) || is_float(out.init_value.dtype()) ? DType::F32 : DType::I64;
      } else if (v.ok()) {
        // A literal init takes the step's dtype, but a number is no bool and a float no integer.
        bool float_init = is_float(out.init_value.dtype());
        if (v.dtype() == DType::Bool || (float_init && is_int(v.dtype()))) {
          auto& d =
              diags_.report(DiagId::err_state_type_mismatch, out.def->value->loc, out.name,
                            v.type().str(), float_init ? "a float literal" : "an integer literal");
          diags_.note(d, DiagId::note_init_here, out.init->value->loc, out.name);
          init_ok = false;
          continue;
        }
        out.step_type.dtype = v.dtype();
      }
      out.init_value = materialize(out.init_value, out.step_type.dtype, out.init->value->loc);
    }
    if (!init_ok) return SValue::invalid();
  } else {
    for (auto& out : f.outputs)
      if (out.is_state() && out.init_value.weak)
        out.init_value = materialize(out.init_value, out.step_type.dtype, out.init->value->loc);
  }
  SValue cond = run_pass(/*dry=*/false);
  for (auto& out : f.outputs) ok = ok && out.step_value.ok();
  if (f.until && !cond.ok()) ok = false;
  if (!ok) return SValue::invalid();

  // ---- closure conversion: outside values the body uses become the scan's parameters
  ir::ScanInfo info;
  info.has_steps = f.steps.has_value();
  info.reverse = f.reverse;
  info.parallel = f.parallel;
  info.has_until = f.until != nullptr;
  info.truncate_gradient = f.truncate_gradient;
  info.checkpoint = f.checkpoint;
  info.index_name = f.index_name;
  auto body = std::make_shared<ir::Graph>();
  body->params.push_back(f.index_param);
  for (const auto& seq : f.sequences) {
    std::vector<int64_t> taps(seq.taps.begin(), seq.taps.end());
    info.sequences.push_back({taps, seq.label, taps});
    for (const Value& p : seq.tap_params) body->params.push_back(p);
  }
  for (const auto& out : f.outputs) {
    if (out.is_state()) {
      info.states.push_back({out.name, std::vector<int64_t>(out.lags.begin(), out.lags.end())});
      for (const Value& p : out.lag_params) body->params.push_back(p);
    } else {
      info.outputs.push_back(out.name);
    }
  }
  std::vector<Value> results;
  for (const auto& out : f.outputs) results.push_back(out.step_value.value);
  if (f.until) results.push_back(cond.value);

  std::vector<Value> captured_outer;
  {
    RegionGuard region(*this, f.region);
    std::unordered_map<const ir::Node*, ir::NodeRef> converted;
    std::unordered_map<Value, Value, ir::ValueHash> captures;
    std::function<Value(const Value&)> convert = [&](const Value& v) -> Value {
      int r = region_of(v.node.get());
      if (r != f.region) {
        SCANGEN_CHECK(region_is_ancestor(r, f.region), "a scan body uses a value from outside its scope");
        auto it = captures.find(v);
        if (it != captures.end()) return it->second;
        std::string n = "p" + std::to_string(captured_outer.size());
        if (const auto* p = v.node->as<ir::ParamNode>()) n = p->name();
        Value param = builder_.param(v.type(), int(body->params.size()), n, v.node->loc());
        body->params.push_back(param);
        captured_outer.push_back(v);
        captures.emplace(v, param);
        return param;
      }
      auto it = converted.find(v.node.get());
      if (it != converted.end()) return Value(it->second, v.index);
      std::vector<Value> inputs;
      bool changed = false;
      for (const Value& in : v.node->inputs()) {
        inputs.push_back(convert(in));
        changed = changed || inputs.back() != in;
      }
      ir::NodeRef n = changed ? builder_.rebuild(*v.node, std::move(inputs)) : v.node;
      converted.emplace(v.node.get(), n);
      return Value(n, v.index);
    };
    for (const Value& r : results) body->results.push_back(convert(r));
  }
  info.num_params = int(captured_outer.size());

  std::vector<Value> inputs;
  if (f.steps) inputs.push_back(f.steps->value);
  for (const auto& seq : f.sequences) inputs.push_back(seq.value.value);
  for (const auto& out : f.outputs)
    if (out.is_state()) inputs.push_back(out.init_value.value);
  inputs.insert(inputs.end(), captured_outer.begin(), captured_outer.end());

  // The static number of steps.
  Dim steps = Dim::fresh_unknown();
  if (f.until) {
    // data-dependent
  } else if (f.steps) {
    if (f.steps->as_dim) steps = *f.steps->as_dim;
    if (auto c = ir::constant_value(f.steps->value)) steps = Dim::constant(c->i);
  } else {
    std::optional<Dim> common;
    bool same = true;
    for (size_t i = 0; i < f.sequences.size(); ++i) {
      const auto& seq = f.sequences[i];
      Dim d = seq.value.type().shape[0].plus(-info.sequences[i].span());
      if (auto c = d.const_value(); c && *c < 0) d = Dim::constant(0);
      if (!common) common = d;
      else if (!common->same_as(d)) same = false;
    }
    if (same && common) steps = *common;
  }

  std::vector<Value> outs = builder_.scan(std::move(inputs), std::move(info), body, steps, s.loc);
  // A per-step output has the same shape at every step, computable before the first step (so that
  // its buffer is allocated once and a scan of zero steps knows its step shape). A state's shape is
  // its init's, checked at each step.
  {
    const auto& scan_node = *outs.front().node->as<ir::ScanNode>();
    ir::StepVariance variance(scan_node);
    bool varies = false;
    for (size_t i = size_t(f.num_states); i < f.outputs.size(); ++i) {
      if (!variance.shape_varies(scan_node.body().results[i])) continue;
      diags_.report(DiagId::err_output_shape_varies, f.outputs[i].def->value->loc, f.outputs[i].name);
      varies = true;
    }
    if (varies) return SValue::invalid();
  }
  SValue result;
  result.kind = SValue::Kind::Multi;
  result.from_scan = true;
  result.loc = s.loc;
  for (size_t i = 0; i < outs.size(); ++i) {
    result.elements.push_back(SValue::tensor(outs[i], s.loc));
    result.names.push_back(f.outputs[i].name);
  }
  return result;
}

}  // namespace scangen::sema
