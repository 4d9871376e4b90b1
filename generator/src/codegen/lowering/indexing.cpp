// Indexing: the region a subscript selects (checked), views and gathers, and set/inc updates.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

// ---- indexing

ExprRef GraphLowering::checked_position(const ir::Node& n, const ExprRef& given, const ExprRef& size, size_t dim) {
  ExprRef i = F.let("index", lir::select(lir::lt(given, lir::i64(0)), lir::add(given, size), given));
  F.check(lir::logical_and(lir::ge(i, lir::i64(0)), lir::lt(i, size)), n.loc(), RuntimeErrorId::index_out_of_range,
          {ErrorArg::number(given), ErrorArg::text_of(std::to_string(dim)), ErrorArg::number(size)});
  return i;
}

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
      ExprRef i = checked_position(n, value(n.input(op++)).scalar, size, d);
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
  out.whole = !dest;
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
    out.whole = !dest;
    x = elementwise(*x_value.node, out.data);
  } else {
    x = value(x_value);
    out.data = F.buffer_for(dest, "updated", out.dtype, out.dims, {n.loc(), "the value"}, &out.storage, &total);
    out.whole = !dest;
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
    F.check(lir::logical_or(lir::eq(vd, lir::i64(1)), lir::eq(vd, rd[d])), n.loc(), RuntimeErrorId::update_shape,
            {ErrorArg::text_of(n.accumulate() ? "inc" : "set"), ErrorArg::shape(v.dims), ErrorArg::shape(rd)});
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

}  // namespace scangen::codegen::lowering
