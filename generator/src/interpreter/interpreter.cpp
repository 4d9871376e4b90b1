// The interpreter's entry: a function's arguments checked against its signature, its graph
// evaluated node by node (node_eval.cpp, scan_eval.cpp), its results checked.
#include "interpreter/interpreter.h"

#include "interpreter/failures.h"
#include "interpreter/node_eval.h"
#include "support/check.h"
#include "support/large_stack.h"

namespace scangen::interp {

using namespace scangen::ir;

OutputUses output_uses(const Graph& g, const std::vector<const Node*>& order) {
  OutputUses uses;
  auto mark = [&](const Value& v) {
    std::vector<bool>& u = uses[v.node.get()];
    u.resize(size_t(v.node->num_outputs()), false);
    u[size_t(v.index)] = true;
  };
  for (const Node* n : order)
    for (const Value& in : n->inputs()) mark(in);
  for (const Value& r : g.results) mark(r);
  return uses;
}

std::vector<HostTensor> GraphEval::results(const Graph& g, const std::vector<const Node*>& order, const OutputUses& uses) {
  uses_ = &uses;
  for (const Node* n : order) evaluate(*n);
  std::vector<HostTensor> out;
  for (const Value& r : g.results) out.push_back(value_of(r));
  return out;
}

const HostTensor& GraphEval::value_of(const Value& v) {
  if (const auto* p = v.node->as<ParamNode>()) return params_.at(size_t(p->index()));
  auto it = memo_.find(v.node.get());
  SCANGEN_CHECK(it != memo_.end(), "value used before it was evaluated");
  return it->second.at(size_t(v.index));
}

void GraphEval::evaluate(const Node& n) {
  if (n.kind() == NodeKind::Param || memo_.count(&n)) return;
  std::vector<HostTensor> inputs;
  inputs.reserve(n.inputs().size());
  for (const Value& in : n.inputs()) inputs.push_back(value_of(in));
  NodeEval eval(inputs, run_);
  eval.used_outputs = uses_->at(&n);
  try {
    memo_.emplace(&n, eval.visit(n));
  } catch (const AllocationError& e) {
    fail_allocation(e, "the value", n.loc());
  }
}

// ---- signatures

namespace {

// A value against its declared type: dtype, rank, then each dimension (a constant, or a symbol
// bound before or, when `binding`, bound here).
void check_value(const std::string& name, const std::string& what, const Type& decl, const HostTensor& value,
                 const Loc& loc, SymbolValues& symbols, bool binding) {
  const ErrorArg named = ErrorArg::text_of(what);
  if (value.dtype() != decl.dtype)
    fail(loc, RuntimeErrorId::argument_dtype,
         {named, ErrorArg::text_of(std::string(dtype_name(decl.dtype))), ErrorArg::text_of(std::string(dtype_name(value.dtype())))});
  if (value.rank() != decl.rank())
    fail(loc, RuntimeErrorId::argument_rank,
         {named, ErrorArg::text_of(std::to_string(decl.rank())), ErrorArg::text_of(decl.str()), ErrorArg::number(value.rank())});
  for (int axis = 0; axis < decl.rank(); ++axis) {
    const Dim& d = decl.shape[size_t(axis)];
    const int64_t have = value.dim(axis);
    const ErrorArg at = ErrorArg::text_of(std::to_string(axis));
    if (d.kind() == Dim::Kind::Const) {
      if (have != d.offset())
        fail(loc, RuntimeErrorId::dimension_mismatch, {named, at, ErrorArg::number(have), ErrorArg::number(d.offset())});
    } else if (d.kind() == Dim::Kind::Sym) {
      auto it = symbols.symbols.find(d.symbol_name());
      if (it == symbols.symbols.end()) {
        SCANGEN_CHECK(binding, "result dimension symbol '" + d.symbol_name() + "' is unbound");
        symbols.symbols.emplace(d.symbol_name(),
                                SymbolValues::Bound{have, "dimension " + std::to_string(axis) + " of '" + name + "'"});
        continue;
      }
      if (it->second.value != have)
        fail(loc, RuntimeErrorId::dimension_mismatch_bound,
             {named, at, ErrorArg::number(have), ErrorArg::text_of(d.symbol_name()), ErrorArg::number(it->second.value),
              ErrorArg::text_of(it->second.source)});
    }
  }
}

std::string argument_what(const Function& fn, size_t i) { return "argument '" + fn.args[i].name + "' of '" + fn.name + "'"; }

}  // namespace

void check_argument_types(const Function& fn, const std::vector<HostTensor>& args) {
  if (args.size() != fn.args.size())
    fail(fn.loc, RuntimeErrorId::argument_count,
         {ErrorArg::text_of(fn.name), ErrorArg::text_of(std::to_string(fn.args.size())),
          ErrorArg::text_of(fn.args.size() == 1 ? "" : "s"), ErrorArg::number(int64_t(args.size()))});
  for (size_t i = 0; i < fn.args.size(); ++i) {
    const Type& t = fn.args[i].type;
    if (!args[i].valid()) continue;  // no tensor at all: each backend says so
    const ErrorArg what = ErrorArg::text_of(argument_what(fn, i));
    if (args[i].dtype() != t.dtype)
      fail(fn.args[i].loc, RuntimeErrorId::argument_dtype,
           {what, ErrorArg::text_of(std::string(dtype_name(t.dtype))), ErrorArg::text_of(std::string(dtype_name(args[i].dtype())))});
    if (args[i].rank() != t.rank())
      fail(fn.args[i].loc, RuntimeErrorId::argument_rank,
           {what, ErrorArg::text_of(std::to_string(t.rank())), ErrorArg::text_of(t.str()), ErrorArg::number(args[i].rank())});
  }
}

SymbolValues check_arguments(const Function& fn, const std::vector<HostTensor>& args) {
  check_argument_types(fn, args);
  SymbolValues symbols;
  // A scalar integer parameter binds the symbol of its name.
  for (size_t i = 0; i < fn.args.size(); ++i) {
    const Type& t = fn.args[i].type;
    if (!t.is_scalar() || !is_int(t.dtype)) continue;
    symbols.symbols.emplace(fn.args[i].name, SymbolValues::Bound{args[i].get_as_int64(0), "parameter '" + fn.args[i].name + "'"});
  }
  for (size_t i = 0; i < fn.args.size(); ++i)
    check_value(fn.args[i].name, argument_what(fn, i), fn.args[i].type, args[i], fn.args[i].loc, symbols, true);
  return symbols;
}

void check_results(const Function& fn, const SymbolValues& symbols, const std::vector<HostTensor>& results) {
  SymbolValues s = symbols;
  for (size_t i = 0; i < fn.results.size(); ++i) {
    std::string what = fn.results.size() == 1 ? "the result of '" + fn.name + "'"
                                              : "result '" + fn.result_name(i) + "' of '" + fn.name + "'";
    check_value(fn.result_name(i), what, fn.results[i].type, results.at(i), fn.results[i].loc, s, false);
  }
}

std::vector<HostTensor> Interpreter::run(const Function& fn, const std::vector<HostTensor>& args) {
  return with_large_stack([&] { return run_on_this_thread(fn, args); });
}

std::vector<HostTensor> Interpreter::run_on_this_thread(const Function& fn, const std::vector<HostTensor>& args) {
  SymbolValues symbols = check_arguments(fn, args);
  RunState run;
  GraphEval eval(args, run);
  const std::vector<const Node*> order = topological_order(fn.graph);
  std::vector<HostTensor> results = eval.results(fn.graph, order, output_uses(fn.graph, order));
  check_results(fn, symbols, results);
  return results;
}

}  // namespace scangen::interp
