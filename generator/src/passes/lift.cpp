#include "passes/lift.h"

#include "passes/util.h"
#include "support/check.h"

namespace scangen::passes {

using ir::NodeKind;
using ir::Value;

void Lifter::stacked_leaf(const Value& body_value, Value stacked) {
  leaves_.emplace(body_value, Leaf{std::move(stacked), true});
}

void Lifter::invariant_leaf(const Value& body_value, Value outer) {
  leaves_.emplace(body_value, Leaf{std::move(outer), false});
}

bool Lifter::liftable(const Value& v) {
  if (leaves_.count(v)) return true;
  auto memo = liftable_.find(v);
  if (memo != liftable_.end()) return memo->second;
  const ir::Node& n = *v.node;
  bool ok = n.num_outputs() == 1 && !can_fail(n);
  if (ok) {
    switch (n.kind()) {
      case NodeKind::Constant: break;
      case NodeKind::Unary:
      case NodeKind::Cast:
      case NodeKind::Binary:
      case NodeKind::Select:
      case NodeKind::Call:
      case NodeKind::Reduce:
      case NodeKind::DimSize:
        for (const Value& in : n.inputs()) ok = ok && liftable(in);
        break;
      case NodeKind::MatMul:
        // row @ W: the right operand must be the same at every step.
        ok = liftable(n.input(0)) && liftable(n.input(1)) && !stacked(n.input(1));
        break;
      case NodeKind::Index:
        ok = liftable(n.input(0));
        for (int i = 1; ok && i < n.num_inputs(); ++i) ok = liftable(n.input(i)) && !stacked(n.input(i));
        break;
      // Params that are no leaf, and operations without a lifted form (yet).
      case NodeKind::Param:
      case NodeKind::Arange:
      case NodeKind::Fill:
      case NodeKind::Update:
      case NodeKind::CheckShape:
      case NodeKind::CheckLengths:
      case NodeKind::CheckOffsets:
      case NodeKind::Reshape:
      case NodeKind::StopGradient:
      case NodeKind::Transpose:
      case NodeKind::Gather:
      case NodeKind::ScatterAdd:
      case NodeKind::ArgReduce:
      case NodeKind::TopK:
      case NodeKind::Scan: ok = false; break;
    }
  }
  liftable_[v] = ok;
  return ok;
}

bool Lifter::stacked(const Value& v) {
  auto leaf = leaves_.find(v);
  if (leaf != leaves_.end()) return leaf->second.stacked;
  const ir::Node& n = *v.node;
  // A dimension of a step's value is the same at every step.
  if (n.kind() == NodeKind::Constant || n.kind() == NodeKind::DimSize) return false;
  if (n.kind() == NodeKind::MatMul) return stacked(n.input(0));
  if (n.kind() == NodeKind::Index) return stacked(n.input(0));
  bool any = false;
  for (const Value& in : n.inputs()) any = any || stacked(in);
  return any;
}

Value Lifter::expand(const Value& lifted, int row_rank, int rank) {
  if (row_rank == rank) return lifted;
  std::vector<Value> dims{steps_of(lifted)};
  std::vector<ir::Dim> static_dims{lifted.type().shape[0]};
  for (int i = row_rank; i < rank; ++i) {
    dims.push_back(b_.int_constant(1, loc_));
    static_dims.push_back(ir::Dim::constant(1));
  }
  for (int i = 1; i <= row_rank; ++i) {
    dims.push_back(dim(lifted, i));
    static_dims.push_back(lifted.type().shape[size_t(i)]);
  }
  return b_.reshape(lifted, dims, static_dims, loc_);
}

Value Lifter::lift(const Value& v) {
  auto leaf = leaves_.find(v);
  if (leaf != leaves_.end()) return leaf->second.outer;
  auto memo = lifted_.find(v);
  if (memo != lifted_.end()) return memo->second;
  SCANGEN_CHECK(liftable(v), "lifting a value that does not lift");
  const ir::Node& n = *v.node;
  Value out;
  if (const auto* d = n.as<ir::DimSizeNode>(); d && stacked(n.input(0))) {
    out = dim(lift(n.input(0)), d->axis() + 1);  // the same dimension, one further
  } else if (n.kind() == NodeKind::Constant || !stacked(v)) {
    // The same at every step: the same computation on the lifted (invariant) operands.
    if (n.kind() == NodeKind::Constant) {
      out = v;
    } else {
      std::vector<Value> inputs;
      for (const Value& in : n.inputs()) inputs.push_back(lift(in));
      out = Value(b_.rebuild(n, inputs), 0);
    }
  } else {
    switch (n.kind()) {
      case NodeKind::Unary:
      case NodeKind::Cast: out = Value(b_.rebuild(n, {lift(n.input(0))}), 0); break;
      case NodeKind::Binary:
      case NodeKind::Select:
      case NodeKind::Call: {
        int rank = v.type().rank();
        std::vector<Value> inputs;
        for (const Value& in : n.inputs())
          inputs.push_back(stacked(in) ? expand(lift(in), in.type().rank(), rank) : lift(in));
        out = Value(b_.rebuild(n, inputs), 0);
        break;
      }
      case NodeKind::Reduce: {
        const auto* r = n.as<ir::ReduceNode>();
        Value x = lift(n.input(0));
        if (r->axis()) {
          out = b_.reduce(r->op(), x, *r->axis() + 1, loc_);
        } else {
          // Over every element of a step: [n, elements] reduced along axis 1, in the same order.
          Value count = b_.int_constant(1, loc_);
          for (int i = 1; i < x.type().rank(); ++i) count = b_.binary(ir::BinaryOp::Mul, count, dim(x, i), loc_);
          Value flat = b_.reshape(x, {steps_of(x), count}, {x.type().shape[0], ir::Dim::fresh_unknown()}, loc_);
          out = b_.reduce(r->op(), flat, 1, loc_);
        }
        break;
      }
      case NodeKind::MatMul: {
        Value a = lift(n.input(0));
        Value w = lift(n.input(1));
        if (n.input(0).type().rank() == 1) {
          out = b_.matmul(a, w, loc_);  // [n, k] @ W
        } else {
          // Rows that are matrices [m, k]: one product of [n * m, k], then [n, m, ...] again.
          Value steps = steps_of(a), m = dim(a, 1);
          Value rows = b_.binary(ir::BinaryOp::Mul, steps, m, loc_);
          Value flat = b_.reshape(a, {rows, dim(a, 2)}, {ir::Dim::fresh_unknown(), a.type().shape[2]}, loc_);
          Value product = b_.matmul(flat, w, loc_);
          std::vector<Value> dims{steps, m};
          std::vector<ir::Dim> static_dims{a.type().shape[0], a.type().shape[1]};
          if (w.type().rank() == 2) {
            dims.push_back(dim(w, 1));
            static_dims.push_back(w.type().shape[1]);
          }
          out = b_.reshape(product, dims, static_dims, loc_);
        }
        break;
      }
      case NodeKind::Index: {
        const auto* idx = n.as<ir::IndexNode>();
        std::vector<ir::IndexSpec> specs{ir::IndexSpec{ir::IndexSpec::Kind::Slice, false, false}};
        specs.insert(specs.end(), idx->specs().begin(), idx->specs().end());
        std::vector<Value> operands;
        for (int i = 1; i < n.num_inputs(); ++i) operands.push_back(lift(n.input(i)));
        out = b_.index(lift(n.input(0)), specs, operands, loc_);
        break;
      }
      case NodeKind::Param:
      case NodeKind::Constant:
      case NodeKind::DimSize:
      case NodeKind::Arange:
      case NodeKind::Fill:
      case NodeKind::Update:
      case NodeKind::CheckShape:
      case NodeKind::CheckLengths:
      case NodeKind::CheckOffsets:
      case NodeKind::Reshape:
      case NodeKind::StopGradient:
      case NodeKind::Transpose:
      case NodeKind::Gather:
      case NodeKind::ScatterAdd:
      case NodeKind::ArgReduce:
      case NodeKind::TopK:
      case NodeKind::Scan: SCANGEN_UNREACHABLE("lifting an operation that does not lift");
    }
  }
  lifted_.emplace(v, out);
  return out;
}

}  // namespace scangen::passes
