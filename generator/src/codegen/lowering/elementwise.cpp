// Chains of element-wise operations fused into one loop over their elements: a value used once, of
// the same shape as its user, is computed where it is used.
#include "codegen/lowering/function_lowering.h"
#include "codegen/lowering/graph_lowering.h"
#include "ir/analysis.h"
#include "support/check.h"

namespace scangen::codegen::lowering {

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
  out.whole = !dest;

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
    case NodeKind::Param:
    case NodeKind::Constant:
    case NodeKind::DimSize:
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Select:
    case NodeKind::Cast:
    case NodeKind::Call:
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
    case NodeKind::Scan: break;  // scalar operations of their elements, below
  }
  std::vector<ExprRef> in;
  for (int i = 0; i < n.num_inputs(); ++i) in.push_back(input(i));
  return scalar_op(n, in);
}

}  // namespace scangen::codegen::lowering
