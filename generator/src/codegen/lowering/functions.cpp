// A function: its arguments (checked like the interpreter's), its body, and its results.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

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
    if (t.rank == 0) {
      emit(lir::result_stmt(int(i), t.scalar, {}, ""));
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
    emit(lir::result_stmt(int(i), t.data, t.dims, t.storage));
  }
}

}  // namespace scangen::codegen::lowering
