// Semantic analysis of a scan, step 2 (sema_scan.cpp): the body's text is walked to classify every
// read at the loop index (`E[t + k]`): an output of the scan (a state tap or the current step),
// or a *sequence* when E is written only with names from outside the scan. Taps come from the
// text, so every such read counts.
#include <sstream>

#include "frontend/builtins.h"

namespace scangen::sema {

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
    for (const ast::Init* init : f.lone_inits) own_locals_.insert(init->name.name);
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
      case ast::ExprKind::IntLit:
      case ast::ExprKind::FloatLit:
      case ast::ExprKind::BoolLit:
      case ast::ExprKind::DTypeName:
      case ast::ExprKind::Scan:
      case ast::ExprKind::Tuple: os << ast::to_source(e); return;
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
          const Builtin* b = c.cast_to ? nullptr : find_builtin(c.callee);
          if (i == 0 && b && b->first_arg == BuiltinFirstArg::Place && c.args[0]->kind == ast::ExprKind::Index) {
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
      case ast::ExprKind::IntLit:
      case ast::ExprKind::FloatLit:
      case ast::ExprKind::BoolLit:
      case ast::ExprKind::DTypeName:
      case ast::ExprKind::Name: return;
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

}  // namespace

void classify_taps(Analyzer& a, ScanFrame& f, Scope& enclosing) { TapWalker(a, f, enclosing).walk_body(); }

}  // namespace scangen::sema
