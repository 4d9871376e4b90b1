#include "codegen/loop_ir.h"

#include <algorithm>
#include <map>
#include <set>

#include "support/check.h"

namespace scangen::lir {

std::string Signature::result_name(size_t i) const {
  if (i < results.size() && !results[i].name.empty()) return results[i].name;
  return "out" + std::to_string(i);
}

std::string result_what(const Function& f, size_t i) {
  const std::string& name = f.signature.results.at(i).name;
  return "result " + std::to_string(i) + (name.empty() ? "" : " ('" + name + "')") + " of '" + f.name + "'";
}


namespace {

std::shared_ptr<Expr> make(ExprKind k, DType t) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->type = t;
  return e;
}

}  // namespace

ExprRef imm(ir::Scalar s) {
  auto e = make(ExprKind::Imm, s.dtype);
  e->imm = s;
  return e;
}

ExprRef i64(int64_t v) { return imm(ir::Scalar::of_int(DType::I64, v)); }

ExprRef var(const std::string& name, DType type) {
  auto e = make(ExprKind::Var, type);
  e->name = name;
  return e;
}

ExprRef ptr_var(const std::string& name, DType elem) {
  auto e = make(ExprKind::Var, elem);
  e->name = name;
  e->pointer = true;
  return e;
}

ExprRef load(const ExprRef& ptr, ExprRef index) {
  SCANGEN_CHECK(ptr->kind == ExprKind::Var && ptr->pointer, "load from a non-pointer");
  auto e = make(ExprKind::Load, ptr->type);
  e->name = ptr->name;
  e->a = std::move(index);
  return e;
}

ExprRef unary(UnaryOp op, ExprRef a) {
  auto e = make(ExprKind::Unary, a->type);
  e->uop = op;
  e->a = std::move(a);
  return e;
}

ExprRef binary(BinaryOp op, ExprRef a, ExprRef b) {
  SCANGEN_CHECK(a->type == b->type, "binary operands of different types");
  DType t = ir::binary_op_class(op) == ir::BinaryClass::Arith ? a->type : DType::Bool;
  auto e = make(ExprKind::Binary, t);
  e->bop = op;
  e->a = std::move(a);
  e->b = std::move(b);
  return e;
}

ExprRef select(ExprRef c, ExprRef a, ExprRef b) {
  if (c->kind == ExprKind::Imm) return c->imm.i ? a : b;
  if (same_expr(a, b)) return a;
  auto e = make(ExprKind::Select, a->type);
  e->a = std::move(c);
  e->b = std::move(a);
  e->c = std::move(b);
  return e;
}

ExprRef call(const std::string& callee, DType result, std::vector<ExprRef> args) {
  auto e = make(ExprKind::Call, result);
  e->name = callee;
  e->args = std::move(args);
  return e;
}

ExprRef cast(DType to, ExprRef a) {
  if (a->type == to) return a;
  if (a->kind == ExprKind::Imm && is_int(to) && is_int(a->type))
    return imm(ir::Scalar::of_int(to, a->imm.i));
  auto e = make(ExprKind::Cast, to);
  e->a = std::move(a);
  return e;
}

std::optional<int64_t> const_int(const ExprRef& e) {
  if (e && e->kind == ExprKind::Imm && is_int(e->type)) return e->imm.i;
  return std::nullopt;
}

namespace {

ExprRef index_op(BinaryOp op, ExprRef a, ExprRef b) {
  SCANGEN_CHECK(a->type == DType::I64 && b->type == DType::I64, "index arithmetic on i64 only");
  auto e = make(ExprKind::Binary, ir::binary_op_class(op) == ir::BinaryClass::Arith ? DType::I64 : DType::Bool);
  e->bop = op;
  e->a = std::move(a);
  e->b = std::move(b);
  e->index_math = true;
  return e;
}

}  // namespace

ExprRef add(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return i64(*ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  return index_op(BinaryOp::Add, std::move(a), std::move(b));
}

ExprRef sub(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return i64(*ca - *cb);
  if (cb && *cb == 0) return a;
  return index_op(BinaryOp::Sub, std::move(a), std::move(b));
}

ExprRef mul(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return i64(*ca * *cb);
  if ((ca && *ca == 0) || (cb && *cb == 0)) return i64(0);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return index_op(BinaryOp::Mul, std::move(a), std::move(b));
}

ExprRef quotient(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb && *cb > 0 && *ca >= 0) return i64(*ca / *cb);
  if (cb && *cb == 1) return a;
  return index_op(BinaryOp::Div, std::move(a), std::move(b));
}

ExprRef lt(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return imm(ir::Scalar::of_bool(*ca < *cb));
  if (same_expr(a, b)) return imm(ir::Scalar::of_bool(false));
  return index_op(BinaryOp::Lt, std::move(a), std::move(b));
}
ExprRef ge(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return imm(ir::Scalar::of_bool(*ca >= *cb));
  if (same_expr(a, b)) return imm(ir::Scalar::of_bool(true));
  return index_op(BinaryOp::Ge, std::move(a), std::move(b));
}
ExprRef eq(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return imm(ir::Scalar::of_bool(*ca == *cb));
  if (same_expr(a, b)) return imm(ir::Scalar::of_bool(true));
  return index_op(BinaryOp::Eq, std::move(a), std::move(b));
}

static std::optional<bool> const_bool(const ExprRef& e) {
  if (e && e->kind == ExprKind::Imm && e->type == DType::Bool) return e->imm.i != 0;
  return std::nullopt;
}

ExprRef logical_or(ExprRef a, ExprRef b) {
  auto ca = const_bool(a), cb = const_bool(b);
  if ((ca && *ca) || (cb && *cb)) return imm(ir::Scalar::of_bool(true));
  if (ca) return b;
  if (cb) return a;
  auto e = make(ExprKind::Binary, DType::Bool);
  e->bop = BinaryOp::Or;
  e->a = std::move(a);
  e->b = std::move(b);
  e->index_math = true;
  return e;
}

ExprRef logical_and(ExprRef a, ExprRef b) {
  auto ca = const_bool(a), cb = const_bool(b);
  if ((ca && !*ca) || (cb && !*cb)) return imm(ir::Scalar::of_bool(false));
  if (ca) return b;
  if (cb) return a;
  auto e = make(ExprKind::Binary, DType::Bool);
  e->bop = BinaryOp::And;
  e->a = std::move(a);
  e->b = std::move(b);
  e->index_math = true;
  return e;
}

ExprRef min(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return i64(std::min(*ca, *cb));
  if (same_expr(a, b)) return a;
  return index_op(BinaryOp::Min, std::move(a), std::move(b));
}

ExprRef max(ExprRef a, ExprRef b) {
  auto ca = const_int(a), cb = const_int(b);
  if (ca && cb) return i64(std::max(*ca, *cb));
  if (same_expr(a, b)) return a;
  return index_op(BinaryOp::Max, std::move(a), std::move(b));
}

bool same_expr(const ExprRef& a, const ExprRef& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type) return false;
  switch (a->kind) {
    case ExprKind::Imm: return a->imm == b->imm;
    case ExprKind::Var: return a->name == b->name && a->pointer == b->pointer;
    case ExprKind::Load: return a->name == b->name && same_expr(a->a, b->a);
    case ExprKind::Unary: return a->uop == b->uop && same_expr(a->a, b->a);
    case ExprKind::Binary:
      return a->bop == b->bop && a->index_math == b->index_math && same_expr(a->a, b->a) && same_expr(a->b, b->b);
    case ExprKind::Select: return same_expr(a->a, b->a) && same_expr(a->b, b->b) && same_expr(a->c, b->c);
    case ExprKind::Cast: return same_expr(a->a, b->a);
    case ExprKind::Call: {
      if (a->name != b->name || a->args.size() != b->args.size()) return false;
      for (size_t i = 0; i < a->args.size(); ++i)
        if (!same_expr(a->args[i], b->args[i])) return false;
      return true;
    }
  }
  return false;
}

size_t hash_expr(const ExprRef& e) {
  if (!e) return 0;
  size_t h = std::hash<int>()(int(e->kind)) * 31 + std::hash<int>()(int(e->type));
  auto mix = [&](size_t v) { h = h * 1000003u ^ v; };
  switch (e->kind) {
    case ExprKind::Imm: mix(std::hash<int64_t>()(e->imm.i)); mix(std::hash<double>()(e->imm.f)); break;
    case ExprKind::Var:
    case ExprKind::Load: mix(std::hash<std::string>()(e->name)); break;
    case ExprKind::Unary: mix(size_t(e->uop)); break;
    case ExprKind::Binary: mix(size_t(e->bop)); mix(e->index_math); break;
    case ExprKind::Select:
    case ExprKind::Cast: break;
    case ExprKind::Call:
      mix(std::hash<std::string>()(e->name));
      for (const ExprRef& arg : e->args) mix(hash_expr(arg));
      break;
  }
  mix(hash_expr(e->a));
  mix(hash_expr(e->b));
  mix(hash_expr(e->c));
  return h;
}

namespace {
StmtRef stmt(StmtKind kind) {
  auto s = std::make_shared<Stmt>();
  s->kind = kind;
  return s;
}
}  // namespace

StmtRef block(std::vector<StmtRef> body) {
  StmtRef s = stmt(StmtKind::Block);
  s->body = std::move(body);
  return s;
}

StmtRef let_stmt(std::string var, ExprRef value) {
  StmtRef s = stmt(StmtKind::Let);
  s->var = std::move(var);
  s->vtype = VarType::scalar(value->type);
  s->value = std::move(value);
  return s;
}

StmtRef let_pointer_stmt(std::string var, const ExprRef& base, ExprRef offset, bool writable) {
  StmtRef s = stmt(StmtKind::Let);
  s->var = std::move(var);
  s->vtype = writable ? VarType::pointer(base->type) : VarType::const_pointer(base->type);
  s->value = base;
  s->index = std::move(offset);
  return s;
}

StmtRef decl_stmt(std::string var, ExprRef init) {
  StmtRef s = stmt(StmtKind::Decl);
  s->var = std::move(var);
  s->vtype = VarType::scalar(init->type);
  s->value = std::move(init);
  return s;
}

StmtRef assign_stmt(std::string var, ExprRef value) {
  StmtRef s = stmt(StmtKind::Assign);
  s->var = std::move(var);
  s->value = std::move(value);
  return s;
}

StmtRef store_stmt(std::string pointer, ExprRef index, ExprRef value) {
  StmtRef s = stmt(StmtKind::Store);
  s->var = std::move(pointer);
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}

StmtRef for_stmt(std::string var, ExprRef begin, ExprRef end, LoopKind kind, std::vector<StmtRef> body) {
  StmtRef s = stmt(StmtKind::For);
  s->var = std::move(var);
  s->begin = std::move(begin);
  s->end = std::move(end);
  s->loop = kind;
  s->body = std::move(body);
  return s;
}

StmtRef parallel_stmt(std::string var, std::string chunk_end, ExprRef begin, ExprRef end, ExprRef grain,
                      int64_t alignment, int threads, std::vector<StmtRef> body) {
  StmtRef s = for_stmt(std::move(var), std::move(begin), std::move(end), LoopKind::Parallel, std::move(body));
  s->chunk_end = std::move(chunk_end);
  s->grain = std::move(grain);
  s->alignment = alignment;
  s->threads = threads;
  return s;
}

StmtRef if_stmt(ExprRef cond, std::vector<StmtRef> then_body) {
  StmtRef s = stmt(StmtKind::If);
  s->cond = std::move(cond);
  s->body = std::move(then_body);
  return s;
}

StmtRef break_stmt() { return stmt(StmtKind::Break); }

StmtRef check_stmt(ExprRef cond, int line, int col, std::vector<MessagePart> message) {
  StmtRef s = stmt(StmtKind::Check);
  s->cond = std::move(cond);
  s->line = line;
  s->col = col;
  s->message = std::move(message);
  return s;
}

StmtRef alloc_stmt(std::string var, DType elem, std::string storage, ExprRef count, bool growable, int line, int col,
                   std::vector<MessagePart> failure) {
  StmtRef s = stmt(StmtKind::Alloc);
  s->mutable_pointer = growable;
  s->var = std::move(var);
  s->vtype = VarType::pointer(elem);
  s->storage = std::move(storage);
  s->value = std::move(count);
  s->line = line;
  s->col = col;
  s->message = std::move(failure);
  return s;
}

void lend_caller_memory(Stmt& alloc, ExprRef into, ExprRef out, ExprRef capacity) {
  alloc.cond = std::move(into);
  alloc.args = {std::move(out), std::move(capacity)};
}

StmtRef grow_stmt(std::string var, std::string storage, ExprRef count, ExprRef keep, int line, int col,
                  std::vector<MessagePart> failure) {
  StmtRef s = stmt(StmtKind::Grow);
  s->var = std::move(var);
  s->storage = std::move(storage);
  s->value = std::move(count);
  s->index = std::move(keep);
  s->line = line;
  s->col = col;
  s->message = std::move(failure);
  return s;
}

StmtRef call_stmt(std::string callee, std::vector<ExprRef> args) {
  StmtRef s = stmt(StmtKind::Call);
  s->callee = std::move(callee);
  s->args = std::move(args);
  return s;
}

StmtRef result_stmt(int index, ExprRef data, std::vector<ExprRef> dims, std::string storage) {
  StmtRef s = stmt(StmtKind::Result);
  s->result_index = index;
  s->value = std::move(data);
  s->args = std::move(dims);
  s->storage = std::move(storage);
  return s;
}

StmtRef comment_stmt(std::string text) {
  StmtRef s = stmt(StmtKind::Comment);
  s->text = std::move(text);
  return s;
}

StmtRef barrier(bool failure_check) {
  StmtRef s = stmt(StmtKind::Barrier);
  s->failure_check = failure_check;
  return s;
}

StmtRef clone(const Stmt& s) {
  auto copy = std::make_shared<Stmt>(s);
  for (StmtRef& c : copy->body) c = clone(*c);
  for (StmtRef& c : copy->else_body) c = clone(*c);
  return copy;
}

// ---- analyses and passes

void collect_reads(const ExprRef& e, std::vector<std::string>& out) {
  if (!e) return;
  switch (e->kind) {
    case ExprKind::Imm: return;
    case ExprKind::Var: out.push_back(e->name); return;
    case ExprKind::Load: out.push_back(e->name); break;
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Select:
    case ExprKind::Cast: break;
    case ExprKind::Call:
      for (const ExprRef& arg : e->args) collect_reads(arg, out);
      break;
  }
  collect_reads(e->a, out);
  collect_reads(e->b, out);
  collect_reads(e->c, out);
}

bool has_load(const ExprRef& e) {
  if (!e) return false;
  if (e->kind == ExprKind::Load) return true;
  for (const ExprRef& arg : e->args)
    if (has_load(arg)) return true;
  return has_load(e->a) || has_load(e->b) || has_load(e->c);
}

void collect_loads(const ExprRef& e, std::vector<std::pair<std::string, ExprRef>>& out) {
  if (!e) return;
  if (e->kind == ExprKind::Load) out.push_back({e->name, e->a});
  collect_loads(e->a, out);
  collect_loads(e->b, out);
  collect_loads(e->c, out);
  for (const ExprRef& arg : e->args) collect_loads(arg, out);
}

namespace {
void collect_pointer_lets(const Stmt& s, std::map<std::string, const Stmt*>& out) {
  if (s.kind == StmtKind::Let && s.vtype.is_pointer()) out[s.var] = &s;
  for (const auto& c : s.body) collect_pointer_lets(*c, out);
  for (const auto& c : s.else_body) collect_pointer_lets(*c, out);
}
}  // namespace

std::map<std::string, const Stmt*> pointer_lets(const Stmt& s) {
  std::map<std::string, const Stmt*> out;
  collect_pointer_lets(s, out);
  return out;
}

bool defines_var(StmtKind kind) {
  switch (kind) {
    case StmtKind::Let:
    case StmtKind::Decl:
    case StmtKind::Assign:
    case StmtKind::For:
    case StmtKind::Grow:
    case StmtKind::Alloc: return true;
    case StmtKind::Block:
    case StmtKind::Store:
    case StmtKind::If:
    case StmtKind::Break:
    case StmtKind::Check:
    case StmtKind::Call:
    case StmtKind::Result:
    case StmtKind::Comment:
    case StmtKind::Barrier: return false;
  }
  return false;
}

const Expr& pointer_base(const Stmt& let) {
  const Expr& v = *let.value;
  return v.kind == ExprKind::Select ? *v.b : v;
}

std::string pointer_root(const std::map<std::string, const Stmt*>& lets, const std::string& pointer) {
  std::string p = pointer;
  for (auto it = lets.find(p); it != lets.end(); it = lets.find(p)) p = pointer_base(*it->second).name;
  return p;
}

namespace {

// Reads of one statement, not counting its sub-statements.
std::vector<std::string> own_reads(const Stmt& s) {
  std::vector<std::string> r;
  for (const ExprRef* e : {&s.value, &s.index, &s.begin, &s.end, &s.cond}) collect_reads(*e, r);
  for (const ExprRef& a : s.args) collect_reads(a, r);
  for (const MessagePart& m : s.message) collect_reads(m.value, r);
  if (s.kind == StmtKind::Store) r.push_back(s.var);
  if (s.kind == StmtKind::Result && !s.storage.empty()) r.push_back(s.storage);
  if (s.kind == StmtKind::Alloc || s.kind == StmtKind::Grow) r.push_back(s.storage);
  return r;
}

void all_reads(const Stmt& s, std::map<std::string, int>& counts) {
  for (const std::string& n : own_reads(s)) ++counts[n];
  for (const StmtRef& c : s.body) all_reads(*c, counts);
  for (const StmtRef& c : s.else_body) all_reads(*c, counts);
}

// Every variable a statement tree defines (lets, declarations, assignments, loop variables, allocations).
void defined_vars(const Stmt& s, std::set<std::string>& out) {
  if (defines_var(s.kind)) out.insert(s.var);
  for (const StmtRef& c : s.body) defined_vars(*c, out);
  for (const StmtRef& c : s.else_body) defined_vars(*c, out);
}

void flatten_blocks(std::vector<StmtRef>& body) {
  std::vector<StmtRef> out;
  for (StmtRef& s : body) {
    if (s->kind == StmtKind::Block) {
      flatten_blocks(s->body);
      for (StmtRef& c : s->body) out.push_back(c);
    } else {
      out.push_back(s);
    }
  }
  body = std::move(out);
}

void hoist_in(std::vector<StmtRef>& body) {
  flatten_blocks(body);
  for (StmtRef& s : body) {
    hoist_in(s->body);
    hoist_in(s->else_body);
  }
  std::vector<StmtRef> out;
  for (StmtRef& s : body) {
    if (s->kind != StmtKind::For) {
      out.push_back(s);
      continue;
    }
    // How many statements of the loop define each variable (the loop variable counts).
    std::map<std::string, int> definitions;
    definitions[s->var] += 1;
    for (StmtRef& c : s->body) {
      std::set<std::string> defs;
      defined_vars(*c, defs);
      for (const std::string& d : defs) definitions[d] += 1;
    }
    std::vector<StmtRef> kept;
    for (StmtRef& c : s->body) {
      bool candidate = (c->kind == StmtKind::Let && !has_load(c->value)) || c->kind == StmtKind::Alloc;
      bool invariant = candidate && definitions[c->var] == 1;
      if (invariant)
        for (const std::string& r : own_reads(*c))
          if (definitions.count(r) && definitions[r] > 0 && r != c->storage) invariant = false;
      if (invariant) {
        // Its variable is now defined outside the loop.
        definitions[c->var] = 0;
        out.push_back(c);
        continue;
      }
      kept.push_back(c);
    }
    s->body = std::move(kept);
    out.push_back(s);
  }
  body = std::move(out);
}

// Reads of each variable by statements other than its own definition and assignments.
void external_reads(const Stmt& s, std::map<std::string, int>& counts) {
  bool defines = s.kind == StmtKind::Let || s.kind == StmtKind::Decl || s.kind == StmtKind::Assign ||
                 s.kind == StmtKind::Alloc || s.kind == StmtKind::Grow;
  for (const std::string& n : own_reads(s))
    if (!(defines && n == s.var)) ++counts[n];
  for (const StmtRef& c : s.body) external_reads(*c, counts);
  for (const StmtRef& c : s.else_body) external_reads(*c, counts);
}

bool remove_unused_in(std::vector<StmtRef>& body, const std::map<std::string, int>& reads) {
  bool changed = false;
  std::vector<StmtRef> out;
  for (StmtRef& s : body) {
    changed = remove_unused_in(s->body, reads) || changed;
    changed = remove_unused_in(s->else_body, reads) || changed;
    bool defines = s->kind == StmtKind::Let || s->kind == StmtKind::Decl || s->kind == StmtKind::Assign ||
                   s->kind == StmtKind::Alloc || s->kind == StmtKind::Grow;
    bool dead = (defines && !reads.count(s->var)) || (s->kind == StmtKind::Block && s->body.empty());
    if (dead) {
      changed = true;
      continue;
    }
    out.push_back(s);
  }
  body = std::move(out);
  return changed;
}

}  // namespace

void hoist_invariants(Function& f) { hoist_in(f.body->body); }

void remove_unused(Function& f) {
  bool changed = true;
  while (changed) {
    std::map<std::string, int> reads;
    external_reads(*f.body, reads);
    changed = remove_unused_in(f.body->body, reads);
  }
  std::map<std::string, int> reads;
  all_reads(*f.body, reads);
  std::vector<StorageDecl> kept;
  for (const StorageDecl& st : f.storages)
    if (reads.count(st.name)) kept.push_back(st);
  f.storages = std::move(kept);
}

}  // namespace scangen::lir
