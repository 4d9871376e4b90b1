// GraphLowering: lowers one graph of the program IR (a function's body, or a scan's step) into
// the loop IR that FunctionLowering is building. Each node kind is lowered by one part:
// shapes.cpp (dims and their checks), values.cpp (dispatch, scalars), elementwise.cpp (fused
// element loops), products.cpp (reductions, '@'), indexing.cpp (slices, set/inc), selection.cpp
// (transpose, gathers, argmax, top_k), scans.cpp (time loops).
#pragma once

#include <functional>
#include <set>
#include <unordered_map>

#include "codegen/lowering/common.h"

namespace scangen::codegen::lowering {

class FunctionLowering;

class GraphLowering {
 public:
  GraphLowering(FunctionLowering& f, const ir::Graph& g, std::vector<Tensor> params);

  void set_param(size_t i, Tensor t) {
    params_.at(i) = std::move(t);
    available_memo_.clear();
  }
  // The dims of v. While shapes only are computed, a dim that depends on a step value not known
  // yet is null (ir/analysis.h: a step value may have such a dim, an output's rows never do).
  std::vector<ExprRef> dims(const Value& v);
  Tensor value(const Value& v);
  // Computes v into `dest` (room for all its elements); returns the value as it is then known.
  Tensor value_into(const Value& v, const ExprRef& dest);
  // Whether v can be computed here (it does not need a step value that is not known yet; a size
  // needs only that dim of its operand).
  bool available(const Value& v) {
    if (const auto* p = v.node->as<ir::ParamNode>()) {
      const Tensor& t = params_.at(size_t(p->index()));
      return t.rank == 0 ? bool(t.scalar) : bool(t.data);
    }
    if (value_memo_.count(v.node.get())) return true;
    if (const auto* d = v.node->as<ir::DimSizeNode>()) return dims(d->input(0)).at(size_t(d->axis())) != nullptr;
    auto it = available_memo_.find(v.node.get());
    if (it != available_memo_.end()) return it->second;
    bool ok = true;
    for (const Value& in : v.node->inputs()) ok = ok && available(in);
    available_memo_[v.node.get()] = ok;
    return ok;
  }
  // Whether v's value has been computed already.
  bool computed(const Value& v) const { return value_memo_.count(v.node.get()) > 0; }
  int uses(const Value& v) const {
    auto it = uses_.find({v.node.get(), v.index});
    return it == uses_.end() ? 0 : it->second;
  }
  // Whether computing v can raise a run-time error that computing only its dims does not (dims()
  // runs the broadcasting, shape and size checks; an index out of range, an integer division by
  // zero, a max of nothing, '@' of mismatched sizes, set/inc and scans fail only in value()).
  bool may_fail(const Value& v);
  // Set on a lowering that only computes the step shapes of a nested scan: step values are not
  // known there, and nothing is computed for its values' errors.
  bool shapes_only = false;

  // The step shapes of a scan's outputs, computed before its loop on the lowering of its body
  // (step values are not known yet; the dims computed serve the loop too).
  void begin_step_shapes() {
    shapes_only = true;
    defer_failures_ = true;
  }
  void end_step_shapes() {
    shapes_only = false;
    defer_failures_ = false;
    partial_dims_memo_.clear();
  }
  // In the step: computes the values whose errors a size of them deferred (see scalar_node).
  void compute_deferred() {
    for (const Value& v : deferred_) value(v);
    deferred_.clear();
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<const ir::Node*, int>& p) const {
      return std::hash<const void*>()(p.first) * 31 + size_t(p.second);
    }
  };

  std::vector<ExprRef> node_dims(const ir::Node& n, int output);
  std::vector<ExprRef> broadcast_dims(const ir::Node& n);
  std::vector<ExprRef> index_dims(const ir::IndexNode& n);
  std::vector<ExprRef> scan_dims(const ir::ScanNode& n, int output);
  // A scalar operand that sizes a value (an arange's bounds, a fill's sizes, a slice's bounds, a
  // scan's steps); null while shapes only are computed and it depends on the step.
  ExprRef size_operand(const Value& v) { return shapes_only && !available(v) ? nullptr : value(v).scalar; }
  std::vector<Tensor> node_value(const ir::Node& n, const ExprRef& dest);
  std::vector<Tensor> compute_node_value(const ir::Node& n, const ExprRef& dest);
  Tensor scalar_node(const ir::Node& n);
  ExprRef scalar_op(const ir::Node& n, const std::vector<ExprRef>& in);

  // Element-wise clusters.
  bool fusable(const Value& v, const ir::Node& user);
  Tensor elementwise(const ir::Node& root, const ExprRef& dest);
  struct Cluster;
  ExprRef element(Cluster& c, const ir::Node& n, const std::vector<ExprRef>& idx, const ExprRef& flat);

  Tensor reduce(const ir::ReduceNode& n, const ExprRef& dest);
  Tensor matmul(const ir::MatMulNode& n, const ExprRef& dest);
  Tensor index(const ir::IndexNode& n, const ExprRef& dest);
  Tensor update(const ir::UpdateNode& n, const ExprRef& dest);
  std::vector<Tensor> scan(const ir::ScanNode& n);
  // selection.cpp
  Tensor fresh_result(const ir::Node& n, const ExprRef& dest, const char* hint);
  ExprRef gathered_row(const ir::Node& n, const Tensor& idx, const ExprRef& j, const ExprRef& rows);
  Tensor transpose(const ir::TransposeNode& n, const ExprRef& dest);
  Tensor gather(const ir::GatherNode& n, const ExprRef& dest);
  Tensor check_lengths(const ir::Node& n, const ExprRef& dest);
  Tensor check_offsets(const ir::Node& n, const ExprRef& dest);
  Tensor scatter_add(const ir::ScatterAddNode& n, const ExprRef& dest);
  Tensor arg_reduce(const ir::ArgReduceNode& n, const ExprRef& dest);
  Tensor top_k(const ir::TopKNode& n, const ExprRef& dest);
  void check_reshape(const ir::ReshapeNode& n, const std::vector<ExprRef>& sizes);

  // The region x[specs] selects: per dimension, a first index and a count, checked.
  struct Region {
    std::vector<ExprRef> start, count;
    std::vector<bool> kept;
    std::vector<ExprRef> result_dims;
  };
  Region region(const ir::Node& n, const Tensor& x, const std::vector<IndexSpec>& specs, int first_operand);
  // `given` (negative counts from the end) as a position in a dimension of `size`, checked: the
  // interpreter's "index ... is out of range for dimension `dim` ..." when it is not.
  ExprRef checked_position(const ir::Node& n, const ExprRef& given, const ExprRef& size, size_t dim);

  FunctionLowering& F;
  std::vector<Tensor> params_;
  std::unordered_map<const ir::Node*, std::vector<std::vector<ExprRef>>> dims_memo_;
  // Dims with a null entry, valid only while shapes only are computed.
  std::unordered_map<const ir::Node*, std::vector<std::vector<ExprRef>>> partial_dims_memo_;
  bool defer_failures_ = false;
  std::vector<Value> deferred_;
  std::unordered_map<const ir::Node*, std::vector<Tensor>> value_memo_;
  std::unordered_map<const ir::Node*, bool> available_memo_;
  std::unordered_map<const ir::Node*, bool> may_fail_memo_;
  std::unordered_map<std::pair<const ir::Node*, int>, int, PairHash> uses_;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users_;
  // The extreme values an argmax/argmin along a (non-last) axis found, by its node: a max/min of
  // the same value along the same axis is these values (selection.cpp, products.cpp).
  std::unordered_map<const ir::Node*, Tensor> arg_extremes_;
  // The argmax/argmin whose extremes are n's result, if one is computed in this graph.
  const ir::ArgReduceNode* extremes_sibling(const ir::ReduceNode& n);
};
}  // namespace scangen::codegen::lowering
