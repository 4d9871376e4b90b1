// Reductions along an axis or over everything, and matrix products (the kernel is a helper of the
// backend's support header: `matmul`).
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

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
              n.axis() ? RuntimeErrorId::reduce_empty_axis : RuntimeErrorId::reduce_empty, {ErrorArg::text_of(name)});
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
  // The extremes an argmax/argmin of the same value along the same axis finds anyway.
  if (const ir::ArgReduceNode* sibling = extremes_sibling(n)) {
    ExprRef length = xd[size_t(*n.axis())];
    std::vector<ExprRef> out_dims = xd;
    out_dims.erase(out_dims.begin() + *n.axis());
    F.check(lir::logical_or(lir::ge(length, lir::i64(1)), lir::eq(F.product(out_dims, "count"), lir::i64(0))), n.loc(),
            RuntimeErrorId::reduce_empty_axis, {ErrorArg::text_of(name)});
    value(sibling->output(0));
    Tensor t = arg_extremes_.at(sibling);
    if (dest) {
      F.copy(dest, t.data, F.product(t.dims, "count"));
      t.data = dest;
      t.storage.clear();
      t.whole = false;
    }
    return t;
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
  out.whole = !dest;
  if (extremum)
    F.check(lir::logical_or(lir::ge(length, lir::i64(1)), lir::eq(count, lir::i64(0))), n.loc(),
            RuntimeErrorId::reduce_empty_axis, {ErrorArg::text_of(name)});
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
  F.check(lir::eq(k, kb), n.loc(), RuntimeErrorId::matmul_inner,
          {ErrorArg::text_of(dtype_text(d)), ErrorArg::shape(a.dims), ErrorArg::text_of(dtype_text(d)),
           ErrorArg::shape(b.dims), ErrorArg::number(k), ErrorArg::number(kb)});
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
  out.whole = !dest;
  F.call("matmul", {out.data, a.data, b.data, m, k, cols});
  return out;
}

}  // namespace scangen::codegen::lowering
