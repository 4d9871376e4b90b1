#include "ir/checks.h"

#include <algorithm>

namespace scangen::ir {

NodeChecks node_checks(NodeKind k) {
  switch (k) {
#define IR_NODE(kind, name, checks) \
  case NodeKind::kind: return NodeChecks::checks;
#include "ir/nodes.def"
#undef IR_NODE
  }
  return NodeChecks::Both;
}

bool checks_shape(const Node& n) {
  const NodeChecks c = node_checks(n.kind());
  if (c != NodeChecks::Shape && c != NodeChecks::Both) return false;
  if (const auto* r = n.as<ReshapeNode>()) return r->checked();
  return true;
}

bool checks_elements(const Node& n) {
  const NodeChecks c = node_checks(n.kind());
  if (c != NodeChecks::Elements && c != NodeChecks::Both) return false;
  if (const auto* b = n.as<BinaryNode>())
    return is_int(n.input(0).type().dtype) &&
           (b->op() == BinaryOp::Div || b->op() == BinaryOp::Mod || b->op() == BinaryOp::Pow);
  if (const auto* r = n.as<ReduceNode>()) return r->op() == ReduceOp::Max || r->op() == ReduceOp::Min;
  if (const auto* i = n.as<IndexNode>())
    return std::any_of(i->specs().begin(), i->specs().end(),
                       [](const IndexSpec& s) { return s.kind == IndexSpec::Kind::Scalar; });
  return true;
}

bool never_negative(const Value& size) {
  if (size.node->kind() == NodeKind::DimSize) return true;
  const auto* c = size.node->as<ConstantNode>();
  return c && c->value().i >= 0;
}

}  // namespace scangen::ir
