// FunctionLowering: builds one function's loop IR. It holds the block being emitted into and the
// statement builders every part of the lowering uses (lets, loops, checks, buffers and the
// checks of their sizes); run() (functions.cpp) lowers the function's arguments, body and results.
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "codegen/lowering/common.h"
#include "scangen/runtime/tensor.h"

namespace scangen::codegen::lowering {

class FunctionLowering {
 public:
  FunctionLowering(const ir::Function& fn, lir::Function& out) : fn_(fn), out_(out) {}

  void run();
  // The checks of a tensor the caller passes (an argument, or a result's memory): dims >= 0, and
  // the elements within kMaxTensorBytes; `what` names it in the messages.
  void check_caller_tensor_size(const std::string& what, const Loc& loc, const Tensor& t);

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
    StmtRef s = lir::let_stmt(names.fresh(hint), value);
    emit(s);
    ExprRef bound = lir::var(s->var, value->type);
    if (pure) scopes_.back().emplace(hash, std::make_pair(value, bound));
    return bound;
  }

  ExprRef let_pointer(const std::string& hint, const ExprRef& base, ExprRef offset, bool writable) {
    if (auto c = lir::const_int(offset); c && *c == 0) return base;
    StmtRef s = lir::let_pointer_stmt(names.fresh(hint), base, std::move(offset), writable);
    emit(s);
    return lir::ptr_var(s->var, base->type);
  }

  // const p = cond ? a : b, two read-only pointers; the loop IR's analyses take it for a pointer
  // into a's buffer (lir::pointer_base), which the caller makes the one the loop writes.
  ExprRef choose_pointer(const std::string& hint, ExprRef cond, const ExprRef& a, const ExprRef& b) {
    StmtRef s = lir::let_pointer_stmt(names.fresh(hint), lir::select(std::move(cond), a, b), nullptr, false);
    emit(s);
    return lir::ptr_var(s->var, a->type);
  }

  ExprRef decl(const std::string& hint, ExprRef init) {
    StmtRef s = lir::decl_stmt(names.fresh(hint), std::move(init));
    emit(s);
    mutable_vars_.insert(s->var);
    return lir::var(s->var, s->value->type);
  }

  void assign(const ExprRef& v, ExprRef value) {
    emit(lir::assign_stmt(v->name, std::move(value)));
  }

  void store(const ExprRef& ptr, ExprRef index, ExprRef value) {
    emit(lir::store_stmt(ptr->name, std::move(index), std::move(value)));
  }

  // Fails the program at `loc` with the catalogue's error `id` unless `cond` holds.
  void check(ExprRef cond, const Loc& loc, RuntimeErrorId id, const std::vector<ErrorArg>& args) {
    check(std::move(cond), loc, message(id, args));
  }
  void check(ExprRef cond, const Loc& loc, std::vector<MessagePart> failure) {
    if (cond->kind == lir::ExprKind::Imm && cond->imm.i) return;
    emit(lir::check_stmt(std::move(cond), loc.line, loc.col, std::move(failure)));
  }

  void call(const std::string& callee, std::vector<ExprRef> args) {
    emit(lir::call_stmt(callee, std::move(args)));
  }

  void comment(const std::string& text) {
    emit(lir::comment_stmt(text));
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
    if (bytes)
      return message(RuntimeErrorId::cannot_allocate, {ErrorArg::text_of(what), ErrorArg::text_of(dtype_text(elem)),
                                                       ErrorArg::shape(dims), ErrorArg::number(bytes)});
    return message(RuntimeErrorId::cannot_allocate_over_limit,
                   {ErrorArg::text_of(what), ErrorArg::text_of(dtype_text(elem)), ErrorArg::shape(dims),
                    ErrorArg::text_of(std::to_string(kMaxTensorBytes))});
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
    StmtRef s = lir::alloc_stmt(names.fresh(hint), elem, storage, std::move(count), growable, loc.line, loc.col,
                                std::move(failure));
    emit(s);
    allocations_[storage] = s;
    if (storage_name) *storage_name = storage;
    return lir::ptr_var(s->var, elem);
  }

  // Grows a growable buffer to `count` elements keeping the first `keep`; fails like allocate().
  void grow(const ExprRef& ptr, const std::string& storage, ExprRef count, ExprRef keep, const Loc& loc,
            std::vector<MessagePart> failure) {
    emit(lir::grow_stmt(ptr->name, storage, std::move(count), std::move(keep), loc.line, loc.col, std::move(failure)));
  }

  // for (var = begin; var < end; ++var) { body() }
  template <class Body>
  void loop(const std::string& hint, ExprRef begin, ExprRef end, lir::LoopKind kind, Body&& body) {
    StmtRef s = lir::for_stmt(kind == lir::LoopKind::Time ? names.fresh("step") : names.fresh(hint), std::move(begin),
                              std::move(end), kind);
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
    StmtRef s = lir::if_stmt(std::move(cond));
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
  // ---- results into the caller's memory (functions.cpp)
  struct Symbol {
    ExprRef value;
    std::string source;  // "parameter 'n'", "dimension 0 of 'x'"
  };
  using Symbols = std::map<std::string, Symbol>;
  void check_declared_shape(const std::string& what, const std::string& name, const ir::Type& declared,
                            const std::vector<ExprRef>& dims, const Loc& loc, bool binding, Symbols& symbols);
  std::optional<ir::Type> known_result_type(size_t i, const Symbols& symbols) const;
  void declare_caller_results(Symbols& symbols);
  void write_results(const std::vector<Tensor>& results);

  const ir::Function& fn_;
  lir::Function& out_;
  // The allocation of each storage, by its name: a result's may lend the caller's memory.
  std::map<std::string, StmtRef> allocations_;
  // The form with results in the caller's memory: its run-time flag, and per tensor result the
  // caller's pointer, dims and element count (null for scalar results, and without the form).
  ExprRef into_;
  std::vector<Tensor> caller_results_;
  std::vector<ExprRef> caller_counts_;
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
}  // namespace scangen::codegen::lowering
