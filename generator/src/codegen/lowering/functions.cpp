// A function: its arguments (checked like the interpreter's), its body, and its results, which go
// to memory of their own or, in the form that writes them into the caller's memory, there.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

// ---- functions

// The typed API takes an argument's shape from its caller: no dimension may be negative, and the
// elements must fit the limit every backend allocates to (the interpreter's arguments are tensors
// in memory, which always do). The memory a caller gives for a result is checked the same way.
void FunctionLowering::check_caller_tensor_size(const std::string& what, const Loc& loc, const Tensor& t) {
  for (size_t axis = 0; axis < t.dims.size(); ++axis)
    check(lir::ge(t.dims[axis], lir::i64(0)), loc, RuntimeErrorId::caller_dimension_negative,
          {ErrorArg::text_of(what), ErrorArg::text_of(std::to_string(axis)), ErrorArg::number(t.dims[axis])});
  if (t.dims.empty()) return;
  checked_count(t.dims, t.dtype, loc,
                message(RuntimeErrorId::caller_tensor_too_large,
                        {ErrorArg::text_of(what), ErrorArg::text_of(dtype_text(t.dtype)), ErrorArg::shape(t.dims),
                         ErrorArg::text_of(std::to_string(kMaxTensorBytes))}));
}

// Checks `dims` against a declared type, in the interpreter's words: a constant, or a symbol bound
// before (or bound here, by the first argument that has it, when `binding`).
void FunctionLowering::check_declared_shape(const std::string& what, const std::string& name, const ir::Type& declared,
                                            const std::vector<ExprRef>& dims, const Loc& loc, bool binding,
                                            Symbols& symbols) {
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    const ir::Dim& d = declared.shape[axis];
    const ErrorArg where = ErrorArg::text_of(what), at = ErrorArg::text_of(std::to_string(axis));
    if (d.kind() == ir::Dim::Kind::Const) {
      check(lir::eq(dims[axis], lir::i64(d.offset())), loc, RuntimeErrorId::dimension_mismatch,
            {where, at, ErrorArg::number(dims[axis]), ErrorArg::number(lir::i64(d.offset()))});
    } else if (d.kind() == ir::Dim::Kind::Sym) {
      auto it = symbols.find(d.symbol_name());
      if (it == symbols.end()) {
        SCANGEN_CHECK(binding, "unbound result symbol");
        symbols[d.symbol_name()] = {dims[axis], "dimension " + std::to_string(axis) + " of '" + name + "'"};
        continue;
      }
      check(lir::eq(dims[axis], it->second.value), loc, RuntimeErrorId::dimension_mismatch_bound,
            {where, at, ErrorArg::number(dims[axis]), ErrorArg::text_of(d.symbol_name()),
             ErrorArg::number(it->second.value), ErrorArg::text_of(it->second.source)});
    }
  }
}

void FunctionLowering::run() {
  out_.name = fn_.name;
  out_.signature.text = fn_.signature();
  for (const ir::ArgDecl& a : fn_.args)
    out_.signature.args.push_back({a.name, a.type.dtype, a.type.rank(), a.type.str(), a.loc});
  for (const ir::ResultDecl& r : fn_.results)
    out_.signature.results.push_back({r.name, r.type.dtype, r.type.rank(), r.type.str(), r.loc});
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
  Symbols symbols;
  for (size_t i = 0; i < fn_.args.size(); ++i) {
    const ir::Type& t = fn_.args[i].type;
    if (t.is_scalar() && is_int(t.dtype))
      symbols[fn_.args[i].name] = {let(fn_.args[i].name + "_value", lir::cast(DType::I64, params[i].scalar)),
                                   "parameter '" + fn_.args[i].name + "'"};
  }
  for (size_t i = 0; i < fn_.args.size(); ++i)
    check_caller_tensor_size("argument '" + fn_.args[i].name + "' of '" + fn_.name + "'", fn_.args[i].loc, params[i]);
  for (size_t i = 0; i < fn_.args.size(); ++i)
    check_declared_shape("argument '" + fn_.args[i].name + "' of '" + fn_.name + "'", fn_.args[i].name,
                         fn_.args[i].type, params[i].dims, fn_.args[i].loc, true, symbols);
  // Past the checks, a dimension declared as a constant is that constant, and every occurrence of
  // a symbol is its first binding: later shape arithmetic and checks fold away.
  for (size_t i = 0; i < fn_.args.size(); ++i)
    for (size_t axis = 0; axis < params[i].dims.size(); ++axis) {
      const ir::Dim& d = fn_.args[i].type.shape[axis];
      if (d.kind() == ir::Dim::Kind::Const) params[i].dims[axis] = lir::i64(d.offset());
      if (d.kind() == ir::Dim::Kind::Sym) params[i].dims[axis] = symbols.at(d.symbol_name()).value;
    }
  declare_caller_results(symbols);

  GraphLowering g(*this, fn_.graph, params);
  std::vector<Tensor> results;
  for (const ir::Value& r : fn_.graph.results) results.push_back(g.value(r));
  for (size_t i = 0; i < results.size(); ++i) {
    std::string what = fn_.results.size() == 1 ? "the result of '" + fn_.name + "'"
                                               : "result '" + fn_.result_name(i) + "' of '" + fn_.name + "'";
    check_declared_shape(what, fn_.result_name(i), fn_.results[i].type, results[i].dims, fn_.results[i].loc, false,
                         symbols);
  }
  write_results(results);
}

// ---- results into the caller's memory

// Result i's type with every dimension known before the function runs: its declared dimension,
// or, where it declares `?`, the dimension the IR infers, when that is a constant or a symbol of
// the signature. nullopt when a dimension is known only while the function runs (the steps of a
// scan with `until`, a slice or a number of steps computed from elements, `n - 2` rows that a
// scan of taps clamps at 0).
std::optional<ir::Type> FunctionLowering::known_result_type(size_t i, const Symbols& symbols) const {
  ir::Type type = fn_.results[i].type;
  const ir::Type& inferred = fn_.graph.results[i].type();
  for (size_t axis = 0; axis < type.shape.size(); ++axis) {
    ir::Dim& d = type.shape[axis];
    if (d.kind() == ir::Dim::Kind::Unknown && axis < inferred.shape.size()) d = inferred.shape[axis];
    const bool known = d.kind() == ir::Dim::Kind::Const ||
                       (d.kind() == ir::Dim::Kind::Sym && d.offset() == 0 && symbols.count(d.symbol_name()));
    if (!known) return std::nullopt;
  }
  return type;
}

// For a function whose result shapes follow from its arguments: the parameters of the form that
// writes the results into the caller's memory, and the checks of that memory, like an
// argument's, right after the arguments' (before anything is written).
void FunctionLowering::declare_caller_results(Symbols& symbols) {
  std::vector<ir::Type> known;
  for (size_t i = 0; i < fn_.results.size(); ++i) {
    std::optional<ir::Type> t = known_result_type(i, symbols);
    if (!t) return;
    known.push_back(*t);
  }
  out_.into = names.fresh("into");
  into_ = lir::var(out_.into, DType::Bool);
  for (size_t i = 0; i < fn_.results.size(); ++i) {
    lir::Param p;
    Tensor t;
    t.dtype = p.dtype = known[i].dtype;
    t.rank = p.rank = known[i].rank();
    if (p.rank > 0) {
      p.name = names.fresh("result" + std::to_string(i) + "_out");
      t.data = lir::ptr_var(p.name, p.dtype);
      for (int d = 0; d < p.rank; ++d) {
        p.dims.push_back(names.fresh(p.name + "_d" + std::to_string(d)));
        t.dims.push_back(lir::var(p.dims.back(), DType::I64));
      }
    }
    out_.outs.push_back(p);
    caller_results_.push_back(t);
  }
  const bool tensors = std::any_of(known.begin(), known.end(), [](const ir::Type& t) { return t.rank() > 0; });
  if (tensors) when(into_, [&] {
    for (size_t i = 0; i < fn_.results.size(); ++i) {
      if (known[i].rank() == 0) continue;
      const std::string what = lir::result_what(out_, i);
      check_caller_tensor_size(what, fn_.results[i].loc, caller_results_[i]);
      check_declared_shape(what, fn_.result_name(i), known[i], caller_results_[i].dims, fn_.results[i].loc, false,
                           symbols);
    }
  });
  // The room each caller's tensor has (0 elements in the form that allocates, whose dims are 0).
  for (const Tensor& t : caller_results_) caller_counts_.push_back(t.rank > 0 ? product(t.dims, "out_count") : nullptr);
}

// Each result handed over: a tensor in a buffer of its own (allocated here when it is an argument,
// a view, or a buffer another result took). In the form with results in the caller's memory, a
// result that is the whole of its buffer is computed there from the start (its allocation lends
// the caller's memory); another is copied there at the end.
void FunctionLowering::write_results(const std::vector<Tensor>& results) {
  std::set<std::string> released;
  const ExprRef allocating = into_ ? lir::unary(ir::UnaryOp::Not, into_) : nullptr;
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor t = results[i];
    lir::Param rp;
    rp.name = "result" + std::to_string(i);
    rp.dtype = fn_.results[i].type.dtype;
    rp.rank = fn_.results[i].type.rank();
    out_.results.push_back(rp);
    if (t.rank == 0) {
      emit(lir::result_stmt(int(i), t.scalar, {}, ""));
      continue;
    }
    const bool lendable = into_ && t.whole && !t.storage.empty() && !released.count(t.storage) &&
                          !allocations_.at(t.storage)->mutable_pointer;
    if (lendable) {
      lir::lend_caller_memory(*allocations_.at(t.storage), into_, caller_results_[i].data, caller_counts_[i]);
    } else if (into_) {
      when(into_, [&] { copy(caller_results_[i].data, t.data, product(t.dims, "count")); });
    }
    auto hand_over = [&] {
      if (t.storage.empty() || released.count(t.storage)) {
        // An argument, a view of one, or a buffer already handed out: the result gets a copy.
        std::string storage;
        ExprRef total;
        ExprRef copy_ptr =
            buffer_for(nullptr, "result", t.dtype, t.dims, {fn_.results[i].loc, "the value"}, &storage, &total);
        copy(copy_ptr, t.data, total);
        t.data = copy_ptr;
        t.storage = storage;
      }
      emit(lir::result_stmt(int(i), t.data, t.dims, t.storage));
    };
    if (allocating) when(allocating, hand_over);
    else hand_over();
    released.insert(t.storage);
  }
}

}  // namespace scangen::codegen::lowering
