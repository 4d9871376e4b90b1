// Selection and layout: transpose, gathers and their adjoint scatter_add, argmax/argmin and
// top_k. The run-time messages are the interpreter's (interpreter/selection.cpp).
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

namespace {

// The helpers of templates/common/scangen_scalar.h that order elements for argmax, argmin, top_k.
ExprRef ranks_above(ExprRef a, ExprRef b) { return lir::call("sg::ranks_above", DType::Bool, {std::move(a), std::move(b)}); }
ExprRef ranks_below(ExprRef a, ExprRef b) { return lir::call("sg::ranks_below", DType::Bool, {std::move(a), std::move(b)}); }

}  // namespace

Tensor GraphLowering::fresh_result(const ir::Node& n, const ExprRef& dest, const char* hint) {
  Tensor out;
  out.dtype = n.output_types()[0].dtype;
  out.rank = n.output_types()[0].rank();
  // A scalar is an expression (Tensor::scalar), never a buffer.
  SCANGEN_CHECK(out.rank > 0, std::string(hint) + ": a buffer for a scalar result");
  out.dims = dims(n.output(0));
  ExprRef count;
  out.data = F.buffer_for(dest, hint, out.dtype, out.dims, {n.loc(), "the value"}, &out.storage, &count);
  out.whole = !dest;
  return out;
}

Tensor GraphLowering::transpose(const ir::TransposeNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0));
  Tensor out = fresh_result(n, dest, "transposed");
  size_t rank = x.dims.size();
  std::vector<ExprRef> in_strides(rank), out_strides(rank);
  ExprRef s = lir::i64(1), os = lir::i64(1);
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = s;
    out_strides[d] = os;
    if (d > 0) {
      s = F.let("stride", lir::mul(s, x.dims[d]));
      os = F.let("stride", lir::mul(os, out.dims[d]));
    }
  }
  F.loop_nest(out.dims, [&](const std::vector<ExprRef>& idx) {
    ExprRef src = lir::i64(0), dst = lir::i64(0);
    for (size_t d = 0; d < rank; ++d) {
      src = lir::add(src, lir::mul(idx[d], in_strides[size_t(n.perm()[d])]));
      dst = lir::add(dst, lir::mul(idx[d], out_strides[d]));
    }
    F.store(out.data, dst, lir::load(x.data, src));
  });
  return out;
}

// Row idx[j] of a dimension of `rows` rows, negative counting from the end, checked.
ExprRef GraphLowering::gathered_row(const ir::Node& n, const Tensor& idx, const ExprRef& j, const ExprRef& rows) {
  return checked_position(n, F.let("index", lir::cast(DType::I64, lir::load(idx.data, j))), rows, 0);
}

Tensor GraphLowering::gather(const ir::GatherNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0)), idx = value(n.input(1));
  Tensor out = fresh_result(n, dest, "gathered");
  ExprRef count = F.product(idx.dims, "count");
  if (x.rank == 1) {
    F.loop("j", lir::i64(0), count, lir::LoopKind::Vector, [&](ExprRef j) {
      F.store(out.data, j, lir::load(x.data, gathered_row(n, idx, j, x.dims[0])));
    });
    return out;
  }
  // Whole rows: a copy each.
  ExprRef row = F.product({x.dims.begin() + 1, x.dims.end()}, "row");
  F.loop("j", lir::i64(0), count, lir::LoopKind::Serial, [&](ExprRef j) {
    ExprRef i = gathered_row(n, idx, j, x.dims[0]);
    F.copy(F.let_pointer("to", out.data, F.let("offset", lir::mul(j, row)), true),
           F.let_pointer("from", x.data, F.let("offset", lir::mul(i, row)), false), row);
  });
  return out;
}

Tensor GraphLowering::scatter_add(const ir::ScatterAddNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0)), idx = value(n.input(1)), v = value(n.input(2));
  Tensor out = fresh_result(n, dest, "scattered");
  F.copy(out.data, x.data, F.product(out.dims, "count"));
  ExprRef count = F.product(idx.dims, "count");
  ExprRef row = F.product({x.dims.begin() + 1, x.dims.end()}, "row");
  // In the order of idx, so that rows taken twice add up as in the interpreter; one thread owns
  // each element of a row on a GPU.
  F.loop("j", lir::i64(0), count, lir::LoopKind::Serial, [&](ExprRef j) {
    ExprRef at = F.let("at", lir::mul(gathered_row(n, idx, j, x.dims[0]), row));
    ExprRef from = F.let("from", lir::mul(j, row));
    F.loop("e", lir::i64(0), row, lir::LoopKind::Vector, [&](ExprRef e) {
      ExprRef o = lir::add(at, e);
      F.store(out.data, o, lir::binary(ir::BinaryOp::Add, lir::load(out.data, o), lir::load(v.data, lir::add(from, e))));
    });
  });
  return out;
}

Tensor GraphLowering::arg_reduce(const ir::ArgReduceNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0));
  bool largest = n.op() == ir::ReduceOp::Max;
  std::string name = largest ? "argmax" : "argmin";
  auto better = [&](ExprRef a, ExprRef b) { return largest ? ranks_above(a, b) : ranks_below(a, b); };
  // The first extreme of `length` elements from `base`, `stride` apart.
  auto first_extreme = [&](ExprRef base, ExprRef length, ExprRef stride) {
    ExprRef best = F.decl("best", lir::load(x.data, base));
    ExprRef at = F.decl("at", lir::i64(0));
    F.loop("k", lir::i64(1), length, lir::LoopKind::Serial, [&](ExprRef k) {
      ExprRef e = F.let("element", lir::load(x.data, lir::add(base, lir::mul(k, stride))));
      F.when(better(e, best), [&] {
        F.assign(best, e);
        F.assign(at, k);
      });
    });
    return at;
  };
  // Along the only axis of a vector the result is a scalar, the position among every element, as
  // without an axis; only the message for no elements differs.
  if (!n.axis() || x.rank == 1) {
    ExprRef total = F.product(x.dims, "count");
    F.check(lir::ge(total, lir::i64(1)), n.loc(),
            n.axis() ? RuntimeErrorId::reduce_empty_axis : RuntimeErrorId::reduce_empty, {ErrorArg::text_of(name)});
    Tensor out;
    out.dtype = DType::I64;
    out.scalar = first_extreme(lir::i64(0), total, lir::i64(1));
    if (dest) F.store(dest, lir::i64(0), out.scalar);
    return out;
  }
  // View x as [outer, length, inner].
  int axis = *n.axis();
  ExprRef inner = F.product({x.dims.begin() + axis + 1, x.dims.end()}, "inner");
  ExprRef length = x.dims[size_t(axis)];
  Tensor out = fresh_result(n, dest, "positions");
  ExprRef count = F.product(out.dims, "count");
  F.check(lir::logical_or(lir::ge(length, lir::i64(1)), lir::eq(count, lir::i64(0))), n.loc(),
          RuntimeErrorId::reduce_empty_axis, {ErrorArg::text_of(name)});
  if (axis + 1 == x.rank) {
    // Along the last axis: one walk per output element (a thread each on a GPU).
    F.loop("e", lir::i64(0), count, lir::LoopKind::Vector,
           [&](ExprRef e) { F.store(out.data, e, first_extreme(lir::mul(e, length), length, lir::i64(1))); });
    return out;
  }
  // Along another axis: the reduction's order (for each k, a select over the `inner` contiguous
  // elements), which vectorizes. The best values are kept: they are max(x, axis) (or min), which a
  // reduction of the same value along the same axis takes instead of a pass of its own.
  Tensor extremes;
  extremes.dtype = x.dtype;
  extremes.rank = out.rank;
  extremes.dims = out.dims;
  ExprRef best_count;
  ExprRef best = F.buffer_for(nullptr, "best", x.dtype, out.dims, {n.loc(), "the value"}, &extremes.storage, &best_count);
  extremes.data = best;
  extremes.whole = true;
  arg_extremes_[&n] = extremes;
  F.loop("o", lir::i64(0), lir::select(lir::eq(length, lir::i64(0)), lir::i64(0), F.product({x.dims.begin(), x.dims.begin() + axis}, "outer")),
         lir::LoopKind::Serial, [&](ExprRef o) {
           ExprRef out_row = F.let("out_row", lir::mul(o, inner));
           ExprRef in_row = F.let("in_row", lir::mul(lir::mul(o, length), inner));
           F.loop("j", lir::i64(0), inner, lir::LoopKind::Vector, [&](ExprRef j) {
             F.store(best, lir::add(out_row, j), lir::load(x.data, lir::add(in_row, j)));
             F.store(out.data, lir::add(out_row, j), lir::i64(0));
           });
           F.loop("k", lir::i64(1), length, lir::LoopKind::Serial, [&](ExprRef k) {
             ExprRef in_k = F.let("in_k", lir::add(in_row, lir::mul(k, inner)));
             F.loop("j", lir::i64(0), inner, lir::LoopKind::Vector, [&](ExprRef j) {
               ExprRef e = F.let("element", lir::load(x.data, lir::add(in_k, j)));
               ExprRef at = lir::add(out_row, j);
               ExprRef held = F.let("held", lir::load(best, at));
               ExprRef take = F.let("take", better(e, held));
               F.store(best, at, lir::select(take, e, held));
               F.store(out.data, at, lir::select(take, k, lir::load(out.data, at)));
             });
           });
         });
  return out;
}

const ir::ArgReduceNode* GraphLowering::extremes_sibling(const ir::ReduceNode& n) {
  bool largest = n.op() == ir::ReduceOp::Max;
  if ((!largest && n.op() != ir::ReduceOp::Min) || !n.axis() || *n.axis() + 1 == n.input(0).type().rank()) return nullptr;
  auto it = users_.find(n.input(0).node.get());
  if (it == users_.end()) return nullptr;
  for (const ir::Node* user : it->second) {
    const auto* a = user->as<ir::ArgReduceNode>();
    if (a && a->input(0) == n.input(0) && a->axis() == n.axis() && a->op() == n.op()) return a;
  }
  return nullptr;
}

Tensor GraphLowering::top_k(const ir::TopKNode& n, const ExprRef& dest) {
  Tensor x = value(n.input(0));
  ExprRef k = value(n.input(1)).scalar;
  ExprRef length = x.dims.back();
  F.check(lir::logical_and(lir::ge(k, lir::i64(0)), lir::ge(length, k)), n.loc(), RuntimeErrorId::top_k_out_of_range,
          {ErrorArg::number(k), ErrorArg::number(length)});
  Tensor out = fresh_result(n, dest, "positions");
  ExprRef rows = F.product({x.dims.begin(), x.dims.end() - 1}, "rows");
  // The values kept so far, in the order of `out`.
  std::string kept_storage;
  ExprRef kept_count;
  ExprRef kept = F.buffer_for(nullptr, "kept", x.dtype, {rows, k}, {n.loc(), "top_k's values"}, &kept_storage, &kept_count);
  ExprRef active_rows = F.let("rows", lir::select(lir::eq(k, lir::i64(0)), lir::i64(0), rows));
  // A thread per row on a GPU: each row keeps a sorted list of its best k so far, into which a
  // later equal element never goes ahead of an earlier one.
  F.loop("r", lir::i64(0), active_rows, lir::LoopKind::Vector, [&](ExprRef r) {
    ExprRef in_row = F.let("in_row", lir::mul(r, length));
    ExprRef out_row = F.let("out_row", lir::mul(r, k));
    F.loop("j", lir::i64(0), length, lir::LoopKind::Serial, [&](ExprRef j) {
      ExprRef e = F.let("element", lir::load(x.data, lir::add(in_row, j)));
      ExprRef held = F.let("held", lir::min(j, k));
      ExprRef last = lir::add(out_row, lir::sub(k, lir::i64(1)));
      F.when(lir::logical_or(lir::lt(held, k), ranks_above(e, lir::load(kept, last))), [&] {
        ExprRef place = F.decl("place", lir::i64(0));
        F.loop("q", lir::i64(0), held, lir::LoopKind::Serial, [&](ExprRef q) {
          F.assign(place, lir::add(place, lir::select(ranks_above(e, lir::load(kept, lir::add(out_row, q))), lir::i64(0),
                                                      lir::i64(1))));
        });
        ExprRef end = F.let("end", lir::min(held, lir::sub(k, lir::i64(1))));
        F.loop("q", lir::i64(0), lir::sub(end, place), lir::LoopKind::Serial, [&](ExprRef q) {
          ExprRef to = F.let("to", lir::add(out_row, lir::sub(end, q)));
          ExprRef from = F.let("from", lir::sub(to, lir::i64(1)));
          F.store(kept, to, lir::load(kept, from));
          F.store(out.data, to, lir::load(out.data, from));
        });
        F.store(kept, lir::add(out_row, place), e);
        F.store(out.data, lir::add(out_row, place), j);
      });
    });
  });
  return out;
}

}  // namespace scangen::codegen::lowering
