#include "codegen/lower.h"

#include "codegen/cpp_names.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/analysis.h"
#include "scangen/runtime/tensor.h"
#include "support/check.h"

namespace scangen::codegen {
namespace {

using ir::DimCheck;
using ir::IndexSpec;
using ir::NodeKind;
using ir::Value;
using lir::ExprRef;
using lir::MessagePart;
using lir::Stmt;
using lir::StmtKind;
using lir::StmtRef;

// ---- names

class Names {
 public:
  // A C++ identifier derived from `hint`, different from every name given out before.
  std::string fresh(const std::string& hint) {
    std::string base;
    for (char c : hint) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (ok) base += c;
      else if (!base.empty() && base.back() != '_') base += '_';
    }
    while (!base.empty() && base.back() == '_') base.pop_back();
    if (base.empty()) base = "v";
    if (base[0] >= '0' && base[0] <= '9') base = "v" + base;
    if (base[0] == '_') base = "v" + base;
    if (is_reserved_cpp_name(base)) base += "_";
    int& n = used_[base];
    ++n;
    if (n == 1) return base;
    std::string candidate;
    do {
      candidate = base + "_" + std::to_string(n++);
    } while (used_.count(candidate));
    used_[candidate] = 1;
    return candidate;
  }
  void reserve(const std::string& name) { used_[name] = 1; }

 private:
  std::map<std::string, int> used_;
};

// A lowered value: a scalar expression, or a pointer to contiguous elements with run-time dims.
struct Tensor {
  DType dtype = DType::F32;
  int rank = 0;
  ExprRef scalar;
  ExprRef data;
  std::vector<ExprRef> dims;
  std::string storage;  // the storage that owns `data`, if any (arguments and their views have none)
};

std::string loc_text(const Loc& l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

std::string dtype_text(DType d) { return std::string(dtype_name(d)); }

// Message parts that print a shape: "[", d0, ", ", d1, "]".
std::vector<MessagePart> shape_parts(const std::vector<ExprRef>& dims) {
  std::vector<MessagePart> parts{{"[", nullptr}};
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) parts.push_back({", ", nullptr});
    parts.push_back({"", dims[i]});
  }
  parts.push_back({"]", nullptr});
  return parts;
}

std::vector<MessagePart> typed_shape_parts(DType d, const std::vector<ExprRef>& dims) {
  std::vector<MessagePart> parts{{dtype_text(d), nullptr}};
  if (!dims.empty()) {
    auto s = shape_parts(dims);
    parts.insert(parts.end(), s.begin(), s.end());
  }
  return parts;
}

class FunctionLowering;

// Operations computed element by element from their operands (fused into loops over their elements).
bool computes_elementwise(NodeKind k) {
  switch (k) {
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Call:
    case NodeKind::Fill:
    case NodeKind::Arange: return true;
    default: return false;
  }
}

// Whether state `s` of a scan (lags {1}, tensor steps) may be updated in a single row, its step
// overwriting X[t-1] element by element: every node of the step that reads X[t-1] copies what it
// needs into fresh memory before the state's loop (a product, a reduction, an element-wise value
// computed on its own) or is fused into that loop, reading element i just before it writes
// element i (element-wise operations); no view of X[t-1] (a slice, a reshape) exists; and every
// value that depends on X[t-1] is computed by the end of that loop, i.e. is needed by the state's
// step value, which is itself computed element-wise into the row.
bool updates_in_one_row(const ir::ScanNode& n, int s) {
  const ir::ScanInfo& info = n.info();
  const ir::Graph& body = n.body();
  const Value& result = body.results[size_t(s)];
  NodeKind root = result.node->kind();
  if (root != NodeKind::Unary && root != NodeKind::Binary && root != NodeKind::Select && root != NodeKind::Cast &&
      root != NodeKind::Call)
    return false;
  const ir::Node* previous = body.params[size_t(info.body_state_param(s, 0))].node.get();
  // Another result (an output `y[t] = x[t-1]`, the until flag) that is X[t-1] itself would be
  // read after the row is overwritten.
  for (const Value& r : body.results)
    if (r.node.get() == previous) return false;
  std::set<const ir::Node*> needed;
  for (const ir::Node* node : ir::topological_order(ir::Graph{{}, {result}})) needed.insert(node);
  std::set<const ir::Node*> depends{previous};
  for (const ir::Node* node : ir::topological_order(body)) {
    bool reads_previous = false, depends_on_previous = false;
    for (const Value& in : node->inputs()) {
      reads_previous = reads_previous || in.node.get() == previous;
      depends_on_previous = depends_on_previous || depends.count(in.node.get()) > 0;
    }
    if (!depends_on_previous) continue;
    depends.insert(node);
    if (!needed.count(node)) return false;
    if (reads_previous && !computes_elementwise(node->kind()) && node->kind() != NodeKind::MatMul &&
        node->kind() != NodeKind::Reduce)
      return false;
  }
  return true;
}

class GraphLowering {
 public:
  GraphLowering(FunctionLowering& f, const ir::Graph& g, std::vector<Tensor> params);

  void set_param(size_t i, Tensor t) {
    params_.at(i) = std::move(t);
    available_memo_.clear();
  }
  // The dims of v. While shapes only are computed, a dim that depends on a step value not known
  // yet is null (ir/analysis.h: a step value may have such a dim, an output's rows never do).
  std::vector<ExprRef> dims(const Value& v);
  Tensor value(const Value& v);
  // Computes v into `dest` (room for all its elements); returns the value as it is then known.
  Tensor value_into(const Value& v, const ExprRef& dest);
  // Whether v can be computed here (it does not need a step value that is not known yet; a size
  // needs only that dim of its operand).
  bool available(const Value& v) {
    if (const auto* p = v.node->as<ir::ParamNode>()) {
      const Tensor& t = params_.at(size_t(p->index()));
      return t.rank == 0 ? bool(t.scalar) : bool(t.data);
    }
    if (value_memo_.count(v.node.get())) return true;
    if (const auto* d = v.node->as<ir::DimSizeNode>()) return dims(d->input(0)).at(size_t(d->axis())) != nullptr;
    auto it = available_memo_.find(v.node.get());
    if (it != available_memo_.end()) return it->second;
    bool ok = true;
    for (const Value& in : v.node->inputs()) ok = ok && available(in);
    available_memo_[v.node.get()] = ok;
    return ok;
  }
  int uses(const Value& v) const {
    auto it = uses_.find({v.node.get(), v.index});
    return it == uses_.end() ? 0 : it->second;
  }
  // Whether computing v can raise a run-time error that computing only its dims does not (dims()
  // runs the broadcasting, shape and size checks; an index out of range, an integer division by
  // zero, a max of nothing, '@' of mismatched sizes, set/inc and scans fail only in value()).
  bool may_fail(const Value& v);
  // Set on a lowering that only computes the step shapes of a nested scan: step values are not
  // known there, and nothing is computed for its values' errors.
  bool shapes_only = false;

  // The step shapes of a scan's outputs, computed before its loop on the lowering of its body
  // (step values are not known yet; the dims computed serve the loop too).
  void begin_step_shapes() {
    shapes_only = true;
    defer_failures_ = true;
  }
  void end_step_shapes() {
    shapes_only = false;
    defer_failures_ = false;
    partial_dims_memo_.clear();
  }
  // In the step: computes the values whose errors a size of them deferred (see scalar_node).
  void compute_deferred() {
    for (const Value& v : deferred_) value(v);
    deferred_.clear();
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<const ir::Node*, int>& p) const {
      return std::hash<const void*>()(p.first) * 31 + size_t(p.second);
    }
  };

  std::vector<ExprRef> node_dims(const ir::Node& n, int output);
  std::vector<ExprRef> broadcast_dims(const ir::Node& n);
  std::vector<ExprRef> index_dims(const ir::IndexNode& n);
  std::vector<ExprRef> scan_dims(const ir::ScanNode& n, int output);
  // A scalar operand that sizes a value (an arange's bounds, a fill's sizes, a slice's bounds, a
  // scan's steps); null while shapes only are computed and it depends on the step.
  ExprRef size_operand(const Value& v) { return shapes_only && !available(v) ? nullptr : value(v).scalar; }
  std::vector<Tensor> node_value(const ir::Node& n, const ExprRef& dest);
  Tensor scalar_node(const ir::Node& n);
  ExprRef scalar_op(const ir::Node& n, const std::vector<ExprRef>& in);

  // Element-wise clusters.
  bool fusable(const Value& v, const ir::Node& user);
  Tensor elementwise(const ir::Node& root, const ExprRef& dest);
  struct Cluster;
  ExprRef element(Cluster& c, const ir::Node& n, const std::vector<ExprRef>& idx, const ExprRef& flat);

  Tensor reduce(const ir::ReduceNode& n, const ExprRef& dest);
  Tensor matmul(const ir::MatMulNode& n, const ExprRef& dest);
  Tensor index(const ir::IndexNode& n, const ExprRef& dest);
  Tensor update(const ir::UpdateNode& n, const ExprRef& dest);
  std::vector<Tensor> scan(const ir::ScanNode& n);

  // The region x[specs] selects: per dimension, a first index and a count, checked.
  struct Region {
    std::vector<ExprRef> start, count;
    std::vector<bool> kept;
    std::vector<ExprRef> result_dims;
  };
  Region region(const ir::Node& n, const Tensor& x, const std::vector<IndexSpec>& specs, int first_operand);

  FunctionLowering& F;
  std::vector<Tensor> params_;
  std::unordered_map<const ir::Node*, std::vector<std::vector<ExprRef>>> dims_memo_;
  // Dims with a null entry, valid only while shapes only are computed.
  std::unordered_map<const ir::Node*, std::vector<std::vector<ExprRef>>> partial_dims_memo_;
  bool defer_failures_ = false;
  std::vector<Value> deferred_;
  std::unordered_map<const ir::Node*, std::vector<Tensor>> value_memo_;
  std::unordered_map<const ir::Node*, bool> available_memo_;
  std::unordered_map<const ir::Node*, bool> may_fail_memo_;
  std::unordered_map<std::pair<const ir::Node*, int>, int, PairHash> uses_;
};

class FunctionLowering {
 public:
  FunctionLowering(const ir::Function& fn, lir::Function& out) : fn_(fn), out_(out) {}

  void run();
  void check_argument_size(const ir::ArgDecl& arg, const Tensor& t);

  // ---- emission into the current block
  void emit(StmtRef s) { cur->push_back(std::move(s)); }

  // Binds `value` as it is now. A mutable variable (a decl) is copied: its later assignments (a
  // scalar state's registers rotating at the end of a step) must not change what was bound.
  ExprRef let(const std::string& hint, ExprRef value) {
    if (value->kind == lir::ExprKind::Imm) return value;
    if (value->kind == lir::ExprKind::Var && (value->pointer || !mutable_vars_.count(value->name))) return value;
    // The same pure computation already bound in an enclosing block is reused (loads and mutable
    // variables are not: memory and the variable may change in between).
    bool pure = !lir::has_load(value) && !reads_mutable(value);
    size_t hash = pure ? lir::hash_expr(value) : 0;
    if (pure)
      for (const auto& scope : scopes_) {
        auto range = scope.equal_range(hash);
        for (auto it = range.first; it != range.second; ++it)
          if (lir::same_expr(it->second.first, value)) return it->second.second;
      }
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Let;
    s->var = names.fresh(hint);
    s->vtype = lir::VarType::scalar(value->type);
    s->value = value;
    emit(s);
    ExprRef bound = lir::var(s->var, value->type);
    if (pure) scopes_.back().emplace(hash, std::make_pair(value, bound));
    return bound;
  }

  ExprRef let_pointer(const std::string& hint, const ExprRef& base, ExprRef offset, bool writable) {
    if (auto c = lir::const_int(offset); c && *c == 0) return base;
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Let;
    s->var = names.fresh(hint);
    s->vtype = writable ? lir::VarType::pointer(base->type) : lir::VarType::const_pointer(base->type);
    s->value = base;
    s->index = std::move(offset);  // pointer = value + index
    emit(s);
    return lir::ptr_var(s->var, base->type);
  }

  ExprRef decl(const std::string& hint, ExprRef init) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Decl;
    s->var = names.fresh(hint);
    s->vtype = lir::VarType::scalar(init->type);
    s->value = std::move(init);
    emit(s);
    mutable_vars_.insert(s->var);
    return lir::var(s->var, s->value->type);
  }

  void assign(const ExprRef& v, ExprRef value) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Assign;
    s->var = v->name;
    s->value = std::move(value);
    emit(s);
  }

  void store(const ExprRef& ptr, ExprRef index, ExprRef value) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Store;
    s->var = ptr->name;
    s->index = std::move(index);
    s->value = std::move(value);
    emit(s);
  }

  void check(ExprRef cond, const Loc& loc, std::vector<MessagePart> message) {
    if (cond->kind == lir::ExprKind::Imm && cond->imm.i) return;
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Check;
    s->cond = std::move(cond);
    s->line = loc.line;
    s->col = loc.col;
    s->message = std::move(message);
    emit(s);
  }

  void call(const std::string& callee, std::vector<ExprRef> args) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Call;
    s->callee = callee;
    s->args = std::move(args);
    emit(s);
  }

  void comment(const std::string& text) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Comment;
    s->text = text;
    emit(s);
  }

  // ---- buffers, and the sizes they may have

  // What a buffer holds, for the errors: "the value" or "the rows of 'x'", at a location.
  struct BufferSite {
    Loc loc;
    std::string what;
  };

  // The element count of `dims` (all >= 0) of `elem`, after a check that its bytes stay within
  // kMaxTensorBytes, the limit every backend refuses tensors beyond (products that would overflow
  // are never computed: && and || short-circuit); `too_large` is the check's message.
  ExprRef checked_count(const std::vector<ExprRef>& dims, DType elem, const Loc& loc, std::vector<MessagePart> too_large) {
    const int64_t limit = kMaxTensorBytes / int64_t(dtype_size(elem));
    ExprRef count = lir::i64(1);
    for (const ExprRef& d : dims) count = lir::mul(count, d);
    // The constant dims first: their product (limit + 1 once past the limit); a 0 among them
    // means no elements, however large the others.
    int64_t constant = 1;
    std::vector<ExprRef> variable;
    for (const ExprRef& d : dims) {
      std::optional<int64_t> c = lir::const_int(d);
      if (!c) variable.push_back(d);
      else if (*c == 0) return let("count", count);
      else constant = constant > limit / *c ? limit + 1 : constant * *c;
    }
    // partial * d <= limit at every factor, tested as partial <= limit / d (or, while partial is a
    // constant, d <= limit / partial): an overflowing product is never computed.
    ExprRef fits = lir::imm(ir::Scalar::of_bool(constant <= limit));
    ExprRef partial = lir::i64(constant);
    for (const ExprRef& d : variable) {
      std::optional<int64_t> p = lir::const_int(partial);
      fits = lir::logical_and(fits, p ? lir::ge(lir::i64(limit / std::min(*p, limit)), d)
                                      : lir::ge(lir::quotient(lir::i64(limit), lir::max(d, lir::i64(1))), partial));
      partial = lir::mul(partial, d);
    }
    // With two or more sizes known only at run time, one of them may be 0 however large the others.
    ExprRef empty = lir::imm(ir::Scalar::of_bool(false));
    if (variable.size() >= 2)
      for (const ExprRef& d : variable) empty = lir::logical_or(empty, lir::eq(d, lir::i64(0)));
    check(lir::logical_or(empty, fits), loc, std::move(too_large));
    return let("count", count);
  }

  // "cannot allocate <what> (f32[d0, d1], <bytes> bytes)", or "more than kMaxTensorBytes bytes"
  // without `bytes`: allocation_failure() of the runtime, which the interpreter raises.
  static std::vector<MessagePart> allocation_message(const std::string& what, DType elem, const std::vector<ExprRef>& dims,
                                                     const ExprRef& bytes) {
    std::vector<MessagePart> m{{"cannot allocate " + what + " (" + dtype_text(elem), nullptr}};
    for (MessagePart& p : shape_parts(dims)) m.push_back(std::move(p));
    if (bytes) {
      m.push_back({", ", nullptr});
      m.push_back({"", bytes});
      m.push_back({" bytes)", nullptr});
    } else {
      m.push_back({", more than " + std::to_string(kMaxTensorBytes) + " bytes)", nullptr});
    }
    return m;
  }

  // The buffer a value of `dims` is computed into: `dest` when given (whoever made it checked its
  // size), else a new one, whose storage is named in *storage_name. *count gets the element count.
  ExprRef buffer_for(const ExprRef& dest, const std::string& hint, DType elem, const std::vector<ExprRef>& dims,
                     const BufferSite& site, std::string* storage_name, ExprRef* count) {
    if (dest) {
      *count = product(dims, "count");
      return dest;
    }
    *count = checked_count(dims, elem, site.loc, allocation_message(site.what, elem, dims, nullptr));
    return allocate(hint, elem, *count, storage_name, site.loc, allocation_message(site.what, elem, dims, bytes_of(*count, elem)));
  }

  ExprRef bytes_of(const ExprRef& count, DType elem) { return lir::mul(count, lir::i64(int64_t(dtype_size(elem)))); }

  // The element count of a scan output's buffer of `rows` rows of `row_dims`, of which the result
  // shows `shown` (a state's init rows come first), both checked like any value's size; and the
  // message of a failed allocation, which speaks of the result's shape as the interpreter does.
  std::pair<ExprRef, std::vector<MessagePart>> rows_count(const ExprRef& rows, const ExprRef& shown,
                                                          const std::vector<ExprRef>& row_dims, DType elem,
                                                          const BufferSite& site) {
    std::vector<ExprRef> result{shown}, buffer{rows};
    result.insert(result.end(), row_dims.begin(), row_dims.end());
    buffer.insert(buffer.end(), row_dims.begin(), row_dims.end());
    ExprRef result_count = checked_count(result, elem, site.loc, allocation_message(site.what, elem, result, nullptr));
    ExprRef count = lir::same_expr(rows, shown)
                        ? result_count
                        : checked_count(buffer, elem, site.loc, allocation_message(site.what, elem, result, nullptr));
    return {count, allocation_message(site.what, elem, result, bytes_of(result_count, elem))};
  }

  // A new buffer of `count` elements (checked by the caller); returns its pointer and names its
  // storage. When the memory cannot be had, the program fails at `loc` with `failure`.
  ExprRef allocate(const std::string& hint, DType elem, ExprRef count, std::string* storage_name, const Loc& loc,
                   std::vector<MessagePart> failure, bool growable = false) {
    std::string storage = names.fresh(hint + "_storage");
    out_.storages.push_back({storage, elem});
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Alloc;
    s->mutable_pointer = growable;
    s->var = names.fresh(hint);
    s->vtype = lir::VarType::pointer(elem);
    s->storage = storage;
    s->value = std::move(count);
    s->line = loc.line;
    s->col = loc.col;
    s->message = std::move(failure);
    emit(s);
    if (storage_name) *storage_name = storage;
    return lir::ptr_var(s->var, elem);
  }

  // Grows a growable buffer to `count` elements keeping the first `keep`; fails like allocate().
  void grow(const ExprRef& ptr, const std::string& storage, ExprRef count, ExprRef keep, const Loc& loc,
            std::vector<MessagePart> failure) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Grow;
    s->var = ptr->name;
    s->storage = storage;
    s->value = std::move(count);
    s->index = std::move(keep);
    s->line = loc.line;
    s->col = loc.col;
    s->message = std::move(failure);
    emit(s);
  }

  // for (var = begin; var < end; ++var) { body() }
  template <class Body>
  void loop(const std::string& hint, ExprRef begin, ExprRef end, lir::LoopKind kind, Body&& body) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::For;
    s->var = kind == lir::LoopKind::Time ? names.fresh("step") : names.fresh(hint);
    s->begin = std::move(begin);
    s->end = std::move(end);
    s->loop = kind;
    emit(s);
    std::vector<StmtRef>* saved = cur;
    cur = &s->body;
    scopes_.emplace_back();
    body(lir::var(s->var, DType::I64));
    scopes_.pop_back();
    cur = saved;
  }

  // Nested loops over `extents`, the innermost one vectorizable; body(indices) emits the innermost
  // statements (with no extents, body({}) runs once).
  template <class Body> void loop_nest(const std::vector<ExprRef>& extents, Body&& body) {
    std::vector<ExprRef> indices;
    std::function<void(size_t)> level = [&](size_t d) {
      if (d == extents.size()) {
        body(indices);
        return;
      }
      loop("i" + std::to_string(d), lir::i64(0), extents[d],
           d + 1 == extents.size() ? lir::LoopKind::Vector : lir::LoopKind::Serial, [&](ExprRef i) {
             indices.push_back(i);
             level(d + 1);
             indices.pop_back();
           });
    };
    level(0);
  }

  template <class Then> void when(ExprRef cond, Then&& then) {
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::If;
    s->cond = std::move(cond);
    emit(s);
    std::vector<StmtRef>* saved = cur;
    cur = &s->body;
    scopes_.emplace_back();
    then();
    scopes_.pop_back();
    cur = saved;
  }

  ExprRef product(const std::vector<ExprRef>& dims, const std::string& hint) {
    ExprRef p = lir::i64(1);
    for (const ExprRef& d : dims) p = lir::mul(p, d);
    return let(hint, p);
  }

  // Copies `count` elements.
  void copy(const ExprRef& dst, const ExprRef& src, const ExprRef& count) {
    if (auto c = lir::const_int(count); c && *c == 0) return;
    call("copy", {dst, src, count});
  }

  Names names;
  std::vector<StmtRef>* cur = nullptr;
  lir::Function& out() { return out_; }

 private:
  const ir::Function& fn_;
  lir::Function& out_;
  bool reads_mutable(const ExprRef& e) const {
    std::vector<std::string> reads;
    lir::collect_reads(e, reads);
    return std::any_of(reads.begin(), reads.end(), [&](const std::string& r) { return mutable_vars_.count(r) > 0; });
  }

  // Variables declared mutable (decl), which assignments change.
  std::set<std::string> mutable_vars_;
  // Pure lets bound in each open block, innermost last.
  std::vector<std::unordered_multimap<size_t, std::pair<ExprRef, ExprRef>>> scopes_{1};
};

// ---- GraphLowering

GraphLowering::GraphLowering(FunctionLowering& f, const ir::Graph& g, std::vector<Tensor> params)
    : F(f), params_(std::move(params)) {
  for (const ir::Node* n : ir::topological_order(g))
    for (const Value& in : n->inputs()) ++uses_[{in.node.get(), in.index}];
  for (const Value& r : g.results) ++uses_[{r.node.get(), r.index}];
}

bool GraphLowering::may_fail(const Value& v) {
  const ir::Node& n = *v.node;
  auto it = may_fail_memo_.find(&n);
  if (it != may_fail_memo_.end()) return it->second;
  bool fails;
  switch (n.kind()) {
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize:
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Select:
    case NodeKind::Call:
    case NodeKind::Fill:
    case NodeKind::Arange:
    case NodeKind::Reshape:
    case NodeKind::CheckShape: fails = false; break;
    case NodeKind::Binary: {
      ir::BinaryOp op = n.as<ir::BinaryNode>()->op();
      fails = is_int(n.input(0).type().dtype) &&
              (op == ir::BinaryOp::Div || op == ir::BinaryOp::Mod || op == ir::BinaryOp::Pow);
      break;
    }
    case NodeKind::Reduce: {
      ir::ReduceOp op = n.as<ir::ReduceNode>()->op();
      fails = op == ir::ReduceOp::Max || op == ir::ReduceOp::Min;
      break;
    }
    case NodeKind::Index: {
      const auto& specs = n.as<ir::IndexNode>()->specs();
      fails = std::any_of(specs.begin(), specs.end(), [](const IndexSpec& s) { return s.kind == IndexSpec::Kind::Scalar; });
      break;
    }
    default: fails = true; break;  // MatMul, Update, Scan
  }
  for (int i = 0; !fails && i < n.num_inputs(); ++i) fails = may_fail(n.input(i));
  may_fail_memo_[&n] = fails;
  return fails;
}

std::vector<ExprRef> GraphLowering::dims(const Value& v) {
  if (const auto* p = v.node->as<ir::ParamNode>()) return params_.at(size_t(p->index())).dims;
  const ir::Node* n = v.node.get();
  if (auto it = dims_memo_.find(n); it != dims_memo_.end()) return it->second.at(size_t(v.index));
  if (auto it = partial_dims_memo_.find(n); it != partial_dims_memo_.end()) return it->second.at(size_t(v.index));
  std::vector<std::vector<ExprRef>> all;
  bool partial = false;
  for (int i = 0; i < n->num_outputs(); ++i) {
    all.push_back(node_dims(*n, i));
    for (const ExprRef& d : all.back()) partial = partial || !d;
  }
  SCANGEN_CHECK(!partial || shapes_only, "a dim that depends on a step value, in the step");
  auto& memo = partial ? partial_dims_memo_ : dims_memo_;
  return memo.emplace(n, std::move(all)).first->second.at(size_t(v.index));
}

Tensor GraphLowering::value(const Value& v) {
  if (const auto* p = v.node->as<ir::ParamNode>()) {
    const Tensor& t = params_.at(size_t(p->index()));
    SCANGEN_CHECK(t.rank == 0 ? bool(t.scalar) : bool(t.data), "a step value is used before the loop");
    return t;
  }
  auto it = value_memo_.find(v.node.get());
  if (it == value_memo_.end()) it = value_memo_.emplace(v.node.get(), node_value(*v.node, nullptr)).first;
  return it->second.at(size_t(v.index));
}

Tensor GraphLowering::value_into(const Value& v, const ExprRef& dest) {
  const ir::Node& n = *v.node;
  // Operations that write a fresh result can write it into `dest` directly.
  bool computes_fresh = !value_memo_.count(&n) && n.num_outputs() == 1 && v.type().rank() >= 1 &&
                        (computes_elementwise(n.kind()) || n.kind() == NodeKind::MatMul ||
                         n.kind() == NodeKind::Update ||
                         (n.kind() == NodeKind::Reduce && n.as<ir::ReduceNode>()->axis()));
  if (computes_fresh) {
    std::vector<Tensor> t = node_value(n, dest);
    value_memo_.emplace(&n, t);
    return t[0];
  }
  Tensor t = value(v);
  if (t.rank == 0) {
    F.store(dest, lir::i64(0), t.scalar);
  } else if (!lir::same_expr(t.data, dest)) {
    F.copy(dest, t.data, F.product(t.dims, "count"));
  }
  Tensor out = t;
  if (t.rank > 0) {
    out.data = dest;
    out.storage.clear();
  }
  return out;
}

// ---- shapes

std::vector<ExprRef> GraphLowering::node_dims(const ir::Node& n, int output) {
  const ir::Type& type = n.output_types()[size_t(output)];
  // A dimension known to be a constant is that constant.
  auto known = [&](std::vector<ExprRef> d) {
    for (size_t i = 0; i < d.size() && i < type.shape.size(); ++i)
      if (auto c = type.shape[i].const_value()) d[i] = lir::i64(*c);
    return d;
  };
  switch (n.kind()) {
    case NodeKind::Param: SCANGEN_UNREACHABLE("param dims come from the param");
    case NodeKind::StopGradient: SCANGEN_UNREACHABLE("stop_gradient markers are removed by the frontend");
    case NodeKind::Constant:
    case NodeKind::DimSize: return {};
    case NodeKind::Arange: {
      ExprRef a = size_operand(n.input(0)), b = size_operand(n.input(1));
      return known({a && b ? F.let("length", lir::max(lir::sub(b, a), lir::i64(0))) : nullptr});
    }
    case NodeKind::Fill: {
      std::vector<ExprRef> d;
      for (int i = 1; i < n.num_inputs(); ++i) {
        ExprRef size = size_operand(n.input(i));
        // Sizes taken from another value's shape cannot be negative.
        if (size && n.input(i).node->kind() != NodeKind::DimSize)
          F.check(lir::ge(size, lir::i64(0)), n.loc(),
                {{"dimension " + std::to_string(i - 1) + " of the result is ", nullptr}, {"", size},
                 {"; sizes must be >= 0", nullptr}});
        d.push_back(size);
      }
      return known(d);
    }
    case NodeKind::Unary:
    case NodeKind::Cast:
    case NodeKind::Update: return dims(n.input(0));
    case NodeKind::CheckShape: {
      const auto* c = n.as<ir::CheckShapeNode>();
      std::vector<ExprRef> d = dims(n.input(0));
      for (size_t axis = 0; axis < c->checks().size(); ++axis) {
        const DimCheck& k = c->checks()[axis];
        if (k.kind == DimCheck::Kind::None || !d[axis]) continue;  // an unknown dim is checked in the step
        ExprRef want = k.kind == DimCheck::Kind::Const ? lir::i64(k.value) : value(n.input(int(k.value))).scalar;
        std::vector<MessagePart> msg{{c->what() + ": dimension " + std::to_string(axis) + " is ", nullptr},
                                     {"", d[axis]},
                                     {k.symbol.empty() ? " but must be " : " but must be " + k.symbol + " = ", nullptr},
                                     {"", want}};
        F.check(lir::eq(d[axis], want), n.loc(), msg);
      }
      return d;
    }
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Call: return known(broadcast_dims(n));
    case NodeKind::Reshape: {
      std::vector<ExprRef> d;
      for (int i = 1; i < n.num_inputs(); ++i) d.push_back(size_operand(n.input(i)));
      return known(d);
    }
    case NodeKind::Reduce: {
      const auto* r = n.as<ir::ReduceNode>();
      if (!r->axis()) return {};
      std::vector<ExprRef> d = dims(n.input(0));
      d.erase(d.begin() + *r->axis());
      return d;
    }
    case NodeKind::MatMul: {
      std::vector<ExprRef> a = dims(n.input(0)), b = dims(n.input(1)), d;
      if (a.size() == 2) d.push_back(a[0]);
      if (b.size() == 2) d.push_back(b[1]);
      return d;
    }
    case NodeKind::Index: return known(index_dims(*n.as<ir::IndexNode>()));
    case NodeKind::Scan: return known(scan_dims(*n.as<ir::ScanNode>(), output));
  }
  SCANGEN_UNREACHABLE("unknown node kind");
}

// NumPy broadcasting, statically where the IR knows the dims are equal or 1. A dim that depends on
// a step value not known yet leaves the result's unknown (and its check to the step).
std::vector<ExprRef> GraphLowering::broadcast_dims(const ir::Node& n) {
  const ir::Type& type = n.output_types()[0];
  std::vector<std::vector<ExprRef>> in;
  std::vector<const ir::Type*> in_types;
  for (int i = 0; i < n.num_inputs(); ++i) {
    in.push_back(dims(n.input(i)));
    in_types.push_back(&n.input(i).type());
  }
  size_t rank = size_t(type.rank());
  std::vector<ExprRef> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    ExprRef result;
    std::vector<ExprRef> candidates;
    bool unknown = false;
    for (size_t k = 0; k < in.size(); ++k) {
      size_t r = in[k].size();
      if (d + r < rank) continue;
      size_t j = d + r - rank;
      const ir::Dim& sd = in_types[k]->shape[j];
      if (sd.is_const(1)) continue;
      unknown = unknown || !in[k][j];
      if (sd.same_as(type.shape[d])) {
        result = in[k][j];
        continue;
      }
      candidates.push_back(in[k][j]);
    }
    if (unknown) continue;
    if (!result) result = lir::i64(1);
    for (const ExprRef& c : candidates) {
      if (lir::same_expr(c, result)) continue;
      // result = broadcast(result, c), failing like the interpreter when neither is 1.
      ExprRef ok = lir::logical_or(lir::logical_or(lir::eq(c, result), lir::eq(c, lir::i64(1))),
                                   lir::eq(result, lir::i64(1)));
      std::vector<MessagePart> msg{{"shapes ", nullptr}};
      auto a = shape_parts(in[0]);
      msg.insert(msg.end(), a.begin(), a.end());
      msg.push_back({" and ", nullptr});
      auto b = shape_parts(in.size() > 1 ? in[1] : in[0]);
      msg.insert(msg.end(), b.begin(), b.end());
      msg.push_back({" cannot be broadcast together", nullptr});
      F.check(ok, n.loc(), msg);
      result = F.let("size", lir::select(lir::eq(result, lir::i64(1)), c, result));
    }
    out[d] = result;
  }
  return out;
}

// Only the slices decide the shape; their bounds are values.
std::vector<ExprRef> GraphLowering::index_dims(const ir::IndexNode& n) {
  std::vector<ExprRef> x = dims(n.input(0)), d;
  int op = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i >= n.specs().size()) {
      d.push_back(x[i]);
      continue;
    }
    const IndexSpec& s = n.specs()[i];
    if (s.kind == IndexSpec::Kind::Scalar) {
      ++op;
      continue;
    }
    if (!s.has_lo && !s.has_hi) {
      d.push_back(x[i]);
      continue;
    }
    ExprRef n_i = x[i];
    ExprRef lo_value = s.has_lo ? size_operand(n.input(op++)) : lir::i64(0);
    ExprRef hi_value = s.has_hi ? size_operand(n.input(op++)) : n_i;
    if (!n_i || !lo_value || !hi_value) {
      d.push_back(nullptr);
      continue;
    }
    auto clamp = [&](ExprRef v) {
      ExprRef wrapped = lir::select(lir::lt(v, lir::i64(0)), lir::add(v, n_i), v);
      return F.let("bound", lir::min(lir::max(wrapped, lir::i64(0)), n_i));
    };
    ExprRef lo = s.has_lo ? clamp(lo_value) : lir::i64(0);
    ExprRef hi = s.has_hi ? clamp(hi_value) : n_i;
    d.push_back(F.let("length", lir::max(lir::sub(hi, lo), lir::i64(0))));
  }
  return d;
}

// The step count and the step shape of a nested scan without running it, unless it stops on
// `until` (see ir/analysis.h: whatever an output's shape needs does not change from step to step).
std::vector<ExprRef> GraphLowering::scan_dims(const ir::ScanNode& n, int output) {
  const ir::ScanInfo& info = n.info();
  const Value out = n.output(output);
  if (value_memo_.count(&n) || (info.has_until && (!shapes_only || available(out)))) return value(out).dims;
  // The rows: null with `until` (the steps taken, not the bound `steps`), or when a step value not
  // known yet sizes them.
  ExprRef steps;
  if (info.has_until) {
    // only the scan knows
  } else if (info.has_steps) {
    if (ExprRef given = size_operand(n.input(info.steps_input()))) steps = F.let("steps", lir::max(given, lir::i64(0)));
  } else {
    bool known_steps = true;
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      ExprRef length = dims(n.input(info.sequence_input(int(s))))[0];
      known_steps = known_steps && length;
      if (!known_steps) break;
      ExprRef allowed = lir::max(lir::sub(length, lir::i64(info.sequences[s].span())), lir::i64(0));
      steps = F.let("steps", s == 0 ? allowed : lir::min(steps, allowed));
    }
    if (!known_steps) steps = nullptr;
  }
  std::vector<ExprRef> d{steps};
  if (output < int(info.states.size())) {
    std::vector<ExprRef> init = dims(n.input(info.init_input(output)));
    if (info.states[size_t(output)].init_has_rows()) init.erase(init.begin());
    d.insert(d.end(), init.begin(), init.end());
    return d;
  }
  const ir::Graph& body = n.body();
  std::vector<Tensor> params(body.params.size());
  params[size_t(info.body_index_param())].dtype = DType::I64;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const Value& seq = n.input(info.sequence_input(int(s)));
    std::vector<ExprRef> sd = dims(seq);
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) {
      Tensor& p = params[size_t(info.body_sequence_param(int(s), int(k)))];
      p.dtype = seq.type().dtype;
      p.rank = seq.type().rank() - 1;
      p.dims.assign(sd.begin() + 1, sd.end());
    }
  }
  for (size_t s = 0; s < info.states.size(); ++s) {
    std::vector<ExprRef> init = dims(n.input(info.init_input(int(s))));
    if (info.states[s].init_has_rows()) init.erase(init.begin());
    for (size_t k = 0; k < info.states[s].lags.size(); ++k) {
      Tensor& p = params[size_t(info.body_state_param(int(s), int(k)))];
      p.dtype = n.input(info.init_input(int(s))).type().dtype;
      p.rank = int(init.size());
      p.dims = init;
    }
  }
  for (int p = 0; p < info.num_params; ++p) {
    const Value& in = n.input(info.param_input(p));
    Tensor t;
    if (available(in)) {
      t = value(in);
    } else {
      t.dtype = in.type().dtype;
      t.rank = in.type().rank();
      t.dims = dims(in);
    }
    params[size_t(info.body_param(p))] = t;
  }
  GraphLowering shapes(F, body, std::move(params));
  shapes.shapes_only = true;
  std::vector<ExprRef> row = shapes.dims(body.results[size_t(output)]);
  d.insert(d.end(), row.begin(), row.end());
  return d;
}

// ---- values

std::vector<Tensor> GraphLowering::node_value(const ir::Node& n, const ExprRef& dest) {
  const ir::Type& type = n.output_types()[0];
  if (n.kind() == NodeKind::Scan) return scan(*n.as<ir::ScanNode>());
  if (type.rank() == 0 && n.kind() != NodeKind::Reduce && n.kind() != NodeKind::MatMul &&
      n.kind() != NodeKind::Index) {
    Tensor t = scalar_node(n);
    if (dest) F.store(dest, lir::i64(0), t.scalar);
    return {t};
  }
  if (computes_elementwise(n.kind())) return {elementwise(n, dest)};
  switch (n.kind()) {
    case NodeKind::CheckShape: {
      dims(n.output(0));  // runs the checks
      Tensor t = value(n.input(0));
      if (dest) {
        F.copy(dest, t.data, F.product(t.dims, "count"));
        t.data = dest;
        t.storage.clear();
      }
      return {t};
    }
    case NodeKind::Reshape: {
      // The same elements under other dimensions: a view.
      Tensor t = value(n.input(0));
      t.rank = type.rank();
      t.dims = dims(n.output(0));
      if (!t.data) {
        // A scalar (held in an expression) becomes one element in memory.
        ExprRef one;
        t.data = F.buffer_for(dest, "row", t.dtype, t.dims, {n.loc(), "the value"}, &t.storage, &one);
        F.store(t.data, lir::i64(0), t.scalar);
        t.scalar = nullptr;
        return {t};
      }
      if (dest) {
        F.copy(dest, t.data, F.product(t.dims, "count"));
        t.data = dest;
        t.storage.clear();
      }
      return {t};
    }
    case NodeKind::Reduce: return {reduce(*n.as<ir::ReduceNode>(), dest)};
    case NodeKind::MatMul: return {matmul(*n.as<ir::MatMulNode>(), dest)};
    case NodeKind::Index: return {index(*n.as<ir::IndexNode>(), dest)};
    case NodeKind::Update: return {update(*n.as<ir::UpdateNode>(), dest)};
    default: SCANGEN_UNREACHABLE(std::string("no lowering for ") + ir::node_kind_name(n.kind()));
  }
}

ExprRef GraphLowering::scalar_op(const ir::Node& n, const std::vector<ExprRef>& in) {
  switch (n.kind()) {
    case NodeKind::Unary: return lir::unary(n.as<ir::UnaryNode>()->op(), in[0]);
    case NodeKind::Cast: return lir::cast(n.output_types()[0].dtype, in[0]);
    case NodeKind::Select: return lir::select(in[0], in[1], in[2]);
    case NodeKind::CheckShape: return in[0];
    case NodeKind::Call: {
      // The imported function's qualified name: the namespace of the convention.
      const auto* c = n.as<ir::CallNode>();
      return lir::call("scangen_export::" + c->function().name, n.output_types()[0].dtype, in);
    }
    case NodeKind::Binary: {
      ir::BinaryOp op = n.as<ir::BinaryNode>()->op();
      DType d = in[0]->type;
      if (is_int(d) && (op == ir::BinaryOp::Div || op == ir::BinaryOp::Mod))
        F.check(lir::binary(ir::BinaryOp::Ne, in[1], lir::imm(ir::Scalar::of_int(d, 0))), n.loc(),
                {{"integer division by zero", nullptr}});
      if (is_int(d) && op == ir::BinaryOp::Pow)
        F.check(lir::binary(ir::BinaryOp::Ge, in[1], lir::imm(ir::Scalar::of_int(d, 0))), n.loc(),
                {{"negative integer exponent ", nullptr}, {"", lir::cast(DType::I64, in[1])}});
      return lir::binary(op, in[0], in[1]);
    }
    default: SCANGEN_UNREACHABLE("not a scalar operation");
  }
}

Tensor GraphLowering::scalar_node(const ir::Node& n) {
  Tensor t;
  t.dtype = n.output_types()[0].dtype;
  switch (n.kind()) {
    case NodeKind::Constant: t.scalar = lir::imm(n.as<ir::ConstantNode>()->value()); return t;
    case NodeKind::DimSize:
      // len(x), zeros_like(x), ...: x is still computed when that can fail, so that its run-time
      // errors happen as in the interpreter (len(e[-1]) of an empty e is an error, not a size).
      // While a scan's step shapes are computed before its loop, x is computed at the start of
      // the step instead: a scan of zero steps raises no error of its steps.
      if (may_fail(n.input(0))) {
        if (!shapes_only) value(n.input(0));
        else if (defer_failures_) deferred_.push_back(n.input(0));
      }
      t.scalar = dims(n.input(0)).at(size_t(n.as<ir::DimSizeNode>()->axis()));
      return t;
    case NodeKind::Fill: t.scalar = value(n.input(0)).scalar; return t;
    default: break;
  }
  std::vector<ExprRef> in;
  for (int i = 0; i < n.num_inputs(); ++i) in.push_back(value(n.input(i)).scalar);
  if (n.kind() == NodeKind::CheckShape) {
    t.scalar = in[0];
    return t;
  }
  t.scalar = F.let("v", scalar_op(n, in));
  return t;
}

// ---- element-wise clusters

bool GraphLowering::fusable(const Value& v, const ir::Node& user) {
  const ir::Node& n = *v.node;
  if (v.type().rank() == 0 || value_memo_.count(&n) || uses(v) != 1) return false;
  if (!computes_elementwise(n.kind()) && n.kind() != NodeKind::CheckShape) return false;
  // The same shape as its user, so that the user's index addresses it.
  return v.type().same_as(user.output_types()[0].with_dtype(v.type().dtype));
}

constexpr size_t kMaxFusedNodes = 64;
using ir::kInitialUntilRows;

struct GraphLowering::Cluster {
  const ir::Node* root = nullptr;
  std::set<const ir::Node*> fused;
  std::vector<ExprRef> root_dims;
  bool flat = true;
  // Materialized inputs: their data and, for nested loops, a stride per dimension of the root.
  struct Leaf {
    Tensor t;
    std::vector<ExprRef> strides;
    bool same_shape = false;
  };
  std::map<std::pair<const ir::Node*, int>, Leaf> leaves;
  // The leaves in the order they were found: emitted code must not depend on node addresses.
  std::vector<std::pair<const ir::Node*, int>> leaf_order;
};

Tensor GraphLowering::elementwise(const ir::Node& root, const ExprRef& dest) {
  Cluster c;
  c.root = &root;
  const ir::Type& root_type = root.output_types()[0];
  // Phase 1: everything the loop reads, computed before it.
  std::function<void(const ir::Node&)> gather = [&](const ir::Node& n) {
    c.fused.insert(&n);
    dims(n.output(0));
    int element_inputs = n.kind() == NodeKind::Fill ? 1 : n.kind() == NodeKind::Arange ? 2
                         : n.kind() == NodeKind::CheckShape ? 1 : n.num_inputs();
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Value& in = n.input(i);
      if (i >= element_inputs || in.type().rank() == 0) {
        value(in);
        continue;
      }
      // Long chains are cut into loops of at most kMaxFusedNodes operations: one giant
      // expression would only slow the C++ compiler down.
      if (fusable(in, n) && c.fused.size() < kMaxFusedNodes) {
        gather(*in.node);
        continue;
      }
      auto key = std::make_pair(in.node.get(), in.index);
      if (c.leaves.count(key)) continue;
      Cluster::Leaf leaf;
      leaf.t = value(in);
      leaf.same_shape = in.type().rank() == root_type.rank() && [&] {
        for (int d = 0; d < root_type.rank(); ++d)
          if (!in.type().shape[size_t(d)].same_as(root_type.shape[size_t(d)])) return false;
        return true;
      }();
      if (!leaf.same_shape) c.flat = false;
      c.leaves.emplace(key, std::move(leaf));
      c.leaf_order.push_back(key);
    }
  };
  gather(root);
  c.root_dims = dims(root.output(0));

  Tensor out;
  out.dtype = root_type.dtype;
  out.rank = root_type.rank();
  out.dims = c.root_dims;
  ExprRef total;
  out.data = F.buffer_for(dest, "t", out.dtype, c.root_dims, {root.loc(), "the value"}, &out.storage, &total);

  if (c.flat) {
    F.loop("i", lir::i64(0), total, lir::LoopKind::Vector,
           [&](ExprRef i) { F.store(out.data, i, element(c, root, {}, i)); });
    return out;
  }
  // Nested loops: strides of every leaf, 0 along the dimensions it is broadcast over.
  size_t rank = size_t(root_type.rank());
  for (const auto& key : c.leaf_order) {
    Cluster::Leaf& leaf = c.leaves.at(key);
    const ir::Type& lt = key.first->output_types()[size_t(key.second)];
    size_t lr = size_t(lt.rank());
    leaf.strides.assign(rank, lir::i64(0));
    ExprRef stride = lir::i64(1);
    for (size_t j = lr; j-- > 0;) {
      size_t d = j + rank - lr;
      ExprRef n_j = leaf.t.dims[j];
      if (lt.shape[j].is_const(1)) {
        leaf.strides[d] = lir::i64(0);
      } else if (lt.shape[j].same_as(root_type.shape[d])) {
        leaf.strides[d] = stride;
      } else {
        leaf.strides[d] = F.let("stride", lir::select(lir::eq(n_j, lir::i64(1)), lir::i64(0), stride));
      }
      stride = F.let("stride", lir::mul(stride, n_j));
    }
  }
  std::vector<ExprRef> out_strides(rank);
  ExprRef s = lir::i64(1);
  for (size_t d = rank; d-- > 0;) {
    out_strides[d] = s;
    s = F.let("stride", lir::mul(s, c.root_dims[d]));
  }
  F.loop_nest(c.root_dims, [&](const std::vector<ExprRef>& idx) {
    ExprRef flat = lir::i64(0);
    for (size_t k = 0; k < rank; ++k) flat = lir::add(flat, lir::mul(idx[k], out_strides[k]));
    F.store(out.data, flat, element(c, root, idx, nullptr));
  });
  return out;
}

ExprRef GraphLowering::element(Cluster& c, const ir::Node& n, const std::vector<ExprRef>& idx, const ExprRef& flat) {
  auto input = [&](int i) -> ExprRef {
    const Value& in = n.input(i);
    if (in.type().rank() == 0) return value(in).scalar;
    if (c.fused.count(in.node.get())) return element(c, *in.node, idx, flat);
    const Cluster::Leaf& leaf = c.leaves.at({in.node.get(), in.index});
    if (flat) return lir::load(leaf.t.data, flat);
    ExprRef offset = lir::i64(0);
    for (size_t d = 0; d < idx.size(); ++d) offset = lir::add(offset, lir::mul(idx[d], leaf.strides[d]));
    return lir::load(leaf.t.data, offset);
  };
  switch (n.kind()) {
    case NodeKind::Fill: return value(n.input(0)).scalar;
    case NodeKind::Arange: return lir::add(value(n.input(0)).scalar, flat ? flat : idx.at(0));
    case NodeKind::CheckShape: return input(0);
    default: break;
  }
  std::vector<ExprRef> in;
  for (int i = 0; i < n.num_inputs(); ++i) in.push_back(input(i));
  return scalar_op(n, in);
}

// ---- reductions, matmul

Tensor GraphLowering::reduce(const ir::ReduceNode& n, const ExprRef& dest) {
  const Value& x_value = n.input(0);
  DType d = x_value.type().dtype;
  // The input, computed into a buffer unless it is element-wise of the same shape.
  Tensor x = value(x_value);
  std::vector<ExprRef> xd = x.dims;
  const char* name = ir::reduce_op_name(n.op());
  ir::ReduceOp op = n.op();
  auto combine = [&](ExprRef acc, ExprRef e) -> ExprRef {
    switch (op) {
      case ir::ReduceOp::Sum:
      case ir::ReduceOp::Mean: return lir::binary(ir::BinaryOp::Add, acc, e);
      case ir::ReduceOp::Prod: return lir::binary(ir::BinaryOp::Mul, acc, e);
      case ir::ReduceOp::Max: return lir::binary(ir::BinaryOp::Max, acc, e);
      case ir::ReduceOp::Min: return lir::binary(ir::BinaryOp::Min, acc, e);
    }
    return acc;
  };
  ExprRef zero = lir::imm(is_float(d) ? ir::Scalar::of_float(d, 0) : ir::Scalar::of_int(d, 0));
  ExprRef one = lir::imm(is_float(d) ? ir::Scalar::of_float(d, 1) : ir::Scalar::of_int(d, 1));
  bool extremum = op == ir::ReduceOp::Max || op == ir::ReduceOp::Min;

  // A reduction along the only axis of a vector (`sum(v, axis = 0)`) gives a scalar: it is the
  // reduction of every element, as below; only the message of an empty max/min differs.
  if (!n.axis() || x.rank == 1) {
    ExprRef total = x.rank == 0 ? lir::i64(1) : F.product(xd, "count");
    Tensor out;
    out.dtype = d;
    if (x.rank == 0) {
      out.scalar = op == ir::ReduceOp::Mean ? F.let("mean", lir::binary(ir::BinaryOp::Div, x.scalar, one)) : x.scalar;
      if (op == ir::ReduceOp::Sum) out.scalar = F.let("sum", lir::binary(ir::BinaryOp::Add, zero, x.scalar));
      if (op == ir::ReduceOp::Prod) out.scalar = F.let("prod", lir::binary(ir::BinaryOp::Mul, one, x.scalar));
      if (dest) F.store(dest, lir::i64(0), out.scalar);
      return out;
    }
    ExprRef acc;
    if (extremum) {
      F.check(lir::ge(total, lir::i64(1)), n.loc(),
              {{std::string(name) + (n.axis() ? " over an axis of size 0" : " of an empty array"), nullptr}});
      acc = F.decl(name, lir::load(x.data, lir::i64(0)));
      F.loop("i", lir::i64(1), total, lir::LoopKind::Serial,
             [&](ExprRef i) { F.assign(acc, combine(acc, lir::load(x.data, i))); });
    } else {
      acc = F.decl(name, op == ir::ReduceOp::Prod ? one : zero);
      F.loop("i", lir::i64(0), total, lir::LoopKind::Serial,
             [&](ExprRef i) { F.assign(acc, combine(acc, lir::load(x.data, i))); });
    }
    out.scalar = acc;
    if (op == ir::ReduceOp::Mean)
      out.scalar = F.let("mean", lir::binary(ir::BinaryOp::Div, acc, lir::cast(d, total)));
    if (dest) F.store(dest, lir::i64(0), out.scalar);
    return out;
  }
  // Along one axis: view x as [outer, length, inner] and keep the order of the interpreter
  // (for each output element, its inputs in increasing k), vectorized over `inner`.
  int axis = *n.axis();
  ExprRef outer = lir::i64(1), inner = lir::i64(1);
  for (int i = 0; i < axis; ++i) outer = lir::mul(outer, xd[size_t(i)]);
  for (size_t i = size_t(axis) + 1; i < xd.size(); ++i) inner = lir::mul(inner, xd[i]);
  outer = F.let("outer", outer);
  inner = F.let("inner", inner);
  ExprRef length = xd[size_t(axis)];
  Tensor out;
  out.dtype = d;
  out.rank = int(xd.size()) - 1;
  out.dims = xd;
  out.dims.erase(out.dims.begin() + axis);
  if (out.rank == 0) {
    SCANGEN_UNREACHABLE("a reduction along the only axis has rank 0 and no axis");
  }
  ExprRef count;
  out.data = F.buffer_for(dest, "reduced", d, out.dims, {n.loc(), "the value"}, &out.storage, &count);
  if (extremum)
    F.check(lir::logical_or(lir::ge(length, lir::i64(1)), lir::eq(count, lir::i64(0))), n.loc(),
            {{std::string(name) + " over an axis of size 0", nullptr}});
  F.loop("o", lir::i64(0), outer, lir::LoopKind::Serial, [&](ExprRef o) {
    ExprRef out_row = F.let("out_row", lir::mul(o, inner));
    ExprRef in_base = F.let("in_row", lir::mul(lir::mul(o, length), inner));
    F.loop("j", lir::i64(0), inner, lir::LoopKind::Vector, [&](ExprRef j) {
      F.store(out.data, lir::add(out_row, j),
              extremum ? lir::load(x.data, lir::add(in_base, j)) : (op == ir::ReduceOp::Prod ? one : zero));
    });
    F.loop("k", extremum ? lir::i64(1) : lir::i64(0), length, lir::LoopKind::Serial, [&](ExprRef k) {
      ExprRef in_row = F.let("in_k", lir::add(in_base, lir::mul(k, inner)));
      F.loop("j", lir::i64(0), inner, lir::LoopKind::Vector, [&](ExprRef j) {
        ExprRef at = lir::add(out_row, j);
        F.store(out.data, at, combine(lir::load(out.data, at), lir::load(x.data, lir::add(in_row, j))));
      });
    });
    if (op == ir::ReduceOp::Mean) {
      ExprRef len = lir::cast(d, length);
      F.loop("j", lir::i64(0), inner, lir::LoopKind::Vector, [&](ExprRef j) {
        ExprRef at = lir::add(out_row, j);
        F.store(out.data, at, lir::binary(ir::BinaryOp::Div, lir::load(out.data, at), len));
      });
    }
  });
  return out;
}

Tensor GraphLowering::matmul(const ir::MatMulNode& n, const ExprRef& dest) {
  Tensor a = value(n.input(0)), b = value(n.input(1));
  DType d = a.dtype;
  ExprRef m = a.rank == 2 ? a.dims[0] : lir::i64(1);
  ExprRef k = a.dims.back();
  ExprRef kb = b.dims[0];
  ExprRef cols = b.rank == 2 ? b.dims[1] : lir::i64(1);
  std::vector<MessagePart> msg{{"'@' of ", nullptr}};
  auto ta = typed_shape_parts(d, a.dims), tb = typed_shape_parts(d, b.dims);
  msg.insert(msg.end(), ta.begin(), ta.end());
  msg.push_back({" and ", nullptr});
  msg.insert(msg.end(), tb.begin(), tb.end());
  msg.push_back({": inner dimensions differ (", nullptr});
  msg.push_back({"", k});
  msg.push_back({" and ", nullptr});
  msg.push_back({"", kb});
  msg.push_back({")", nullptr});
  F.check(lir::eq(k, kb), n.loc(), msg);
  Tensor out;
  out.dtype = d;
  out.rank = n.output_types()[0].rank();
  if (a.rank == 2) out.dims.push_back(m);
  if (b.rank == 2) out.dims.push_back(cols);
  if (out.rank == 0) {
    // vector . vector: one sum in the order of the interpreter.
    ExprRef zero = lir::imm(is_float(d) ? ir::Scalar::of_float(d, 0) : ir::Scalar::of_int(d, 0));
    ExprRef acc = F.decl("dot", zero);
    F.loop("p", lir::i64(0), k, lir::LoopKind::Serial, [&](ExprRef p) {
      F.assign(acc, lir::binary(ir::BinaryOp::Add, acc,
                                lir::binary(ir::BinaryOp::Mul, lir::load(a.data, p), lir::load(b.data, p))));
    });
    out.scalar = acc;
    if (dest) F.store(dest, lir::i64(0), acc);
    return out;
  }
  ExprRef count;
  out.data = F.buffer_for(dest, "product", d, out.dims, {n.loc(), "the value"}, &out.storage, &count);
  F.call("matmul", {out.data, a.data, b.data, m, k, cols});
  return out;
}

// ---- indexing

GraphLowering::Region GraphLowering::region(const ir::Node& n, const Tensor& x, const std::vector<IndexSpec>& specs,
                                            int first_operand) {
  Region r;
  int op = first_operand;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    ExprRef size = x.dims[d];
    if (d >= specs.size()) {
      r.start.push_back(lir::i64(0));
      r.count.push_back(size);
      r.kept.push_back(true);
      r.result_dims.push_back(size);
      continue;
    }
    const IndexSpec& s = specs[d];
    if (s.kind == IndexSpec::Kind::Scalar) {
      ExprRef given = value(n.input(op++)).scalar;
      ExprRef i = F.let("index", lir::select(lir::lt(given, lir::i64(0)), lir::add(given, size), given));
      F.check(lir::logical_and(lir::ge(i, lir::i64(0)), lir::lt(i, size)), n.loc(),
              {{"index ", nullptr}, {"", given}, {" is out of range for dimension " + std::to_string(d) + " of size ", nullptr},
               {"", size}});
      r.start.push_back(i);
      r.count.push_back(lir::i64(1));
      r.kept.push_back(false);
      continue;
    }
    auto clamp = [&](ExprRef v) {
      ExprRef wrapped = lir::select(lir::lt(v, lir::i64(0)), lir::add(v, size), v);
      return F.let("bound", lir::min(lir::max(wrapped, lir::i64(0)), size));
    };
    ExprRef lo = s.has_lo ? clamp(value(n.input(op++)).scalar) : lir::i64(0);
    ExprRef hi = s.has_hi ? clamp(value(n.input(op++)).scalar) : size;
    ExprRef len = (s.has_lo || s.has_hi) ? F.let("length", lir::max(lir::sub(hi, lo), lir::i64(0))) : size;
    r.start.push_back(lo);
    r.count.push_back(len);
    r.kept.push_back(true);
    r.result_dims.push_back(len);
  }
  return r;
}

Tensor GraphLowering::index(const ir::IndexNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0));
  Region r = region(n, x, n.specs(), 1);
  size_t rank = x.dims.size();
  std::vector<ExprRef> strides(rank);
  ExprRef s = lir::i64(1);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = s;
    if (d > 0) s = F.let("stride", lir::mul(s, x.dims[d]));
  }
  Tensor out;
  out.dtype = x.dtype;
  out.rank = n.output_types()[0].rank();
  out.dims = r.result_dims;
  // Scalar indices, then at most one slice, then whole dimensions: a contiguous view.
  size_t d = 0;
  while (d < rank && !r.kept[d]) ++d;
  size_t first_kept = d;
  if (d < rank && d < n.specs().size()) ++d;  // one slice
  bool contiguous = true;
  for (; d < rank; ++d) {
    bool whole = d >= n.specs().size() ||
                 (n.specs()[d].kind == IndexSpec::Kind::Slice && !n.specs()[d].has_lo && !n.specs()[d].has_hi);
    if (!whole) contiguous = false;
  }
  (void)first_kept;
  ExprRef offset = lir::i64(0);
  for (size_t k = 0; k < rank; ++k) offset = lir::add(offset, lir::mul(r.start[k], strides[k]));
  if (out.rank == 0) {
    out.scalar = F.let("element", lir::load(x.data, offset));
    if (dest) F.store(dest, lir::i64(0), out.scalar);
    return out;
  }
  if (contiguous && !dest) {
    out.data = F.let_pointer("view", x.data, F.let("offset", offset), !x.storage.empty());
    out.storage = x.storage;
    return out;
  }
  ExprRef total;
  out.data = F.buffer_for(dest, "gathered", out.dtype, out.dims, {n.loc(), "the value"}, &out.storage, &total);
  if (contiguous) {
    F.copy(out.data, F.let_pointer("view", x.data, F.let("offset", offset), false), total);
    return out;
  }
  // Gather: loops over the kept dimensions.
  std::vector<size_t> kept_dims;
  for (size_t k = 0; k < rank; ++k)
    if (r.kept[k]) kept_dims.push_back(k);
  std::vector<ExprRef> out_strides(kept_dims.size());
  ExprRef os = lir::i64(1);
  for (size_t k = kept_dims.size(); k-- > 0;) {
    out_strides[k] = os;
    os = F.let("stride", lir::mul(os, out.dims[k]));
  }
  F.loop_nest(out.dims, [&](const std::vector<ExprRef>& idx) {
    ExprRef src = offset, dst = lir::i64(0);
    for (size_t q = 0; q < kept_dims.size(); ++q) {
      src = lir::add(src, lir::mul(idx[q], strides[kept_dims[q]]));
      dst = lir::add(dst, lir::mul(idx[q], out_strides[q]));
    }
    F.store(out.data, dst, lir::load(x.data, src));
  });
  return out;
}

Tensor GraphLowering::update(const ir::UpdateNode& n, const ExprRef& dest) {
  const Value& x_value = n.input(0);
  Tensor out;
  out.dtype = x_value.type().dtype;
  out.rank = x_value.type().rank();
  out.dims = dims(x_value);
  ExprRef total;
  // The base is computed straight into the result when it is element-wise and used only here.
  Tensor x;
  if (fusable(x_value, n)) {
    out.data = F.buffer_for(dest, "updated", out.dtype, out.dims, {n.loc(), "the value"}, &out.storage, &total);
    x = elementwise(*x_value.node, out.data);
  } else {
    x = value(x_value);
    out.data = F.buffer_for(dest, "updated", out.dtype, out.dims, {n.loc(), "the value"}, &out.storage, &total);
    F.copy(out.data, x.data, total);
  }
  Tensor v = value(n.input(1));
  Region r = region(n, out, n.specs(), 2);
  // v must broadcast to the region.
  const std::vector<ExprRef>& rd = r.result_dims;
  size_t vr = size_t(v.rank);
  std::vector<ExprRef> vstrides(rd.size(), lir::i64(0));
  ExprRef vs = lir::i64(1);
  for (size_t j = vr; j-- > 0;) {
    size_t d = j + rd.size() - vr;
    ExprRef vd = v.dims[j];
    std::vector<MessagePart> msg{{std::string(n.accumulate() ? "inc" : "set") + ": a value of shape ", nullptr}};
    auto a = shape_parts(v.dims), b = shape_parts(rd);
    msg.insert(msg.end(), a.begin(), a.end());
    msg.push_back({" cannot be stored into a region of shape ", nullptr});
    msg.insert(msg.end(), b.begin(), b.end());
    F.check(lir::logical_or(lir::eq(vd, lir::i64(1)), lir::eq(vd, rd[d])), n.loc(), msg);
    vstrides[d] = F.let("stride", lir::select(lir::eq(vd, lir::i64(1)), lir::i64(0), vs));
    vs = F.let("stride", lir::mul(vs, vd));
  }
  size_t rank = out.dims.size();
  std::vector<ExprRef> strides(rank);
  ExprRef s = lir::i64(1);
  for (size_t d = rank; d-- > 0;) {
    strides[d] = s;
    if (d > 0) s = F.let("stride", lir::mul(s, out.dims[d]));
  }
  ExprRef base = lir::i64(0);
  for (size_t d = 0; d < rank; ++d) base = lir::add(base, lir::mul(r.start[d], strides[d]));
  base = F.let("offset", base);
  std::vector<size_t> kept;
  for (size_t d = 0; d < rank; ++d)
    if (r.kept[d]) kept.push_back(d);
  F.loop_nest(rd, [&](const std::vector<ExprRef>& idx) {
    ExprRef at = base, voff = lir::i64(0);
    for (size_t q = 0; q < kept.size(); ++q) {
      at = lir::add(at, lir::mul(idx[q], strides[kept[q]]));
      voff = lir::add(voff, lir::mul(idx[q], vstrides[q]));
    }
    ExprRef val = v.rank == 0 ? v.scalar : lir::load(v.data, voff);
    if (n.accumulate()) val = lir::binary(ir::BinaryOp::Add, lir::load(out.data, at), val);
    F.store(out.data, at, val);
  });
  (void)x;
  return out;
}

// ---- scans

std::vector<Tensor> GraphLowering::scan(const ir::ScanNode& n) {
  const ir::ScanInfo& info = n.info();
  const ir::Graph& body = n.body();
  F.comment("scan at " + loc_text(n.loc()));
  // Every input first, in order, as the interpreter computes them (ir::topological_order) before it
  // runs the scan: when an input fails too (an index out of range in a param, say), that error
  // comes before this scan's own checks of `steps` and of the sequences, on every backend.
  // An init the in-place rewrite marked is computed later, straight into the state's storage
  // (only its shape checks happen here): it cannot fail, and nothing else reads it.
  std::vector<bool> in_place(info.states.size(), false);
  for (size_t s = 0; s < info.states.size(); ++s) {
    const Value& init = n.input(info.init_input(int(s)));
    in_place[s] = info.states[s].init_in_place && n.output_types()[s].rank() >= 2 && uses(init) == 1 && !value_memo_.count(init.node.get());
  }
  for (int i = 0; i < n.num_inputs(); ++i) {
    int state = i - info.init_input(0);
    if (state >= 0 && state < int(info.states.size()) && in_place[size_t(state)])
      dims(n.input(i));
    else
      value(n.input(i));
  }

  // The number of steps, and the checks of `steps` against the sequences.
  ExprRef steps;
  if (info.has_steps) {
    steps = value(n.input(info.steps_input())).scalar;
    F.check(lir::ge(steps, lir::i64(0)), n.loc(),
            {{"steps is ", nullptr}, {"", steps}, {"; it must be >= 0", nullptr}});
  }
  std::vector<Tensor> seqs;
  std::vector<ExprRef> seq_row_sizes;
  for (size_t s = 0; s < info.sequences.size(); ++s) {
    const ir::ScanSequence& seq = info.sequences[s];
    Tensor u = value(n.input(info.sequence_input(int(s))));
    seqs.push_back(u);
    std::vector<ExprRef> row(u.dims.begin() + 1, u.dims.end());
    seq_row_sizes.push_back(F.product(row, "row"));
    // A length is never negative: only a span of taps can make `allowed` negative.
    ExprRef allowed = seq.span() == 0 ? u.dims[0]
                                      : F.let("allowed", lir::max(lir::sub(u.dims[0], lir::i64(seq.span())), lir::i64(0)));
    if (info.has_steps) {
      F.check(lir::ge(allowed, steps), n.loc(),
              {{"sequence '" + seq.label + "' has length ", nullptr}, {"", u.dims[0]},
               {" and taps [" + seq.taps_text() + "]: too short for steps = ", nullptr}, {"", steps},
               {" (it allows ", nullptr}, {"", allowed}, {")", nullptr}});
    } else {
      steps = s == 0 ? allowed : F.let("steps", lir::min(steps, allowed));
    }
  }
  steps = F.let("steps", steps);

  // The body, lowered with its params: shapes are known before the loop, values in it.
  std::vector<Tensor> body_params(body.params.size());
  body_params[size_t(info.body_index_param())] = Tensor{DType::I64, 0, nullptr, nullptr, {}, ""};
  for (size_t s = 0; s < info.sequences.size(); ++s)
    for (size_t k = 0; k < info.sequences[s].taps.size(); ++k) {
      Tensor row;
      row.dtype = seqs[s].dtype;
      row.rank = seqs[s].rank - 1;
      row.dims.assign(seqs[s].dims.begin() + 1, seqs[s].dims.end());
      body_params[size_t(info.body_sequence_param(int(s), int(k)))] = row;
    }
  // Where the rows of each output live:
  //  - All: every step's row, after `prefix` rows holding a state's init (so X[t - k] is the row
  //    of step t - k, init rows included);
  //  - Ring: `ring` slots reused in turn (a state nothing reads keeps its taps' rows; an output
  //    with a window keeps its last rows);
  //  - None: nothing (a scalar state nothing reads lives in variables only).
  struct RowStore {
    enum class Kind { All, Ring, None } kind = Kind::All;
    int64_t prefix = 0;
    int64_t ring = 0;
    int64_t window = 0;  // rows of the result; 0 for all of them
    ExprRef base;
    std::string storage;
    ExprRef row_size;
    // The buffer row of step s (s may be negative: a state's init rows).
    ExprRef row_of(ExprRef s) const {
      if (kind == Kind::Ring && ring == 1) return lir::i64(0);
      ExprRef r = lir::add(std::move(s), lir::i64(prefix));
      return kind == Kind::Ring ? lir::binary(ir::BinaryOp::Mod, r, lir::i64(ring)) : r;
    }
  };
  struct StateStorage {
    Tensor init;
    int64_t lag = 0;      // max lag L
    bool scalar = false;  // rank 0: its taps are kept in variables
    std::vector<ExprRef> row_dims;
    std::vector<ExprRef> registers;  // scalar: registers[k - 1] holds X[t - k]
  };
  std::vector<StateStorage> states(info.states.size());
  std::vector<RowStore> stores(size_t(info.num_outputs()));
  for (size_t s = 0; s < info.states.size(); ++s) {
    StateStorage& st = states[s];
    const Value& init = n.input(info.init_input(int(s)));
    if (in_place[s]) {
      st.init.dtype = init.type().dtype;
      st.init.rank = init.type().rank();
      st.init.dims = dims(init);
    } else {
      st.init = value(init);
    }
    st.lag = info.states[s].max_lag();
    st.scalar = n.output_types()[s].rank() == 1;
    st.row_dims = st.init.dims;
    if (info.states[s].init_has_rows()) st.row_dims.erase(st.row_dims.begin());
    Tensor p;
    p.dtype = st.init.dtype;
    p.rank = int(st.row_dims.size());
    p.dims = st.row_dims;
    for (size_t k = 0; k < info.states[s].lags.size(); ++k)
      body_params[size_t(info.body_state_param(int(s), int(k)))] = p;
  }
  for (int p = 0; p < info.num_params; ++p) body_params[size_t(info.body_param(p))] = value(n.input(info.param_input(p)));
  GraphLowering inner(F, body, std::move(body_params));

  // Step shapes of the outputs, before the loop.
  std::vector<std::vector<ExprRef>> row_dims(size_t(info.num_outputs()));
  std::vector<ExprRef> row_sizes(size_t(info.num_outputs()));
  inner.begin_step_shapes();
  for (int i = 0; i < info.num_outputs(); ++i) {
    row_dims[size_t(i)] = i < int(states.size()) ? states[size_t(i)].row_dims : inner.dims(body.results[size_t(i)]);
    for (const ExprRef& d : row_dims[size_t(i)])
      SCANGEN_CHECK(d != nullptr, "the step shape of '" + info.output_name(i) + "' depends on a step value");
    row_sizes[size_t(i)] = F.product(row_dims[size_t(i)], "row");
  }
  inner.end_step_shapes();

  auto rows_site = [&](int i) {
    return FunctionLowering::BufferSite{n.loc(), "the rows of '" + info.output_name(i) + "'"};
  };
  // A scan that stops on `until` starts with room for some rows and doubles it when full; others
  // know their number of steps.
  ExprRef rows_held = steps;
  if (info.has_until) rows_held = F.decl("rows_held", lir::min(steps, lir::i64(kInitialUntilRows)));
  bool growable = info.has_until;

  for (int i = 0; i < info.num_outputs(); ++i) {
    RowStore& store = stores[size_t(i)];
    bool is_state = i < int(states.size());
    bool scalar_state = is_state && states[size_t(i)].scalar;
    store.prefix = is_state && !scalar_state ? states[size_t(i)].lag : 0;
    store.window = info.window(i);
    store.row_size = row_sizes[size_t(i)];
    bool used = uses(n.output(i)) > 0;
    if (!used && scalar_state) {
      store.kind = RowStore::Kind::None;
    } else if (!used) {
      store.kind = RowStore::Kind::Ring;  // only the taps' rows
      store.ring = store.prefix + 1;
    } else if (store.window > 0) {
      store.kind = RowStore::Kind::Ring;
      store.ring = std::max(store.prefix + 1, store.window);
    }
    // A state that keeps at most its last row, with an element-wise step, lives in one row.
    if (is_state && !scalar_state && store.kind == RowStore::Kind::Ring && store.window <= 1 &&
        info.states[size_t(i)].lags == std::vector<int64_t>{1} && updates_in_one_row(n, i))
      store.ring = 1;
    if (store.kind == RowStore::Kind::None) continue;
    DType d = n.output_types()[size_t(i)].dtype;
    bool all = store.kind == RowStore::Kind::All;
    ExprRef rows = all ? lir::add(rows_held, lir::i64(store.prefix)) : lir::i64(store.ring);
    auto [count, failure] = F.rows_count(rows, all ? rows_held : rows, row_dims[size_t(i)], d, rows_site(i));
    store.base = F.allocate(info.output_name(i), d, count, &store.storage, n.loc(), std::move(failure), growable && all);
  }
  // Scalar states start in their registers; other states copy their init rows into theirs.
  for (size_t s = 0; s < states.size(); ++s) {
    StateStorage& st = states[s];
    const std::string& name = info.states[s].name;
    if (st.scalar) {
      for (int64_t k = 1; k <= st.lag; ++k) {
        ExprRef init = st.init.rank == 0 ? st.init.scalar : lir::load(st.init.data, lir::i64(st.lag - k));
        st.registers.push_back(F.decl(name + "_" + std::to_string(k), init));
      }
    } else if (in_place[s]) {
      value_into(n.input(info.init_input(int(s))), stores[s].base);
    } else if (st.lag > 0) {
      F.copy(stores[s].base, st.init.data, F.let("init_count", lir::mul(lir::i64(st.lag), stores[s].row_size)));
    }
  }

  ExprRef taken = info.has_until ? F.decl("taken", steps) : steps;
  F.loop("step", lir::i64(0), steps, lir::LoopKind::Time, [&](ExprRef step) {
    if (growable) {
      F.when(lir::eq(step, rows_held), [&] {
        // Twice the rows, at most `steps` (rows_held < steps here; rows_held * 2 might overflow).
        F.assign(rows_held, lir::add(rows_held, lir::min(rows_held, lir::sub(steps, rows_held))));
        for (int i = 0; i < info.num_outputs(); ++i) {
          const RowStore& store = stores[size_t(i)];
          if (store.kind != RowStore::Kind::All) continue;
          DType d = n.output_types()[size_t(i)].dtype;
          auto [count, failure] = F.rows_count(lir::add(rows_held, lir::i64(store.prefix)), rows_held, row_dims[size_t(i)], d,
                                               rows_site(i));
          F.grow(store.base, store.storage, count, lir::mul(lir::add(step, lir::i64(store.prefix)), store.row_size), n.loc(),
                 std::move(failure));
        }
      });
    }
    inner.set_param(size_t(info.body_index_param()), Tensor{DType::I64, 0, step, nullptr, {}, ""});
    for (size_t s = 0; s < info.sequences.size(); ++s) {
      const ir::ScanSequence& seq = info.sequences[s];
      const Tensor& u = seqs[s];
      for (size_t k = 0; k < seq.taps.size(); ++k) {
        int64_t tap = seq.taps[k];
        ExprRef row = info.reverse ? lir::sub(lir::i64(-1 - seq.max_tap() + tap), step)
                                   : lir::add(step, lir::i64(tap - seq.min_tap()));
        if (info.reverse) row = lir::add(u.dims[0], row);
        Tensor p;
        p.dtype = u.dtype;
        p.rank = u.rank - 1;
        p.dims.assign(u.dims.begin() + 1, u.dims.end());
        std::string hint = seq.label + "_" + (tap < 0 ? "m" + std::to_string(-tap) : tap > 0 ? "p" + std::to_string(tap) : "t");
        if (p.rank == 0) {
          p.scalar = F.let(hint, lir::load(u.data, row));
        } else {
          p.data = F.let_pointer(hint, u.data, lir::mul(row, seq_row_sizes[s]), false);
        }
        inner.set_param(size_t(info.body_sequence_param(int(s), int(k))), p);
      }
    }
    // The row each output writes this step.
    std::vector<ExprRef> current(size_t(info.num_outputs()));
    for (int i = 0; i < info.num_outputs(); ++i) {
      const RowStore& store = stores[size_t(i)];
      if (store.kind == RowStore::Kind::None || (i < int(states.size()) && states[size_t(i)].scalar)) continue;
      ExprRef row = F.let("row", store.row_of(step));
      current[size_t(i)] = F.let_pointer(info.output_name(i) + "_t", store.base, lir::mul(row, store.row_size), true);
    }
    for (size_t s = 0; s < states.size(); ++s) {
      StateStorage& st = states[s];
      const ir::ScanState& decl = info.states[s];
      for (size_t k = 0; k < decl.lags.size(); ++k) {
        int64_t lag = decl.lags[k];
        Tensor p;
        p.dtype = st.init.dtype;
        p.rank = int(st.row_dims.size());
        p.dims = st.row_dims;
        if (st.scalar) {
          p.scalar = st.registers[size_t(lag - 1)];
        } else if (stores[s].kind == RowStore::Kind::Ring && stores[s].ring == 1) {
          // One row, read and overwritten through one pointer (two would alias under __restrict).
          p.data = current[s];
        } else {
          ExprRef row = F.let("row", stores[s].row_of(lir::sub(step, lir::i64(lag))));
          p.data = F.let_pointer(decl.name + "_m" + std::to_string(lag), stores[s].base,
                                 lir::mul(row, stores[s].row_size), false);
        }
        inner.set_param(size_t(info.body_state_param(int(s), int(k))), p);
      }
    }
    inner.compute_deferred();
    // The outputs of this step, written into their rows.
    std::vector<ExprRef> new_scalars(states.size());
    for (int i = 0; i < info.num_outputs(); ++i) {
      const Value& result = body.results[size_t(i)];
      const RowStore& store = stores[size_t(i)];
      bool scalar_state = i < int(states.size()) && states[size_t(i)].scalar;
      if (scalar_state) {
        new_scalars[size_t(i)] = F.let(info.states[size_t(i)].name, inner.value(result).scalar);
        if (store.kind != RowStore::Kind::None) F.store(store.base, store.row_of(step), new_scalars[size_t(i)]);
      } else if (result.type().rank() == 0) {
        F.store(current[size_t(i)], lir::i64(0), inner.value(result).scalar);
      } else {
        inner.value_into(result, current[size_t(i)]);
      }
    }
    // The condition as it is before the registers rotate (it may be a bare read of one of them).
    ExprRef stop;
    if (info.has_until) stop = F.let("stop", inner.value(body.results.back()).scalar);
    // Scalar states move one step back: X[t - k] becomes X[t - k - 1].
    for (size_t s = 0; s < states.size(); ++s) {
      StateStorage& st = states[s];
      if (!st.scalar) continue;
      for (size_t k = st.registers.size(); k-- > 1;) F.assign(st.registers[k], st.registers[k - 1]);
      if (!st.registers.empty()) F.assign(st.registers[0], new_scalars[s]);
    }
    if (stop) {
      F.when(stop, [&] {
        F.assign(taken, lir::add(step, lir::i64(1)));
        auto brk = std::make_shared<Stmt>();
        brk->kind = StmtKind::Break;
        F.emit(brk);
      });
    }
  });

  std::vector<Tensor> outs;
  for (int i = 0; i < info.num_outputs(); ++i) {
    const RowStore& store = stores[size_t(i)];
    Tensor t;
    t.dtype = n.output_types()[size_t(i)].dtype;
    t.rank = n.output_types()[size_t(i)].rank();
    const std::string& name = info.output_name(i);
    if (store.kind == RowStore::Kind::All) {
      t.dims.push_back(taken);
      t.data = F.let_pointer(name + "_results", store.base, lir::mul(lir::i64(store.prefix), store.row_size), true);
      t.storage = store.storage;
    } else if (store.kind == RowStore::Kind::Ring && store.window > 0) {
      // The last min(taken, window) rows, in iteration order.
      ExprRef rows = F.let(name + "_rows", lir::min(taken, lir::i64(store.window)));
      t.dims.push_back(rows);
      if (store.window == 1) {
        ExprRef last = F.let("row", store.row_of(lir::max(lir::sub(taken, lir::i64(1)), lir::i64(0))));
        t.data = F.let_pointer(name + "_last", store.base, lir::mul(last, store.row_size), true);
        t.storage = store.storage;
      } else {
        std::vector<ExprRef> window_dims{lir::i64(store.window)};
        window_dims.insert(window_dims.end(), row_dims[size_t(i)].begin(), row_dims[size_t(i)].end());
        ExprRef count;
        t.data = F.buffer_for(nullptr, name + "_window", t.dtype, window_dims, rows_site(i), &t.storage, &count);
        ExprRef first = F.let("first", lir::sub(taken, rows));
        F.loop("j", lir::i64(0), rows, lir::LoopKind::Serial, [&](ExprRef j) {
          ExprRef from = F.let("row", store.row_of(lir::add(first, j)));
          F.copy(F.let_pointer(name + "_to", t.data, lir::mul(j, store.row_size), true),
                 F.let_pointer(name + "_from", store.base, lir::mul(from, store.row_size), false), store.row_size);
        });
      }
    } else {
      t.dims.push_back(taken);  // nothing reads it
    }
    t.dims.insert(t.dims.end(), row_dims[size_t(i)].begin(), row_dims[size_t(i)].end());
    outs.push_back(t);
  }
  return outs;
}

// ---- functions

// The typed API takes an argument's shape from its caller: no dimension may be negative, and the
// elements must fit the limit every backend allocates to (the interpreter's arguments are tensors
// in memory, which always do).
void FunctionLowering::check_argument_size(const ir::ArgDecl& arg, const Tensor& t) {
  const std::string what = "argument '" + arg.name + "' of '" + fn_.name + "'";
  for (size_t axis = 0; axis < t.dims.size(); ++axis)
    check(lir::ge(t.dims[axis], lir::i64(0)), arg.loc,
          {{what + ": dimension " + std::to_string(axis) + " is ", nullptr}, {"", t.dims[axis]},
           {"; dimensions must be >= 0", nullptr}});
  if (t.dims.empty()) return;
  std::vector<MessagePart> too_large{{what + " (" + dtype_text(t.dtype), nullptr}};
  for (MessagePart& p : shape_parts(t.dims)) too_large.push_back(std::move(p));
  too_large.push_back({") is larger than " + std::to_string(kMaxTensorBytes) + " bytes", nullptr});
  checked_count(t.dims, t.dtype, arg.loc, std::move(too_large));
}

void FunctionLowering::run() {
  out_.name = fn_.name;
  // The C++ printer names the result parameters result0, result1, ...: no argument may take them.
  for (size_t i = 0; i < fn_.results.size(); ++i) names.reserve("result" + std::to_string(i));
  out_.symbol = names.fresh(fn_.name + "_impl");
  out_.body = lir::block();
  cur = &out_.body->body;
  std::vector<Tensor> params;
  for (const ir::ArgDecl& a : fn_.args) {
    lir::Param p;
    p.name = names.fresh(a.name);
    p.dtype = a.type.dtype;
    p.rank = a.type.rank();
    Tensor t;
    t.dtype = p.dtype;
    t.rank = p.rank;
    if (p.rank == 0) {
      t.scalar = lir::var(p.name, p.dtype);
    } else {
      t.data = lir::ptr_var(p.name, p.dtype);
      for (int d = 0; d < p.rank; ++d) {
        p.dims.push_back(names.fresh(p.name + "_d" + std::to_string(d)));
        t.dims.push_back(lir::var(p.dims.back(), DType::I64));
      }
    }
    out_.params.push_back(p);
    params.push_back(t);
  }
  // The declared shapes of the arguments, checked in the interpreter's order and words.
  struct Bound {
    ExprRef value;
    std::string source;
  };
  std::map<std::string, Bound> symbols;
  for (size_t i = 0; i < fn_.args.size(); ++i) {
    const ir::Type& t = fn_.args[i].type;
    if (t.is_scalar() && is_int(t.dtype))
      symbols[fn_.args[i].name] = {let(fn_.args[i].name + "_value", lir::cast(DType::I64, params[i].scalar)),
                                   "parameter '" + fn_.args[i].name + "'"};
  }
  auto check_shape = [&](const std::string& what, const std::string& name, const ir::Type& declared,
                         const std::vector<ExprRef>& dims, const Loc& loc, bool binding) {
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      const ir::Dim& d = declared.shape[axis];
      std::vector<MessagePart> msg{{what + ": dimension " + std::to_string(axis) + " is ", nullptr}, {"", dims[axis]}};
      if (d.kind() == ir::Dim::Kind::Const) {
        msg.push_back({" but must be " + std::to_string(d.offset()), nullptr});
        check(lir::eq(dims[axis], lir::i64(d.offset())), loc, msg);
      } else if (d.kind() == ir::Dim::Kind::Sym) {
        auto it = symbols.find(d.symbol_name());
        if (it == symbols.end()) {
          SCANGEN_CHECK(binding, "unbound result symbol");
          symbols[d.symbol_name()] = {dims[axis], "dimension " + std::to_string(axis) + " of '" + name + "'"};
          continue;
        }
        msg.push_back({" but " + d.symbol_name() + " = ", nullptr});
        msg.push_back({"", it->second.value});
        msg.push_back({" (" + it->second.source + ")", nullptr});
        check(lir::eq(dims[axis], it->second.value), loc, msg);
      }
    }
  };
  for (size_t i = 0; i < fn_.args.size(); ++i) check_argument_size(fn_.args[i], params[i]);
  for (size_t i = 0; i < fn_.args.size(); ++i)
    check_shape("argument '" + fn_.args[i].name + "' of '" + fn_.name + "'", fn_.args[i].name, fn_.args[i].type,
                params[i].dims, fn_.args[i].loc, true);
  // Past the checks, a dimension declared as a constant is that constant, and every occurrence of
  // a symbol is its first binding: later shape arithmetic and checks fold away.
  for (size_t i = 0; i < fn_.args.size(); ++i)
    for (size_t axis = 0; axis < params[i].dims.size(); ++axis) {
      const ir::Dim& d = fn_.args[i].type.shape[axis];
      if (d.kind() == ir::Dim::Kind::Const) params[i].dims[axis] = lir::i64(d.offset());
      if (d.kind() == ir::Dim::Kind::Sym) params[i].dims[axis] = symbols.at(d.symbol_name()).value;
    }

  GraphLowering g(*this, fn_.graph, params);
  std::vector<Tensor> results;
  for (const ir::Value& r : fn_.graph.results) results.push_back(g.value(r));
  for (size_t i = 0; i < results.size(); ++i) {
    std::string what = fn_.results.size() == 1 ? "the result of '" + fn_.name + "'"
                                               : "result '" + fn_.result_name(i) + "' of '" + fn_.name + "'";
    check_shape(what, fn_.result_name(i), fn_.results[i].type, results[i].dims, fn_.results[i].loc, false);
  }
  std::set<std::string> released;
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor t = results[i];
    lir::Param rp;
    rp.name = "result" + std::to_string(i);
    rp.dtype = fn_.results[i].type.dtype;
    rp.rank = fn_.results[i].type.rank();
    out_.results.push_back(rp);
    auto s = std::make_shared<Stmt>();
    s->kind = StmtKind::Result;
    s->result_index = int(i);
    if (t.rank == 0) {
      s->value = t.scalar;
      emit(s);
      continue;
    }
    if (t.storage.empty() || released.count(t.storage)) {
      // An argument, a view of one, or a buffer already handed out: the result gets a copy.
      std::string storage;
      ExprRef total;
      ExprRef copy_ptr = buffer_for(nullptr, "result", t.dtype, t.dims, {fn_.results[i].loc, "the value"}, &storage, &total);
      copy(copy_ptr, t.data, total);
      t.data = copy_ptr;
      t.storage = storage;
    }
    released.insert(t.storage);
    s->storage = t.storage;
    s->value = t.data;
    s->args = t.dims;
    emit(s);
  }
}

}  // namespace

lir::Module lower_program(const ir::Program& program) {
  lir::Module m;
  m.source_path = program.source_path;
  for (const ir::Function& fn : program.functions) {
    lir::Function f;
    FunctionLowering lowering(fn, f);
    // The typed API names its functions after the .scan functions, in the namespace that also
    // holds the implementations: an implementation symbol must not be any function's name
    // (fn g's g_impl against a fn named g_impl).
    for (const ir::Function& other : program.functions) lowering.names.reserve(other.name);
    lowering.run();
    lir::hoist_invariants(f);
    lir::remove_unused(f);
    m.functions.push_back(std::move(f));
  }
  return m;
}

}  // namespace scangen::codegen
