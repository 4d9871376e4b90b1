// general: constant folding and common subexpressions, in the outer graph and every scan body.
//
// Matches: an element-wise operation or a cast whose operands are all scalar constants (folded
// by ir/fold.h with the element semantics of run time, so results stay bit-identical; integer
// division by zero and negative integer powers are left to fail at run time); `dim x, k` of a
// dimension known to be a constant when computing x cannot fail; two nodes computing the same
// thing from the same operands (merged). Dead code needs no pass: a
// graph is what its results reach, and unused scan outputs are pruned (ir/prune.h). Fusing chains
// of element-wise operations into one loop happens in the lowering (codegen/lowering/elementwise.cpp), for every
// backend.
// Must not fire on: parameters, or operations that can fail.
#include <unordered_map>

#include "ir/fold.h"
#include "ir/mutator.h"
#include "ir/prune.h"
#include "passes/pass.h"
#include "passes/util.h"

namespace scangen::passes {
namespace {

using ir::Scalar;
using ir::Value;

class Simplifier : public ir::Mutator {
 public:
  explicit Simplifier(PassContext& context) : context_(context) {}

 protected:
#define IR_NODE(kind, name, checks)                                                             \
  std::vector<Value> visit_##kind(const ir::kind##Node& n, std::vector<Value> inputs) override { \
    return simplify(n, std::move(inputs));                                                      \
  }
#include "ir/nodes.def"
#undef IR_NODE

 private:
  std::vector<Value> simplify(const ir::Node& n, std::vector<Value> inputs) {
    if (auto same = identity(n, inputs)) {
      context_.fired();
      return {*same};
    }
    if (n.num_outputs() == 1 && n.output_types()[0].is_scalar())
      if (auto folded = fold(n, inputs)) {
        context_.fired();
        return {unique(*builder.constant(*folded, n.loc()).node)};
      }
    // Not the dimension of a value that can fail: the constant would no longer read it, and when
    // nothing else does its error would vanish (push-out-output's number of steps taken, `dim` of
    // the results of a scan whose sequences are too short, would leave that scan dead).
    if (const auto* d = n.as<ir::DimSizeNode>())
      if (auto c = inputs[0].type().shape[size_t(d->axis())].const_value(); c && !value_can_fail(inputs[0])) {
        context_.fired();
        return {unique(*builder.int_constant(*c, n.loc()).node)};
      }
    std::vector<Value> outs = keep_or_rebuild(n, std::move(inputs));
    const ir::Node& rebuilt = *outs.front().node;
    const ir::Node& canonical = *unique(rebuilt).node;
    if (&canonical == &rebuilt) return outs;
    context_.fired();
    std::vector<Value> merged;
    for (int i = 0; i < canonical.num_outputs(); ++i) merged.push_back(canonical.output(i));
    return merged;
  }

  std::optional<Scalar> fold(const ir::Node& n, const std::vector<Value>& inputs) {
    std::vector<Scalar> c;
    for (const Value& in : inputs) {
      auto k = ir::constant_value(in);
      if (!k) return std::nullopt;
      c.push_back(*k);
    }
    return ir::fold_node(n, c);
  }

  // An operand the node returns unchanged: integer x + 0, x - 0, x * 1, max of a dimension and 0
  // (exact for integers; float identities are not: -0.0 + 0.0 is 0.0), an indexing whose slices
  // each cover their whole dimension.
  static std::optional<Value> identity(const ir::Node& n, const std::vector<Value>& in) {
    auto is = [](const Value& v, int64_t c) {
      auto k = ir::constant_value(v);
      return k && is_int(k->dtype) && k->i == c;
    };
    if (const auto* b = n.as<ir::BinaryNode>(); b && is_int(in[0].type().dtype)) {
      if (!in[0].type().same_as(n.output_types()[0]) && !in[1].type().same_as(n.output_types()[0])) return std::nullopt;
      switch (b->op()) {
        case ir::BinaryOp::Add:
          if (is(in[1], 0) && in[0].type().same_as(n.output_types()[0])) return in[0];
          if (is(in[0], 0) && in[1].type().same_as(n.output_types()[0])) return in[1];
          break;
        case ir::BinaryOp::Sub:
          if (is(in[1], 0) && in[0].type().same_as(n.output_types()[0])) return in[0];
          break;
        case ir::BinaryOp::Mul:
          if (is(in[1], 1) && in[0].type().same_as(n.output_types()[0])) return in[0];
          if (is(in[0], 1) && in[1].type().same_as(n.output_types()[0])) return in[1];
          break;
        case ir::BinaryOp::Max:
          if (is(in[1], 0) && in[0].node->kind() == ir::NodeKind::DimSize) return in[0];
          if (is(in[0], 0) && in[1].node->kind() == ir::NodeKind::DimSize) return in[1];
          [[fallthrough]];
        case ir::BinaryOp::Min:
          if (in[0] == in[1]) return in[0];
          break;
        case ir::BinaryOp::Div: case ir::BinaryOp::Mod: case ir::BinaryOp::Pow: case ir::BinaryOp::Eq:
        case ir::BinaryOp::Ne: case ir::BinaryOp::Lt: case ir::BinaryOp::Le: case ir::BinaryOp::Gt:
        case ir::BinaryOp::Ge: case ir::BinaryOp::And: case ir::BinaryOp::Or: break;
      }
    }
    if (const auto* idx = n.as<ir::IndexNode>()) {
      size_t op = 1;
      for (size_t d = 0; d < idx->specs().size(); ++d) {
        const ir::IndexSpec& s = idx->specs()[d];
        if (s.kind != ir::IndexSpec::Kind::Slice) return std::nullopt;
        if (s.has_lo && !is(in[op++], 0)) return std::nullopt;
        if (s.has_hi) {
          const auto* dim = in[op++].node->as<ir::DimSizeNode>();
          if (!dim || dim->input(0) != in[0] || dim->axis() != int(d)) return std::nullopt;
        }
      }
      return in[0];
    }
    return std::nullopt;
  }

  // The first node seen with the same structure (common subexpressions), or this one.
  Value unique(const ir::Node& n) {
    auto [it, inserted] = seen_.emplace(structural_key(n), n.shared_from_this());
    return Value(it->second, 0);
  }

  PassContext& context_;
  std::unordered_map<std::string, ir::NodeRef> seen_;
};

}  // namespace

std::vector<Value> simplify_values(const std::vector<Value>& results) {
  PassContext scratch;
  Simplifier s(scratch);
  std::vector<Value> out;
  for (const Value& v : results) out.push_back(s.mutate(v));
  return out;
}

ir::Program run_general(const ir::Program& program, PassContext& context) {
  ir::Program out = rewrite_graphs(program, [&](const ir::Graph& g) {
    Simplifier s(context);
    return s.mutate(g);
  });
  for (ir::Function& f : out.functions) f.graph = ir::prune_dead_scan_outputs(f.graph);
  return out;
}

}  // namespace scangen::passes
