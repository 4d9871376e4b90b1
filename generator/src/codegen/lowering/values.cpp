// GraphLowering's core: uses, what may fail, dims and values (memoized), and the dispatch of a
// node to the part that lowers its kind; scalar operations.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "ir/checks.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

// ---- GraphLowering

GraphLowering::GraphLowering(FunctionLowering& f, const ir::Graph& g, std::vector<Tensor> params)
    : F(f), params_(std::move(params)) {
  for (const ir::Node* n : ir::topological_order(g))
    for (const Value& in : n->inputs()) {
      ++uses_[{in.node.get(), in.index}];
      users_[in.node.get()].push_back(n);
    }
  for (const Value& r : g.results) ++uses_[{r.node.get(), r.index}];
}

// Whether computing v's elements may fail: the checks of shapes are made with the dims anyway.
bool GraphLowering::may_fail(const Value& v) {
  const ir::Node& n = *v.node;
  auto it = may_fail_memo_.find(&n);
  if (it != may_fail_memo_.end()) return it->second;
  bool fails = ir::checks_elements(n);
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
                         n.kind() == NodeKind::Update || n.kind() == NodeKind::Transpose ||
                         n.kind() == NodeKind::Gather || n.kind() == NodeKind::ScatterAdd ||
                         n.kind() == NodeKind::ArgReduce || n.kind() == NodeKind::TopK ||
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


// ---- values

std::vector<Tensor> GraphLowering::node_value(const ir::Node& n, const ExprRef& dest) {
  std::vector<Tensor> values = compute_node_value(n, dest);
  // Every lowering hands a scalar back as an expression and any other value as memory (a buffer
  // in place of an expression would be dereferenced as null where the scalar is used). A scan
  // leaves out the outputs nothing reads.
  if (n.kind() != NodeKind::Scan)
    for (const Tensor& t : values)
      SCANGEN_CHECK(t.rank == 0 ? bool(t.scalar) : bool(t.data),
                    std::string("the lowering of ") + ir::node_kind_name(n.kind()) + " gave a value without its " +
                        (t.rank == 0 ? "scalar" : "memory"));
  return values;
}

std::vector<Tensor> GraphLowering::compute_node_value(const ir::Node& n, const ExprRef& dest) {
  const ir::Type& type = n.output_types()[0];
  if (n.kind() == NodeKind::Scan) return scan(*n.as<ir::ScanNode>());
  if (type.rank() == 0 && n.kind() != NodeKind::Reduce && n.kind() != NodeKind::MatMul &&
      n.kind() != NodeKind::Index && n.kind() != NodeKind::ArgReduce) {
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
        t.whole = !dest;
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
    case NodeKind::Transpose: return {transpose(*n.as<ir::TransposeNode>(), dest)};
    case NodeKind::Gather: return {gather(*n.as<ir::GatherNode>(), dest)};
    case NodeKind::ScatterAdd: return {scatter_add(*n.as<ir::ScatterAddNode>(), dest)};
    case NodeKind::ArgReduce: return {arg_reduce(*n.as<ir::ArgReduceNode>(), dest)};
    case NodeKind::TopK: return {top_k(*n.as<ir::TopKNode>(), dest)};
    case NodeKind::CheckLengths: return {check_lengths(n, dest)};
    case NodeKind::CheckOffsets: return {check_offsets(n, dest)};
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize:
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Call:
    case NodeKind::Fill:
    case NodeKind::Arange:
    case NodeKind::StopGradient:
    case NodeKind::Scan: break;
  }
  SCANGEN_UNREACHABLE(std::string("no lowering for ") + ir::node_kind_name(n.kind()));
}

// The lengths of a scan, each checked to lie in 0..steps; copied into dest when given.
Tensor GraphLowering::check_lengths(const ir::Node& n, const ExprRef& dest) {
  Tensor lengths = value(n.input(0));
  ExprRef steps = value(n.input(1)).scalar;
  F.loop("b", lir::i64(0), lengths.dims[0], lir::LoopKind::Serial, [&](ExprRef b) {
    ExprRef length = F.let("length", lir::load(lengths.data, b));
    F.check(lir::logical_and(lir::ge(length, lir::i64(0)), lir::ge(steps, length)), n.loc(),
            n.as<ir::CheckLengthsNode>()->error(),
            {ErrorArg::number(b), ErrorArg::number(length), ErrorArg::number(steps)});
  });
  if (dest) {
    F.copy(dest, lengths.data, lengths.dims[0]);
    lengths.data = dest;
    lengths.storage.clear();
  }
  return lengths;
}

// The offsets of a packed batch, checked: from 0, never decreasing, ending at the rows.
Tensor GraphLowering::check_offsets(const ir::Node& n, const ExprRef& dest) {
  Tensor offsets = value(n.input(0));
  ExprRef count = offsets.dims[0];
  F.check(lir::lt(lir::i64(0), count), n.loc(), RuntimeErrorId::offsets_empty, {});
  ExprRef first = F.let("first", lir::load(offsets.data, lir::i64(0)));
  F.check(lir::eq(first, lir::i64(0)), n.loc(), RuntimeErrorId::offsets_start, {ErrorArg::number(first)});
  F.loop("i", lir::i64(1), count, lir::LoopKind::Serial, [&](ExprRef i) {
    ExprRef previous_row = F.let("previous_row", lir::sub(i, lir::i64(1)));
    ExprRef offset = F.let("offset", lir::load(offsets.data, i));
    ExprRef previous = F.let("previous", lir::load(offsets.data, previous_row));
    F.check(lir::ge(offset, previous), n.loc(), RuntimeErrorId::offsets_decrease,
            {ErrorArg::number(i), ErrorArg::number(offset), ErrorArg::number(previous_row), ErrorArg::number(previous)});
  });
  if (n.num_inputs() > 1) {
    ExprRef rows = value(n.input(1)).scalar;
    ExprRef last_row = F.let("last_row", lir::sub(count, lir::i64(1)));
    ExprRef last = F.let("last", lir::load(offsets.data, last_row));
    F.check(lir::eq(last, rows), n.loc(), RuntimeErrorId::offsets_end,
            {ErrorArg::number(last_row), ErrorArg::number(last), ErrorArg::number(rows)});
  }
  if (dest) {
    F.copy(dest, offsets.data, count);
    offsets.data = dest;
    offsets.storage.clear();
  }
  return offsets;
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
                RuntimeErrorId::integer_division_by_zero, {});
      if (is_int(d) && op == ir::BinaryOp::Pow)
        F.check(lir::binary(ir::BinaryOp::Ge, in[1], lir::imm(ir::Scalar::of_int(d, 0))), n.loc(),
                RuntimeErrorId::negative_exponent, {ErrorArg::number(lir::cast(DType::I64, in[1]))});
      return lir::binary(op, in[0], in[1]);
    }
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::Arange:
    case NodeKind::Fill:
    case NodeKind::DimSize:
    case NodeKind::Reduce:
    case NodeKind::MatMul:
    case NodeKind::Index:
    case NodeKind::Update:
    case NodeKind::Reshape:
    case NodeKind::Transpose:
    case NodeKind::Gather:
    case NodeKind::ScatterAdd:
    case NodeKind::ArgReduce:
    case NodeKind::TopK:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::StopGradient:
    case NodeKind::Scan: break;
  }
  SCANGEN_UNREACHABLE(std::string("not a scalar operation: ") + ir::node_kind_name(n.kind()));
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
    case NodeKind::Gather: {
      // x[i] of a vector x and a scalar i (the end of a packed batch: offsets[B]).
      Tensor x = value(n.input(0));
      ExprRef i = checked_position(n, F.let("index", lir::cast(DType::I64, value(n.input(1)).scalar)), x.dims[0], 0);
      t.scalar = F.let("v", lir::load(x.data, i));
      return t;
    }
    case NodeKind::Param:
    case NodeKind::Arange:
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Reduce:
    case NodeKind::MatMul:
    case NodeKind::Index:
    case NodeKind::Update:
    case NodeKind::CheckShape:
    case NodeKind::Reshape:
    case NodeKind::Transpose:
    case NodeKind::ScatterAdd:
    case NodeKind::ArgReduce:
    case NodeKind::TopK:
    case NodeKind::CheckLengths:
    case NodeKind::CheckOffsets:
    case NodeKind::StopGradient:
    case NodeKind::Call:
    case NodeKind::Scan: break;  // computed from their operands below
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

}  // namespace scangen::codegen::lowering
